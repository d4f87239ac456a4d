/**
 * What every part of the index shares: the connection, its statement cache, the event sink, the
 * warnings list and the errors it throws. One per open index; the parts (roots, scanner, full
 * text, queries, summary runs, reports) each take it.
 */
import type { Statement } from 'better-sqlite3';
import { BUSY_TIMEOUT_MS, type DB, Statements, openDatabase } from './db.js';
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

export class IndexCore {
  readonly db: DB;
  /** What happened at open (a corrupt DB moved aside, ...) and during scans. Newest last, capped. */
  readonly warnings: string[] = [];
  closed = false;
  private readonly statements: Statements;

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
