/**
 * Scores without a judge: what a summary kept of a payload, measured by exact rules, no model
 * asked. Pure functions over plain data: the caller reads the payload, the run and the read-backs
 * (the index links those) and passes them in. docs/scores.md defines each score with examples.
 *
 * | export | for |
 * | --- | --- |
 * | `scoreSummary(input)` | every score of one summary run at once |
 * | `scoreRuns(input)` | the same for several runs of one payload (a comparison), the payload read once |
 * | `readBackRecall(summary, readBacks)` | of the lines the agent later read back, the share the summary already held |
 * | `anchorRecall(payload, summary, focus?)` | of the anchors in the payload's lines that match the focus, the share the summary holds |
 * | `inventedAnchors(payload, summary)` | the summary's anchors that are nowhere in the payload |
 * | `compression(payload, summary, opts)` | summary tokens ÷ payload tokens, with the estimator's strategy and profile named |
 *
 * A ratio whose denominator is empty (no anchors to recall, nothing read back) is `null`, never 0
 * or 1: "nothing to measure" is not "kept everything". Every function takes any input and never throws.
 */
import { ALL_STRATEGIES, estimateTokens, DEFAULT_PROFILE, PROFILES } from '../pipeline/index.js';
import type { Profile } from '../pipeline/types.js';
import { anchorIndex, appearsIn, distinctAnchors, extractAnchors, type Anchor } from './anchors.js';
import { focusTerms, matchMask } from './focus.js';

/** Anchors (or lines) listed by name in a score's detail; the counts always cover all of them. */
export const MAX_LISTED_ANCHORS = 20;

/** One read-back as plain data: the lines of the payload it read, or null when they cannot be told. */
export interface ReadBackEvidence {
  /** How a person knows it: "lines 120–180", "grep ERROR". */
  label: string;
  /** The payload's lines it read (1-based `n`), or null: a whole-file read, a JSON query, a file that could not be read. */
  lines: ReadonlyArray<{ n: number; text: string }> | null;
}

export interface ReadBackScore {
  label: string;
  /** Held lines ÷ read lines; null when it read no line that can be told (see `ReadBackEvidence.lines`). */
  score: number | null;
  lines: number;
  held: number;
  /** The first read lines the summary did not hold. */
  missing: Array<{ n: number; text: string }>;
}

export interface ReadBackRecall {
  /** Distinct read lines held ÷ distinct read lines (one line read twice counts once); null when none. */
  score: number | null;
  lines: number;
  held: number;
  /** The same, over the distinct anchors of the read lines; null when they hold none. */
  anchorScore: number | null;
  anchors: number;
  anchorsHeld: number;
  /** Read-backs whose lines could not be told (a whole-file read, a query): counted, not scored. */
  unscored: number;
  perReadBack: ReadBackScore[];
}

export interface AnchorRecall {
  /** Distinct payload anchors in scope that the summary holds ÷ those anchors; null when the scope has none. */
  score: number | null;
  /** `focus`: only the lines that match a focus term; `whole`: every line (no focus, or it matched no line). */
  scope: 'focus' | 'whole';
  /** Lines in scope. */
  lines: number;
  anchors: number;
  held: number;
  missing: Anchor[];
}

export interface InventedAnchors {
  /** Anchors of the summary found nowhere in the payload; a measure of the payload (`measured`) is not one. */
  count: number;
  /** Invented ÷ the summary's distinct anchors; null when the summary has none. */
  share: number | null;
  summaryAnchors: number;
  invented: Anchor[];
  /**
   * The summary's numbers that are a size of the payload, not in its text: its bytes, characters, lines or tokens
   * (the given figure, or the calibrated estimate for the profile), as a summary's header states them (`164,309 bytes`).
   */
  measured: Anchor[];
}

