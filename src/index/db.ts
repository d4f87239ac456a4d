import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export type DB = Database.Database;

/** Migration 1: the tables as they were first made (later migrations alter them). */
const SCHEMA_1_SQL = `
      CREATE TABLE roots (
        id TEXT PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        added_at TEXT NOT NULL,
        last_scan_at TEXT
      );
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        root_id TEXT NOT NULL REFERENCES roots(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        read_only INTEGER NOT NULL
      );
      CREATE INDEX sessions_root ON sessions(root_id);
      CREATE TABLE sources (
        id INTEGER PRIMARY KEY,
        root_id TEXT NOT NULL REFERENCES roots(id) ON DELETE CASCADE,
        session_id TEXT NOT NULL,
        key TEXT NOT NULL UNIQUE,
        fingerprint TEXT NOT NULL,
        hash TEXT,
        kind TEXT NOT NULL DEFAULT 'spillway'
      );
      CREATE INDEX sources_root ON sources(root_id);
      CREATE INDEX sources_session ON sources(session_id);
      CREATE TABLE payloads (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
        session_id TEXT NOT NULL,
        root_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        created_at TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        action TEXT NOT NULL,
        kind TEXT NOT NULL,
        asset_count INTEGER NOT NULL DEFAULT 0,
        input_excerpt TEXT,
        input_json TEXT,
        intent TEXT,
        t_chars4 INTEGER,
        t_craft_density INTEGER,
        t_calibrated INTEGER,
        t_o200k INTEGER,
        t_cl100k INTEGER,
        t_claude INTEGER,
        path TEXT NOT NULL,
        linked_path TEXT,
        meta_path TEXT,
        message TEXT,
        binary INTEGER NOT NULL DEFAULT 0,
        lines INTEGER,
        source_json TEXT
      );
      CREATE INDEX payloads_session ON payloads(session_id);
      CREATE INDEX payloads_root ON payloads(root_id);
      CREATE INDEX payloads_source ON payloads(source_id);
      CREATE INDEX payloads_tokens ON payloads(tokens);
      CREATE INDEX payloads_created ON payloads(created_at);
      CREATE INDEX payloads_tool ON payloads(tool);
      CREATE TABLE assets (
        payload_rowid INTEGER NOT NULL REFERENCES payloads(rowid) ON DELETE CASCADE,
        sha256 TEXT NOT NULL,
        mime TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        path TEXT NOT NULL,
        rel_path TEXT NOT NULL,
        json_path TEXT,
        source TEXT,
        sniffed INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX assets_payload ON assets(payload_rowid);
      CREATE VIRTUAL TABLE payload_fts USING fts5(tool, input, body, tokenize = 'unicode61 remove_diacritics 2');
      CREATE TRIGGER payloads_ad AFTER DELETE ON payloads BEGIN
        DELETE FROM payload_fts WHERE rowid = old.rowid;
      END;
    `;

/**
 * Schema migrations, applied in order; `PRAGMA user_version` holds how many ran.
 * Everything but `roots` and DB-only summary runs is derived from the files, so a migration
 * that changes derived data may simply mark every source stale (`fingerprint = ''`) and let the
 * next scan re-read it.
 */
