/**
 * The second phase of a scan: full-text search fills in behind the listing.
 *
 * The listing phase writes every payload row with `fts_pending` set (a token unique to that
 * insert). This filler reads each pending payload's head and tail (a Spillway payload file, a
 * spill file, or the result re-read from its transcript line), and writes its `payload_fts` row,
 * the inline-base64 runs it finds there and its line count, then clears the token. A write
 * applies only while the row still holds the token it was read for: a payload replaced or
 * removed meanwhile is skipped, never given someone else's text.
 *
 * With many rows pending, the rows go to a writer thread (bulk.ts) in batches while this thread
 * reads on; fewer are written here, a time slice at a time. A listing phase on this connection `pause()`s the filler first
 * (the worker commits and lets go of the write lock) and `resume()`s it after. Pending rows
 * survive a restart: the filler runs whenever some are left.
 */
import type { IndexCore } from './core.js';
import { readImportedText } from './importers.js';
import type { SourceLocation } from './record.js';
import type { IndexProgressEvent } from './rows.js';
import { BulkWriter } from './bulk.js';
import { FTS_GAP, countLinesIn, ftsWindow, stripAndScanBase64 } from './text.js';
import { ReadBuffers, readWindow } from './window.js';
import { IndexStopping, Yielder } from './yielder.js';

/** Pending rows from which a writer thread pays off over its start-up. */
export const BULK_MIN_ROWS = 256;
/** Rows read, then written together (one FTS5 segment each: big enough that merging stays cheap). */
const FTS_BATCH_ROWS = 256;
/** The writer thread commits this often; a write from the main thread meanwhile waits at most about this long. */
const BULK_COMMIT_MS = 500;
/** Batches queued to the worker before the reader waits: bounds memory, keeps both threads busy. */
const BULK_MAX_IN_FLIGHT = 4;
/** A full-text write on the main thread: rows in one slice at most, and the cost of one until measured (a 40 KB window tokenized). */
const SLICE_ROWS_MAX = FTS_BATCH_ROWS;
const ROW_WRITE_MS_GUESS = 0.5;
/**
 * Each batch of full-text rows becomes an FTS5 segment, and by default FTS5 merges every four
 * segments of a level: during a big load that merging costs more than the inserts themselves.
 * It is off while a big load runs (FTS5 still merges at 16 segments a level), then back to FTS5's
 * default of 4, and later writes merge the rest gradually.
 */
const FTS_NO_AUTOMERGE_SQL = "INSERT INTO payload_fts(payload_fts, rank) VALUES('automerge', 0)";
const FTS_AUTOMERGE_SQL = "INSERT INTO payload_fts(payload_fts, rank) VALUES('automerge', 4)";
/** Args: rowid, tool, input, body, rowid, token. */
const INSERT_FTS_SQL =
  'INSERT INTO payload_fts (rowid, tool, input, body) SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM payloads WHERE rowid = ? AND fts_pending = ?)';
/** Args: binary, lines, base64 runs, chars, tokens, rowid, token. */
const MARK_DONE_SQL = `UPDATE payloads SET fts_pending = 0, binary = coalesce(?, binary), lines = coalesce(lines, ?),
  b64_runs = b64_runs + ?, b64_chars = b64_chars + ?, b64_tokens = b64_tokens + ? WHERE rowid = ? AND fts_pending = ?`;

export type WriterMode = 'auto' | 'always' | 'never';

interface PendingRow {
  rowid: number;
  token: number;
  tool: string;
  input_excerpt: string | null;
  path: string;
  source_json: string | null;
  /** The session's kind: which client's reader reads the result again. */
  client: string;
}

/** One row's full-text write: [fts args, done args]. */
type Item = [unknown[], unknown[]];

/** What one filling run did. */
export interface FullTextRun {
  /** 'worker' when a writer thread wrote some of its rows. */
  writer: 'main' | 'worker';
  rows: number;
}

