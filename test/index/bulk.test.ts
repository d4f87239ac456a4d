import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { BulkWriter } from '../../src/index/bulk.js';
import { type SpillIndex, openIndex } from '../../src/index/index.js';
import { generateSessionsRoot, spillOne } from '../helpers/gen-sessions.js';
import { CLAUDE_PROJECTS, copyTree, tmpDir } from './helpers.js';

/** Everything a user can see of an index, in a comparable form (ids are stable across DBs). */
async function snapshot(index: SpillIndex) {
  const rows = index.listPayloads({ limit: 1000, sort: { field: 'createdAt', dir: 'asc' } }).rows;
  const details = [];
  for (const r of rows) {
    const d = await index.getPayload(r.id);
    details.push({ ...d, row: { ...d.row } });
  }
  const search = (q: string) => index.listPayloads({ query: q, limit: 1000 }).rows.map((r) => [r.id, r.snippet]).sort();
  return {
    rows,
    details,
    sessions: index.listSessions(),
    searches: ['diagnostics', 'function', 'error*', 'zanzibar'].map(search),
    stats: index.stats(),
  };
}

function openWith(bulkMinRows: number, bulkWriter: 'always' | 'never' = 'always') {
  const dbPath = path.join(tmpDir('spillway-db-'), 'index.sqlite');
  const index = openIndex({ dbPath, bulkMinRows, bulkWriter });
  return { index, dbPath };
}

describe('bulk indexing through the writer thread', () => {
  it('gives exactly the index the main thread builds: rows, details, assets, search, sessions', async () => {
    const dir = path.join(tmpDir(), 'sessions');
    await generateSessionsRoot(dir, { sessions: 3, payloads: 60, seed: 7, imageShare: 0.2 });
    // A payload whose sidecar carries a summary run takes the main-thread path inside a bulk scan.
    const s0 = path.join(dir, 'session-000');
    const extra = await spillOne(s0, { tool: 'with_run', text: 'zanzibar '.repeat(4000), time: new Date(Date.UTC(2026, 10, 2)) });
    const meta = JSON.parse(fs.readFileSync(extra.metaPath, 'utf8'));
    meta.summaryRuns = [{ id: 'r1', createdAt: '2026-11-30T09:00:00.000Z', status: 'ok', summary: 'zanzibar digest', provider: 'structural', model: 'none', inputTokens: 1, outputTokens: 1, ms: 1 }];
    fs.writeFileSync(extra.metaPath, JSON.stringify(meta));
    // Imported transcripts go through the same path.
    copyTree(CLAUDE_PROJECTS, path.join(dir, 'claude'));

    const main = openWith(Infinity);
    const bulk = openWith(1);
    // A big scan on the main thread (no spare core) loads the same way, FTS merging paused.
    const big = openWith(1, 'never');
    main.index.addRoot(dir);
    bulk.index.addRoot(dir);
    big.index.addRoot(dir);
    const a = await main.index.scan();
    const b = await bulk.index.scan();
    const c = await big.index.scan();
    expect({ ...c, seconds: 0, listSeconds: 0 }).toEqual({ ...a, seconds: 0, listSeconds: 0 });
    expect(await snapshot(big.index)).toEqual(await snapshot(main.index));
    await big.index.close();
    expect(b.warnings.filter((w) => /bulk/.test(w))).toEqual([]);
    expect(a.writer).toBe('main');
    expect(b.writer).toBe('worker');
    expect({ ...b, seconds: 0, listSeconds: 0, writer: 'main' }).toEqual({ ...a, seconds: 0, listSeconds: 0 });
    expect(b.added).toBeGreaterThan(60);
    expect(await snapshot(bulk.index)).toEqual(await snapshot(main.index));

    // A second root into a non-empty index: ids and keys are checked against what is there.
    const dir2 = path.join(tmpDir(), 'more');
    await generateSessionsRoot(dir2, { sessions: 2, payloads: 30, seed: 8 });
    const r2a = main.index.addRoot(dir2);
    const r2b = bulk.index.addRoot(dir2);
    const a2 = await main.index.scan({ rootId: r2a.id });
    const b2 = await bulk.index.scan({ rootId: r2b.id });
    expect(b2.writer).toBe('worker');
    expect({ ...b2, seconds: 0, listSeconds: 0, writer: 'main' }).toEqual({ ...a2, seconds: 0, listSeconds: 0 });
    expect(b2.added).toBe(30);
    expect(await snapshot(bulk.index)).toEqual(await snapshot(main.index));

    // The bulk-built index is a normal one afterwards: incremental re-scan, edits, deletes.
    expect((await bulk.index.scan()).read).toBe(0);
    fs.rmSync(extra.payloadPath);
    fs.rmSync(extra.metaPath);
    const after = await bulk.index.scan();
    expect(after).toMatchObject({ removed: 1, added: 0 });
    expect(bulk.index.listPayloads({ query: 'zanzibar' }).total).toBe(0);
    await main.index.close();
    await bulk.index.close();

    // Full-text rows match payload rows one to one, and the worker left a checkpointed database.
    const raw = new Database(bulk.dbPath, { readonly: true });
    const n = (raw.prepare('SELECT count(*) AS n FROM payloads').get() as { n: number }).n;
    expect(raw.prepare('SELECT count(*) AS n FROM payload_fts').get()).toEqual({ n });
    expect(raw.prepare('SELECT count(*) AS n FROM payload_fts WHERE rowid NOT IN (SELECT rowid FROM payloads)').get()).toEqual({ n: 0 });
    // FTS5 merging, paused for the load, is back to its default.
    expect(raw.prepare("SELECT v FROM payload_fts_config WHERE k = 'automerge'").get()).toEqual({ v: 4 });
    raw.close();
    const rw = new Database(bulk.dbPath);
    expect(() => rw.exec("INSERT INTO payload_fts(payload_fts) VALUES('integrity-check')")).not.toThrow();
    rw.close();
  });

  it('hands back every batch it could not commit (everything since the last commit)', async () => {
    const dbDir = tmpDir('spillway-db-');
    const dbPath = path.join(dbDir, 'index.sqlite');
    const db = new Database(dbPath);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    db.close();
    const w = new BulkWriter<string>(dbPath, { sql: ['INSERT INTO t (id, v) VALUES (?, ?)'] });
    w.send([[[1, 'a']]], 'first');
    // NOT NULL violated: this batch and everything since the last commit comes back.
    w.send([[[2, null]]], 'bad');
    w.send([[[3, 'c']]], 'after');
    const failed = await w.settle();
    expect(failed.sort()).toEqual(['after', 'bad', 'first']);
    expect(w.error).toMatch(/NOT NULL/);
    await w.finish();
    const check = new Database(dbPath, { readonly: true });
    expect(check.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 });
    check.close();

  });
});