export const MIGRATIONS: ReadonlyArray<(db: DB) => void> = [
  // 1: roots, sessions, sources (one unit of incremental indexing), payloads, assets, FTS.
  (db) => db.exec(SCHEMA_1_SQL),
  // 2: summary runs (some exist only here: runs made on read-only imported sessions), searchable;
  //    inline base64 bookkeeping for the waste report. Derived columns changed: re-read everything.
  (db) => {
    db.exec(`
      CREATE TABLE summary_runs (
        payload_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        origin TEXT NOT NULL,
        summary TEXT NOT NULL,
        json TEXT NOT NULL,
        PRIMARY KEY (payload_id, run_id)
      );
      ALTER TABLE payloads ADD COLUMN b64_runs INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE payloads ADD COLUMN b64_chars INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE payloads ADD COLUMN b64_tokens INTEGER NOT NULL DEFAULT 0;
      CREATE VIRTUAL TABLE summary_fts USING fts5(summary, tokenize = 'unicode61 remove_diacritics 2');
      CREATE TRIGGER payloads_ad_summary AFTER DELETE ON payloads BEGIN
        DELETE FROM summary_fts WHERE rowid = old.rowid;
      END;
      UPDATE sources SET fingerprint = '';
    `);
  },
  // 3: a Spillway payload's tokens are the number the guard decided with (an exact count near the
  //    limit, or a corrected estimate) rather than always the calibrated one: re-read those sources.
  (db) => {
    db.exec(`UPDATE sources SET fingerprint = '' WHERE kind = 'spillway';`);
  },
  // 4: two-phase scans (a payload is listed first; fts_pending > 0 until its full-text row is
  //    written: a token unique to that insert; no index on it, one more per insert would cost the
  //    listing more than the full-text phase's scans of payloads_root cost), read-only and default
  //    ("auto") roots, and sessions named the way people know them. Imports gained fields and
  //    spill forms: re-read them.
  (db) => {
    db.exec(`
      ALTER TABLE payloads ADD COLUMN fts_pending INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE roots ADD COLUMN read_only INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE roots ADD COLUMN auto INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE sessions ADD COLUMN project TEXT;
      ALTER TABLE sessions ADD COLUMN title TEXT;
      ALTER TABLE sessions ADD COLUMN client TEXT;
      ALTER TABLE sessions ADD COLUMN parent_id TEXT;
      UPDATE sources SET fingerprint = '' WHERE kind != 'spillway';
    `);
  },
  // 5: no query looks sources up by session; its index only cost every listed unit an insert.
  (db) => {
    db.exec('DROP INDEX IF EXISTS sources_session;');
  },
  // 6: one row per tool call. A transcript's result is joined with the spill the hook or the proxy
  //    made for it (join.ts): `call_id` (the client's tool call id, from the transcript or the
  //    sidecar), `spill_id`/`join_how` on the transcript's row, `covered` on the spill's, the input's
  //    hash for joins inferred without an id; a spill session's transcript session (`joined_id`) and
  //    what its sidecars say of the client. Sidecars and transcripts gained fields: re-read all.
  (db) => {
    db.exec(`
      ALTER TABLE payloads ADD COLUMN call_id TEXT;
      ALTER TABLE payloads ADD COLUMN call_client TEXT;
      ALTER TABLE payloads ADD COLUMN input_hash TEXT;
      ALTER TABLE payloads ADD COLUMN spill_id TEXT;
      ALTER TABLE payloads ADD COLUMN join_how TEXT;
      ALTER TABLE payloads ADD COLUMN covered INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE sessions ADD COLUMN joined_id TEXT;
      ALTER TABLE sessions ADD COLUMN spill_client TEXT;
      ALTER TABLE sessions ADD COLUMN spill_cwd TEXT;
      UPDATE sources SET fingerprint = '', hash = NULL;
    `);
  },
  // 7: the model calls of each transcript and the compactions between them (turns.ts), keyed by
  //    session first (the timeline reads a session's rows; no extra index to keep up while listing),
  //    and what a unit's reader could not read. Transcripts re-read to fill them.
  (db) => {
    db.exec(`
      CREATE TABLE turns (
        session_id TEXT NOT NULL,
        source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        at TEXT NOT NULL,
        model TEXT,
        context INTEGER,
        input INTEGER,
        cache_write INTEGER,
        cache_read INTEGER,
        output INTEGER,
        window INTEGER,
        kind TEXT NOT NULL,
        parts_json TEXT NOT NULL,
        tools_json TEXT NOT NULL,
        line INTEGER NOT NULL,
        PRIMARY KEY (session_id, source_id, seq)
      ) WITHOUT ROWID;
      CREATE TABLE compactions (
        session_id TEXT NOT NULL,
        source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
        n INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        at TEXT NOT NULL,
        kind TEXT NOT NULL,
        trigger TEXT,
        pre_tokens INTEGER,
        post_tokens INTEGER,
        tokens_saved INTEGER,
        tool_ids_json TEXT NOT NULL,
        line INTEGER NOT NULL,
        PRIMARY KEY (session_id, source_id, n)
      ) WITHOUT ROWID;
      CREATE TABLE turn_sources (
        source_id INTEGER PRIMARY KEY REFERENCES sources(id) ON DELETE CASCADE,
        session_id TEXT NOT NULL,
        baseline_tokens INTEGER,
        notes_json TEXT NOT NULL
      );
      UPDATE sources SET fingerprint = '', hash = NULL WHERE kind != 'spillway';
    `);
  },
  // 8: what a root's source remembers between runs (an S3 root's journal cursor and when it was
  //    last listed whole), so a restart reads what is new instead of listing the bucket again.
  (db) => {
    db.exec('ALTER TABLE roots ADD COLUMN source_state TEXT;');
  },
  // 9: a search lists a hit on a joined spill on the transcript's row that joined it (queries.ts):
  //    the joined rows by their spill_id, without a scan of every payload (100,000 payloads, 10,000 joined: a median 65 ms a search scanning, 26 ms through this index, same run).
  (db) => {
    db.exec('CREATE INDEX IF NOT EXISTS payloads_spill ON payloads(spill_id) WHERE spill_id IS NOT NULL;');
  },
  // 10: the ledger of each tool result (ledger.ts), on its row so a listing writes it with the row and
  //     every view reads it without a join: full (text estimate + images by pixels), as the client would
  //     give it (tokens and the rule that decided: src/agents), entered (and whether measured from the
  //     API's usage or estimated), kept out (assets, their bytes, their cost had they entered), images
  //     in the result. Everything derived: re-read all.
  (db) => {
    db.exec(`
      ALTER TABLE payloads ADD COLUMN l_full INTEGER;
      ALTER TABLE payloads ADD COLUMN l_client INTEGER;
      ALTER TABLE payloads ADD COLUMN l_client_rule TEXT;
      ALTER TABLE payloads ADD COLUMN l_entered INTEGER;
      ALTER TABLE payloads ADD COLUMN l_entered_how TEXT;
      ALTER TABLE payloads ADD COLUMN l_kept_assets INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE payloads ADD COLUMN l_kept_bytes INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE payloads ADD COLUMN l_kept_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE payloads ADD COLUMN l_images INTEGER NOT NULL DEFAULT 0;
      UPDATE sources SET fingerprint = '', hash = NULL;
    `);
  },
  // 11: read-backs (readback.ts): each later call that read a spill, the spill, the part it read
  //     (lines, bytes, a grep and its matched lines, a jq path, a query) and what the call cost.
  //     Rebuilt after every listing that changed something; transcripts re-read so the first is one.
  (db) => {
    db.exec(`
      CREATE TABLE read_backs (
        reader_id TEXT NOT NULL,
        n INTEGER NOT NULL,
        spill_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        call_id TEXT,
        tool TEXT NOT NULL,
        at TEXT NOT NULL,
        via TEXT NOT NULL,
        path TEXT NOT NULL,
        part_json TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        PRIMARY KEY (reader_id, n)
      ) WITHOUT ROWID;
      CREATE INDEX read_backs_spill ON read_backs(spill_id);
      UPDATE sources SET fingerprint = '', hash = NULL WHERE kind != 'spillway';
    `);
  },
  // 12: the rule that produced each spill (its sidecar's `rule`: where the limit and each summary
  //     setting came from) with the settings it ran with (the sidecar's limit, the guard's summary
  //     run's provider, model and template), as one checked JSON on the spill's row (spill-rule.ts):
  //     the per-tool evidence and the before/after comparison group by it. Sidecars re-read to fill it.
  (db) => {
    db.exec(`
      ALTER TABLE payloads ADD COLUMN rule_json TEXT;
      UPDATE sources SET fingerprint = '', hash = NULL WHERE kind = 'spillway';
    `);
  },
  // 13: summary experiments (experiments.ts): datasets (a saved selection of payloads, each item with
  //     the focus its call had), runs (one variant over a dataset), each item's result, and the results
  //     cache keyed by (payload hash, template hash, provider, model, focus). Unlike every other table
  //     these are not derived from the files: a scan never touches them, and they name payloads by id
  //     (stable across rebuilds), never by a rowid a re-scan would change.
  (db) => {
    db.exec(`
      CREATE TABLE experiment_datasets (
        name TEXT PRIMARY KEY,
        spec_json TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE experiment_items (
        dataset TEXT NOT NULL REFERENCES experiment_datasets(name) ON DELETE CASCADE,
        n INTEGER NOT NULL,
        payload_id TEXT NOT NULL,
        focus TEXT,
        PRIMARY KEY (dataset, n)
      ) WITHOUT ROWID;
      CREATE TABLE experiment_runs (
        id TEXT PRIMARY KEY,
        dataset TEXT NOT NULL,
        variant_json TEXT NOT NULL,
        budget_json TEXT NOT NULL,
        status TEXT NOT NULL,
        stop_reason TEXT,
        created_at TEXT NOT NULL,
        finished_at TEXT
      );
      CREATE TABLE experiment_results (
        run_id TEXT NOT NULL REFERENCES experiment_runs(id) ON DELETE CASCADE,
        n INTEGER NOT NULL,
        payload_id TEXT NOT NULL,
        focus TEXT,
        status TEXT NOT NULL,
        error TEXT,
        cached INTEGER NOT NULL DEFAULT 0,
        cache_key TEXT,
        summary TEXT,
        model TEXT,
        input_tokens INTEGER,
        output_tokens INTEGER,
        cost_usd REAL,
        ms INTEGER,
        scores_json TEXT,
        finished_at TEXT NOT NULL,
        PRIMARY KEY (run_id, n)
      ) WITHOUT ROWID;
      CREATE TABLE experiment_cache (
        key TEXT PRIMARY KEY,
        summary TEXT NOT NULL,
        model TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cost_usd REAL,
        ms INTEGER NOT NULL,
        created_at TEXT NOT NULL
      ) WITHOUT ROWID;
    `);
  },
];

