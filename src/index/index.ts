/**
 * The session index: every spilled payload under every registered root, in SQLite.
 *
 * ```ts
 * const index = openIndex({ dbPath: appPaths().db, onEvent: (e) => emit(e.event, e.payload) });
 * const root = index.addRoot('/home/me/.claude/projects');
 * await index.scan({ rootId: root.id, onProgress: (p) => … }); // listed first, then searchable
 * const stop = await index.watch();            // live: new payloads show up within a second
 * index.listPayloads({ query: 'timeout', sort: { field: 'tokens', dir: 'desc' }, limit: 100 });
 * await stop(); index.close();
 * ```
 *
 * | part         | module        | does                                                            |
 * | ------------ | ------------- | --------------------------------------------------------------- |
 * | roots        | roots.ts      | registered folders/files; the agents' folders opened by default |
 * | scanner      | scanner.ts    | phase 1: walk, read what changed, list every payload            |
 * |              | writer.ts     | the listing's rows and its transaction                          |
 * |              | fulltext.ts   | phase 2: full-text search fills in (its writer thread: bulk.ts) |
 * |              | source.ts     | where sessions are read from (local files; the seam for S3)     |
 * | queries      | queries.ts    | sessions, pages of payloads, one payload, its content           |
 * | summary runs | summaries.ts  | runs from sidecars and from the inspector, searchable           |
 * | experiments  | experiments.ts| summary experiments' datasets, runs, results and cache (not from files) |
 * | the timeline | timeline-rows.ts, report-rows.ts | what src/timeline reads: turns, ledgers, report rows (no replay here) |
 *
 * The files are the truth: the database can be deleted at any time and `scan()` rebuilds it
 * (payload and session ids are derived from paths, so they survive a rebuild). Rows, requests
 * and responses are the types of rows.ts, which the service's contract re-exports.
 *
 * Threading: better-sqlite3 is synchronous. Every query method here is bounded (paged, capped);
 * scans and watching work in time slices (see yielder.ts) and yield to the event loop.
 */
import path from 'node:path';
import type { SummaryRun } from '../pipeline/types.js';
import { IndexCore, type IndexEvent } from './core.js';
import { FullText, BULK_MIN_ROWS, type WriterMode } from './fulltext.js';
import { type PayloadContent, Queries } from './queries.js';
import { ExperimentStore } from './experiments.js';
import { readBacksIn } from './readback.js';
import { compareSessions, toolEvidence } from './evidence.js';
import { ReportRows } from './report-rows.js';
import { type AddRootOptions, Roots } from './roots.js';
import type {
  ReadBack,
  CompareSessionsRequest,
  CompareSessionsResponse,
  ToolEvidenceRequest,
  ToolEvidenceResponse,
  IndexStats,
  ListPayloadsRequest,
  ListPayloadsResponse,
  PayloadDetail,
  RootInfo,
  SessionInfo,
} from './rows.js';
import { type ScanOptions, type ScanResult, Scanner } from './scanner.js';
import type { SessionSource } from './source.js';
import { RoutedSource, S3Poller, S3_POLL_MS, isS3Path } from './s3.js';
import { SummaryRuns } from './summaries.js';
import { TimelineRows } from './timeline-rows.js';
import { Watcher } from './watch.js';
import { RowWriter } from './writer.js';

