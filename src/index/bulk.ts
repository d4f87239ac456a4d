/**
 * A second SQLite writer for big loads: the full-text phase of a first index, a rebuild, a root
 * full of new sessions.
 *
 * FTS5 tokenizing is the larger half of indexing a payload, and it is synchronous. For a big
 * batch the main thread reads payload windows and hands ready-made rows to this worker thread,
 * which owns its own connection to the same database file and runs them, one transaction per
 * commit interval, while the main thread reads the next ones. On two cores the two halves
 * overlap, and the main thread stays free for the UI.
 *
 * The worker is plain CommonJS evaluated from a string (like src/compress/match.ts), so it runs
 * the same from TypeScript sources, the compiled library and a bundled Electron main process.
 * It knows no schema: the statements come from the caller, and a batch holds, for each
 * statement in order, the argument lists to run it with.
 *
 * If the worker cannot start or fails, every batch it did not confirm is handed back, and the
 * caller writes those on the main thread: the worker is a speed-up, never a requirement.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { BUSY_TIMEOUT_MS } from './db.js';

/** One batch: for each statement (in BulkStatements.sql order), the argument lists to run it with. */
export type BulkRows = unknown[][][];

export interface BulkStatements {
  sql: string[];
  /** Run once in the first transaction (settings for the load; the caller undoes them after `settle`). */
  setup?: string[];
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let db;
let st;
let began = 0;
let lastApplied = 0;
let broken = false;
let setUp = false;
function open() {
  const Database = require(workerData.sqlitePath);
  db = new Database(workerData.dbPath, { fileMustExist: true });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = ' + workerData.busyTimeoutMs);
  db.pragma('cache_size = -' + workerData.cacheKiB);
  db.pragma('temp_store = MEMORY');
  // One checkpoint at the end instead of one every 4 MB of WAL while the bulk load runs.
  db.pragma('wal_autocheckpoint = 0');
  st = workerData.statements.sql.map((sql) => db.prepare(sql));
}
function commit() {
  if (db && db.inTransaction) {
    db.exec('COMMIT');
    parentPort.postMessage({ type: 'committed', upTo: lastApplied });
  }
}
function fail(upTo, err) {
  broken = true;
  try { if (db && db.inTransaction) db.exec('ROLLBACK'); } catch {}
  parentPort.postMessage({ type: 'failed', upTo, message: String((err && err.message) || err) });
}
parentPort.on('message', (m) => {
  if (m.type === 'batch') {
    if (broken) return parentPort.postMessage({ type: 'failed', upTo: m.id });
    try {
      if (!db) open();
      if (!db.inTransaction) {
        db.exec('BEGIN IMMEDIATE');
        began = Date.now();
        if (!setUp) {
          for (const sql of workerData.statements.setup || []) db.exec(sql);
          setUp = true;
        }
      }
      // Arguments spread: better-sqlite3 reads an array argument element by element through the slow API.
      m.rows.forEach((list, i) => { for (const a of list) st[i].run(...a); });
      lastApplied = m.id;
      parentPort.postMessage({ type: 'applied', id: m.id });
      if (Date.now() - began >= workerData.commitMs) commit();
    } catch (err) {
      fail(m.id, err);
    }
  } else if (m.type === 'flush') {
    try { commit(); } catch (err) { fail(lastApplied, err); }
  } else if (m.type === 'finish') {
    try {
      if (db) {
        if (db.inTransaction) db.exec('ROLLBACK');
        db.pragma('wal_autocheckpoint = 1000');
        if (m.checkpoint) db.pragma('wal_checkpoint(PASSIVE)');
        db.close();
      }
    } catch {}
    parentPort.postMessage({ type: 'finished' });
  }
});
`;

/** The writer thread's young generation (V8's default is a few MB of semi-space). */
const YOUNG_GENERATION_MB = 64;

let sqlitePath: string | undefined;
function betterSqlitePath(): string {
  sqlitePath ??= createRequire(import.meta.url).resolve('better-sqlite3');
  return sqlitePath;
}

/**
 * One bulk load. `send` queues a batch; `settle` commits and waits for every batch, and returns
 * the tags of those the worker did not commit (empty when all went in). `finish` checkpoints and
 * ends the worker without making anyone wait for the checkpoint.
 *
 * The worker keeps one transaction open across batches and commits every `commitMs` (a commit
 * rewrites every index page the batch touched, so one per batch would cost more than the rows).
 * A failure rolls back everything since the last commit; those batches come back from `settle`.
 */
export class BulkWriter<T> {
  private readonly worker: Worker;
  private seq = 0;
  /** Sent and not yet committed, by batch id (ascending). */
  private readonly pending = new Map<number, T>();
  /** Sent and not yet applied (backpressure). */
  private unapplied = 0;
  private readonly failed: T[] = [];
  private broken: string | null = null;
  private finished: Promise<void> | null = null;
  private waiters: Array<() => void> = [];

  /** Why the worker gave up, if it did. */
  get error(): string | null {
    return this.broken;
  }

  constructor(dbPath: string, statements: BulkStatements, opts: { cacheKiB?: number; commitMs?: number } = {}) {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { dbPath, statements, sqlitePath: betterSqlitePath(), busyTimeoutMs: BUSY_TIMEOUT_MS, cacheKiB: opts.cacheKiB ?? 64_000, commitMs: opts.commitMs ?? 1_000 },
      // Batches are short-lived strings (KBs of text each): a roomier young generation lets
      // them die there instead of being copied into the old one.
      resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB },
    });
    this.worker.on('message', (m: { type: string; id?: number; upTo?: number; message?: string }) => {
      if (m.type === 'applied') {
        this.unapplied--;
      } else if (m.type === 'committed') {
        for (const id of [...this.pending.keys()]) if (id <= m.upTo!) this.pending.delete(id);
      } else if (m.type === 'failed') {
        this.broken ??= m.message ?? 'bulk insert failed';
        this.unapplied = Math.max(0, this.unapplied - 1);
        for (const [id, tag] of [...this.pending]) {
          if (id > m.upTo!) continue;
          this.pending.delete(id);
          this.failed.push(tag);
        }
      }
      this.wake();
    });
    const fail = (why: string) => {
      this.broken ??= why;
      this.failed.push(...this.pending.values());
      this.pending.clear();
      this.unapplied = 0;
      this.wake();
    };
    this.worker.on('error', (err) => fail(err.message));
    this.worker.on('exit', (code) => fail(`bulk writer exited (${code})`));
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private async until(cond: () => boolean): Promise<void> {
    while (!cond()) await new Promise<void>((r) => this.waiters.push(r));
  }

  /** Queue a batch. `tag` comes back from `settle` if the batch did not make it. */
  send(rows: BulkRows, tag: T): void {
    if (this.broken) {
      this.failed.push(tag);
      return;
    }
    const id = ++this.seq;
    this.pending.set(id, tag);
    this.unapplied++;
    this.worker.postMessage({ type: 'batch', id, rows });
  }

  /** Wait until at most `n` batches wait to be applied (bounded memory, both threads busy). */
  waitBelow(n: number): Promise<void> {
    return this.until(() => this.unapplied <= n);
  }

  /** Commit, wait for every batch; the tags of the ones that did not commit. */
  async settle(): Promise<T[]> {
    if (!this.broken) this.worker.postMessage({ type: 'flush' });
    await this.until(() => this.pending.size === 0);
    return this.failed.splice(0);
  }

  /**
   * End the worker: it checkpoints the WAL it grew (unless `checkpoint` is false) on its own
   * thread, then exits. The returned promise resolves when it is gone; callers need not wait.
   */
  finish(checkpoint = true): Promise<void> {
    this.finished ??= new Promise<void>((resolve) => {
      const done = () => {
        void this.worker.terminate().finally(resolve);
      };
      if (this.broken) return done();
      this.worker.on('message', (m: { type: string }) => {
        if (m.type === 'finished') done();
      });
      this.worker.once('exit', () => resolve());
      this.worker.postMessage({ type: 'finish', checkpoint });
    });
    return this.finished;
  }
}