export class FullText {
  private task: Promise<FullTextRun> | null = null;
  private current: FullTextRun = { writer: 'main', rows: 0 };
  private paused = 0;
  /** The index is closing: stop at the next batch (what is left fills in at the next open). */
  private stopped = false;
  private wakeResume: Array<() => void> = [];
  private bulk: BulkWriter<Item[]> | null = null;
  /** Ends the hold on this connection's checkpoints that a writer thread's run takes (it checkpoints once, at its end). */
  private releaseCheckpoints: (() => void) | null = null;
  private readonly buffers = new ReadBuffers();
  /** Writer threads still checkpointing after their run (close waits for them). */
  readonly finishing = new Set<Promise<void>>();
  readonly listeners = new Set<(p: IndexProgressEvent) => void>();

  constructor(
    private readonly core: IndexCore,
    private readonly opts: { bulkMinRows: number; writer: WriterMode },
  ) {}

  /**
   * Whether rows may be pending: set by every listing write, cleared when a run finds none. While
   * it is clear, a search does not count unsearched rows (fts_pending has no index, by design).
   */
  mayBePending = true;

  /** Payloads listed but not searchable yet, among those a filter selects (`p` is payloads). */
  unsearched(where = '1', args: unknown[] = []): number {
    if (!this.mayBePending) return 0;
    return (this.core.q(`SELECT count(*) AS n FROM payloads p WHERE p.fts_pending > 0 AND ${where}`).get(...args) as { n: number }).n;
  }

  /** Start filling if rows are pending and no run is going; resolves when nothing is pending (or the index closes). */
  fill(): Promise<FullTextRun> {
    this.task ??= (async () => {
      this.current = { writer: 'main', rows: 0 };
      try {
        await this.run();
      } finally {
        this.task = null;
      }
      return this.current;
    })();
    return this.task;
  }

  /** Stop writing before another write on this connection; the writer thread commits and lets go of the lock. */
  async pause(): Promise<void> {
    this.paused++;
    if (this.bulk) this.requeue(await this.bulk.settle());
  }

  stop(): void {
    this.stopped = true;
  }

  resume(): void {
    this.paused = Math.max(0, this.paused - 1);
    if (this.paused) return;
    const w = this.wakeResume;
    this.wakeResume = [];
    for (const f of w) f();
  }

  private async gate(): Promise<void> {
    while (this.paused) await new Promise<void>((r) => this.wakeResume.push(r));
  }

  private async run(): Promise<void> {
    // Listings pause this filler: the read indexes a first listing dropped are built between them
    // (their pages go into the WAL with the listing's, for one checkpoint after).
    await this.gate();
    // A run that starts (or wakes) once close() has begun has nothing to do: the next open builds
    // what is left and fills in behind.
    if (this.stopped || this.core.closed || !this.core.db.open) return;
    const release = this.core.holdCheckpoints();
    try {
      await this.core.buildIndexes();
    } finally {
      release();
    }
    for (;;) {
      if (this.stopped) return;
      const roots = this.core.q('SELECT DISTINCT root_id AS id FROM payloads WHERE fts_pending > 0').all() as Array<{ id: string }>;
      if (!roots.length) {
        // Listings pause the filler, so none wrote since this query: nothing is pending.
        if (!this.paused) this.mayBePending = false;
        return;
      }
      try {
        for (const r of roots) await this.fillRoot(r.id);
      } catch (err) {
        // close() began in the middle of a long read: what is written stays, the rest resumes at the next open.
        if (err instanceof IndexStopping) return;
        throw err;
      }
    }
  }

  private progress(p: IndexProgressEvent): void {
    for (const l of this.listeners) l(p);
    this.core.emit({ event: 'onIndexProgress', payload: p });
  }

