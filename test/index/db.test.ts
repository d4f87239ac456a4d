import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS, READ_INDEXES, SCHEMA_VERSION, dropReadIndexes, migrate } from '../../src/index/db.js';
import { IndexCore } from '../../src/index/core.js';
import { openIndex } from '../../src/index/index.js';
import { localSource } from '../../src/index/source.js';
import { generateSessionsRoot } from '../helpers/gen-sessions.js';
import { tmpDir } from './helpers.js';

async function smallRoot() {
  const dir = path.join(tmpDir(), 'sessions');
  await generateSessionsRoot(dir, { sessions: 2, payloads: 8, seed: 5 });
  return dir;
}

/**
 * An in-memory database at schema `version` with one root and two sources of it, a Spillway session
 * (`/r/a`) and a Claude Code transcript (`/r/b.jsonl`); with `payload`, one spilled payload of the first.
 */
function sourcesAt(version: number, o: { payload?: boolean } = {}): Database.Database {
  const db = new Database(':memory:');
  migrate(db, version);
  db.prepare("INSERT INTO roots (id, path, kind, added_at) VALUES ('r', '/r', 'sessions', 'now')").run();
  const src = db.prepare("INSERT INTO sources (root_id, session_id, key, fingerprint, hash, kind) VALUES ('r', 's', ?, 'fp', 'h', ?)");
  src.run('/r/a', 'spillway');
  src.run('/r/b.jsonl', 'claude-code');
  if (o.payload) {
    db.prepare(
      "INSERT INTO payloads (id, source_id, session_id, root_id, tool, created_at, bytes, tokens, action, kind, path) VALUES ('p', 1, 's', 'r', 't', 'now', 1, 1, 'spill', 'text', '/r/a.txt')",
    ).run();
  }
  return db;
}

