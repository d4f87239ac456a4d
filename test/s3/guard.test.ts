import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, expect, it } from 'vitest';
import { guardLargeResult, restoreFromStore, restorePayload } from '../../src/pipeline/index.js';
import { S3SpillStore, listPending, resetStoreHealth } from '../../src/pipeline/store/s3/index.js';
import { runSync } from '../../src/cli/commands/sync.js';
import { s3Suite } from '../helpers/ceph.js';
import { useGateway } from '../helpers/ceph-fixture.js';
import { pngHeadedNoise } from '../helpers/png.js';

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, '..', '..');

s3Suite('the guard spilling to a bucket', () => {
  const f = useGateway('s3guard');
  beforeAll(async () => {
    store = `s3://${f.gw.bucket}/fleet`;
  });
  let store: string;

  it('text, JSON with assets and raw binary go to the bucket and restore byte-exact from it', async () => {
    const session = path.join(f.tmp, 'agent-1');
    const inputs: Array<[string, string | Buffer]> = [
      ['text', 'a line of log output\n'.repeat(30_000)],
      ['json', JSON.stringify({ content: [{ type: 'image', mimeType: 'image/png', data: pngHeadedNoise(40_000).toString('base64') }, { type: 'text', text: 'row,'.repeat(40_000) }] })],
      ['binary', crypto.randomBytes(300_000)],
    ];
    for (const [what, input] of inputs) {
      const r = (await guardLargeResult(input, { sessionPath: session, toolName: `fetch_${what}`, store }))!;
      expect(r.errors, what).toEqual([]);
      expect(r.payloadPath, what).toMatch(new RegExp(`^s3://${f.gw.bucket}/fleet/agent-1/long_responses/`));
      expect(r.metaPath, what).toMatch(/\.meta\.json$/);
      expect(r.message, what).toContain(`s3://${f.gw.bucket}/fleet/agent-1/long_responses/`);
      for (const secret of [f.gw.secretAccessKey, f.gw.accessKeyId]) {
        expect(r.message).not.toContain(secret);
        const sidecar = (await f.s3.get(r.metaPath!.replace(`s3://${f.gw.bucket}/`, '')))!.toString();
        expect(sidecar).not.toContain(secret);
      }
      if (what === 'json') expect(r.assets.length).toBe(1);
      if (r.assets.length) expect(r.assets[0]!.path).toMatch(/^s3:\/\/.*\/long_responses\/assets\//);
      const { store: st, metaKey } = S3SpillStore.locate(r.payloadPath!);
      const back = await restoreFromStore(st, metaKey);
      expect(back.equals(Buffer.isBuffer(input) ? input : Buffer.from(input)), what).toBe(true);
    }
    // Nothing was written locally: the bucket is the home.
    expect(fs.existsSync(session)).toBe(false);
    // The CLI restores from a URL too.
    const meta = (await f.s3.list('fleet/agent-1/long_responses/').next()).value!.find((o: { key: string }) => o.key.includes('fetch_binary') && o.key.endsWith('.meta.json'))!;
    const out = path.join(f.tmp, 'restored.bin');
    await run('npx', ['tsx', '--conditions=source', 'src/cli/main.ts', 'restore', `s3://${f.gw.bucket}/${meta.key}`, '-o', out], { cwd: REPO, env: { ...process.env } });
    expect(fs.readFileSync(out).equals(inputs[2]![1] as Buffer)).toBe(true);
  });

  it('SPILLWAY_STORE selects the bucket, and a result that passes through never loads the SDK', async () => {
    const script = `
      import { createRequire } from 'node:module';
      import { guardLargeResult } from './src/index.ts';
      const require = createRequire(import.meta.url);
      const sdk = () => Object.keys(require('module')._cache).filter((k) => k.includes('@aws-sdk')).length;
      const small = await guardLargeResult('small result', { sessionPath: ${JSON.stringify(path.join(f.tmp, 'agent-env'))} });
      const before = sdk();
      const big = await guardLargeResult('x'.repeat(200_000), { sessionPath: ${JSON.stringify(path.join(f.tmp, 'agent-env'))}, toolName: 'env' });
      console.log(JSON.stringify({ small, before, after: sdk(), payloadPath: big.payloadPath }));
      process.exit(0);
    `;
    const { stdout } = await run('npx', ['tsx', '--conditions=source', '--input-type=module', '-e', script], { cwd: REPO, env: { ...process.env, SPILLWAY_STORE: store } });
    const r = JSON.parse(stdout.trim().split('\n').at(-1)!);
    expect(r.small).toBeNull();
    expect(r.before).toBe(0);
    expect(r.after).toBeGreaterThan(0);
    expect(r.payloadPath).toMatch(new RegExp(`^s3://${f.gw.bucket}/fleet/agent-env/long_responses/`));
  });

  it('an unusable store setting saves locally and says why, without echoing credentials', async () => {
    const session = path.join(f.tmp, 'agent-bad');
    const r = (await guardLargeResult('y'.repeat(200_000), { sessionPath: session, toolName: 't', store: 's3://AKIDEXAMPLE42:wJalrXUtnFEMIK7MDENG@bucket/x' }))!;
    expect(r.payloadPath!.startsWith(session)).toBe(true);
    expect(r.message).toContain(session);
    expect(r.message).toMatch(/credentials go in AWS_ACCESS_KEY_ID/);
    expect(r.message).not.toContain('wJalrXUtnFEMIK7MDENG');
    expect(r.message).not.toContain('AKIDEXAMPLE42');
    expect((await restorePayload(r.payloadPath!)).toString()).toBe('y'.repeat(200_000));
    resetStoreHealth();
  });

  it('a gateway killed in the middle of spills: each falls back within its deadline, nothing is lost, sync completes later', async () => {
    const session = path.join(f.tmp, 'agent-kill');
    resetStoreHealth();
    const inputs = Array.from({ length: 24 }, (_, i) => `result ${i} ` + crypto.randomBytes(40_000).toString('hex'));
    const results: Array<{ i: number; ms: number; r: Awaited<ReturnType<typeof guardLargeResult>> }> = [];
    const storeTimeoutMs = 3_000;
    const spillOne = async (i: number) => {
      const t0 = performance.now();
      const r = await guardLargeResult(inputs[i]!, { sessionPath: session, toolName: 'kill', toolInput: { i }, store, storeTimeoutMs });
      results.push({ i, ms: performance.now() - t0, r });
    };
    // Spills running in parallel, and the gateway killed while they run (after a warm-up, so the
    // first spills reach the bucket and later ones meet a dead gateway mid-call).
    await guardLargeResult('warm-up ' + 'w'.repeat(100_000), { sessionPath: path.join(f.tmp, 'warm'), toolName: 'warm', store });
    const running = Promise.all(Array.from({ length: 24 }, (_, i) => new Promise((res) => setTimeout(res, i * 30)).then(() => spillOne(i))));
    while (results.length < 8) await new Promise((r) => setTimeout(r, 5));
    await f.gw.killGateway();
    await running;
    const local = results.filter((x) => x.r!.payloadPath!.startsWith(session));
    const remote = results.filter((x) => x.r!.payloadPath!.startsWith('s3://'));
    console.log(`gateway killed mid-run: ${remote.length} spills reached the bucket, ${local.length} fell back; slowest ${Math.round(Math.max(...results.map((x) => x.ms)))} ms`);
    expect(local.length).toBeGreaterThan(0);
    expect(remote.length).toBeGreaterThan(0);
    expect(local.length + remote.length).toBe(24);
    for (const x of results) {
      expect(x.ms).toBeLessThan(storeTimeoutMs * 3 + 2_000);
      expect(x.r!.metaPath, `spill ${x.i} has a sidecar`).toBeTruthy();
    }
    for (const x of local) {
      expect(x.r!.message).toContain(session); // the message says where it really went
      expect((await restorePayload(x.r!.payloadPath!)).toString()).toBe(inputs[x.i]);
    }
    expect((await listPending(process.env)).length).toBe(local.length);

    // Sync while the gateway is still down: nothing moves, the queue stays.
    process.env.SPILLWAY_STORE_TIMEOUT_MS = '1000';
    const down = await runSync({ session: [] });
    expect(down.report.stoppedBy).toBeTruthy();
    expect((await listPending(process.env)).length).toBe(local.length);

    await f.gw.startGateway();
    delete process.env.SPILLWAY_STORE_TIMEOUT_MS;
    resetStoreHealth();
    const up = await runSync({ session: [] });
    expect(up.failed).toBe(0);
    expect((await listPending(process.env)).length).toBe(0);
    // Every result is now in the bucket, byte-exact, exactly once per input.
    const metas: string[] = [];
    for await (const page of f.s3.list('fleet/agent-kill/long_responses/')) metas.push(...page.filter((o) => o.key.endsWith('.meta.json')).map((o) => o.key));
    expect(metas.length).toBe(24);
    const restored = new Set<string>();
    for (const k of metas) {
      const { store: st, metaKey } = S3SpillStore.locate(`s3://${f.gw.bucket}/${k}`);
      restored.add((await restoreFromStore(st, metaKey)).toString());
    }
    expect([...restored].sort()).toEqual([...inputs].sort());
  });

  it('1,000 concurrent spills from 4 processes into one session: every name distinct, nothing lost or overwritten', async () => {
    resetStoreHealth();
    const session = path.join(f.tmp, 'race-session');
    const perWorker = 250;
    const big = 1; // one 17 MB payload per worker goes up by multipart, under the same race
    const outs = await Promise.all(
      [0, 1, 2, 3].map((w) =>
        run('npx', ['tsx', '--conditions=source', 'test/s3/fixtures/spill-worker.ts', String(w), String(perWorker), String(big)], {
          cwd: REPO,
          // 1,000 spills at once on two shared cores: a call can wait seconds for its turn, which is
          // load, not an outage; the deadline is raised so that this test measures the race only.
          env: { ...process.env, SPILLWAY_STORE: store, SPILL_SESSION: session, SPILLWAY_STORE_TIMEOUT_MS: '60000' },
          maxBuffer: 64 * 1024 * 1024,
        }),
      ),
    );
    const spills = outs.flatMap((o) => o.stdout.trim().split('\n').map((l) => JSON.parse(l) as { w: number; i: number; bytes: number; payloadPath: string; metaPath: string; errors: string[] }));
    expect(spills).toHaveLength(1_000);
    for (const s of spills) {
      expect(s.errors, `${s.w}/${s.i}: ${JSON.stringify(s.errors)}`).toEqual([]);
      expect(s.payloadPath).toMatch(new RegExp(`^s3://${f.gw.bucket}/fleet/race-session/long_responses/20261201T090000000Z_race_`));
    }
    expect(new Set(spills.map((s) => s.payloadPath)).size).toBe(1_000);
    expect(fs.existsSync(session)).toBe(false); // none fell back

    const sidecars: string[] = [];
    for await (const page of f.s3.list('fleet/race-session/long_responses/')) sidecars.push(...page.filter((o) => o.key.endsWith('.meta.json')).map((o) => o.key));
    expect(sidecars).toHaveLength(1_000);
    // The same content the worker made (spill-worker.ts).
    const expected = (w: number, i: number, bytes: number) => {
      const head = `worker ${w} spill ${i} `;
      return head + `${w}:${i};`.repeat(Math.ceil((bytes - head.length) / `${w}:${i};`.length));
    };
    // Every payload holds exactly what its own spill wrote (full bytes for the small ones, ends for the big).
    const queue = [...spills];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let s = queue.pop(); s; s = queue.pop()) {
          const key = s.payloadPath.replace(`s3://${f.gw.bucket}/`, '');
          const want = expected(s.w, s.i, s.bytes);
          if (s.bytes < 1_000_000) expect((await f.s3.get(key))!.toString(), key).toBe(want);
          else {
            const h = await f.s3.head(key);
            expect(h!.size).toBe(Buffer.byteLength(want));
            expect(h!.etag).toMatch(/-\d+$/);
            const tail = await f.s3.getRange(key, h!.size - 64, h!.size);
            expect(tail.bytes.toString()).toBe(want.slice(-64));
          }
          const meta = JSON.parse((await f.s3.get(s.metaPath.replace(`s3://${f.gw.bucket}/`, '')))!.toString());
          expect(meta.sha256).toBe(crypto.createHash('sha256').update(want).digest('hex'));
        }
      }),
    );
  }, 300_000);
});