export { IndexError, type IndexErrorCode, type IndexEvent } from './core.js';
export { FTS_HEAD_BYTES, FTS_TAIL_BYTES, ESTIMATED_SPILL_MESSAGE_TOKENS, stripBase64 } from './text.js';
export { SCHEMA_VERSION, MIGRATIONS } from './db.js';
export {
  ExperimentStore,
  ExperimentStoreError,
  type Candidate,
  type CachedSummary,
  type Dataset,
  type DatasetFilter,
  type DatasetInfo,
  type DatasetItem,
  type DatasetSpec,
  type RunStatus,
  type StoredResult,
  type StoredRun,
} from './experiments.js';
export { TimelineRows, NEAR_TRIGGER_SHARE, type StoredResult as StoredToolResult } from './timeline-rows.js';
export { ReportRows, type PayloadFacts, type SessionMeta } from './report-rows.js';
export { estimateText, type CompactionRecord, type TurnRecord, type TurnTool } from './turns.js';
export { spilledRemainder } from './ledger.js';
export { calibrateClaude, type Calibration, type CalibrationFit, type CalibrationSample } from './calibrate.js';
export { detectRootKind, sideFilesDirsOf } from './discover.js';
export { BULK_MIN_ROWS } from './fulltext.js';
export { MIN_SESSIONS_FOR_SUGGESTION, MIN_SPILLS_FOR_SUGGESTION } from './evidence.js';
export { DEFAULT_PAGE_ROWS, MAX_PAGE_ROWS, type PayloadContent } from './queries.js';
export { agentHomeRoots, type AddRootOptions } from './roots.js';
export type { ScanOptions, ScanResult } from './scanner.js';
export type { SessionSource } from './source.js';
export { RoutedSource, S3_POLL_MS, canonicalS3Root, isS3Path, s3PollMs, s3ReconcileMs } from './s3.js';

export interface OpenIndexOptions {
  /** SQLite file. Use `appPaths().db`; never a path inside a sessions root. `:memory:` for throwaway use. */
  dbPath: string;
  onEvent?: (e: IndexEvent) => void;
  /** Debounce for watch events before a scoped re-scan. Default 40 ms. */
  watchDebounceMs?: number;
  /**
   * Full text for at least this many pending payloads is written by a worker thread while the
   * main thread reads on (see bulk.ts). Default BULK_MIN_ROWS; `Infinity` keeps every write on
   * the main thread.
   */
  bulkMinRows?: number;
  /**
   * Whether such a load uses the writer thread: 'auto' (default) and 'always' do, whatever the
   * machine's load (the main thread must stay free for the UI), 'never' writes on the main
   * thread, a time slice at a time.
   */
  bulkWriter?: WriterMode;
  /** Where sessions are read from; default the local file system, and S3 for `s3://` roots. */
  source?: SessionSource;
  /** How often S3 roots are re-listed while watching; default S3_POLL_MS (the service passes SPILLWAY_S3_POLL_MS). */
  s3PollMs?: number;
  /**
   * Estimate the tool results a listing only placed in the background, once the full text is in
   * (default true), so a timeline opened later reads stored numbers. Off, the first timeline of a
   * session estimates them: for a one-shot reader that asks for one session.
   */
  backgroundEstimates?: boolean;
}

/** Open (or create, or rebuild) the index. Throws only when the DB folder itself is unusable. */
export function openIndex(opts: OpenIndexOptions): SpillIndex {
  return new SpillIndex(opts);
}

/** The index's front: one object with the methods the service and the CLI call, each handed to the part that does it. */
export class SpillIndex {
  readonly dbPath: string;
  private readonly core: IndexCore;
  private readonly roots: Roots;
  private readonly runs: SummaryRuns;
  private readonly fullText: FullText;
  private readonly scanner: Scanner;
  private readonly queries: Queries;
  /** What the timeline layer (src/timeline) reads of a session's calls and writes back: rows in, rows out. */
  readonly timelineRows: TimelineRows;
  /** The rows the limit tuner and the waste report read (src/timeline/reports.ts). */
  readonly reportRows: ReportRows;
  private readonly rowWriter: RowWriter;
  /** Summary experiments' datasets, runs, results and cache (experiments.ts), in this database. */
  readonly experiments: ExperimentStore;
  private watcher?: Watcher;
  private poller?: S3Poller;
  private readonly s3PollMs: number;
  private readonly watchDebounceMs: number;

