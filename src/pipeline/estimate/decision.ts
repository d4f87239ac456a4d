/**
 * The guard's decision: does this text fit the limit? Cheapest check first, and the real tokenizer
 * only where the cheap ones cannot tell, and only as far as the decision needs:
 *
 *   1. a quick sample (~3 K chars) passes what is clearly under the limit, even at its worst case;
 *   2. else the calibrated fit of the whole text, with the band its declared margin and the text's
 *      risk (content the fit was never validated on) put around it;
 *   3. inside that band, the real tokenizer counts chunk by chunk and stops as soon as the answer is
 *      proven: the count so far is over the limit, or the count so far plus the rest's UTF-8 bytes
 *      (a byte-level BPE never spends more tokens than bytes) is under it.
 */
import type { Estimate, Profile } from '../types.js';
import { MAX_PLAUSIBLE_BYTES_PER_TOKEN } from '../limits.js';
import { priceFeatures, roundTokens } from './calibrated.js';
import { estimateTokens } from './cheap.js';
import { EXACT_MARGIN } from './constants.js';
import { HEADROOM } from './headroom.js';
import { countExactDetailed, countTokens, hasLongRun, PATHOLOGICAL_RUN_CHARS, type CountOptions } from './exact.js';
import { addRangeFeatures, countPieceCuts, FEATURE_COUNT } from './features.js';
import { corrected, claudeCorrectionFor, DEFAULT_STRATEGY, isExactStrategy, profileOf, type EstimateOptions } from './options.js';
import { riskTokens } from './risk.js';
import { quickSample, sampleFeatures, windowIn } from './sample.js';

export interface DecisionOptions extends EstimateOptions {
  signal?: AbortSignal;
  /** Count exactly when the calibrated estimate is within the margin of the limit (default true). */
  exactNearLimit?: boolean;
  /** Override the profile's declared margin (share of the estimate), e.g. for tests. */
  margin?: number;
  /** The text's UTF-8 size, if the caller has it (else measured when needed). */
  utf8Bytes?: number;
  /** Receives a line for each thing the caller may want to tell the user (counted in pieces...). */
  notes?: string[];
}

/**
 * True when a calibrated estimate cannot tell which side of the limit the real count is on: with a
 * worst relative error m, the real count lies in [est/(1+m), est/(1-m)]; `risk` tokens of content
 * the fit was not validated on ({@link riskTokens}) widen that on both sides. With `headroom`
 * ({@link headroomTokens}) the upper end is est + risk + headroom instead of (est + risk)/(1-m).
 */
export function isNearLimit(estimateTokensValue: number, limitTokens: number, margin: number, risk = 0, headroom?: number): boolean {
  const low = Math.max(0, estimateTokensValue - risk) / (1 + margin);
  return low <= limitTokens && limitTokens < upperBound(estimateTokensValue, margin, risk, headroom);
}

/** The upper end of the band: what the real count can be at most, given the estimate. */
function upperBound(est: number, margin: number, risk: number, headroom: number | undefined): number {
  if (headroom !== undefined) return est + risk + headroom;
  return margin < 1 ? (est + risk) / (1 - margin) : Infinity;
}

/**
 * The most the calibrated fit may under-price a text with these features (which may stand for the
 * whole text from a sample), in tokens: a sum over its features fitted on the train side of the
 * corpus (scripts/fit-headroom.ts), so prose carries ~12% of its estimate, code ~20-27%, compact
 * JSON ~30%, and a mixture the sum of its parts'. Scaled by the Claude correction with the estimate.
 */
export function headroomTokens(features: Float64Array, profile: Profile, opts: Pick<EstimateOptions, 'claudeCorrection'> = {}): number {
  const u = HEADROOM[profile];
  let h = 0;
  for (let f = 0; f < FEATURE_COUNT; f++) h += features[f]! * u[f]!;
  return profile === 'claude' ? h * claudeCorrectionFor(opts) : h;
}

/** Texts this long are first asked a cheap question: clearly under the limit? (a full pass costs ~10 ns a char) */
export const QUICK_CHECK_MIN_CHARS = 8 * 1024;
/** Standard errors of the quick sample added to the margin: about 1 in 700 samples is off by more. */
export const QUICK_CHECK_SIGMAS = 3;
/** A quick sample noisier than this decides nothing. */
export const QUICK_CHECK_MAX_REL_STDERR = 0.08;
/** Fewest chars per tokenizer call while counting to decide (the count can stop after any call). */
export const DECIDE_CHUNK_CHARS = 2 * 1024;