/**
 * The indexes only reads and deletes use (filters and sorts; a source's payloads, a payload's
 * assets), none UNIQUE. A first index lists its rows without them and builds them after its
 * listing (IndexCore.dropIndexes): kept up to date row by row they made about a seventh of a
 * first listing of 10,000 payloads, built at once they take about 50 ms. Every migrated
 * database has exactly these (test/index/db.test.ts).
 */
export const READ_INDEXES: ReadonlyArray<{ name: string; on: string }> = [
  { name: 'sources_root', on: 'sources(root_id)' },
  { name: 'payloads_session', on: 'payloads(session_id)' },
  { name: 'payloads_root', on: 'payloads(root_id)' },
  { name: 'payloads_source', on: 'payloads(source_id)' },
  { name: 'payloads_tokens', on: 'payloads(tokens)' },
  { name: 'payloads_created', on: 'payloads(created_at)' },
  { name: 'payloads_tool', on: 'payloads(tool)' },
  { name: 'assets_payload', on: 'assets(payload_rowid)' },
  { name: 'payloads_spill', on: 'payloads(spill_id) WHERE spill_id IS NOT NULL' },
];

export function createReadIndex(db: DB, ix: (typeof READ_INDEXES)[number]): void {
  db.exec(`CREATE INDEX IF NOT EXISTS ${ix.name} ON ${ix.on}`);
}

