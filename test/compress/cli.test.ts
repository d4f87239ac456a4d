import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const CLI = path.join(ROOT, 'src/cli/main.ts');
// absolute, so the CLI can run from any working directory (handles default to the cwd)
const TSX = pathToFileURL(path.join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const spillway = (args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) =>
  run(process.execPath, ['--import', TSX, '--conditions=source', CLI, ...args], { cwd, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-cli-'));
const orders = Array.from({ length: 500 }, (_, i) => ({
  id: i + 1,
  status: i === 250 ? 'payment_failed' : i % 10 ? 'paid' : 'refunded',
  amount: (i % 97) * 10.5,
  region: ['eu', 'us', 'apac'][i % 3],
  avatar_url: `https://avatars.example.com/u/${i}`,
}));

describe('spillway handle', () => {
  it('put → query (where, group-by, agg, sort, limit) → grep → delete, with the documented JSON shapes', async () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, 'orders.json'), JSON.stringify({ data: orders }));
    // --session defaults to the current directory
    const put = JSON.parse((await spillway(['handle', 'put', 'orders.json', '--json'], dir)).stdout);
    expect(Object.keys(put)).toEqual(['handle', 'rows', 'columns', 'sample']);
    expect(put.rows).toBe(500);
    expect(put.columns).toEqual(['id', 'status', 'amount', 'region', 'avatar_url']);
    expect(put.sample).toHaveLength(3);
    expect(fs.existsSync(path.join(dir, 'handles.sqlite'))).toBe(true);

    const q = JSON.parse(
      (await spillway(['handle', 'query', put.handle, '--where', 'status=paid', '--where', 'amount>500', '--group-by', 'region', '--agg', 'count', '--agg', 'sum:amount', '--sort', '-count', '--json'], dir)).stdout,
    );
    expect(Object.keys(q)).toEqual(['rows', 'truncated']);
    const paid = orders.filter((o) => o.status === 'paid' && o.amount > 500);
    const eu = paid.filter((o) => o.region === 'eu');
    expect(q.rows.find((r: any) => r.region === 'eu')).toEqual({ region: 'eu', count: eu.length, 'sum:amount': eu.reduce((a, o) => a + o.amount, 0) });
    expect(q.rows.map((r: any) => r.count)).toEqual([...q.rows.map((r: any) => r.count)].sort((a, b) => b - a));
    expect(q.truncated).toBe(false);

    const page = JSON.parse((await spillway(['handle', 'query', put.handle, '--where', 'status!=paid', '--sort', '-id', '--limit', '2', '--json'], dir)).stdout);
    expect(page.rows.map((r: any) => r.id)).toEqual([491, 481]);
    expect(page.truncated).toBe(true);
    const text = JSON.parse((await spillway(['handle', 'query', put.handle, '--where', 'status~failed', '--select', 'id,status', '--json'], dir)).stdout);
    expect(text.rows).toEqual([{ id: 251, status: 'payment_failed' }]);

    const g = await spillway(['handle', 'grep', put.handle, 'payment_failed', '-C', '1'], dir);
    expect(g.stdout.split('\n')[1]).toBe(`251:${JSON.stringify(orders[250])}`);
    expect(g.stdout.split('\n')[0]).toMatch(/^250-/);

    const bad = await spillway(['handle', 'query', put.handle, '--where', 'nosuch=1'], dir).catch((e) => e);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/unknown field "nosuch"/);

    expect((await spillway(['handle', 'delete', put.handle], dir)).stdout).toContain(`deleted ${put.handle}`);
    const gone = await spillway(['handle', 'query', put.handle], dir).catch((e) => e);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/no handle/);
  });

  it('--session DIR and text payloads', async () => {
    const dir = tmp();
    const session = path.join(dir, 'session');
    fs.writeFileSync(path.join(dir, 'app.log'), 'INFO start\nERROR disk full on /dev/sda1\nINFO stop\n');
    const put = JSON.parse((await spillway(['handle', 'put', 'app.log', '--session', session, '--json'], dir)).stdout);
    expect(put.columns).toEqual(['n', 'line']);
    expect(fs.existsSync(path.join(session, 'handles.sqlite'))).toBe(true);
    const g = JSON.parse((await spillway(['handle', 'grep', put.handle, 'disk FULL', '--session', session, '--json'], dir)).stdout);
    expect(g.matches).toEqual([{ n: 2, line: 'ERROR disk full on /dev/sda1' }]);
  });
});

describe('spillway project', () => {
  it('--suggest ranks fields and proposes a spec; --spec applies one and reports tokens; --save stores it per tool', async () => {
    const dir = tmp();
    const specs = path.join(dir, 'projections');
    fs.writeFileSync(path.join(dir, 'orders.json'), JSON.stringify(orders));
    const s = JSON.parse((await spillway(['project', 'orders.json', '--suggest', '--json', '--save', 'shop_orders', '--dir', specs], dir)).stdout);
    expect(s.fields[0].tokens).toBeGreaterThanOrEqual(s.fields.at(-1).tokens);
    expect(s.fields.find((f: any) => f.path === '$[*].avatar_url').keep).toBe(false);
    expect(s.spec.keep).toEqual(expect.arrayContaining(['$[*].id', '$[*].status']));
    expect(s.tokensAfter).toBeLessThan(s.tokensBefore);
    expect(JSON.parse(fs.readFileSync(path.join(specs, 'shop_orders.json'), 'utf8')).tool).toBe('shop_orders');

    const applied = await spillway(['project', 'orders.json', '--spec', '{"keep":["$[*].id","$[*].status"],"maxArray":2}'], dir);
    expect(JSON.parse(applied.stdout)).toEqual([{ id: 1, status: 'refunded' }, { id: 2, status: 'paid' }, '… 498 more items cut (500 in all)']);
    expect(applied.stderr).toMatch(/^tokens \d+ → \d+ \(−\d+%\)/);

    const byTool = JSON.parse((await spillway(['project', 'orders.json', '--tool', 'shop_orders', '--dir', specs, '--json'], dir)).stdout);
    expect(byTool.tokensAfter).toBeLessThan(byTool.tokensBefore);
    expect(byTool.result[0].avatar_url).toBeUndefined();

    const notJson = await spillway(['project', 'nope.json', '--suggest'], dir).catch((e) => e);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toMatch(/cannot read nope\.json/);
  });
});