const fitScratch = new Float64Array(FEATURE_COUNT);
const quickScratch = new Float64Array(FEATURE_COUNT);

/** A calibrated Estimate from features that stand for the whole text (claude correction applied). */
export function pricedEstimate(features: Float64Array, text: string, profile: Profile, opts: Pick<EstimateOptions, 'claudeCorrection'>): Estimate {
  return { ...corrected(roundTokens(priceFeatures(features, profile), text.length), profile, opts), strategy: 'calibrated', profile, exact: false };
}

/** riskTokens of the whole text (an unbroken run included). */
export function riskOf(text: string, features: Float64Array, profile: Profile, estimate: number): number {
  return riskTokens(features, profile, text.length, { text, estimate });
}

/** The calibrated estimate of the whole text (one feature pass, sampled when big) and its risk. */
export function fitWithRisk(text: string, profile: Profile, opts: Pick<EstimateOptions, 'claudeCorrection'>, out = fitScratch): { est: Estimate; risk: number } {
  sampleFeatures(text, out, profile);
  const est = pricedEstimate(out, text, profile, opts);
  return { est, risk: riskOf(text, out, profile, est.tokens) };
}

/**
 * The estimate the guard decides with: `tokens > limitTokens` exactly when the result must be spilled.
 * Calibrated first; when the limit falls within the profile's declared margin of it
 * ({@link EXACT_MARGIN}, from the worst error measured on the corpus), widened by what content outside
 * the corpus may add ({@link riskTokens}), the real tokenizer decides (see the module comment), so no
 * result is wrongly passed or spilled for that profile. Far from the limit no tokenizer is ever loaded.
 * An exact strategy always counts; chars4 and craft-density are returned as they are (baselines,
 * chosen on purpose).
 */
export async function estimateForDecision(text: string, limitTokens: number, opts: DecisionOptions = {}): Promise<Estimate> {
  const profile = profileOf(opts);
  const strategy = opts.strategy ?? DEFAULT_STRATEGY;
  if (isExactStrategy(strategy)) return countTokens(text, strategy, opts);
  if (strategy !== 'calibrated') return estimateTokens(text, { ...opts, profile, strategy });
  const margin = opts.margin ?? EXACT_MARGIN[profile];
  // An explicit margin (tests, callers who want one band) replaces the fitted headroom on the pass side too.
  const headroomOf = (f: Float64Array) => (opts.margin === undefined ? headroomTokens(f, profile, opts) : undefined);
  let bytes = opts.utf8Bytes;
  const utf8 = () => (bytes ??= Buffer.byteLength(text, 'utf8'));
  if (text.length >= QUICK_CHECK_MIN_CHARS) {
    const quick = quickLook(text, limitTokens, profile, margin, headroomOf, utf8(), opts);
    if (quick.pass) return quick.est;
    // Inside the band even at the sample's best and worst: a full pass could not leave it, so count now.
    if (quick.surelyNear && opts.exactNearLimit !== false && utf8() <= MAX_PLAUSIBLE_BYTES_PER_TOKEN * limitTokens) {
      return countOrWorst(text, limitTokens, profile, utf8(), quick.est, upperBound(quick.est.tokens, margin, quick.risk, quick.headroom), opts);
    }
  }
  const { est, risk } = fitWithRisk(text, profile, opts);
  const headroom = headroomOf(fitScratch);
  if (opts.exactNearLimit === false) return est;
  if (!isNearLimit(est.tokens, limitTokens, margin, risk, headroom)) {
    if (est.tokens <= limitTokens || risk < RATIO_MIN_RISK * est.tokens) return est;
    // Over the limit even at the risk's worst, so it spills; but the fit's number may be far off
    // (Arabic reads 13x too high), so the message shows it corrected by the real tokenizer.
    return { ...est, tokens: Math.max(Math.ceil((est.tokens - risk) / (1 + margin)), await ratioCorrected(est.tokens, text, profile, opts)) };
  }
  if (utf8() > MAX_PLAUSIBLE_BYTES_PER_TOKEN * limitTokens) {
    // Only the risk put it near the limit, and it is too big to count on every call: it is over the
    // limit at any plausible density, so it spills, with the corrected number.
    return { ...est, tokens: Math.max(Math.ceil(utf8() / MAX_PLAUSIBLE_BYTES_PER_TOKEN), await ratioCorrected(est.tokens, text, profile, opts)) };
  }
  return countOrWorst(text, limitTokens, profile, utf8(), est, upperBound(est.tokens, margin, risk, headroom), opts);
}

