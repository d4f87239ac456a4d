/**
 * A comparison: a baseline run against candidate runs, item by item (matched by payload) with the
 * delta of each score, and in aggregate (means, counts of regressions and improvements). Items
 * are sorted by their largest regression first. docs/experiments.md defines the sort.
 */
import type { StoredResult, StoredRun } from '../index/index.js';
import type { SummaryScores } from '../summarize/index.js';

/** The scores compared, each with which way is better. Compression and cost are trade-offs: shown, not in the sort. */
export const METRICS = [
  { name: 'readBackRecall', better: 'higher', quality: true },
  { name: 'anchorRecall', better: 'higher', quality: true },
  { name: 'inventedShare', better: 'lower', quality: true },
  { name: 'inventedAnchors', better: 'lower', quality: false },
  { name: 'compression', better: 'lower', quality: false },
  { name: 'costUsd', better: 'lower', quality: false },
  { name: 'latencyMs', better: 'lower', quality: false },
] as const;
export type MetricName = (typeof METRICS)[number]['name'];

/** Differences smaller than this are "the same" (ratios are rounded where they are shown). */
export const SAME_EPSILON = 1e-9;

export type Figures = Record<MetricName, number | null>;

/**
 * One result's figures. A failed item kept nothing: its recalls are 0 where the payload had
 * something to recall (the scores' own rule for a run without a summary), its other figures null.
 */
export function figuresOf(r: StoredResult | undefined, other?: StoredResult): Figures {
  const s = r?.status === 'ok' ? (r.scores as SummaryScores | undefined) : undefined;
  if (!s) {
    const o = other?.status === 'ok' ? (other.scores as SummaryScores | undefined) : undefined;
    return {
      readBackRecall: o?.readBackRecall?.score != null ? 0 : null,
      anchorRecall: o?.anchorRecall.score != null ? 0 : null,
      inventedShare: null,
      inventedAnchors: null,
      compression: null,
      costUsd: null,
      latencyMs: null,
    };
  }
  return {
    readBackRecall: s.readBackRecall?.score ?? null,
    anchorRecall: s.anchorRecall.score,
    inventedShare: s.inventedAnchors.share,
    inventedAnchors: s.inventedAnchors.count,
    compression: s.compression.ratio,
    // A cached result cost nothing in this run; its figure is what it cost when it was made.
    costUsd: r!.costUsd ?? null,
    latencyMs: r!.ms ?? null,
  };
}

export interface ItemComparison {
  payloadId: string;
  focus?: string;
  baseline: { status: 'ok' | 'error' | 'missing'; error?: string; summary?: string; figures: Figures };
  candidate: { status: 'ok' | 'error' | 'missing'; error?: string; summary?: string; figures: Figures };
  /** candidate − baseline, per score (null when either side has none). */
  deltas: Figures;
  /**
   * The item's largest regression in quality, signed "better is positive": the lowest of the read-back
   * recall delta, the anchor recall delta and the invented share's delta reversed. Negative: worse. Null: nothing to compare.
   */
  worst: number | null;
}

export interface MetricAggregate {
  /** Items where both sides have this score. */
  pairs: number;
  baselineMean: number | null;
  candidateMean: number | null;
  meanDelta: number | null;
  regressions: number;
  improvements: number;
  same: number;
}

export interface CandidateComparison {
  runId: string;
  variant: unknown;
  status: string;
  aggregate: Record<MetricName, MetricAggregate>;
  /** Items that failed on each side, among the items both runs hold. */
  failed: { baseline: number; candidate: number };
  /** Items the candidate holds and the baseline does not, and the reverse. */
  onlyCandidate: number;
  onlyBaseline: number;
  /** Items with a negative `worst`, and with a positive one. */
  regressed: number;
  improved: number;
  items: ItemComparison[];
}

export interface Comparison {
  baseline: { runId: string; variant: unknown; status: string };
  candidates: CandidateComparison[];
}

export interface RunResults {
  run: StoredRun;
  results: StoredResult[];
}

const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const statusOf = (r: StoredResult | undefined): 'ok' | 'error' | 'missing' => r?.status ?? 'missing';

function compareOne(baseline: RunResults, cand: RunResults): CandidateComparison {
  const byPayload = (rs: StoredResult[]) => new Map(rs.map((r) => [r.payloadId, r]));
  const base = byPayload(baseline.results);
  const other = byPayload(cand.results);
  const items: ItemComparison[] = [];
  let onlyBaseline = 0;
  for (const id of base.keys()) if (!other.has(id)) onlyBaseline++;
  for (const [id, c] of other) {
    const b = base.get(id);
    if (!b) continue;
    const bf = figuresOf(b, c);
    const cf = figuresOf(c, b);
    const deltas = {} as Figures;
    for (const m of METRICS) {
      const x = bf[m.name];
      const y = cf[m.name];
      deltas[m.name] = x === null || y === null ? null : y - x;
    }
    const signed = METRICS.filter((m) => m.quality && deltas[m.name] !== null).map((m) => (m.better === 'higher' ? deltas[m.name]! : -deltas[m.name]!));
    items.push({
      payloadId: id,
      focus: c.focus ?? b.focus,
      baseline: { status: statusOf(b), error: b.error, summary: b.summary, figures: bf },
      candidate: { status: statusOf(c), error: c.error, summary: c.summary, figures: cf },
      deltas,
      worst: signed.length ? Math.min(...signed) : null,
    });
  }
  // Largest regression first; items with nothing to compare last; ties in a stable order.
  items.sort((a, b) => (a.worst ?? Infinity) - (b.worst ?? Infinity) || (a.payloadId < b.payloadId ? -1 : a.payloadId > b.payloadId ? 1 : 0));
  const aggregate = {} as Record<MetricName, MetricAggregate>;
  for (const m of METRICS) {
    const pairs = items.filter((i) => i.deltas[m.name] !== null);
    const sign = m.better === 'higher' ? 1 : -1;
    aggregate[m.name] = {
      pairs: pairs.length,
      baselineMean: mean(pairs.map((i) => i.baseline.figures[m.name]!)),
      candidateMean: mean(pairs.map((i) => i.candidate.figures[m.name]!)),
      meanDelta: mean(pairs.map((i) => i.deltas[m.name]!)),
      regressions: pairs.filter((i) => sign * i.deltas[m.name]! < -SAME_EPSILON).length,
      improvements: pairs.filter((i) => sign * i.deltas[m.name]! > SAME_EPSILON).length,
      same: pairs.filter((i) => Math.abs(i.deltas[m.name]!) <= SAME_EPSILON).length,
    };
  }
  return {
    runId: cand.run.id,
    variant: cand.run.variant,
    status: cand.run.status,
    aggregate,
    failed: { baseline: items.filter((i) => i.baseline.status === 'error').length, candidate: items.filter((i) => i.candidate.status === 'error').length },
    onlyCandidate: other.size - items.length,
    onlyBaseline,
    regressed: items.filter((i) => i.worst !== null && i.worst < -SAME_EPSILON).length,
    improved: items.filter((i) => i.worst !== null && i.worst > SAME_EPSILON).length,
    items,
  };
}

export function compareRuns(baseline: RunResults, candidates: readonly RunResults[]): Comparison {
  return {
    baseline: { runId: baseline.run.id, variant: baseline.run.variant, status: baseline.run.status },
    candidates: candidates.map((c) => compareOne(baseline, c)),
  };
}