describe('the index database', () => {
  it('uses WAL and records the schema version', async () => {
    const dbPath = path.join(tmpDir(), 'index.sqlite');
    const index = openIndex({ dbPath });
    await index.close();
    const db = new Database(dbPath, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
    expect(SCHEMA_VERSION).toBe(MIGRATIONS.length);
  });

  it('moves a corrupt database aside and rebuilds from the files', async () => {
    const root = await smallRoot();
    const dir = tmpDir();
    const dbPath = path.join(dir, 'index.sqlite');
    fs.writeFileSync(dbPath, Buffer.concat([Buffer.from('definitely not sqlite\n'), Buffer.alloc(8192, 7)]));
    const index = openIndex({ dbPath });
    expect(index.warnings.join('\n')).toMatch(/unreadable.*moved to .*index\.sqlite\.corrupt-/);
    const aside = fs.readdirSync(dir).filter((f) => f.startsWith('index.sqlite.corrupt-'));
    expect(aside).toHaveLength(1);
    expect(fs.readFileSync(path.join(dir, aside[0]!)).subarray(0, 10).toString()).toBe('definitely');
    index.addRoot(root);
    expect((await index.scan()).payloads).toBe(8);
    await index.close();
  });

  it('builds the database that replaces a corrupt one 0600, its -wal and -shm too (issue 32: as private as the first)', async () => {
    const dir = tmpDir();
    const dbPath = path.join(dir, 'index.sqlite');
    fs.writeFileSync(dbPath, Buffer.concat([Buffer.from('definitely not sqlite\n'), Buffer.alloc(8192, 7)]), { mode: 0o600 });
    // SQLite alone would create the new file with the umask's mode (0644 under the usual 022).
    const umask = process.umask(0o022);
    try {
      const index = openIndex({ dbPath });
      expect(index.warnings.join('\n')).toMatch(/unreadable.*moved to/);
      for (const f of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) expect((fs.statSync(f).mode & 0o777).toString(8), f).toBe('600');
      await index.close();
    } finally {
      process.umask(umask);
    }
  });

  it('keeps the registered roots when a damaged database can still name them', async () => {
    const root = await smallRoot();
    const dir = tmpDir();
    const dbPath = path.join(dir, 'index.sqlite');
    const first = openIndex({ dbPath });
    first.addRoot(root);
    await first.scan();
    await first.close();
    // Written by a future Spillway: unknown schema, so it is set aside, but its roots are kept.
    const db = new Database(dbPath);
    db.pragma(`user_version = ${SCHEMA_VERSION + 5}`);
    db.close();
    const second = openIndex({ dbPath });
    expect(second.warnings.join('\n')).toMatch(/newer than this Spillway/);
    expect(second.listRoots().map((r) => r.path)).toEqual([fs.realpathSync(root)]);
    expect((await second.scan()).payloads).toBe(8);
    await second.close();
  });

  it('migrates a version-1 database, keeping roots and re-reading derived data', async () => {
    const root = await smallRoot();
    const dbPath = path.join(tmpDir(), 'index.sqlite');
    const old = new Database(dbPath);
    migrate(old, 1);
    expect(old.pragma('user_version', { simple: true })).toBe(1);
    old.prepare("INSERT INTO roots (id, path, kind, added_at) VALUES ('rold', ?, 'sessions', '2026-01-01T00:00:00.000Z')").run(fs.realpathSync(root));
    old.prepare("INSERT INTO sessions (id, root_id, path, name, kind, read_only) VALUES ('sold', 'rold', '/x', 'x', 'spillway', 0)").run();
    old.prepare("INSERT INTO sources (root_id, session_id, key, fingerprint, hash) VALUES ('rold', 'sold', '/x/long_responses/a', 'fp', 'h')").run();
    old.close();

    const index = openIndex({ dbPath });
    expect(index.warnings).toEqual([]);
    expect(index.listRoots().map((r) => r.id)).toEqual(['rold']);
    const stats = await index.scan();
    expect(stats.payloads).toBe(8);
    // The stale v1 source (its folder does not exist) is gone after the scan.
    expect(index.listSessions().map((s) => s.path)).not.toContain('/x');
    const rows = index.listPayloads({ limit: 100 }).rows;
    expect(rows[0]!.summaryCount).toBe(0);
    await index.close();
    const db = new Database(dbPath, { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
  });

  it('migration 3 marks Spillway sources stale (their tokens are re-read), and only those', () => {
    const db = sourcesAt(2);
    migrate(db, 3);
    expect(db.prepare('SELECT kind, fingerprint FROM sources ORDER BY key').all()).toEqual([
      { kind: 'spillway', fingerprint: '' },
      { kind: 'claude-code', fingerprint: 'fp' },
    ]);
    db.close();
  });

  it('migration 4 re-reads imports (new spill forms, session titles) and keeps a full-text index that needs no refill', () => {
    const db = sourcesAt(3, { payload: true });
    migrate(db, 5);
    expect(db.prepare('SELECT kind, fingerprint FROM sources ORDER BY key').all()).toEqual([
      { kind: 'spillway', fingerprint: 'fp' },
      { kind: 'claude-code', fingerprint: '' },
    ]);
    // Rows written before two-phase scans already have their full-text rows.
    expect(db.prepare('SELECT fts_pending FROM payloads').all()).toEqual([{ fts_pending: 0 }]);
    expect(db.prepare('SELECT read_only, auto FROM roots').all()).toEqual([{ read_only: 0, auto: 0 }]);
    db.close();
  });

  it('migration 6 (one row per tool call) re-reads every source, its content hash too, and starts with nothing covered', () => {
    const db = sourcesAt(5, { payload: true });
    migrate(db);
    // An unchanged content hash would keep the old rows: it is cleared so both are rewritten with their call ids.
    expect(db.prepare('SELECT kind, fingerprint, hash FROM sources ORDER BY key').all()).toEqual([
      { kind: 'spillway', fingerprint: '', hash: null },
      { kind: 'claude-code', fingerprint: '', hash: null },
    ]);
    expect(db.prepare('SELECT covered, call_id, spill_id FROM payloads').all()).toEqual([{ covered: 0, call_id: null, spill_id: null }]);
    db.close();
  });

  it('names every index reads use as READ_INDEXES does, without the unused sources_session (migration 5)', () => {
    const db = new Database(':memory:');
    migrate(db);
    const made = db
      .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('sources', 'payloads', 'assets') ORDER BY name")
      .all() as Array<{ name: string; sql: string }>;
    expect(made.map((m) => [m.name, m.sql.replace(/\s+/g, ' ')])).toEqual(
      READ_INDEXES.map((ix) => [ix.name, `CREATE INDEX ${ix.name} ON ${ix.on}`]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    );
    expect(made.map((m) => m.name)).not.toContain('sources_session');
    db.close();
  });

  it('lists a first index without its read indexes and builds them before full text; a database left without them gets them at open', async () => {
    const root = await smallRoot();
    const dbPath = path.join(tmpDir(), 'index.sqlite');
    const readIndexes = () => {
      const db = new Database(dbPath, { readonly: true });
      try {
        return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL").all() as Array<{ name: string }>).map((r) => r.name);
      } finally {
        db.close();
      }
    };
    const index = openIndex({ dbPath, bulkMinRows: Infinity });
    index.addRoot(root);
    const seen: Array<{ phase: string | undefined; present: string[]; page: number[] }> = [];
    await index.scan({
      onProgress: (p) => {
        if (p.done !== p.total || seen.some((s) => s.phase === p.phase)) return;
        const page = index.listPayloads({ sort: { field: 'tokens', dir: 'desc' }, limit: 3 }).rows.map((r) => r.tokens);
        seen.push({ phase: p.phase, present: readIndexes().filter((n) => READ_INDEXES.some((ix) => ix.name === n)), page });
      },
    });
    const listed = seen.find((s) => s.phase === 'list')!;
    // Listed and sortable with no read index yet...
    expect(listed.present).toEqual([]);
    expect(listed.page).toEqual([...listed.page].sort((a, b) => b - a));
    expect(listed.page).toHaveLength(3);
    // ...and every one of them there once full text has begun (and after).
    expect(seen.find((s) => s.phase === 'fulltext')!.present.sort()).toEqual(READ_INDEXES.map((ix) => ix.name).sort());
    const again = await index.scan();
    expect(again.unchanged).toBe(8);
    await index.close();

    // A process that stopped before building them: the next open does.
    const db = new Database(dbPath);
    dropReadIndexes(db);
    db.close();
    expect(readIndexes().filter((n) => READ_INDEXES.some((ix) => ix.name === n))).toEqual([]);
    const reopened = openIndex({ dbPath });
    expect(readIndexes().sort()).toEqual(expect.arrayContaining(READ_INDEXES.map((ix) => ix.name)));
    expect(reopened.listPayloads({ limit: 100 }).total).toBe(8);
    await reopened.close();
  });

  it('holds WAL checkpoints while a listing or a writer thread runs, and gives them back after the last hold', () => {
    const core = new IndexCore(path.join(tmpDir(), 'index.sqlite'), localSource);
    const value = () => core.db.pragma('wal_autocheckpoint', { simple: true });
    expect(value()).toBe(1000);
    const listing = core.holdCheckpoints();
    const writer = core.holdCheckpoints();
    expect(value()).toBe(0);
    listing();
    listing();
    expect(value()).toBe(0);
    writer();
    expect(value()).toBe(1000);
    core.db.close();
  });

  it('refuses a database inside a sessions root', async () => {
    const root = await smallRoot();
    const index = openIndex({ dbPath: path.join(root, 'index.sqlite') });
    expect(() => index.addRoot(root)).toThrow(/must not live inside a sessions root/);
    await index.close();
  });
});