/** countToDecide; if the tokenizer cannot run, the worst case the band allows (so an error can only spill). */
async function countOrWorst(text: string, limitTokens: number, profile: Profile, bytes: number, est: Estimate, worst: number, opts: DecisionOptions): Promise<Estimate> {
  try {
    return await countToDecide(text, limitTokens, profile, bytes, est.tokens, opts);
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    const bound = Number.isFinite(worst) ? worst : (est.tokens + 1) * 2;
    return { ...est, tokens: Math.max(est.tokens, Math.ceil(bound), Math.min(bytes, limitTokens + 1)) };
  }
}

/**
 * Count with the real tokenizer until the answer is proven (see the module comment). The whole text
 * counted: an exact Estimate. Stopped early: the exact count so far extrapolated over the rest
 * (not exact), on the proven side of the limit.
 */
async function countToDecide(text: string, limitTokens: number, profile: Profile, bytes: number, fitTokens: number, opts: DecisionOptions): Promise<Estimate> {
  const f = claudeCorrectionFor(opts);
  const n = text.length;
  let countedBytes = 0;
  let at = 0;
  let verdict: 'over' | 'under' | undefined;
  // The spill side's proof counts the uncounted rest too: it holds at least one token per piece, and
  // at least (certain piece boundaries inside it) + 1 pieces (countPieceCuts). Never for an unbroken
  // run (counted in pieces, where a seam may fall inside a piece); and the rest is read only once
  // that minimum could settle it (a rest of r chars has at most r/2 boundaries), so near the end.
  const useCuts = !hasLongRun(text, PATHOLOGICAL_RUN_CHARS);
  let restCutDensity = -1; // not read yet
  // First chunk: up to where the fit's estimate says the count could first prove an answer.
  const density = Math.max(1e-9, fitTokens / Math.max(1, n));
  const firstChunk = Math.max(DECIDE_CHUNK_CHARS, Math.floor((0.8 * limitTokens) / density));
  const counted = await countExactDetailed(text, profile, {
    signal: opts.signal,
    chunkChars: firstChunk,
    stop: (tokens, end) => {
      countedBytes += Buffer.byteLength(text.slice(at, end), 'utf8');
      at = end;
      const rest = bytes - countedBytes;
      const restChars = n - end;
      let restMin = 0;
      // read the rest when its minimum could settle it: at most 1 boundary per 2 chars, then at the
      // density the last reading found (one more reading near the end, not one per chunk)
      if (useCuts && restChars > 0 && Math.ceil((tokens + (restCutDensity < 0 ? 0.5 : restCutDensity) * restChars + 1) * f) > limitTokens) {
        restMin = countPieceCuts(text, end + 1, n) + 1;
        restCutDensity = (restMin - 1) / restChars;
      }
      if (Math.ceil((tokens + restMin) * f) > limitTokens) verdict = 'over';
      else if ((tokens + rest) * f <= limitTokens) verdict = 'under';
      if (verdict !== undefined) return true;
      // The next chunk reaches about where the count so far says the answer will be proven, so a
      // result far from the limit is counted in a few big calls and a close one in small ones near the end.
      const perChar = tokens / end;
      const bytesPerChar = countedBytes / end;
      // the rest's minimum as last read, or as expected at the density last read
      const cutsPerChar = Math.max(0, restCutDensity);
      const expectedMin = restMin > 0 ? restMin : cutsPerChar * restChars;
      const toOver = perChar > cutsPerChar ? (limitTokens / f - tokens - expectedMin) / (perChar - cutsPerChar) : Infinity;
      const toUnder = bytesPerChar > perChar ? (tokens + rest - limitTokens / f) / (bytesPerChar - perChar) : Infinity;
      return Math.max(DECIDE_CHUNK_CHARS, 0.9 * Math.min(toOver, toUnder));
    },
  });
  if (counted.hardCuts > 0) {
    opts.notes?.push(`counted in pieces (an unbroken run of ${PATHOLOGICAL_RUN_CHARS}+ characters); may differ from one count by up to ${counted.hardCuts} tokens`);
  }
  if (counted.end >= text.length) return { ...corrected(counted.tokens, profile, opts), strategy: profile, profile, exact: true };
  // The exact density of the counted part carries over the rest; never across the proven side.
  const projected = Math.ceil(counted.tokens * f * (text.length / counted.end));
  const tokens = verdict === 'over' ? Math.max(limitTokens + 1, projected) : Math.min(limitTokens, Math.max(projected, Math.ceil(counted.tokens * f)));
  const share = Math.round((counted.end / text.length) * 100);
  opts.notes?.push(`counted exactly as far as the decision needed (${share}% of the text), the rest extrapolated from that count`);
  // The tokenizer's number (not exact: its tail is extrapolated), not the fit's.
  return { tokens, strategy: profile, profile, exact: false, ...(f !== 1 && profile === 'claude' ? { correction: f } : {}) };
}