export interface Compression {
  /** Summary tokens ÷ payload tokens (not clamped: a summary longer than its payload is over 1); null for an empty payload. */
  ratio: number | null;
  summaryTokens: number;
  payloadTokens: number;
  /** How the summary was counted: the cheap estimate's calibrated strategy, for this tokenizer profile. */
  strategy: 'calibrated';
  profile: Profile;
  /** The payload's count: `given` by the caller (the guard's figure, same profile), or `calibrated` here like the summary's. */
  payloadCount: 'given' | 'calibrated';
}

export interface CostAndLatency {
  /** Dollars; null when the model has no price (the run's `costUsd` absent). */
  usd: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  latencyMs: number | null;
}

export interface SummaryScores {
  /** Null when no read-back was given: the payload was never read back, or the caller had none. */
  readBackRecall: ReadBackRecall | null;
  anchorRecall: AnchorRecall;
  inventedAnchors: InventedAnchors;
  compression: Compression;
  cost: CostAndLatency;
}

/** What a summary run records that the scores read (a SummaryRun has these fields). */
export interface RunFigures {
  status?: string;
  costUsd?: number;
  inputTokens?: number;
  outputTokens?: number;
  ms?: number;
}

export interface ScoreInput {
  /** The payload as summarized (the linked form when assets were cut out). */
  payload: string;
  summary: string;
  /** The focus the anchor recall is taken over (the run's own, or one shared by runs being compared). */
  focus?: string;
  /** The read-backs of this payload; absent or empty: `readBackRecall` is null. */
  readBacks?: readonly ReadBackEvidence[];
  /** Token profile of both counts (default o200k). */
  profile?: Profile;
  /** The payload's token figure when the caller already has one (the guard's), counted with `profile`. */
  payloadTokens?: number;
  run?: RunFigures;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const finite = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
const ratio = (num: number, den: number): number | null => (den > 0 ? Math.min(1, Math.max(0, num / den)) : null);
const squash = (s: string): string => s.replace(/\s+/g, ' ').trim().toLowerCase();

/**
 * A read line is held when the summary has it word for word (whitespace and case aside), or when
 * the line has anchors and the summary has every one of them. A line with no anchor that the
 * summary does not quote is not held: there is nothing exact to find it by.
 */
function lineHeld(text: string, summarySquashed: string, idx: ReturnType<typeof anchorIndex>): boolean {
  const sq = squash(text);
  if (sq && summarySquashed.includes(sq)) return true;
  const anchors = distinctAnchors(extractAnchors(text));
  return anchors.length > 0 && anchors.every((a) => appearsIn(a, idx));
}

export function readBackRecall(summary: string, readBacks: readonly ReadBackEvidence[] | undefined): ReadBackRecall | null {
  const list = Array.isArray(readBacks) ? readBacks : [];
  if (list.length === 0) return null;
  const s = str(summary);
  const idx = anchorIndex(s);
  const sq = squash(s);
  const heldByLine = new Map<number, boolean>();
  const textByLine = new Map<number, string>();
  const perReadBack: ReadBackScore[] = [];
  let unscored = 0;
  for (const rb of list) {
    const label = str(rb?.label);
    const lines = Array.isArray(rb?.lines) ? rb.lines.filter((l: { n: number; text: string }) => l && Number.isFinite(l.n) && str(l.text).trim() !== '') : null;
    if (!lines) {
      unscored++;
      perReadBack.push({ label, score: null, lines: 0, held: 0, missing: [] });
      continue;
    }
    let held = 0;
    const missing: Array<{ n: number; text: string }> = [];
    const seen = new Set<number>();
    for (const l of lines) {
      if (seen.has(l.n)) continue;
      seen.add(l.n);
      let h = heldByLine.get(l.n);
      if (h === undefined) {
        h = lineHeld(str(l.text), sq, idx);
        heldByLine.set(l.n, h);
        textByLine.set(l.n, str(l.text));
      }
      if (h) held++;
      else if (missing.length < MAX_LISTED_ANCHORS) missing.push({ n: l.n, text: str(l.text) });
    }
    perReadBack.push({ label, score: ratio(held, seen.size), lines: seen.size, held, missing });
  }
  let held = 0;
  for (const h of heldByLine.values()) if (h) held++;
  const anchors = distinctAnchors([...textByLine.values()].flatMap((t) => extractAnchors(t)));
  const anchorsHeld = anchors.filter((a) => appearsIn(a, idx)).length;
  return {
    score: ratio(held, heldByLine.size),
    lines: heldByLine.size,
    held,
    anchorScore: ratio(anchorsHeld, anchors.length),
    anchors: anchors.length,
    anchorsHeld,
    unscored,
    perReadBack,
  };
}

/** A payload read once: its lines and each line's anchors, shared by the scores that need them. */
interface ReadPayload {
  text: string;
  lines: string[];
  anchors: Anchor[][];
}
function readPayload(payload: string): ReadPayload {
  const lines = payload ? payload.split('\n') : [];
  return { text: payload, lines, anchors: lines.map((l) => extractAnchors(l)) };
}

function anchorRecallOf(p: ReadPayload, summary: string, focus: string | undefined): AnchorRecall {
  // The parts that match the focus: lines holding a focus term's stem, as the structural summary ranks them.
  const terms = focusTerms(str(focus));
  let inScope = terms.length ? p.lines.map((l) => matchMask(l.toLowerCase(), terms) !== 0) : [];
  let scope: AnchorRecall['scope'] = 'focus';
  if (!inScope.some(Boolean)) {
    inScope = p.lines.map(() => true);
    scope = 'whole';
  }
  const anchors = distinctAnchors(p.anchors.filter((_, i) => inScope[i]).flat());
  const idx = anchorIndex(summary);
  let held = 0;
  const missing: Anchor[] = [];
  for (const a of anchors) {
    if (appearsIn(a, idx)) held++;
    else if (missing.length < MAX_LISTED_ANCHORS) missing.push(a);
  }
  return { score: ratio(held, anchors.length), scope, lines: inScope.filter(Boolean).length, anchors: anchors.length, held, missing };
}

/** The names Spillway gives its own counts (`o200k`, `calibrated`): a summary that states how it counted names them. */
const COUNT_WORDS = new Set<string>([...PROFILES, ...ALL_STRATEGIES]);

/** The sizes of a payload a summary may state: bytes, characters, lines, tokens. As number keys. */
function measuresOf(p: ReadPayload, profile: Profile | undefined, payloadTokens: number | undefined): Set<string> {
  const lines = p.lines.length && p.lines.at(-1) === '' ? p.lines.length - 1 : p.lines.length;
  const out = [Buffer.byteLength(p.text, 'utf8'), p.text.length, lines];
  if (payloadTokens !== undefined) out.push(payloadTokens);
  if (p.text) out.push(estimateTokens(p.text, { profile: profile ?? DEFAULT_PROFILE, strategy: 'calibrated', bounded: true }).tokens);
  return new Set(out.map(String));
}

function inventedAnchorsOf(p: ReadPayload, summary: string, measures: () => Set<string>): InventedAnchors {
  const anchors = distinctAnchors(extractAnchors(summary)).filter((a) => !COUNT_WORDS.has(a.key));
  if (anchors.length === 0) return { count: 0, share: null, summaryAnchors: 0, invented: [], measured: [] };
  const idx = anchorIndex(p.text, p.anchors.flat());
  const invented: Anchor[] = [];
  const measured: Anchor[] = [];
  for (const a of anchors) {
    if (appearsIn(a, idx)) continue;
    if (a.kind === 'number' && measures().has(a.key)) measured.push(a);
    else invented.push(a);
  }
  return {
    count: invented.length,
    share: ratio(invented.length, anchors.length),
    summaryAnchors: anchors.length,
    invented: invented.slice(0, MAX_LISTED_ANCHORS),
    measured: measured.slice(0, MAX_LISTED_ANCHORS),
  };
}

/** Computed once, on first need (most summaries state no size). */
function lazy<T>(f: () => T): () => T {
  let v: { value: T } | undefined;
  return () => (v ??= { value: f() }).value;
}

export function anchorRecall(payload: string, summary: string, focus?: string): AnchorRecall {
  return anchorRecallOf(readPayload(str(payload)), str(summary), focus);
}

export function inventedAnchors(payload: string, summary: string, opts: { profile?: Profile; payloadTokens?: number } = {}): InventedAnchors {
  const read = readPayload(str(payload));
  return inventedAnchorsOf(read, str(summary), lazy(() => measuresOf(read, opts.profile, finite(opts.payloadTokens) ?? undefined)));
}

export function compression(payload: string, summary: string, opts: { profile?: Profile; payloadTokens?: number } = {}): Compression {
  const profile = opts.profile ?? DEFAULT_PROFILE;
  const count = (t: string) => (t ? estimateTokens(t, { profile, strategy: 'calibrated', bounded: true }).tokens : 0);
  const given = finite(opts.payloadTokens);
  const payloadTokens = given ?? count(str(payload));
  const summaryTokens = count(str(summary));
  return {
    ratio: payloadTokens > 0 ? summaryTokens / payloadTokens : null,
    summaryTokens,
    payloadTokens,
    strategy: 'calibrated',
    profile,
    payloadCount: given !== null ? 'given' : 'calibrated',
  };
}

export function costAndLatency(run: RunFigures | undefined): CostAndLatency {
  return {
    usd: finite(run?.costUsd),
    inputTokens: finite(run?.inputTokens),
    outputTokens: finite(run?.outputTokens),
    latencyMs: finite(run?.ms),
  };
}

/** Every score of one run. A run that failed (no summary) scores like an empty summary: it kept nothing. */
export function scoreSummary(input: ScoreInput): SummaryScores {
  const payload = str(input?.payload);
  const summary = str(input?.summary);
  const read = readPayload(payload);
  return {
    readBackRecall: readBackRecall(summary, input?.readBacks),
    anchorRecall: anchorRecallOf(read, summary, input?.focus),
    inventedAnchors: inventedAnchorsOf(read, summary, lazy(() => measuresOf(read, input?.profile, finite(input?.payloadTokens) ?? undefined))),
    compression: compression(payload, summary, { profile: input?.profile, payloadTokens: input?.payloadTokens }),
    cost: costAndLatency(input?.run),
  };
}

/** Several runs of one payload (a comparison): the payload is read once; each run has its own summary, focus and figures. */
export function scoreRuns(input: Omit<ScoreInput, 'summary' | 'focus' | 'run'> & { runs: ReadonlyArray<{ summary: string; focus?: string; run?: RunFigures }> }): SummaryScores[] {
  const runs = Array.isArray(input?.runs) ? input.runs : [];
  if (runs.length === 0) return [];
  const read = readPayload(str(input?.payload));
  // The payload's count does not depend on the run: counted once.
  const payloadTokens = finite(input?.payloadTokens) ?? undefined;
  const counted = compression(read.text, '', { profile: input?.profile, payloadTokens });
  const measures = lazy(() => measuresOf(read, input?.profile, payloadTokens));
  return runs.map((r) => {
    const summary = str(r?.summary);
    const c = compression('', summary, { profile: input?.profile, payloadTokens: counted.payloadTokens });
    return {
      readBackRecall: readBackRecall(summary, input?.readBacks),
      anchorRecall: anchorRecallOf(read, summary, r?.focus),
      inventedAnchors: inventedAnchorsOf(read, summary, measures),
      compression: { ...c, ratio: counted.payloadTokens > 0 ? c.summaryTokens / counted.payloadTokens : null, payloadCount: counted.payloadCount },
      cost: costAndLatency(r?.run),
    };
  });
}