  constructor(opts: OpenIndexOptions) {
    this.dbPath = opts.dbPath === ':memory:' ? opts.dbPath : path.resolve(opts.dbPath);
    this.core = new IndexCore(this.dbPath, opts.source ?? new RoutedSource(), opts.onEvent);
    this.watchDebounceMs = opts.watchDebounceMs ?? 40;
    this.s3PollMs = opts.s3PollMs ?? S3_POLL_MS;
    this.roots = new Roots(this.core, (event, p) => {
      const w = isS3Path(p) ? this.poller : this.watcher;
      if (event === 'add') w?.add(p);
      else w?.remove(p);
    });
    this.runs = new SummaryRuns(this.core);
    this.experiments = new ExperimentStore(this.core);
    this.fullText = new FullText(this.core, { bulkMinRows: opts.bulkMinRows ?? BULK_MIN_ROWS, writer: opts.bulkWriter ?? 'auto' });
    this.queries = new Queries(this.core, this.runs, this.fullText);
    this.timelineRows = new TimelineRows(this.core);
    this.reportRows = new ReportRows(this.core);
    this.rowWriter = new RowWriter(this.core, this.runs, () => (this.fullText.mayBePending = true));
    this.scanner = new Scanner(this.core, this.roots, this.rowWriter, this.fullText, (ids) => this.queries.totals(ids), opts.backgroundEstimates === false ? undefined : (ids) => this.timelineRows.warm(ids));
    // Full text a previous process left unfinished fills in now.
    if (this.fullText.unsearched()) setImmediate(() => void this.fullText.fill());
  }

  /** What happened at open (a corrupt DB moved aside, ...) and during scans. Newest last, capped. */
  get warnings(): string[] {
    return this.core.warnings;
  }

  /** Register a root (see Roots.add); does not scan. */
  addRoot(p: string, opts?: AddRootOptions): RootInfo {
    return this.roots.add(p, opts);
  }

  /** Forget a root and everything indexed under it (the files are not touched). */
  removeRoot(id: string): { ok: true } {
    return this.roots.remove(id);
  }

  /** Make the default (read-only, auto) roots exactly these paths, or none (null); see Roots.syncAuto. */
  syncAutoRoots(paths: string[] | null): RootInfo[] {
    return this.roots.syncAuto(paths);
  }

  rootFor(p: string): RootInfo | undefined {
    return this.roots.rootFor(p);
  }

  listRoots(): RootInfo[] {
    return this.roots.list();
  }

  /** Bring the index in line with the files: listed first, then searchable; resolves when both are done (see scanner.ts). */
  scan(opts: ScanOptions = {}): Promise<ScanResult> {
    return this.scanner.scan(opts);
  }

  /** Totals over every root (or one), without scanning. */
  stats(rootId?: string): Omit<IndexStats, 'seconds'> {
    return this.queries.totals(rootId ? [this.roots.row(rootId).id] : this.roots.rows().map((r) => r.id));
  }

  /**
   * Watch every root (and roots added later) and re-index what changes, scoped to the session
   * that changed. A payload the guard writes is listed, with an `onDidIndex` event, well within
   * a second. Resolves once the watchers are ready; the returned function stops them.
   */
  async watch(): Promise<() => Promise<void>> {
    if (this.watcher) return () => this.unwatch();
    this.watcher = new Watcher({
      debounceMs: this.watchDebounceMs,
      ignorePath: this.dbPath,
      onChange: async (rootPath, scopes) => {
        const root = this.roots.rows().find((r) => r.path === rootPath);
        if (!root || this.core.closed) return;
        await this.scanner.scan({ rootId: root.id, scopes: scopes ?? undefined }, false).catch((err: unknown) => {
          this.core.warn(`watch re-scan of ${rootPath} failed: ${(err as Error).message}`);
        });
      },
    });
    // A bucket sends no events: S3 roots are re-listed on a timer instead (s3.ts).
    this.poller = new S3Poller(this.s3PollMs, async (rootPath) => {
      const root = this.roots.rows().find((r) => r.path === rootPath);
      if (!root || this.core.closed) return;
      await this.scanner.scan({ rootId: root.id }, false).catch((err: unknown) => this.core.warn(`poll of ${rootPath} failed: ${(err as Error).message}`));
    });
    const all = this.roots.rows().map((r) => r.path);
    for (const p of all) if (isS3Path(p)) this.poller.add(p);
    await this.watcher.start(all.filter((p) => !isS3Path(p)));
    return () => this.unwatch();
  }

  private async unwatch(): Promise<void> {
    const w = this.watcher;
    this.watcher = undefined;
    this.poller?.close();
    this.poller = undefined;
    await w?.close();
  }

