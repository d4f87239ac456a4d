/**
 * The timeline: a session's context over its model calls, what filled it, what each tool result cost,
 * and the session replayed under other limits with the real guard's messages (docs/timeline.md). It
 * sits above the index and beside the service: it reads what the index stores of a session (its turns
 * and ledgers, through the index's TimelineRows and ReportRows), never SQLite itself.
 *
 * ```ts
 * const { index, timelines } = openIndexWithTimelines({ dbPath }); // attached before the first scan: it measures the ledgers then
 * await index.scan();
 * const t = await timelines.timeline({ sessionId, limits: [8_000] });
 * ```
 *
 * | part     | module       | does                                                                        |
 * | -------- | ------------ | --------------------------------------------------------------------------- |
 * | replay   | replay.ts    | pure: the context rule, the timeline's assembly, pricing, one replay        |
 * | guard    | guard.ts     | the real guard's message for a saved payload, built offline and kept        |
 * | queries  | timelines.ts | a session's timeline from the index's rows; replay inputs kept for a slider |
 * | reports  | reports.ts   | the limit tuner and the waste report: views of the replay                   |
 */
import { openIndex, type OpenIndexOptions, type SpillIndex } from '../index/index.js';
import type { LimitTunerRequest, LimitTunerResponse, TimelineData, TimelineRequest, WasteReport, WasteReportRequest } from '../index/rows.js';
import { guardDecision, settingsOf } from './guard.js';
import { Reports } from './reports.js';
import { TimelineQueries, type TimelineOptions } from './timelines.js';

export { replay, scenarioLabel, type ReplaySeries } from './replay.js';
export { DEFAULT_TUNER_BUCKETS, MAX_TUNER_SESSIONS_PER_PAGE, MAX_TUNER_SIZES, WASTE_BIGGEST_ROWS, logHistogram } from './reports.js';
export type { TimelineOptions } from './timelines.js';

/** The timeline layer over one open index. */
export class Timelines {
  private readonly queries: TimelineQueries;
  private readonly reports: Reports;

  constructor(index: SpillIndex) {
    this.queries = new TimelineQueries(index.timelineRows, (id) => index.payloadContent(id));
    this.reports = new Reports(
      index.reportRows,
      (req, o) => this.timeline(req, o),
      (p, limit, strategy, profile) => guardDecision(this.queries.guard, p, settingsOf(limit, { strategy, profile })),
    );
    // The index's background phase measures each session's ledgers with the timeline's figures (issue 29: one figure from indexing on).
    index.timelineRows.measureWith((id) => this.queries.measure(id));
  }

  /** A session's context timeline; undefined for an unknown session. With `replayOnly`, the replays alone. */
  timeline(req: TimelineRequest, o?: TimelineOptions): Promise<TimelineData | undefined> {
    return req.replayOnly ? this.queries.replays(req, o) : this.queries.timeline(req, o);
  }

  /** The limit tuner: payload sizes, and each session's replay at the limit (reports.ts). */
  limitTunerData(req: LimitTunerRequest): Promise<LimitTunerResponse> {
    return this.reports.limitTunerData(req);
  }

  /** A session's waste report, from the Timeline's replay (reports.ts). */
  wasteReport(req: WasteReportRequest): Promise<WasteReport> {
    return this.reports.wasteReport(req);
  }

  /** Guard runs the replays made offline so far (the bench counts them). */
  guardRuns(): number {
    return this.queries.guard.runs;
  }
}

/** The timeline layer over `index`; open it before the index's first scan, so that scan's background phase measures the ledgers. */
export function openTimelines(index: SpillIndex): Timelines {
  return new Timelines(index);
}

/**
 * An index with its timeline layer attached before anything can scan: what every caller that indexes
 * must open. A bare `openIndex` that scans writes each result's "entered" as estimated where this
 * writes it as measured (the index cannot measure it itself: that needs the timeline's assembly).
 */
export function openIndexWithTimelines(opts: OpenIndexOptions): { index: SpillIndex; timelines: Timelines } {
  const index = openIndex(opts);
  return { index, timelines: openTimelines(index) };
}
