/**
 * What every part of the index shares: the connection, its statement cache, the event sink, the
 * warnings list and the errors it throws. One per open index; the parts (roots, scanner, full
 * text, queries, summary runs, reports) each take it.
 */
import type { Statement } from 'better-sqlite3';
import { BUSY_TIMEOUT_MS, type DB, READ_INDEXES, Statements, createReadIndex, dropReadIndexes, openDatabase } from './db.js';
import type { DidIndexEvent, IndexProgressEvent } from './rows.js';
import type { SessionSource } from './source.js';

/** Events the index emits; `event` and `payload` match the contract's InspectorEvents. */
export type IndexEvent = { event: 'onDidIndex'; payload: DidIndexEvent } | { event: 'onIndexProgress'; payload: IndexProgressEvent };

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

/** Warnings kept (newest last). */
const MAX_WARNINGS = 200;
/** SQLite's default: a commit that leaves the WAL longer than this checkpoints it (copies it into the database file, with fsyncs). */
const WAL_AUTOCHECKPOINT_PAGES = 1000;

export class IndexCore {
  readonly db: DB;
  /** What happened at open (a corrupt DB moved aside, ...) and during scans. Newest last, capped. */
  readonly warnings: string[] = [];
  closed = false;
  /** Set when close() begins: a listing, the full-text filler and the timelines' estimates stop at their next yield (IndexStopping). */
  stopping = false;
  private readonly statements: Statements;
  private checkpointHolds = 0;
  /** The read indexes (db.ts READ_INDEXES) are down: a first listing dropped them. */
  private indexesDown = false;
  private building: Promise<void> | null = null;

  constructor(
    readonly dbPath: string,
    readonly source: SessionSource,
    private readonly onEvent?: (e: IndexEvent) => void,
  ) {
    this.db = openDatabase(dbPath, this.warnings);
    this.statements = new Statements(this.db);
  }

  q(sql: string): Statement {
    return this.statements.q(sql);
  }

  /**
   * No automatic checkpoint on this connection until the returned function is called (holds
   * nest). A listing and a bulk load commit into the WAL only: a checkpoint in the middle of them
   * would make a commit wait for the copy and its fsyncs (a tenth of a second for a first index of
   * 10,000 payloads). After the last hold, the next commit that finds the WAL long copies it.
   */
  holdCheckpoints(): () => void {
    if (this.checkpointHolds++ === 0) this.db.pragma('wal_autocheckpoint = 0');
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      if (--this.checkpointHolds === 0 && this.db.open) this.db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    };
  }

  /** Drop the read indexes for a first listing into an empty index: no query or delete needs them until it is done. */
  dropIndexes(): void {
    if (this.indexesDown || this.building) return;
    dropReadIndexes(this.db);
    this.indexesDown = true;
  }

  /** Build the read indexes a first listing dropped, one per event-loop turn (each blocks for the time it takes). */
  buildIndexes(): Promise<void> {
    if (!this.indexesDown) return Promise.resolve();
    this.building ??= (async () => {
      for (const ix of READ_INDEXES) {
        if (!this.indexesDown || this.closed || !this.db.open) break;
        createReadIndex(this.db, ix);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      this.indexesDown = false;
    })().finally(() => (this.building = null));
    return this.building;
  }

  /** The same, now: a delete that cascades must not scan a table for every row it removes. */
  buildIndexesNow(): void {
    if (!this.indexesDown) return;
    for (const ix of READ_INDEXES) createReadIndex(this.db, ix);
    this.indexesDown = false;
  }

  emit(e: IndexEvent): void {
    try {
      this.onEvent?.(e);
    } catch {
      /* a listener's bug must not break indexing */
    }
  }

  warn(w: string): void {
    this.warnings.push(w);
    if (this.warnings.length > MAX_WARNINGS) this.warnings.splice(0, this.warnings.length - MAX_WARNINGS);
  }

  /**
   * Run a write that is only a cache (a counted line total): while another connection holds the
   * write lock (the full-text writer thread), skip it rather than block this thread.
   */
  tryWrite(fn: () => void): void {
    try {
      this.db.pragma('busy_timeout = 0');
      fn();
    } catch {
      /* busy: done again next time */
    } finally {
      this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }
}
