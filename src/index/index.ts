/**
 * The session index: every spilled payload under every registered root, in SQLite.
 *
 * ```ts
 * const index = openIndex({ dbPath: appPaths().db, onEvent: (e) => emit(e.event, e.payload) });
 * const root = index.addRoot('/home/me/.claude/projects');
 * await index.scan({ rootId: root.id, onProgress: (p) => … });
 * const stop = await index.watch();            // live: new payloads show up within a second
 * index.listPayloads({ query: 'timeout', sort: { field: 'tokens', dir: 'desc' }, limit: 100 });
 * await stop(); index.close();
 * ```
 *
 * The files are the truth: the database can be deleted at any time and `scan()` rebuilds it
 * (payload and session ids are derived from paths, so they survive a rebuild). Rows, requests
 * and responses use the types of `src/service/contract.ts`, so the service can pass them through.
 *
 * Threading: better-sqlite3 is synchronous. Every query method here is bounded (paged, capped);
 * `scan()` and `watch()` work in time slices (see yielder.ts) and yield to the event loop.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_LIMIT_TOKENS, DEFAULT_STRATEGY, buildPreview, limitForContextWindow } from '../pipeline/index.js';
import type { AssetRef, PayloadMeta, StrategyName, SummaryRun } from '../pipeline/types.js';
import type {
  IndexStats,
  DidIndexEvent,
  IndexProgressEvent,
  LimitTunerRequest,
  LimitTunerResponse,
  ListPayloadsRequest,
  ListPayloadsResponse,
  PayloadDetail,
  PayloadRow,
  RootInfo,
  SessionInfo,
  WasteReport,
  WasteReportRequest,
} from './rows.js';
import type { Statement } from 'better-sqlite3';
import { BulkWriter, type BulkRows } from './bulk.js';
import { BUSY_TIMEOUT_MS, type DB, openDatabase } from './db.js';
import { type Discovery, type RootKind, type Unit, type UnitKind, completeStats, detectRootKind, discover, fingerprint, claudeToolResultsDir } from './discover.js';
import { importClaude, importCodex, importGemini, readImportedText } from './importers.js';
import type { PayloadRecord, SourceLocation, UnitResult } from './record.js';
import { readMeta, readSpillwayUnit } from './spillway.js';
import {
  ESTIMATED_SPILL_MESSAGE_TOKENS,
  countLines,
  ftsQuery,
  inputExcerpt,
  inputJson,
  makePreview,
  readWindow,
  stableId,
  stripBase64,
} from './text.js';
import { Watcher } from './watch.js';
import { Yielder } from './yielder.js';

export { FTS_HEAD_BYTES, FTS_TAIL_BYTES, ESTIMATED_SPILL_MESSAGE_TOKENS } from './text.js';
export { SCHEMA_VERSION, MIGRATIONS } from './db.js';
export { detectRootKind } from './discover.js';

/** Largest page `listPayloads` returns (the contract's cap). */
export const MAX_PAGE_ROWS = 1_000;
export const DEFAULT_PAGE_ROWS = 100;
/** `limitTunerData` returns at most this many per-payload sizes. */
export const MAX_TUNER_SIZES = 100_000;
export const DEFAULT_TUNER_BUCKETS = 24;
/** Dollars per million input tokens when a request names none (a mid-range frontier model's input price). */
export const DEFAULT_PRICE_PER_MTOK_USD = 3;
/** Rows in the waste report's "biggest results" list. */
export const WASTE_BIGGEST_ROWS = 20;
const MAX_CACHED_STATEMENTS = 256;
/** Commit a scan's writes at least this often (one commit per time slice costs more than the writes). */
const SCAN_COMMIT_MS = 1_000;
/** Longest summary text kept in the summary full-text index per run. */
const MAX_SUMMARY_FTS_CHARS = 32 * 1024;
/**
 * Each run of full-text rows inserted together becomes an FTS5 segment, and by default FTS5
 * merges every four segments of a level: during a big scan that merging costs more than the
 * inserts themselves. It is off while a big scan loads (FTS5 still merges at 16 segments a
 * level), then back to FTS5's default of 4, and later writes merge the rest gradually.
 */
const FTS_NO_AUTOMERGE_SQL = "INSERT INTO payload_fts(payload_fts, rank) VALUES('automerge', 0)";
const FTS_AUTOMERGE_SQL = "INSERT INTO payload_fts(payload_fts, rank) VALUES('automerge', 4)";

/**
 * Whether a second busy thread would get enough of a core (see OpenIndexOptions.bulkWriter).
 * Measured on a shared 2-core box, 10,000 payloads: the writer thread cut a first index from
 * about 3.9 s to 2.6-3.6 s at a load average of 2.3-2.9, and lost about 10% at 3.5 (the two
 * threads then mostly take turns, and handing rows over costs CPU).
 */
function coreToSpare(): boolean {
  const cores = os.availableParallelism();
  if (cores < 2) return false;
  // Windows reports no load average (0): assume a desktop with cores to spare.
  return os.loadavg()[0]! < cores * BULK_MAX_LOAD_PER_CORE;
}
/** Above this 1-minute load average per core, big scans stay on the main thread. */
const BULK_MAX_LOAD_PER_CORE = 1.5;
/** New units in one scan from which the bulk writer (a worker thread) pays off over its start-up. */
export const BULK_MIN_UNITS = 256;
/**
 * The bulk writer commits this often: other processes see progress, and a write from this
 * thread meanwhile (a summary run saved during a first index) waits at most about this long.
 */
const BULK_COMMIT_MS = 500;
/** Payload rows per bulk batch (one transaction in the worker; a few ms of FTS5 work). */
const BULK_BATCH_PAYLOADS = 128;
/** Batches queued to the worker before the reader waits: bounds memory, keeps both threads busy. */
const BULK_MAX_IN_FLIGHT = 4;