  private async fillRoot(rootId: string): Promise<void> {
    await this.gate();
    const total = this.unsearched('p.root_id = ?', [rootId]);
    let done = 0;
    this.progress({ rootId, done, total, phase: 'fulltext' });
    const big = total >= this.opts.bulkMinRows;
    // A big load goes to the writer thread however busy the machine is: written here, FTS5's
    // segment flushes and merges held this thread 100 ms and more at a time (measured at a load of
    // 20 on 2 cores), and a busy machine is where a frozen window shows most. The thread costs
    // about a tenth of the phase's time when the two threads have to take turns.
    const useWorker = big && this.core.dbPath !== ':memory:' && this.opts.writer !== 'never';
    if (useWorker) this.startWorker();
    if (this.bulk) this.current.writer = 'worker';
    const yielder = new Yielder(undefined, undefined, () => this.stopped);
    const select = this.core.q(
      'SELECT rowid, fts_pending AS token, tool, input_excerpt, path, source_json, (SELECT kind FROM sessions WHERE sessions.id = payloads.session_id) AS client FROM payloads WHERE root_id = ? AND fts_pending > 0 AND rowid > ? ORDER BY rowid LIMIT ?',
    );
    let after = 0;
    try {
      for (;;) {
        if (this.stopped) return;
        const rows = select.all(rootId, after, FTS_BATCH_ROWS) as PendingRow[];
        if (!rows.length) break;
        const items: Item[] = [];
        for (const r of rows) {
          items.push(await this.read(r, yielder));
          await yielder.maybe();
        }
        await this.gate();
        await this.write(items, yielder);
        after = rows[rows.length - 1]!.rowid;
        done += rows.length;
        this.current.rows += rows.length;
        this.progress({ rootId, done: Math.min(done, total), total, phase: 'fulltext' });
      }
    } finally {
      await this.stopWorker(big);
    }
    this.progress({ rootId, done: total, total, phase: 'fulltext' });
  }

  /** A pending row's full-text write. Unreadable content still clears the token (searchable by tool and input). */
  private async read(r: PendingRow, yielder: Yielder): Promise<Item> {
    let body = '';
    // binary, lines, base64 runs/chars/tokens found now (a transcript's result had them counted when it was listed).
    let found: unknown[] = [null, null, 0, 0, 0];
    try {
      const loc = r.source_json ? (JSON.parse(r.source_json) as SourceLocation) : undefined;
      if (loc && !loc.persistedPath) {
        const text = await readImportedText(this.core.source, loc, r.client, yielder);
        body = text === null ? '' : ftsWindow(text);
      } else {
        const win = await readWindow(this.core.source, loc?.persistedPath ?? r.path, { buffers: this.buffers });
        const text = win.binary ? '' : (win.whole ?? win.head + FTS_GAP + win.tail);
        const stripped = win.mayHoldBase64 ? stripAndScanBase64(text) : { text, scan: { runs: 0, chars: 0, tokens: 0 } };
        body = stripped.text;
        const lines = win.whole !== null && !win.binary ? countLinesIn(win.whole) : null;
        if (!loc) found = [win.binary ? 1 : 0, lines, stripped.scan.runs, stripped.scan.chars, stripped.scan.tokens];
      }
    } catch (err) {
      // Stopping: the row stays pending for the next open.
      if (err instanceof IndexStopping) throw err;
      /* the file went away since the listing: the watcher drops its row */
    }
    return [
      [r.rowid, r.tool, r.input_excerpt ?? '', body, r.rowid, r.token],
      [...found, r.rowid, r.token],
    ];
  }

  private async write(items: Item[], yielder: Yielder): Promise<void> {
    if (this.bulk && !this.bulk.error) {
      this.bulk.send([items.map((i) => i[0]), items.map((i) => i[1])], items);
      await this.bulk.waitBelow(BULK_MAX_IN_FLIGHT);
      return;
    }
    await this.writeSliced(items, yielder);
  }