export function dropReadIndexes(db: DB): void {
  for (const ix of READ_INDEXES) db.exec(`DROP INDEX IF EXISTS ${ix.name}`);
}

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Prepared statements cached beyond this many are dropped (all at once: the cache is small). */
const MAX_CACHED_STATEMENTS = 256;

/** Prepared statements, cached by SQL text (preparing costs more than running most of them). */
export class Statements {
  private readonly cache = new Map<string, Database.Statement>();
  constructor(private readonly db: DB) {}
  q(sql: string): Database.Statement {
    let st = this.cache.get(sql);
    if (!st) {
      if (this.cache.size > MAX_CACHED_STATEMENTS) this.cache.clear();
      st = this.db.prepare(sql);
      this.cache.set(sql, st);
    }
    return st;
  }
}

/** Run the migrations from the DB's `user_version` up to `target` (default: all). */
export function migrate(db: DB, target = SCHEMA_VERSION): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) throw new NewerSchemaError(current);
  for (let v = current; v < target; v++) {
    db.transaction(() => {
      MIGRATIONS[v]!(db);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}

export class NewerSchemaError extends Error {
  constructor(readonly version: number) {
    super(`index database has schema version ${version}, newer than this Spillway (${SCHEMA_VERSION})`);
    this.name = 'NewerSchemaError';
  }
}

/** How long a write waits for another connection's lock (a bulk writer thread, another process). */
export const BUSY_TIMEOUT_MS = 5_000;

function configure(db: DB): void {
  db.pragma('journal_mode = WAL');
  // WAL + NORMAL: durable across app crashes; a power cut may lose the last commits, which a
  // re-scan recreates from the files anyway.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma('cache_size = -32000'); // 32 MB page cache
  db.pragma('temp_store = MEMORY');
}

/** The mode of a database Spillway creates: the caller's alone (it holds what was indexed). */
const DB_FILE_MODE = 0o600;

/** Move a broken database (and its WAL/SHM companions) aside: `<db>.corrupt-<time>`. Returns the new path. */
export function moveAside(dbPath: string, why: string): string {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const target = `${dbPath}.${why}-${stamp}`;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      fs.renameSync(dbPath + suffix, target + suffix);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  return target;
}

/**
 * The database built in place of one moved aside is Spillway's, and as private as the first one
 * (docs/security.md): created here 0600 before SQLite opens it, since SQLite would create it with
 * the umask's mode and gives its -wal and -shm files the database's mode. A file that is there
 * already (another process rebuilt it first) is left as it is; SQLite reports a place it cannot write.
 */
function createPrivateFile(p: string): void {
  let fd: number;
  try {
    fd = fs.openSync(p, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW, DB_FILE_MODE);
  } catch {
    return;
  }
  try {
    fs.fchmodSync(fd, DB_FILE_MODE); // whatever the umask
  } catch {
    /* a file system without modes */
  } finally {
    fs.closeSync(fd);
  }
}

function isCorruption(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return /^SQLITE_(CORRUPT|NOTADB|CANTOPEN_ISDIR)/.test(code) || /malformed|not a database|file is encrypted/i.test(String(err));
}

/**
 * Open (or create) the index database. A corrupt file, or one written by a newer Spillway, is
 * moved aside and a fresh database is built in its place: the files on disk are the truth and
 * a scan rebuilds everything. `warnings` receives what happened.
 */
export function openDatabase(dbPath: string, warnings: string[] = []): DB {
  if (dbPath !== ':memory:') fs.mkdirSync(path.dirname(dbPath), { recursive: true });
  const attempt = (): DB => {
    const db = new Database(dbPath);
    try {
      configure(db);
      // Touch the schema: a damaged header or page shows up here, not in the middle of a scan.
      db.prepare('SELECT count(*) FROM sqlite_master').get();
      migrate(db);
      // A process that stopped between a first listing and building its read indexes left them out.
      for (const ix of READ_INDEXES) createReadIndex(db, ix);
      return db;
    } catch (err) {
      db.close();
      throw err;
    }
  };
  try {
    return attempt();
  } catch (err) {
    if (dbPath === ':memory:') throw err;
    const roots = salvageRoots(dbPath);
    if (err instanceof NewerSchemaError) {
      warnings.push(`${err.message}; moved to ${moveAside(dbPath, 'newer')} and rebuilt`);
    } else if (isCorruption(err)) {
      warnings.push(`index database was unreadable (${(err as Error).message}); moved to ${moveAside(dbPath, 'corrupt')} and rebuilt`);
    } else {
      throw err;
    }
    createPrivateFile(dbPath);
    const db = attempt();
    const insert = db.prepare('INSERT OR IGNORE INTO roots (id, path, kind, added_at, read_only, auto) VALUES (?, ?, ?, ?, ?, ?)');
    for (const r of roots) insert.run(r.id, r.path, r.kind, r.added_at, r.read_only ? 1 : 0, r.auto ? 1 : 0);
    if (roots.length) warnings.push(`kept ${roots.length} registered root(s) from the old database`);
    return db;
  }
}

interface RootRecord {
  id: string;
  path: string;
  kind: string;
  added_at: string;
  /** Absent in databases older than migration 4. */
  read_only?: number;
  auto?: number;
}

/** Best effort: the registered roots are the one thing the files cannot tell us, so try to read them back. */
function salvageRoots(dbPath: string): RootRecord[] {
  let db: DB | undefined;
  try {
    db = new Database(dbPath, { readonly: true, fileMustExist: true });
    const rows = db.prepare('SELECT * FROM roots').all() as RootRecord[];
    return rows.filter((r) => typeof r.id === 'string' && typeof r.path === 'string' && typeof r.kind === 'string');
  } catch {
    return [];
  } finally {
    try {
      db?.close();
    } catch {
      /* already broken */
    }
  }
}