const INSERT_SOURCE_SQL = 'INSERT INTO sources (id, root_id, session_id, key, fingerprint, hash, kind) VALUES (?, ?, ?, ?, ?, ?, ?)';
const INSERT_PAYLOAD_SQL = `INSERT INTO payloads (rowid, id, source_id, session_id, root_id, tool, created_at, bytes, tokens, action, kind, asset_count,
    input_excerpt, input_json, intent, t_chars4, t_craft_density, t_calibrated, t_o200k, t_cl100k, t_claude,
    path, linked_path, meta_path, message, binary, lines, source_json, b64_runs, b64_chars, b64_tokens)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const INSERT_ASSET_SQL =
  'INSERT INTO assets (payload_rowid, sha256, mime, bytes, path, rel_path, json_path, source, sniffed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)';
const INSERT_FTS_SQL = 'INSERT INTO payload_fts (rowid, tool, input, body) VALUES (?, ?, ?, ?)';

/** The payload row's values, in INSERT_PAYLOAD_SQL's order (`rowid` null: SQLite picks one). */
function payloadValues(rowid: number | null, rootId: string, sessionId: string, sourceId: number, rec: PayloadRecord, excerpt: string | null): unknown[] {
  const e = rec.estimates;
  return [
    rowid,
    rec.id,
    sourceId,
    sessionId,
    rootId,
    rec.tool,
    rec.createdAt,
    rec.bytes,
    rec.tokens,
    rec.action,
    rec.kind,
    rec.assets.length,
    excerpt,
    // Only imports read the input back from here; a Spillway payload's sidecar keeps it whole.
    rec.source ? inputJson(rec.input) : null,
    rec.intent ?? null,
    e.chars4 ?? null,
    e['craft-density'] ?? null,
    e.calibrated ?? null,
    e.o200k ?? null,
    e.cl100k ?? null,
    e.claude ?? null,
    rec.path,
    rec.linkedPath ?? null,
    rec.metaPath ?? null,
    rec.message ?? null,
    rec.binary ? 1 : 0,
    rec.lines ?? null,
    rec.source ? JSON.stringify(rec.source) : null,
    rec.b64.runs,
    rec.b64.chars,
    rec.b64.tokens,
  ];
}

function assetValues(rowid: number, a: AssetRef): unknown[] {
  return [rowid, a.sha256, a.mimeType, a.bytes, a.path, a.relPath, a.jsonPath, a.source, a.sniffed ? 1 : 0];
}

/** Events the index emits; `event` and `payload` match the contract's InspectorEvents. */
export type IndexEvent =
  | { event: 'onDidIndex'; payload: DidIndexEvent }
  | { event: 'onIndexProgress'; payload: IndexProgressEvent };

export interface OpenIndexOptions {
  /** SQLite file. Use `appPaths().db`; never a path inside a sessions root. `:memory:` for throwaway use. */
  dbPath: string;
  onEvent?: (e: IndexEvent) => void;
  /** Debounce for watch events before a scoped re-scan. Default 40 ms. */
  watchDebounceMs?: number;
  /**
   * A scan with at least this many new units (payload groups, transcripts) writes them from a
   * worker thread while the main thread reads on (see bulk.ts). Default BULK_MIN_UNITS;
   * `Infinity` keeps every write on the main thread.
   */
  bulkMinUnits?: number;
  /**
   * Whether such a scan uses the writer thread: 'auto' (default) when the machine is not
   * overloaded (at least two cores, 1-minute load average below 1.5 per core: beyond that the
   * two threads mostly take turns, and the hand-over costs more than it saves), 'always', or
   * 'never'.
   */
  bulkWriter?: 'auto' | 'always' | 'never';
}

export interface ScanOptions {
  /** Only this root; default every root. */
  rootId?: string;
  onProgress?: (p: IndexProgressEvent) => void;
  /** Only these paths inside the root (folders or files): the watcher uses this. */
  scopes?: string[];
}

/** What `scan()` returns: the contract's IndexStats (totals over the scanned roots) plus what changed. */
export interface ScanResult extends IndexStats {
  added: number;
  changed: number;
  removed: number;
  unchanged: number;
  /** Units (payload groups or transcripts) read in this scan. */
  read: number;
  /** Which thread wrote the new units: 'worker' when a bulk writer thread did (see bulk.ts). */
  writer: 'main' | 'worker';
  warnings: string[];
}

/** Where a payload's full content is: a file to window through, or text re-read from a transcript. */
export type PayloadContent = { type: 'file'; path: string; bytes: number } | { type: 'text'; text: string; bytes: number };

export type IndexErrorCode = 'NOT_FOUND' | 'BAD_REQUEST';
/** Errors with the contract's codes, so the service can map them to ServiceError one to one. */
export class IndexError extends Error {
  constructor(
    readonly code: IndexErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'IndexError';
  }
}

const STRATEGY_COLUMN: Record<StrategyName, string> = {
  chars4: 't_chars4',
  'craft-density': 't_craft_density',
  calibrated: 't_calibrated',
  o200k: 't_o200k',
  cl100k: 't_cl100k',
  claude: 't_claude',
};

/**
 * A payload's size in tokens for a strategy, as SQL. The default strategy's is the payload's `tokens`:
 * what the guard decides with, the calibrated estimate checked where the fit misprices (an exact count
 * or a corrected estimate). Exact strategies fall back to it for payloads never counted with them.
 */
function tokensColumn(strategy: StrategyName): string {
  return strategy === DEFAULT_STRATEGY ? 'p.tokens' : `coalesce(p.${STRATEGY_COLUMN[strategy]}, p.tokens)`;
}

const SORT_COLUMN: Record<string, string> = {
  createdAt: 'p.created_at',
  tokens: 'p.tokens',
  bytes: 'p.bytes',
  tool: 'p.tool',
  assetCount: 'p.asset_count',
};

interface RootRow {
  id: string;
  path: string;
  kind: RootKind;
  added_at: string;
}

interface PayloadDbRow {
  rowid: number;
  id: string;
  session_id: string;
  root_id: string;
  tool: string;
  created_at: string;
  bytes: number;
  tokens: number;
  action: PayloadRow['action'];
  kind: PayloadRow['kind'];
  asset_count: number;
  input_excerpt: string | null;
  input_json: string | null;
  intent: string | null;
  t_chars4: number | null;
  t_craft_density: number | null;
  t_calibrated: number | null;
  t_o200k: number | null;
  t_cl100k: number | null;
  t_claude: number | null;
  path: string;
  linked_path: string | null;
  meta_path: string | null;
  message: string | null;
  binary: number;
  lines: number | null;
  source_json: string | null;
  summary_count?: number;
}

const ROW_COLUMNS =
  'p.rowid, p.id, p.session_id, p.root_id, p.tool, p.created_at, p.bytes, p.tokens, p.action, p.kind, p.asset_count, p.input_excerpt, (SELECT count(*) FROM summary_runs s WHERE s.payload_id = p.id) AS summary_count';

function toRow(r: PayloadDbRow): PayloadRow {
  const row: PayloadRow = {
    id: r.id,
    sessionId: r.session_id,
    tool: r.tool,
    createdAt: r.created_at,
    bytes: r.bytes,
    tokens: r.tokens,
    action: r.action,
    kind: r.kind,
    assetCount: r.asset_count,
    summaryCount: r.summary_count ?? 0,
  };
  if (r.input_excerpt) row.inputExcerpt = r.input_excerpt;
  return row;
}

function clampInt(v: unknown, lo: number, hi: number, dflt: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) return dflt;
  return Math.min(hi, Math.max(lo, Math.floor(v)));
}

/** Open (or create, or rebuild) the index. Throws only when the DB folder itself is unusable. */
export function openIndex(opts: OpenIndexOptions): SpillIndex {
  return new SpillIndex(opts);
}

export class SpillIndex {
  readonly dbPath: string;
  /** What happened at open (a corrupt DB moved aside, ...) and during scans. Newest last, capped. */
  readonly warnings: string[] = [];
  private readonly db: DB;
  private readonly onEvent?: (e: IndexEvent) => void;
  private queue: Promise<unknown> = Promise.resolve();
  private watcher?: Watcher;
  private closed = false;
  private readonly watchDebounceMs: number;
  private readonly bulkMinUnits: number;
  private readonly bulkWriter: NonNullable<OpenIndexOptions['bulkWriter']>;
  /** Bulk writers still checkpointing after their scan. */
  private readonly finishing = new Set<Promise<void>>();

  constructor(opts: OpenIndexOptions) {
    this.dbPath = opts.dbPath === ':memory:' ? opts.dbPath : path.resolve(opts.dbPath);
    this.db = openDatabase(this.dbPath, this.warnings);
    this.onEvent = opts.onEvent;
    this.watchDebounceMs = opts.watchDebounceMs ?? 40;
    this.bulkMinUnits = opts.bulkMinUnits ?? BULK_MIN_UNITS;
    this.bulkWriter = opts.bulkWriter ?? 'auto';
  }

  /**
   * Full-text rows of the payloads written in the current slice, inserted together: any other
   * write that needs a statement journal (foreign keys, triggers) makes FTS5 flush its pending
   * terms, so interleaving them would write one tiny segment per payload and merge forever.
   */
  private ftsPending: Array<[number, string, string, string]> = [];
  private readonly stmts = new Map<string, Statement>();
  /** Prepared statements, cached by SQL text (preparing costs more than running most of these). */
  private q(sql: string): Statement {
    let st = this.stmts.get(sql);
    if (!st) {
      if (this.stmts.size > MAX_CACHED_STATEMENTS) this.stmts.clear();
      st = this.db.prepare(sql);
      this.stmts.set(sql, st);
    }
    return st;
  }

  private emit(e: IndexEvent): void {
    try {
      this.onEvent?.(e);
    } catch {
      /* a listener's bug must not break indexing */
    }
  }

  private warn(w: string): void {
    this.warnings.push(w);
    if (this.warnings.length > 200) this.warnings.splice(0, this.warnings.length - 200);
  }

  // ------------------------------------------------------------------ roots

  /**
   * Register a root: a folder of sessions, one session folder, one file (a payload, a
   * transcript) or a Claude Code `projects` folder; the kind is detected. Adding the same path
   * again returns the existing root. A path inside an existing root is refused (it is already
   * indexed); registering a parent of existing roots replaces them. Does not scan: call `scan({ rootId })`.
   */
  addRoot(p: string): RootInfo {
    if (typeof p !== 'string' || !p || p.includes('\0')) throw new IndexError('BAD_REQUEST', 'root path must be a non-empty string');
    let real: string;
    try {
      real = fs.realpathSync.native(path.resolve(p));
    } catch {
      throw new IndexError('NOT_FOUND', `root does not exist: ${p}`);
    }
    let kind: RootKind;
    try {
      kind = detectRootKind(real);
    } catch (err) {
      throw new IndexError('BAD_REQUEST', (err as Error).message);
    }
    if (this.dbPath !== ':memory:' && kind !== 'file' && isInsidePath(real, this.dbPath)) {
      throw new IndexError('BAD_REQUEST', `the index database ${this.dbPath} must not live inside a sessions root (${real})`);
    }
    const roots = this.rootRows();
    const same = roots.find((r) => r.path === real);
    if (same) return this.rootInfo(same);
    const covering = roots.find((r) => r.kind !== 'file' && isInsidePath(r.path, real));
    if (covering) throw new IndexError('BAD_REQUEST', `${real} is already indexed as part of root ${covering.path}`);
    const covered = kind === 'file' ? [] : roots.filter((r) => isInsidePath(real, r.path));
    for (const r of covered) this.removeRoot(r.id);
    const row: RootRow = { id: stableId('r', real), path: real, kind, added_at: new Date().toISOString() };
    this.q('INSERT INTO roots (id, path, kind, added_at) VALUES (?, ?, ?, ?)').run(row.id, row.path, row.kind, row.added_at);
    this.watcher?.add(row.path);
    return this.rootInfo(row);
  }

  /** Forget a root and everything indexed under it (the files are not touched). */
  removeRoot(id: string): { ok: true } {
    const root = this.rootRow(id);
    const removed = (this.q('SELECT count(*) AS n FROM payloads WHERE root_id = ?').get(id) as { n: number }).n;
    const sessionIds = (this.q('SELECT id FROM sessions WHERE root_id = ?').all(id) as Array<{ id: string }>).map((r) => r.id);
    this.flushFts(); // a scan may be between slices: its buffered rows must not outlive their payloads
    this.db.transaction(() => {
      this.q('DELETE FROM summary_runs WHERE payload_id IN (SELECT id FROM payloads WHERE root_id = ?)').run(id);
      this.q('DELETE FROM payloads WHERE root_id = ?').run(id);
      this.q('DELETE FROM sources WHERE root_id = ?').run(id);
      this.q('DELETE FROM sessions WHERE root_id = ?').run(id);
      this.q('DELETE FROM roots WHERE id = ?').run(id);
    }).immediate();
    this.watcher?.remove(root.path);
    if (removed || sessionIds.length) this.emit({ event: 'onDidIndex', payload: { sessionIds, added: 0, changed: 0, removed } });
    return { ok: true };
  }

  /** The registered root that holds `p` (a path inside a folder root, or a file root itself), if any. */
  rootFor(p: string): RootInfo | undefined {
    let real: string;
    try {
      real = fs.realpathSync.native(path.resolve(p));
    } catch {
      real = path.resolve(p);
    }
    const hit = this.rootRows()
      .filter((r) => (r.kind === 'file' ? r.path === real : isInsidePath(r.path, real)))
      .sort((a, b) => b.path.length - a.path.length)[0];
    return hit ? this.rootInfo(hit) : undefined;
  }

  listRoots(): RootInfo[] {
    return this.rootRows().map((r) => this.rootInfo(r));
  }

  private rootRows(): RootRow[] {
    return this.q('SELECT id, path, kind, added_at FROM roots ORDER BY added_at, path').all() as RootRow[];
  }

  private rootRow(id: string): RootRow {
    const r = this.q('SELECT id, path, kind, added_at FROM roots WHERE id = ?').get(id) as RootRow | undefined;
    if (!r) throw new IndexError('NOT_FOUND', `no root with id ${JSON.stringify(id)}`);
    return r;
  }

  private rootInfo(r: RootRow): RootInfo {
    const c = this.q('SELECT (SELECT count(*) FROM sessions WHERE root_id = ?) AS s, (SELECT count(*) FROM payloads WHERE root_id = ?) AS p')
      .get(r.id, r.id) as { s: number; p: number };
    return { id: r.id, path: r.path, kind: r.kind, addedAt: r.added_at, sessionCount: c.s, payloadCount: c.p };
  }

  // ------------------------------------------------------------------ scanning

  /**
   * Bring the index in line with the files. Incremental: a unit (a payload's files, or a
   * transcript) whose sizes and mtimes are unchanged is skipped; when they changed, its content
   * hash decides whether it is re-indexed. Units that disappeared leave the index, so a renamed
   * folder shows up under its new name and leaves under the old. Scans run one at a time.
   */
  scan(opts: ScanOptions = {}): Promise<ScanResult> {
    const run = this.queue.then(() => this.doScan(opts));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async doScan(opts: ScanOptions): Promise<ScanResult> {
    if (this.closed) throw new Error('index is closed');
    const t0 = performance.now();
    const roots = opts.rootId ? [this.rootRow(opts.rootId)] : this.rootRows();
    const res: ScanResult = {
      sessions: 0,
      payloads: 0,
      assets: 0,
      bytes: 0,
      seconds: 0,
      added: 0,
      changed: 0,
      removed: 0,
      unchanged: 0,
      read: 0,
      writer: 'main',
      warnings: [],
    };
    const touched = new Set<string>();
    try {
      for (const root of roots) await this.scanRoot(root, opts, res, touched);
    } finally {
      // A failed scan keeps what it finished: every unit's rows were replaced in one synchronous step.
      this.flushFts();
      if (this.db.inTransaction) this.db.exec('COMMIT');
    }
    const totals = this.totals(roots.map((r) => r.id));
    Object.assign(res, totals, { seconds: (performance.now() - t0) / 1000 });
    for (const w of res.warnings) this.warn(w);
    if (res.added || res.changed || res.removed) {
      this.emit({ event: 'onDidIndex', payload: { sessionIds: [...touched], added: res.added, changed: res.changed, removed: res.removed } });
    }
    return res;
  }

  private async scanRoot(root: RootRow, opts: ScanOptions, res: ScanResult, touched: Set<string>): Promise<void> {
    const db = this.db;
    let done = 0;
    let total = 0;
    const progress = () => {
      const p = { rootId: root.id, done, total };
      opts.onProgress?.(p);
      this.emit({ event: 'onIndexProgress', payload: p });
    };
    let lastCommit = performance.now();
    const commit = () => {
      this.flushFts();
      if (db.inTransaction) db.exec('COMMIT');
      lastCommit = performance.now();
    };
    // Between slices the transaction may stay open (other calls on this connection see its
    // rows); it is committed at least every SCAN_COMMIT_MS so other processes see progress.
    // Full-text rows go in at commit time, in one batch (bigger FTS5 segments, fewer merges).
    const yielder = new Yielder(undefined, () => {
      if (performance.now() - lastCommit >= SCAN_COMMIT_MS) commit();
      if (total) progress();
    });
    const begin = () => {
      // IMMEDIATE: take the write lock now (waiting for another writer, such as a bulk writer
      // thread or another process) instead of failing when a read turns into a write after
      // someone else committed.
      if (!db.inTransaction) db.exec('BEGIN IMMEDIATE');
    };
    const scopes = opts.scopes && root.kind !== 'file' && root.kind !== 'session' ? opts.scopes : null;
    const inScope = (p: string) => !scopes || scopes.some((s) => isInsidePath(s, p));

    if (!fs.existsSync(root.path)) {
      // A root on an unmounted disk: keep its rows (they come back with the disk), but say so.
      res.warnings.push(`root ${root.path} is missing; kept its index entries`);
      return;
    }
    const known = new Map<string, { id: number; fingerprint: string; hash: string | null; kind: UnitKind; session_id: string }>();
    for (const s of this.q('SELECT id, key, fingerprint, hash, kind, session_id FROM sources WHERE root_id = ?').iterate(root.id) as Iterable<{
      id: number;
      key: string;
      fingerprint: string;
      hash: string | null;
      kind: UnitKind;
      session_id: string;
    }>) {
      if (inScope(s.key)) known.set(s.key, s);
    }
    let disc: Discovery;
    try {
      disc = await discover({
        root: root.path,
        kind: root.kind,
        scopes,
        known: new Map([...known].map(([k, v]) => [k, v.kind])),
        yielder,
      });
    } catch (err) {
      res.warnings.push(`scan of ${root.path} failed: ${(err as Error).message}`);
      commit();
      return;
    }
    total = disc.units.length;
    progress();

    // Sessions first (payload rows point at them).
    const upsertSession = this.q(
      `INSERT INTO sessions (id, root_id, path, name, kind, read_only) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET root_id = excluded.root_id, path = excluded.path, name = excluded.name, kind = excluded.kind, read_only = excluded.read_only`,
    );
    begin();
    const liveSessions = new Set<string>();
    for (const s of disc.sessions.values()) {
      const id = stableId('s', s.path);
      liveSessions.add(id);
      upsertSession.run(id, root.id, s.path, s.name, s.kind, s.readOnly ? 1 : 0);
    }

    const seen = new Set<string>();
    const touchFp = this.q('UPDATE sources SET fingerprint = ? WHERE id = ?');
    // Units never indexed before go last, and in bulk through a worker when there are many.
    const fresh: Unit[] = [];
    for (const unit of disc.units) {
      seen.add(unit.key);
      const ex = known.get(unit.key);
      if (!ex) {
        fresh.push(unit);
        continue;
      }
      const sessionId = stableId('s', unit.session.path);
      const fp = fingerprint(unit.files);
      done++;
      if (ex && ex.fingerprint === fp && ex.session_id === sessionId) {
        res.unchanged++;
        if (yielder.due) await yielder.now();
        continue;
      }
      const result = await this.readCounted(unit, yielder, res);
      if (!result) continue;
      begin();
      if (ex && ex.hash && ex.hash === result.hash && ex.session_id === sessionId) {
        touchFp.run(fp, ex.id);
        res.unchanged++;
      } else {
        const n = this.replaceSource(root.id, sessionId, unit, fp, result, ex?.id);
        res.added += Math.max(0, n.added);
        res.changed += n.changed;
        res.removed += n.removed;
        touched.add(sessionId);
      }
      if (yielder.due) await yielder.now();
    }
    if (fresh.length) {
      await this.indexFresh(root.id, fresh, res, touched, yielder, begin, commit, () => {
        done++;
      });
    }

    // Whatever was known in this scope and not seen is gone.
    begin();
    const delSource = this.q('DELETE FROM sources WHERE id = ?');
    for (const [key, ex] of known) {
      if (seen.has(key)) continue;
      const ids = this.q('SELECT id FROM payloads WHERE source_id = ?').all(ex.id) as Array<{ id: string }>;
      for (const { id } of ids) this.dropRuns(id, 'all');
      this.flushFts();
      this.q('DELETE FROM payloads WHERE source_id = ?').run(ex.id);
      delSource.run(ex.id);
      res.removed += ids.length;
      touched.add(ex.session_id);
    }
    const staleSessions = this.q('SELECT id, path FROM sessions WHERE root_id = ?').all(root.id) as Array<{ id: string; path: string }>;
    for (const s of staleSessions) {
      if (!liveSessions.has(s.id) && inScope(s.path)) {
        this.q('DELETE FROM sessions WHERE id = ?').run(s.id);
        touched.add(s.id);
      }
    }
    this.q('UPDATE roots SET last_scan_at = ? WHERE id = ?').run(new Date().toISOString(), root.id);
    commit();
    progress();
  }

  /**
   * Index units that have no source row yet. With many of them (a first index, a rebuild) the
   * rows go to a bulk writer thread in batches while this thread reads the next units; a unit
   * that is more than plain inserts (an id already taken, summary runs to merge) and any batch
   * the worker did not commit are written here afterwards.
   */
  private async indexFresh(
    rootId: string,
    units: Unit[],
    res: ScanResult,
    touched: Set<string>,
    yielder: Yielder,
    begin: () => void,
    commit: () => void,
    onDone: () => void,
  ): Promise<void> {
    type Item = { unit: Unit; sessionId: string; fp: string; result: UnitResult };
    const onMain = (it: Item) => {
      begin();
      this.replaceSource(rootId, it.sessionId, it.unit, it.fp, it.result, undefined);
    };
    const big = units.length >= this.bulkMinUnits;
    let bulk: BulkWriter<Item[]> | null = null;
    if (big && this.dbPath !== ':memory:' && this.bulkWriter !== 'never' && (this.bulkWriter === 'always' || coreToSpare())) {
      try {
        commit(); // the worker needs the write lock
        bulk = new BulkWriter<Item[]>(
          this.dbPath,
          {
            source: INSERT_SOURCE_SQL,
            payload: INSERT_PAYLOAD_SQL,
            asset: INSERT_ASSET_SQL,
            fts: INSERT_FTS_SQL,
            setup: [FTS_NO_AUTOMERGE_SQL],
          },
          { commitMs: BULK_COMMIT_MS },
        );
      } catch (err) {
        res.warnings.push(`bulk writer unavailable, indexing on the main thread: ${(err as Error).message}`);
        bulk = null;
      }
    }
    if (bulk) {
      res.writer = 'worker';
      // The worker checkpoints once at the end; this connection must not do it on the way.
      this.db.pragma('wal_autocheckpoint = 0');
    } else if (big) {
      begin();
      this.db.exec(FTS_NO_AUTOMERGE_SQL);
    }
    const later: Item[] = [];
    const ids = new Set<string>();
    let nextSource = 0;
    let nextRowid = 0;
    if (bulk) {
      nextSource = (this.q('SELECT coalesce(max(id), 0) AS n FROM sources').get() as { n: number }).n + 1;
      nextRowid = (this.q('SELECT coalesce(max(rowid), 0) AS n FROM payloads').get() as { n: number }).n + 1;
    }
    // An empty index (a first scan, a rebuild) has no ids to clash with: skip two lookups per payload.
    const empty =
      (this.q('SELECT EXISTS(SELECT 1 FROM sources) OR EXISTS(SELECT 1 FROM payloads) OR EXISTS(SELECT 1 FROM summary_runs) AS n').get() as { n: number }).n === 0;
    const sessionIds = new Map<string, string>();
    const taken = this.q(
      'SELECT EXISTS(SELECT 1 FROM payloads WHERE id = ?) OR EXISTS(SELECT 1 FROM summary_runs WHERE payload_id = ?) AS n',
    );
    const keyTaken = this.q('SELECT 1 FROM sources WHERE key = ?');
    let rows: BulkRows = { sources: [], payloads: [], assets: [], fts: [] };
    let items: Item[] = [];
    const send = async () => {
      if (!bulk || !items.length) return;
      bulk.send(rows, items);
      rows = { sources: [], payloads: [], assets: [], fts: [] };
      items = [];
      await bulk.waitBelow(BULK_MAX_IN_FLIGHT);
    };
    try {
      for (const unit of units) {
        onDone();
        const result = await this.readCounted(unit, yielder, res);
        if (!result) continue;
        let sessionId = sessionIds.get(unit.session.path);
        if (!sessionId) sessionIds.set(unit.session.path, (sessionId = stableId('s', unit.session.path)));
        unit.files = completeStats(unit.files);
        const it: Item = { unit, sessionId, fp: fingerprint(unit.files), result };
        touched.add(sessionId);
        const unique = [...new Map(result.payloads.map((r) => [r.id, r])).values()];
        res.added += unique.length;
        if (!bulk) {
          onMain(it);
        } else if (
          unique.some((r) => r.summaryRuns.length > 0 || ids.has(r.id)) ||
          (!empty && (keyTaken.get(unit.key) || unique.some((r) => (taken.get(r.id, r.id) as { n: number }).n)))
        ) {
          later.push(it);
        } else {
          const sourceId = nextSource++;
          rows.sources.push([sourceId, rootId, sessionId, unit.key, it.fp, result.hash, unit.kind]);
          for (const rec of unique) {
            ids.add(rec.id);
            const rowid = nextRowid++;
            const excerpt = inputExcerpt(rec.input) ?? null;
            rows.payloads.push(payloadValues(rowid, rootId, sessionId, sourceId, rec, excerpt));
            for (const a of rec.assets) rows.assets.push(assetValues(rowid, a));
            rows.fts.push([rowid, rec.tool, excerpt ?? '', rec.ftsBody]);
          }
          items.push(it);
          if (rows.payloads.length >= BULK_BATCH_PAYLOADS) await send();
        }
        if (yielder.due) await yielder.now();
      }
      await send();
    } finally {
      if (bulk) {
        const failed = await bulk.settle();
        if (bulk.error) res.warnings.push(`bulk writer stopped (${bulk.error}); finished on the main thread`);
        for (const batch of failed) later.unshift(...batch);
        // Undo the worker's setup here: this thread writes next, and a second writer
        // committing now would only make it wait.
        begin();
        this.db.exec(FTS_AUTOMERGE_SQL);
        // The worker's closing checkpoint copies the WAL into the database file: housekeeping
        // that neither this scan nor the UI waits for (close() does).
        const finishing = bulk.finish().finally(() => {
          this.finishing.delete(finishing);
          if (!this.closed) this.db.pragma('wal_autocheckpoint = 1000');
        });
        this.finishing.add(finishing);
      }
    }
    try {
      for (const it of later) {
        onMain(it);
        if (yielder.due) await yielder.now();
      }
    } finally {
      if (big && !bulk) {
        begin();
        this.flushFts();
        this.db.exec(FTS_AUTOMERGE_SQL);
      }
    }
  }

  /** readUnit, counted in the scan's result; a unit that cannot be read becomes a warning (undefined). */
  private async readCounted(unit: Unit, yielder: Yielder, res: { read: number; warnings: string[] }): Promise<UnitResult | undefined> {
    let result: UnitResult;
    try {
      result = await this.readUnit(unit, yielder);
    } catch (err) {
      res.warnings.push(`${unit.key}: ${(err as Error).message}`);
      return undefined;
    }
    res.read++;
    res.warnings.push(...result.warnings);
    return result;
  }

  private async readUnit(unit: Unit, yielder: Yielder): Promise<UnitResult> {
    switch (unit.kind) {
      case 'spillway':
        return readSpillwayUnit(unit);
      case 'claude-code':
        return importClaude(unit, yielder);
      case 'codex':
        return importCodex(unit, yielder);
      case 'gemini':
        return importGemini(unit, yielder);
    }
  }

  private dropRuns(payloadId: string, which: 'meta' | 'all'): void {
    if (which === 'all') this.q('DELETE FROM summary_runs WHERE payload_id = ?').run(payloadId);
    else this.q("DELETE FROM summary_runs WHERE payload_id = ? AND origin = 'meta'").run(payloadId);
  }

  /** Replace one unit's rows (inside the caller's transaction). */
  private replaceSource(
    rootId: string,
    sessionId: string,
    unit: Unit,
    fp: string,
    result: UnitResult,
    existingSourceId: number | undefined,
  ): { added: number; changed: number; removed: number } {
    let sourceId: number;
    const before = new Set<string>();
    if (existingSourceId !== undefined) {
      for (const r of this.q('SELECT id FROM payloads WHERE source_id = ?').all(existingSourceId) as Array<{ id: string }>) before.add(r.id);
      this.flushFts();
      this.q('DELETE FROM payloads WHERE source_id = ?').run(existingSourceId);
      this.q('UPDATE sources SET fingerprint = ?, hash = ?, session_id = ?, kind = ?, root_id = ? WHERE id = ?').run(
        fp,
        result.hash,
        sessionId,
        unit.kind,
        rootId,
        existingSourceId,
      );
      sourceId = existingSourceId;
    } else {
      // A key from another scope of this root would have been in `known`: this is a new source
      // (a leftover row under the same key, from a root since replaced, is dropped first).
      if (this.q('SELECT 1 FROM sources WHERE key = ?').get(unit.key)) {
        this.flushFts();
        this.q('DELETE FROM sources WHERE key = ?').run(unit.key);
      }
      const info = this.q(INSERT_SOURCE_SQL).run(
        null,
        rootId,
        sessionId,
        unit.key,
        fp,
        result.hash,
        unit.kind,
      );
      sourceId = Number(info.lastInsertRowid);
    }
    let added = 0;
    let changed = 0;
    const after = new Set<string>();
    for (const rec of result.payloads) {
      if (after.has(rec.id)) continue;
      // Same id under another source (a file moved between two roots' views): the newest wins.
      const clash = this.q('SELECT rowid FROM payloads WHERE id = ?').get(rec.id) as { rowid: number } | undefined;
      if (clash) {
        this.flushFts();
        this.q('DELETE FROM payloads WHERE rowid = ?').run(clash.rowid);
      }
      this.insertPayload(rootId, sessionId, sourceId, rec);
      after.add(rec.id);
      if (before.has(rec.id)) changed++;
      else added++;
    }
    let removed = 0;
    for (const id of before) {
      if (!after.has(id)) {
        this.dropRuns(id, 'all');
        removed++;
      }
    }
    return { added, changed, removed };
  }

  private insertPayload(rootId: string, sessionId: string, sourceId: number, rec: PayloadRecord): void {
    const excerpt = inputExcerpt(rec.input) ?? null;
    const info = this.q(INSERT_PAYLOAD_SQL).run(payloadValues(null, rootId, sessionId, sourceId, rec, excerpt));
    const rowid = Number(info.lastInsertRowid);
    const insAsset = this.q(INSERT_ASSET_SQL);
    for (const a of rec.assets) insAsset.run(assetValues(rowid, a));
    this.ftsPending.push([rowid, rec.tool, excerpt ?? '', rec.ftsBody]);
    // Most payloads have no summary runs at all: skip the run bookkeeping for them.
    if (rec.summaryRuns.length === 0 && !this.q('SELECT 1 FROM summary_runs WHERE payload_id = ? LIMIT 1').get(rec.id)) return;
    this.dropRuns(rec.id, 'meta');
    const insRun = this.q(
      "INSERT OR REPLACE INTO summary_runs (payload_id, run_id, created_at, origin, summary, json) VALUES (?, ?, ?, 'meta', ?, ?)",
    );
    for (const run of rec.summaryRuns) insRun.run(rec.id, run.id, String(run.createdAt ?? ''), run.summary, JSON.stringify(run));
    this.refreshSummaryFts(rowid, rec.id);
  }

  /** Insert the buffered full-text rows (before any payload delete, yield or commit). */
  private flushFts(): void {
    if (!this.ftsPending.length) return;
    const ins = this.q(INSERT_FTS_SQL);
    for (const row of this.ftsPending) ins.run(...row);
    this.ftsPending = [];
  }

  private refreshSummaryFts(rowid: number, payloadId: string): void {
    const runs = this.q('SELECT summary FROM summary_runs WHERE payload_id = ? ORDER BY created_at').all(payloadId) as Array<{ summary: string }>;
    // FTS5 ignores a rowid constraint bound as a float (how JS numbers bind): cast it.
    this.q('DELETE FROM summary_fts WHERE rowid = CAST(? AS INTEGER)').run(rowid);
    if (runs.length) {
      const text = runs.map((r) => r.summary.slice(0, MAX_SUMMARY_FTS_CHARS)).join('\n\n');
      this.q('INSERT INTO summary_fts (rowid, summary) VALUES (?, ?)').run(rowid, text);
    }
  }

  private totals(rootIds: string[]): Omit<IndexStats, 'seconds'> {
    if (!rootIds.length) return { sessions: 0, payloads: 0, assets: 0, bytes: 0 };
    const marks = rootIds.map(() => '?').join(',');
    const s = this.q(`SELECT count(*) AS n FROM sessions WHERE root_id IN (${marks})`).get(...rootIds) as { n: number };
    const p = this.q(`SELECT count(*) AS n, coalesce(sum(bytes), 0) AS b FROM payloads WHERE root_id IN (${marks})`).get(...rootIds) as {
      n: number;
      b: number;
    };
    const a = this.q(
        `SELECT count(*) AS n FROM (SELECT DISTINCT p.session_id, a.sha256 FROM assets a JOIN payloads p ON p.rowid = a.payload_rowid WHERE p.root_id IN (${marks}))`,
      )
      .get(...rootIds) as { n: number };
    return { sessions: s.n, payloads: p.n, assets: a.n, bytes: p.b };
  }

  /** Totals over every root (or one), without scanning. */
  stats(rootId?: string): Omit<IndexStats, 'seconds'> {
    return this.totals(rootId ? [this.rootRow(rootId).id] : this.rootRows().map((r) => r.id));
  }

  // ------------------------------------------------------------------ watching

  /**
   * Watch every root (and roots added later) and re-index what changes, scoped to the session
   * that changed. A payload the guard writes is in the index, with an `onDidIndex` event,
   * well within a second. Resolves once the watchers are ready; the returned function stops them.
   */
  async watch(): Promise<() => Promise<void>> {
    if (this.watcher) return () => this.unwatch();
    this.watcher = new Watcher({
      debounceMs: this.watchDebounceMs,
      ignorePath: this.dbPath,
      onChange: (rootPath, scopes) => this.onWatchChange(rootPath, scopes),
    });
    await this.watcher.start(this.rootRows().map((r) => r.path));
    return () => this.unwatch();
  }

  private async unwatch(): Promise<void> {
    const w = this.watcher;
    this.watcher = undefined;
    await w?.close();
  }

  private async onWatchChange(rootPath: string, scopes: string[] | null): Promise<void> {
    if (this.closed) return;
    const root = this.rootRows().find((r) => r.path === rootPath);
    if (!root) return;
    try {
      await this.scan({ rootId: root.id, scopes: scopes ?? undefined });
    } catch (err) {
      this.warn(`watch re-scan of ${rootPath} failed: ${(err as Error).message}`);
    }
  }

  // ------------------------------------------------------------------ queries

  /** Sessions, with payload totals (default strategy's tokens). */
  listSessions(req: { rootId?: string } = {}): SessionInfo[] {
    const where = req.rootId ? 'WHERE s.root_id = ?' : '';
    const rows = this.q(
        `SELECT s.id, s.root_id, s.name, s.path, s.kind, s.read_only,
                count(p.rowid) AS n, coalesce(sum(p.asset_count), 0) AS assets, coalesce(sum(p.bytes), 0) AS bytes,
                coalesce(sum(p.tokens), 0) AS tokens, min(p.created_at) AS first_at, max(p.created_at) AS last_at
           FROM sessions s LEFT JOIN payloads p ON p.session_id = s.id ${where}
          GROUP BY s.id ORDER BY last_at DESC NULLS LAST, s.name`,
      )
      .all(...(req.rootId ? [req.rootId] : [])) as Array<{
      id: string;
      root_id: string;
      name: string;
      path: string;
      kind: SessionInfo['kind'];
      read_only: number;
      n: number;
      assets: number;
      bytes: number;
      tokens: number;
      first_at: string | null;
      last_at: string | null;
    }>;
    return rows.map((r) => {
      const s: SessionInfo = {
        id: r.id,
        rootId: r.root_id,
        name: r.name,
        path: r.path,
        kind: r.kind,
        readOnly: r.read_only === 1,
        payloadCount: r.n,
        assetCount: r.assets,
        totalBytes: r.bytes,
        totalTokens: r.tokens,
      };
      if (r.first_at) s.firstAt = r.first_at;
      if (r.last_at) s.lastAt = r.last_at;
      return s;
    });
  }

  private filters(req: { sessionId?: string; rootId?: string; tool?: string; action?: string; kind?: string; minTokens?: number; maxTokens?: number }): {
    sql: string;
    args: unknown[];
  } {
    const w: string[] = [];
    const args: unknown[] = [];
    if (req.sessionId !== undefined) (w.push('p.session_id = ?'), args.push(String(req.sessionId)));
    if (req.rootId !== undefined) (w.push('p.root_id = ?'), args.push(String(req.rootId)));
    if (req.tool !== undefined) (w.push('p.tool = ?'), args.push(String(req.tool)));
    if (req.action !== undefined) (w.push('p.action = ?'), args.push(String(req.action)));
    if (req.kind !== undefined) (w.push('p.kind = ?'), args.push(String(req.kind)));
    if (typeof req.minTokens === 'number' && Number.isFinite(req.minTokens)) (w.push('p.tokens >= ?'), args.push(req.minTokens));
    if (typeof req.maxTokens === 'number' && Number.isFinite(req.maxTokens)) (w.push('p.tokens <= ?'), args.push(req.maxTokens));
    return { sql: w.length ? w.join(' AND ') : '1', args };
  }

  /**
   * One page of payloads: filters, a sort (default newest first, or best match for a query),
   * paging (at most MAX_PAGE_ROWS), and an optional full-text query over payload text (the
   * bounded head + tail), tool, input and summaries. Query words are ANDed; `word*` is a prefix.
   * Snippets are plain text.
   */
  listPayloads(req: ListPayloadsRequest = {}): ListPayloadsResponse {
    const limit = clampInt(req.limit, 1, MAX_PAGE_ROWS, DEFAULT_PAGE_ROWS);
    const offset = clampInt(req.offset, 0, Number.MAX_SAFE_INTEGER, 0);
    const f = this.filters(req);
    const q = typeof req.query === 'string' ? ftsQuery(req.query) : null;
    const dir = req.sort?.dir === 'asc' ? 'ASC' : 'DESC';
    const sortCol = req.sort ? SORT_COLUMN[req.sort.field] : undefined;
    if (req.sort && !sortCol) throw new IndexError('BAD_REQUEST', `cannot sort by ${JSON.stringify(req.sort.field)}`);
    if (typeof req.query === 'string' && req.query.trim() && !q) return { rows: [], total: 0 };
    if (!q) {
      const order = `${sortCol ?? 'p.created_at'} ${sortCol ? dir : 'DESC'}, p.rowid ${sortCol ? dir : 'DESC'}`;
      const total = (this.q(`SELECT count(*) AS n FROM payloads p WHERE ${f.sql}`).get(...f.args) as { n: number }).n;
      const rows = this.q(`SELECT ${ROW_COLUMNS} FROM payloads p WHERE ${f.sql} ORDER BY ${order} LIMIT ? OFFSET ?`)
        .all(...f.args, limit, offset) as PayloadDbRow[];
      return { rows: rows.map(toRow), total };
    }
    const hits = `(SELECT rowid, min(rank) AS rank FROM (
        SELECT rowid, bm25(payload_fts) AS rank FROM payload_fts WHERE payload_fts MATCH ?
        UNION ALL
        SELECT rowid, bm25(summary_fts) AS rank FROM summary_fts WHERE summary_fts MATCH ?) GROUP BY rowid) h`;
    const order = sortCol ? `${sortCol} ${dir}, p.rowid ${dir}` : 'h.rank ASC, p.rowid DESC';
    let total: number;
    let rows: PayloadDbRow[];
    try {
      total = (this.q(`SELECT count(*) AS n FROM ${hits} JOIN payloads p ON p.rowid = h.rowid WHERE ${f.sql}`).get(q, q, ...f.args) as {
        n: number;
      }).n;
      rows = this.q(`SELECT ${ROW_COLUMNS} FROM ${hits} JOIN payloads p ON p.rowid = h.rowid WHERE ${f.sql} ORDER BY ${order} LIMIT ? OFFSET ?`)
        .all(q, q, ...f.args, limit, offset) as PayloadDbRow[];
    } catch (err) {
      throw new IndexError('BAD_REQUEST', `bad search query: ${(err as Error).message}`);
    }
    const snipBody = this.q("SELECT snippet(payload_fts, -1, '', '', '…', 16) AS s FROM payload_fts WHERE payload_fts MATCH ? AND rowid = CAST(? AS INTEGER)");
    const snipSum = this.q("SELECT snippet(summary_fts, 0, '', '', '…', 16) AS s FROM summary_fts WHERE summary_fts MATCH ? AND rowid = CAST(? AS INTEGER)");
    return {
      total,
      rows: rows.map((r) => {
        const row = toRow(r);
        const s = (snipBody.get(q, r.rowid) as { s: string } | undefined) ?? (snipSum.get(q, r.rowid) as { s: string } | undefined);
        if (s?.s) row.snippet = s.s.replace(/\s+/g, ' ').trim();
        return row;
      }),
    };
  }

  private payloadRow(id: string): PayloadDbRow {
    if (typeof id !== 'string' || !id) throw new IndexError('BAD_REQUEST', 'payload id must be a non-empty string');
    const r = this.q(`SELECT p.*, ${ROW_COLUMNS} FROM payloads p WHERE p.id = ?`).get(id) as PayloadDbRow | undefined;
    if (!r) throw new IndexError('NOT_FOUND', `no payload with id ${JSON.stringify(id)}`);
    return r;
  }

  /** The session a payload belongs to (its folder, kind, read-only flag). */
  sessionOf(payloadId: string): SessionInfo {
    const r = this.payloadRow(payloadId);
    const s = this.listSessionsById(r.session_id);
    if (!s) throw new IndexError('NOT_FOUND', `session of payload ${payloadId} is gone`);
    return s;
  }

  private listSessionsById(id: string): SessionInfo | undefined {
    const row = this.q('SELECT root_id FROM sessions WHERE id = ?').get(id) as { root_id: string } | undefined;
    if (!row) return undefined;
    return this.listSessions({ rootId: row.root_id }).find((s) => s.id === id);
  }

  /**
   * One payload: its row, the sidecar as written (re-read from disk; null for imports), paths,
   * estimates, assets (paths resolved inside the session), summary runs (sidecar + ones added
   * later), the message, a safe preview, size, line count (counted once, then cached) and, for
   * imports, where in the transcript it came from.
   */
  async getPayload(id: string): Promise<PayloadDetail> {
    const r = this.payloadRow(id);
    const source = r.source_json ? (JSON.parse(r.source_json) as SourceLocation) : undefined;
    let meta: PayloadMeta | null = null;
    if (r.meta_path) meta = readMeta(r.meta_path).meta;
    const estimates: PayloadDetail['estimates'] = {};
    for (const [s, col] of Object.entries(STRATEGY_COLUMN)) {
      const v = (r as unknown as Record<string, number | null>)[col];
      if (typeof v === 'number') estimates[s as StrategyName] = v;
    }
    const assets = (
      this.q('SELECT sha256, mime, bytes, path, rel_path, json_path, source, sniffed FROM assets WHERE payload_rowid = ?').all(r.rowid) as Array<{
        sha256: string;
        mime: string;
        bytes: number;
        path: string;
        rel_path: string;
        json_path: string | null;
        source: string | null;
        sniffed: number;
      }>
    ).map(
      (a): AssetRef => ({
        path: a.path,
        relPath: a.rel_path,
        mimeType: a.mime,
        bytes: a.bytes,
        sha256: a.sha256,
        jsonPath: a.json_path ?? '',
        source: (a.source ?? 'binary') as AssetRef['source'],
        sniffed: a.sniffed === 1,
      }),
    );
    const summaryRuns = this.summaryRuns(id);
    let preview = '';
    let totalBytes = 0;
    let totalLines = r.lines ?? 0;
    let binary = r.binary === 1;
    const content = await this.payloadContent(id).catch(() => null);
    if (content?.type === 'file') {
      try {
        const win = readWindow(content.path, 64 * 1024, 0);
        binary = win.binary;
        preview = binary ? '' : safePreview(win.whole ?? win.head, r.kind);
        totalBytes = win.size;
        if (r.lines === null) {
          totalLines = binary ? 0 : await countLines(content.path);
          this.cacheLines(r.rowid, totalLines);
        }
      } catch {
        /* file vanished since the scan: the watcher will drop the row */
      }
    } else if (content) {
      preview = safePreview(content.text.slice(0, PREVIEW_SOURCE_CHARS), r.kind);
      totalBytes = content.bytes;
    }
    const detail: PayloadDetail = {
      row: toRow(r),
      meta,
      path: r.path,
      estimates,
      assets,
      summaryRuns,
      message: r.message ?? (typeof meta?.message === 'string' ? meta.message : ''),
      preview,
      totalBytes,
      totalLines,
      binary,
    };
    if (r.linked_path) detail.linkedPath = r.linked_path;
    if (source) {
      let toolInput: unknown;
      try {
        toolInput = r.input_json ? JSON.parse(r.input_json) : undefined;
      } catch {
        toolInput = undefined;
      }
      detail.source = { transcript: source.transcript, line: source.line, toolUseId: source.toolUseId, toolInput };
    }
    return detail;
  }

  /**
   * Remember a counted line total. Only a cache: while a bulk writer thread holds the write lock
   * (a first index), skip it rather than block this thread until its commit.
   */
  private cacheLines(rowid: number, lines: number): void {
    try {
      this.db.pragma('busy_timeout = 0');
      this.q('UPDATE payloads SET lines = ? WHERE rowid = ?').run(lines, rowid);
    } catch {
      /* busy: counted again next time */
    } finally {
      this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /**
   * Where to read a payload's full content. Spillway payloads and Claude spill files are
   * files (window through them); results inside a transcript line are re-read and returned as
   * text (they are bounded by the transcript's line size).
   */
  async payloadContent(id: string): Promise<PayloadContent> {
    const r = this.payloadRow(id);
    const source = r.source_json ? (JSON.parse(r.source_json) as SourceLocation) : undefined;
    if (!source || (source.field === 'persisted' && source.persistedPath)) {
      const p = source?.persistedPath ?? r.path;
      const st = await fs.promises.stat(p).catch(() => null);
      if (!st) throw new IndexError('NOT_FOUND', `payload file is gone: ${p}`);
      return { type: 'file', path: p, bytes: st.size };
    }
    const text = await readImportedText(source, claudeToolResultsDir(source.transcript));
    if (text === null) throw new IndexError('NOT_FOUND', `payload no longer found in ${source.transcript}; re-scan`);
    return { type: 'text', text, bytes: Buffer.byteLength(text) };
  }

  summaryRuns(payloadId: string): SummaryRun[] {
    const rows = this.q('SELECT json FROM summary_runs WHERE payload_id = ? ORDER BY created_at, run_id').all(payloadId) as Array<{ json: string }>;
    const out: SummaryRun[] = [];
    for (const r of rows) {
      try {
        out.push(JSON.parse(r.json) as SummaryRun);
      } catch {
        /* skip a damaged row */
      }
    }
    return out;
  }

  /**
   * Index a summary run made after the scan (in the inspector). It is searchable at once. The
   * index is not the record: whoever made the run should also append it to the payload's sidecar
   * (Spillway sessions), which a later scan picks up under the same run id. Runs on read-only
   * imported sessions live only here (a rebuilt DB loses them).
   */
  addSummaryRun(payloadId: string, run: SummaryRun): void {
    const r = this.payloadRow(payloadId);
    if (!run || typeof run.id !== 'string' || typeof run.summary !== 'string') throw new IndexError('BAD_REQUEST', 'a summary run needs an id and a summary');
    this.db.transaction(() => {
      const exists = this.q('SELECT origin FROM summary_runs WHERE payload_id = ? AND run_id = ?').get(payloadId, run.id) as
        | { origin: string }
        | undefined;
      this.q('INSERT OR REPLACE INTO summary_runs (payload_id, run_id, created_at, origin, summary, json) VALUES (?, ?, ?, ?, ?, ?)')
        .run(payloadId, run.id, String(run.createdAt ?? new Date().toISOString()), exists?.origin ?? 'db', run.summary, JSON.stringify(run));
      this.refreshSummaryFts(r.rowid, payloadId);
    }).immediate();
    this.emit({ event: 'onDidIndex', payload: { sessionIds: [r.session_id], added: 0, changed: 1, removed: 0 } });
  }

  /**
   * The limit tuner's data: a log-spaced histogram of payload sizes in tokens for a strategy,
   * every payload's size (sorted ascending, capped at MAX_TUNER_SIZES) so the UI can move the
   * slider locally, and what the limit would spill and keep out of context (sizes: tokensColumn).
   */
  limitTunerData(req: LimitTunerRequest): LimitTunerResponse {
    const strategy: StrategyName = req.strategy && STRATEGY_COLUMN[req.strategy] ? req.strategy : DEFAULT_STRATEGY;
    const baseLimit = typeof req.limitTokens === 'number' && req.limitTokens > 0 ? req.limitTokens : DEFAULT_LIMIT_TOKENS;
    const limitTokens = limitForContextWindow(req.contextWindowTokens, baseLimit);
    const price = typeof req.pricePerMTok === 'number' && req.pricePerMTok >= 0 ? req.pricePerMTok : DEFAULT_PRICE_PER_MTOK_USD;
    const buckets = clampInt(req.buckets, 1, 200, DEFAULT_TUNER_BUCKETS);
    const f = this.filters(req);
    const col = tokensColumn(strategy);
    const own = strategy === DEFAULT_STRATEGY ? '0' : `p.${STRATEGY_COLUMN[strategy]} IS NULL`;
    const rows = this.q(`SELECT p.id, ${col} AS t, p.tool, ${own} AS fb FROM payloads p WHERE ${f.sql} ORDER BY t ASC, p.id`).all(...f.args) as Array<{
      id: string;
      t: number;
      tool: string;
      fb: number;
    }>;
    let tokensTotal = 0;
    let spilled = 0;
    let keptOut = 0;
    let fallbacks = 0;
    for (const r of rows) {
      tokensTotal += r.t;
      fallbacks += r.fb;
      if (r.t > limitTokens) {
        spilled++;
        keptOut += Math.max(0, r.t - ESTIMATED_SPILL_MESSAGE_TOKENS);
      }
    }
    const max = rows.length ? rows[rows.length - 1]!.t : 0;
    const histogram = logHistogram(
      rows.map((r) => r.t),
      buckets,
      max,
    );
    return {
      strategy,
      limitTokens,
      histogram,
      sizes: rows.slice(0, MAX_TUNER_SIZES).map((r) => ({ id: r.id, tokens: r.t, tool: r.tool })),
      total: rows.length,
      spilled,
      tokensTotal,
      tokensKeptOut: keptOut,
      dollarsKeptOut: (keptOut * price) / 1_000_000,
      fallbacks,
    };
  }

  /**
   * What a session's tool results cost: tokens per tool, the biggest results, inline base64
   * (chars of base64 text in results, and its tokens), and what `limitTokens` with `strategy`
   * would have spilled and saved (a spilled result still costs its message, about
   * ESTIMATED_SPILL_MESSAGE_TOKENS), in tokens and dollars at `pricePerMTok`.
   */
  wasteReport(req: WasteReportRequest): WasteReport {
    if (!req || typeof req.sessionId !== 'string') throw new IndexError('BAD_REQUEST', 'sessionId is required');
    const exists = this.q('SELECT 1 FROM sessions WHERE id = ?').get(req.sessionId);
    if (!exists) throw new IndexError('NOT_FOUND', `no session with id ${JSON.stringify(req.sessionId)}`);
    const strategy: StrategyName = req.strategy && STRATEGY_COLUMN[req.strategy] ? req.strategy : DEFAULT_STRATEGY;
    const limitTokens = typeof req.limitTokens === 'number' && req.limitTokens > 0 ? req.limitTokens : DEFAULT_LIMIT_TOKENS;
    const price = typeof req.pricePerMTok === 'number' && req.pricePerMTok >= 0 ? req.pricePerMTok : DEFAULT_PRICE_PER_MTOK_USD;
    const col = tokensColumn(strategy);
    const byTool = this.q(
        `SELECT p.tool AS tool, count(*) AS calls, sum(${col}) AS tokens, max(${col}) AS maxTokens FROM payloads p WHERE p.session_id = ? GROUP BY p.tool ORDER BY tokens DESC, tool`,
      )
      .all(req.sessionId) as WasteReport['byTool'];
    const biggest = this.q(`SELECT p.id, p.tool, ${col} AS tokens, p.bytes FROM payloads p WHERE p.session_id = ? ORDER BY tokens DESC, p.id LIMIT ?`)
      .all(req.sessionId, WASTE_BIGGEST_ROWS) as WasteReport['biggest'];
    const b64 = this.q('SELECT count(*) AS payloads, coalesce(sum(b64_chars), 0) AS bytes, coalesce(sum(b64_tokens), 0) AS tokens FROM payloads WHERE session_id = ? AND b64_runs > 0')
      .get(req.sessionId) as WasteReport['inlineBase64'];
    const spill = this.q(
        `SELECT count(*) AS n, coalesce(sum(max(${col} - ?, 0)), 0) AS saved FROM payloads p WHERE p.session_id = ? AND ${col} > ?`,
      )
      .get(ESTIMATED_SPILL_MESSAGE_TOKENS, req.sessionId, limitTokens) as { n: number; saved: number };
    const totalTokens = byTool.reduce((a, t) => a + t.tokens, 0);
    return {
      sessionId: req.sessionId,
      strategy,
      limitTokens,
      pricePerMTok: price,
      totalTokens,
      byTool,
      biggest,
      inlineBase64: b64,
      wouldSpill: { payloads: spill.n, tokensSaved: spill.saved, dollarsSaved: (spill.saved * price) / 1_000_000 },
    };
  }

  /**
   * Resolves when the scans so far are done, including their background work (a bulk writer
   * thread checkpointing the WAL it grew). The index is complete and searchable before that;
   * this is for callers that measure or want a quiet disk.
   */
  async idle(): Promise<void> {
    await this.queue.catch(() => undefined);
    await Promise.all([...this.finishing]);
  }

  /** Stop watching, finish the running scan, close the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.unwatch();
    await this.queue.catch(() => undefined);
    await Promise.all([...this.finishing]);
    this.closed = true;
    this.db.close();
  }
}

/** Chars of a payload handed to the guard's preview builder (it needs the structure, not the whole). */
const PREVIEW_SOURCE_CHARS = 256 * 1024;

/** The guard's own preview (structure first, base64 masked); our simpler one if it fails. */
function safePreview(text: string, kind: PayloadRow['kind']): string {
  try {
    return buildPreview(text, kind);
  } catch {
    return makePreview(text);
  }
}

function isInsidePath(base: string, candidate: string): boolean {
  const rel = path.relative(base, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** Log-spaced buckets from 1 token to the largest size; every value lands in exactly one bucket. */
export function logHistogram(values: number[], buckets: number, max: number): LimitTunerResponse['histogram'] {
  if (!values.length) return [];
  const hi = Math.max(2, max + 1);
  const edges: number[] = [0];
  for (let i = 1; i <= buckets; i++) edges.push(Math.round(Math.exp((Math.log(hi) * i) / buckets)));
  // Rounding can make low edges repeat: keep them strictly increasing.
  for (let i = 1; i < edges.length; i++) if (edges[i]! <= edges[i - 1]!) edges[i] = edges[i - 1]! + 1;
  edges[edges.length - 1] = Math.max(edges[edges.length - 1]!, hi);
  const out = edges.slice(0, -1).map((from, i) => ({ from, to: edges[i + 1]!, count: 0 }));
  let b = 0;
  for (const v of values) {
    // values are sorted ascending
    while (b < out.length - 1 && v >= out[b]!.to) b++;
    out[b]!.count++;
  }
  return out;
}

export { stripBase64 };
