import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { expect, it } from 'vitest';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { openIndex } from '../../src/index/index.js';
import { runSync } from '../../src/cli/commands/sync.js';
import { s3Suite } from '../helpers/ceph.js';
import { useGateway } from '../helpers/ceph-fixture.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');

s3Suite('an S3 bucket as an index root', () => {
  const f = useGateway('s3idx');
  const allKeys = async (prefix: string) => {
    const out: string[] = [];
    for await (const page of f.s3.list(prefix)) out.push(...page.map((o) => `${o.key} ${o.etag}`));
    return out.sort();
  };

  async function upload(session: string, n: number, bytes = 60_000) {
    const dir = path.join(f.tmp, session);
    for (let i = 0; i < n; i++) {
      const text = `${session} payload ${i} ` + crypto.randomBytes(bytes / 2).toString('hex');
      await guardLargeResult(text, { sessionPath: dir, toolName: `tool_${i % 3}` });
    }
    const r = await runSync({ store: `s3://${f.gw.bucket}/idx`, session: [dir] });
    expect(r.failed).toBe(0);
    return dir;
  }

  it('indexes, re-indexes with nothing read when nothing changed, then sees new and deleted objects; reads windows', async () => {
    await upload('s-one', 5);
    await upload('s-two', 3, 3 * 1024 * 1024);
    const before = await allKeys('idx/');
    const index = openIndex({ dbPath: path.join(f.tmp, 'index.sqlite') });
    try {
      const root = index.addRoot(`s3://${f.gw.bucket}/idx/`);
      expect(root.path).toBe(`s3://${f.gw.bucket}/idx`);
      expect(root.readOnly).toBe(true);
      const first = await index.scan({ rootId: root.id });
      expect(first.warnings).toEqual([]);
      expect(first.payloads).toBe(8);
      expect(first.sessions).toBe(2);
      const rows = index.listPayloads({ limit: 100 }).rows;
      expect(rows).toHaveLength(8);
      const sessions = index.listSessions({});
      expect(sessions.map((s) => s.name).sort()).toEqual(['s-one', 's-two']);

      // A poll reads the journal only: nothing new, nothing visited.
      const polled = await index.scan({ rootId: root.id });
      expect(polled.unchanged + polled.read + polled.added + polled.changed + polled.removed).toBe(0);
      expect(polled.payloads).toBe(8);
      // A reindex lists the whole bucket and reads nothing that did not change.
      const again = await index.scan({ rootId: root.id, full: true });
      expect(await allKeys('idx/')).toEqual(before); // indexing wrote nothing to the bucket
      expect(again.unchanged).toBe(8);
      expect(again.read).toBe(0);
      expect(again.added + again.changed + again.removed).toBe(0);

      // Full-text search works on what was read by range (head and tail of each payload).
      const hit = index.listPayloads({ query: 's-two payload 2' }).rows;
      expect(hit.length).toBeGreaterThan(0);

      // A new spill arrives; one is deleted; a payload shows up without its sidecar.
      await upload('s-one', 1);
      const one = sessions.find((x) => x.name === 's-one')!;
      const victim = (await index.getPayload(rows.find((r) => r.tool === 'tool_1' && r.sessionId === one.id)!.id))!;
      const key = (p: string) => p.replace(/^s3:\/\/?[^/]+\//, '');
      await f.s3.deleteKeys([key(victim.path), key(victim.path).replace(/\.[^./]+$/, '.meta.json')]);
      await f.s3.putIfAbsent('idx/s-two/long_responses/20261201T000000000Z_half_00000000_0.txt', 'half written');
      const mark = await allKeys('idx/');
      // Deletions and a payload without a sidecar have no journal entry: the reconciling listing finds them.
      const third = await index.scan({ rootId: root.id, full: true });
      expect(third.removed).toBe(1);
      expect(third.added).toBe(2);
      expect(third.warnings.join('\n')).toMatch(/incomplete spill \(no \.meta\.json sidecar/);
      expect(index.listPayloads({ limit: 100 }).rows.some((r) => r.id === victim.row.id)).toBe(false);
      expect(victim.path).toMatch(new RegExp(`^s3:/+${f.gw.bucket}/idx/s-one/long_responses/`));

      // Content comes from the bucket, never from a local path.
      const big = index.listPayloads({ limit: 100 }).rows.find((r) => r.bytes > 1_000_000)!;
      const c = await index.payloadContent(big.id);
      expect(c).toMatchObject({ type: 'file', bytes: big.bytes });
      expect((c as { path: string }).path).toMatch(/^s3:\/\/?/);
      expect(await allKeys('idx/')).toEqual(mark);
    } finally {
      await index.close();
    }
  });
  it('`spillway index s3://…` registers the bucket read-only, indexes it and exits', async () => {
    const dir = path.join(f.tmp, 'cli-session');
    for (let i = 0; i < 3; i++) await guardLargeResult(`cli payload ${i} ` + crypto.randomBytes(30_000).toString('hex'), { sessionPath: dir, toolName: 'cli_tool' });
    const store = `s3://${f.gw.bucket}/cli-idx`;
    expect((await runSync({ store, session: [dir] })).failed).toBe(0);
    const db = path.join(f.tmp, 'cli-index.sqlite');
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=source', path.join(REPO, 'src/cli/main.ts'), 'index', `${store}/`, '--db', db, '--json'], {
      cwd: REPO,
      env: { ...process.env, SPILLWAY_HOME: path.join(f.tmp, 'cli-home') },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ sessions: 1, payloads: 3 });
    const index = openIndex({ dbPath: db });
    try {
      const root = index.listRoots().find((x) => x.path === store)!;
      expect(root.readOnly).toBe(true);
      expect(index.listPayloads({ rootId: root.id }).rows.map((x) => x.tool)).toEqual(['cli_tool', 'cli_tool', 'cli_tool']);
    } finally {
      await index.close();
    }
  });
});