  /**
   * Spills that were deleted on purpose (`spillway prune`): their units leave the index now, by
   * key (`<session>/long_responses/<stem>`), without listing anything; a session left with no
   * unit goes too. Returns how many payloads went.
   */
  async forgetUnits(keys: Iterable<string>): Promise<number> {
    await this.scanner.listed();
    const find = this.core.q('SELECT id, session_id FROM sources WHERE key = ?');
    const touched = new Set<string>();
    let removed = 0;
    this.rowWriter.begin();
    try {
      for (const key of keys) {
        const row = find.get(key) as { id: number; session_id: string } | undefined;
        if (!row) continue;
        removed += this.rowWriter.dropSource(row.id);
        touched.add(row.session_id);
      }
      const left = this.core.q('SELECT EXISTS(SELECT 1 FROM payloads WHERE session_id = ?) AS n');
      for (const id of touched) if ((left.get(id) as { n: number }).n === 0) this.rowWriter.dropSession(id);
    } finally {
      this.rowWriter.commit();
    }
    if (touched.size) this.core.emit({ event: 'onDidIndex', payload: { sessionIds: [...touched], added: 0, changed: 0, removed } });
    return removed;
  }

  listSessions(req: { rootId?: string } = {}): SessionInfo[] {
    const list = this.queries.listSessions(req);
    const warnings = this.timelineRows.contextWarnings();
    if (warnings.size) for (const s of list) {
      const w = warnings.get(s.id);
      if (w) s.contextWarning = w;
    }
    return list;
  }

  listPayloads(req: ListPayloadsRequest = {}): ListPayloadsResponse {
    return this.queries.listPayloads(req);
  }

  sessionOf(payloadId: string): SessionInfo {
    return this.queries.sessionOf(payloadId);
  }

  getPayload(id: string): Promise<PayloadDetail> {
    return this.queries.getPayload(id);
  }

  /** Per tool and MCP server: spills, read-backs and their cost, the settings used, and suggestions (evidence.ts). */
  toolEvidence(req: ToolEvidenceRequest = {}): ToolEvidenceResponse {
    return toolEvidence(this.core, req);
  }

  /** Sessions grouped by their spills' rule or by a date, each group's spill and read-back figures (evidence.ts). */
  compareSessions(req: CompareSessionsRequest): CompareSessionsResponse {
    return compareSessions(this.core, req);
  }

  /** Every read-back read in, or of a spill of, these sessions (all sessions without), oldest first (readback.ts). */
  readBacks(sessionIds?: string[]): ReadBack[] {
    return readBacksIn(this.core, sessionIds);
  }

  payloadContent(id: string): Promise<PayloadContent> {
    return this.queries.payloadContent(id);
  }

  summaryRuns(payloadId: string): SummaryRun[] {
    return this.runs.list(payloadId);
  }

  addSummaryRun(payloadId: string, run: SummaryRun): void {
    this.runs.add(payloadId, run);
  }

  /** Sessions that compacted or came within 10% of their trigger: id → warning. */
  contextWarnings(): Map<string, string> {
    return this.timelineRows.contextWarnings();
  }

  /**
   * Resolves when the scans so far are done, full text included, and their background work (a
   * writer thread checkpointing the WAL it grew). For callers that measure or want a quiet disk.
   */
  async idle(): Promise<void> {
    await this.scanner.listed();
    await this.fullText.fill();
    await Promise.all([...this.fullText.finishing]);
    await this.timelineRows.idle();
  }

  /** Stop watching, finish the running listing, stop the full-text filler (it resumes at the next open), close the database. */
  async close(): Promise<void> {
    if (this.core.closed) return;
    // Work in progress stops at its next slice (yielder.ts): a huge transcript line does not hold the close.
    this.core.stopping = true;
    this.fullText.stop();
    await this.unwatch();
    await this.scanner.listed();
    this.core.closed = true;
    await this.timelineRows.idle();
    await this.fullText.fill();
    await Promise.all([...this.fullText.finishing]);
    this.core.db.close();
  }
}