/**
 * The estimate from ~3 K chars of windows spread over the text, with its worst case (the upper end of
 * the band, widened by QUICK_CHECK_SIGMAS standard errors of the sample; the sample's risk and
 * headroom stand for the whole text). `pass`: even the worst case is under the limit. `surelyNear`:
 * the limit lies inside the band at both ends of the sample's own error, so a full pass would only
 * delay the count.
 */
function quickLook(
  text: string,
  limitTokens: number,
  profile: Profile,
  margin: number,
  headroomOf: (f: Float64Array) => number | undefined,
  utf8Bytes: number,
  opts: DecisionOptions,
): { pass: boolean; surelyNear: boolean; est: Estimate; risk: number; headroom: number | undefined } {
  const info = quickSample(text, quickScratch, profile, utf8Bytes);
  const est = pricedEstimate(quickScratch, text, profile, opts);
  const headroom = headroomOf(quickScratch);
  if (!info.trusted || info.relStdErr > QUICK_CHECK_MAX_REL_STDERR) return { pass: false, surelyNear: false, est, risk: 0, headroom };
  const risk = riskOf(text, quickScratch, profile, est.tokens);
  const spread = QUICK_CHECK_SIGMAS * info.relStdErr;
  const pass = headroom !== undefined
    ? est.tokens * (1 + spread) + risk + headroom * (1 + spread) <= limitTokens
    : margin + spread < 1 && (est.tokens + risk) / (1 - margin - spread) <= limitTokens;
  const surelyNear =
    !pass &&
    isNearLimit(est.tokens * (1 - spread), limitTokens, margin, risk, headroom === undefined ? undefined : headroom * (1 - spread)) &&
    isNearLimit(est.tokens * (1 + spread), limitTokens, margin, risk, headroom === undefined ? undefined : headroom * (1 + spread));
  return { pass, surelyNear, est, risk, headroom };
}

/** Windows of ~RATIO_WINDOW_CHARS counted exactly to correct the fit on a risky text too big to count whole. */
export const RATIO_WINDOWS = 16;
export const RATIO_WINDOW_CHARS = 1024;
const ratioScratch = new Float64Array(FEATURE_COUNT);

/** Risk (share of the estimate) from which a number is corrected by exact windows. */
export const RATIO_MIN_RISK = 0.05;

/** The fit's estimate corrected by exact counts on spread windows; the estimate itself if that fails. */
export async function ratioCorrected(estimate: number, text: string, profile: Profile, opts: Pick<CountOptions, 'signal' | 'notes'>): Promise<number> {
  try {
    const ratio = await exactRatio(text, profile, opts.signal);
    if (ratio === undefined) return estimate;
    opts.notes?.push(`the text is unlike what the estimate was fitted on: the estimate is corrected by exact counts of ${RATIO_WINDOWS} spread windows`);
    return Math.ceil(estimate * ratio);
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    return estimate;
  }
}

/** Real tokens over the fit's price on RATIO_WINDOWS spread windows (undefined when the fit prices them at 0). */
async function exactRatio(text: string, profile: Profile, signal: AbortSignal | undefined): Promise<number | undefined> {
  let exact = 0;
  let fit = 0;
  for (let k = 0; k < RATIO_WINDOWS; k++) {
    const [start, end] = windowIn(text, k, RATIO_WINDOWS, RATIO_WINDOW_CHARS);
    if (end <= start) continue;
    exact += (await countExactDetailed(text.slice(start, end), profile, { signal })).tokens;
    ratioScratch.fill(0);
    addRangeFeatures(text, start, end, ratioScratch);
    fit += priceFeatures(ratioScratch, profile);
  }
  return fit > 0 ? exact / fit : undefined;
}