  /**
   * Write on this connection in time slices, each its own transaction: a batch of 256 rows written
   * at once held the main thread 70-160 ms (tokenizing, then FTS5 flushing the batch's segment at
   * its commit), and this is the thread that answers the UI. A slice's rows are one FTS5 segment,
   * which FTS5's automerge (left on for writes on this thread) folds in a bounded step at a time.
   */
  private async writeSliced(items: Item[], yielder: Yielder): Promise<void> {
    for (let i = 0; i < items.length; ) {
      if (yielder.due) {
        await yielder.now();
        await this.gate();
      }
      const start = i;
      // At least one row per slice, so a slow row cannot stall the batch.
      do i++;
      while (i < items.length && i - start < SLICE_ROWS_MAX && !yielder.due && this.sliceRowsFit(yielder, i - start));
      this.writeHere(items.slice(start, i));
    }
  }

  /** Milliseconds one row's write took, measured (a guess until then). */
  private rowWriteMs = ROW_WRITE_MS_GUESS;

  /** Whether one more row's write fits in the slice after `rows` already taken, at the measured cost. */
  private sliceRowsFit(yielder: Yielder, rows: number): boolean {
    return yielder.left > (rows + 1) * this.rowWriteMs;
  }

  /** Write on this connection (one transaction; a row whose write fails is cleared without its text, never retried forever). */
  private writeHere(items: Item[]): void {
    const t0 = performance.now();
    try {
      this.writeRows(items);
    } finally {
      // The commit's flush included: what the next slice plans with (never below half the last figure at once).
      if (items.length) this.rowWriteMs = Math.max(this.rowWriteMs * 0.5, (performance.now() - t0) / items.length);
    }
  }

  private writeRows(items: Item[]): void {
    const ins = this.core.q(INSERT_FTS_SQL);
    const mark = this.core.q(MARK_DONE_SQL);
    const run = () => {
      for (const [fts] of items) ins.run(...fts);
      for (const [, done] of items) mark.run(...done);
    };
    try {
      this.core.db.transaction(run).immediate();
    } catch (err) {
      this.core.warn(`full-text rows for ${items.length} payload(s) failed (${(err as Error).message}); they stay listed, unsearchable`);
      this.core.db.transaction(() => {
        for (const [, done] of items) mark.run(...done);
      })();
    }
  }

  private requeue(failed: Item[][]): void {
    for (const batch of failed) this.writeHere(batch);
  }

  private startWorker(): void {
    if (this.core.db.inTransaction) this.core.db.exec('COMMIT');
    try {
      this.bulk = new BulkWriter<Item[]>(this.core.dbPath, { sql: [INSERT_FTS_SQL, MARK_DONE_SQL], setup: [FTS_NO_AUTOMERGE_SQL] }, { commitMs: BULK_COMMIT_MS });
      // The worker checkpoints once at the end; this connection must not do it on the way.
      this.releaseCheckpoints = this.core.holdCheckpoints();
    } catch (err) {
      this.core.warn(`full-text writer thread unavailable, writing on the main thread: ${(err as Error).message}`);
      this.bulk = null;
    }
  }

  private async stopWorker(big: boolean): Promise<void> {
    const bulk = this.bulk;
    if (!bulk) {
      if (big) this.core.db.exec(FTS_AUTOMERGE_SQL);
      return;
    }
    this.bulk = null;
    const failed = await bulk.settle();
    if (bulk.error) this.core.warn(`full-text writer thread stopped (${bulk.error}); finished on the main thread`);
    this.requeue(failed);
    // Undo the worker's setup here: this thread writes next, and the worker committing now would only make it wait.
    this.core.db.exec(FTS_AUTOMERGE_SQL);
    // The worker's closing checkpoint copies the WAL into the database file: housekeeping that
    // neither this scan nor the UI waits for (close() does).
    const release = this.releaseCheckpoints;
    this.releaseCheckpoints = null;
    const finishing = bulk.finish().finally(() => {
      this.finishing.delete(finishing);
      release?.();
    });
    this.finishing.add(finishing);
  }
}
