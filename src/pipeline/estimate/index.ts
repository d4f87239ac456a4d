import type { DensityShares, Estimate, Profile, StrategyName } from '../types.js';
import { chars4, craftDensity } from './baselines.js';
import { calibrated, priceFeatures, roundTokens } from './calibrated.js';
import { EXACT_MARGIN } from './constants.js';
import { countExactDetailed, PATHOLOGICAL_RUN_CHARS } from './exact.js';
import { riskTokens } from './risk.js';
import { addRangeFeatures, FEATURE_COUNT, FEATURE_NAMES } from './features.js';
import { boundedSample, quickSample, sampleFeatures, windowIn } from './sample.js';

export { chars4, craftDensity } from './baselines.js';
export { calibrated, calibratedAll, priceFeatures } from './calibrated.js';
export {
  countExact,
  countExactDetailed,
  countTokensAnthropicApi,
  hasLongRun,
  isTokenizerLoaded,
  loadTokenizer,
  PATHOLOGICAL_RUN_CHARS,
  PIECE_CHARS,
  type CountExactOptions,
  type ExactCount,
} from './exact.js';
export { riskBreakdown, riskTokens, type RiskPart, type RiskText } from './risk.js';
export { FEATURE_NAMES, scanFeatures } from './features.js';
export { BOUNDED_SAMPLE_MAX_CHARS, boundedSample, SAMPLE_MIN_CHARS, sampleFeatures, type SampleInfo } from './sample.js';
export { EXACT_MARGIN, MEASURED_ERROR } from './constants.js';

export const CHEAP_STRATEGIES = ['chars4', 'craft-density', 'calibrated'] as const;
export const EXACT_STRATEGIES = ['o200k', 'cl100k', 'claude'] as const;
export const ALL_STRATEGIES: readonly StrategyName[] = [...CHEAP_STRATEGIES, ...EXACT_STRATEGIES];
export const DEFAULT_STRATEGY: StrategyName = 'calibrated';
export const DEFAULT_PROFILE: Profile = 'o200k';
export type CheapStrategy = (typeof CHEAP_STRATEGIES)[number];

/** Env var with the default {@link EstimateOptions.claudeCorrection}. */
export const CLAUDE_CORRECTION_ENV = 'SPILLWAY_CLAUDE_CORRECTION';
/** Sane bounds for the correction factor; anything outside is a typo, not a tokenizer. */
export const CLAUDE_CORRECTION_MIN = 0.5;
export const CLAUDE_CORRECTION_MAX = 3;

export interface EstimateOptions {
  strategy?: StrategyName;
  profile?: Profile;
  /**
   * Multiplier for the `claude` profile. The only public Claude tokenizer is the legacy one; newer
   * Claude models tokenize differently (usually more tokens for the same text). Set this to
   * (count_tokens API result) / (legacy count) for your model; default from SPILLWAY_CLAUDE_CORRECTION,
   * else 1. Ignored for other profiles.
   */
  claudeCorrection?: number;
}

export function isProfile(x: unknown): x is Profile {
  return x === 'o200k' || x === 'cl100k' || x === 'claude';
}

export function isStrategy(x: unknown): x is StrategyName {
  return typeof x === 'string' && (ALL_STRATEGIES as readonly string[]).includes(x);
}

export function isExactStrategy(s: StrategyName): s is Profile {
  return (EXACT_STRATEGIES as readonly string[]).includes(s);
}

/** Parse a correction factor; throws a clear error for nonsense. */
export function parseClaudeCorrection(value: string | number): number {
  const n = typeof value === 'number' ? value : Number(String(value).trim());
  if (!Number.isFinite(n) || n < CLAUDE_CORRECTION_MIN || n > CLAUDE_CORRECTION_MAX) {
    throw new RangeError(
      `claude correction must be a number between ${CLAUDE_CORRECTION_MIN} and ${CLAUDE_CORRECTION_MAX}, got ${JSON.stringify(value)}`,
    );
  }
  return n;
}

let envCache: { raw: string | undefined; value: number } | undefined;
/** The correction in effect: the option, else the env var (a bad env value is ignored, not fatal), else 1. */
export function claudeCorrectionFor(opts: { claudeCorrection?: number } = {}, env: NodeJS.ProcessEnv = process.env): number {
  if (opts.claudeCorrection !== undefined) return parseClaudeCorrection(opts.claudeCorrection);
  const raw = env[CLAUDE_CORRECTION_ENV];
  if (envCache && envCache.raw === raw) return envCache.value;
  let value = 1;
  if (raw !== undefined && raw !== '') {
    try {
      value = parseClaudeCorrection(raw);
    } catch {
      value = 1;
    }
  }
  envCache = { raw, value };
  return value;
}

function corrected(tokens: number, profile: Profile, opts: EstimateOptions): { tokens: number; correction?: number } {
  if (profile !== 'claude') return { tokens };
  const f = claudeCorrectionFor(opts);
  return f === 1 ? { tokens } : { tokens: Math.ceil(tokens * f), correction: f };
}

/**
 * Synchronous, cheap estimate. Exact strategies are async (tokenizers load lazily):
 * use {@link countExact} or {@link estimateExact} for those.
 */
export function estimateTokens(text: string, opts: EstimateOptions = {}): Estimate {
  const profile = opts.profile ?? DEFAULT_PROFILE;
  const strategy = opts.strategy ?? DEFAULT_STRATEGY;
  if (!isProfile(profile)) throw new TypeError(`unknown profile: ${String(profile)} (use o200k, cl100k or claude)`);
  switch (strategy) {
    case 'chars4':
      return { tokens: chars4(text), strategy, profile, exact: false };
    case 'craft-density':
      return { tokens: craftDensity(text), strategy, profile, exact: false };
    case 'calibrated':
      return { ...corrected(calibrated(text, profile), profile, opts), strategy, profile, exact: false };
    default:
      if (isExactStrategy(strategy)) throw new TypeError(`strategy ${strategy} is exact and async: use countExact()`);
      throw new TypeError(`unknown strategy: ${String(strategy)}`);
  }
}

/** A calibrated Estimate from features that stand for the whole text (claude correction applied). */
function pricedEstimate(features: Float64Array, text: string, profile: Profile, opts: Pick<EstimateOptions, 'claudeCorrection'>): Estimate {
  return { ...corrected(roundTokens(priceFeatures(features, profile), text.length), profile, opts), strategy: 'calibrated', profile, exact: false };
}

const boundedScratch = new Float64Array(FEATURE_COUNT);
/**
 * The calibrated estimate from at most ~1 M chars of windows, without the checks' fall-back to a full
 * pass: for texts so far over any limit that the number is only informational (the guard's 4 MB+ path).
 */
export function estimateBounded(text: string, opts: Omit<EstimateOptions, 'strategy'> = {}): Estimate {
  const profile = opts.profile ?? DEFAULT_PROFILE;
  boundedSample(text, boundedScratch, profile);
  return pricedEstimate(boundedScratch, text, profile, opts);
}

/**
 * Exact count for a tokenizer profile, as an Estimate (correction applied for `claude`). A text counted
 * in pieces (an unbroken run) says so in `notes`.
 */
export async function estimateExact(text: string, profile: Profile, opts: EstimateOptions & { signal?: AbortSignal; notes?: string[] } = {}): Promise<Estimate> {
  const counted = await countExactDetailed(text, profile, { signal: opts.signal });
  if (counted.hardCuts > 0) {
    opts.notes?.push(`counted in pieces (an unbroken run of ${PATHOLOGICAL_RUN_CHARS}+ characters); may differ from one count by up to ${counted.hardCuts} tokens`);
  }
  return { ...corrected(counted.tokens, profile, opts), strategy: profile, profile, exact: true };
}

/** Every cheap strategy's count for a profile, from one call each (calibrated prices one pass). */
export function estimateAll(text: string, profile: Profile = DEFAULT_PROFILE, opts: Pick<EstimateOptions, 'claudeCorrection'> = {}): Record<CheapStrategy, number> {
  return cheapCounts(text, corrected(calibrated(text, profile), profile, { ...opts, profile }).tokens);
}

/** The cheap strategies' counts, the calibrated one already priced by the caller. */
function cheapCounts(text: string, calibratedTokens: number): Record<CheapStrategy, number> {
  return { chars4: chars4(text), 'craft-density': craftDensity(text), calibrated: calibratedTokens };
}

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
 * the fit was not validated on ({@link riskTokens}) widen that on both sides.
 */
export function isNearLimit(estimateTokensValue: number, limitTokens: number, margin: number, risk = 0): boolean {
  const low = Math.max(0, estimateTokensValue - risk) / (1 + margin);
  const high = margin < 1 ? (estimateTokensValue + risk) / (1 - margin) : Infinity;
  return low <= limitTokens && limitTokens < high;
}

/**
 * UTF-8 bytes per token beyond which an estimate is implausible (only long runs of one repeated
 * character get there). A text over this many times the limit in bytes is never counted exactly: it
 * is over the limit whatever the fit says, and counting it would cost more than a tool call should.
 */
export const MAX_PLAUSIBLE_BYTES_PER_TOKEN = 16;

const fitScratch = new Float64Array(FEATURE_COUNT);

/** The calibrated estimate of the whole text (one feature pass, sampled when big) and its risk. */
function fitWithRisk(text: string, profile: Profile, opts: Pick<EstimateOptions, 'claudeCorrection'>): { est: Estimate; risk: number } {
  sampleFeatures(text, fitScratch, profile);
  const est = pricedEstimate(fitScratch, text, profile, opts);
  return { est, risk: riskOf(text, fitScratch, profile, est.tokens) };
}

/**
 * The estimate the guard decides with. Calibrated first; when it falls within the profile's declared
 * margin of the limit ({@link EXACT_MARGIN}, derived from the worst error measured on the corpus),
 * widened by what content outside the corpus may add ({@link riskTokens}: Greek, Arabic, control
 * chars, runs of braces...), the real tokenizer counts it, so no result is wrongly passed or spilled
 * for that profile. Far from the limit no tokenizer is ever loaded. An exact strategy always counts;
 * chars4 and craft-density are returned as they are (they are baselines, chosen on purpose).
 */
export async function estimateForDecision(text: string, limitTokens: number, opts: DecisionOptions = {}): Promise<Estimate> {
  const profile = opts.profile ?? DEFAULT_PROFILE;
  const strategy = opts.strategy ?? DEFAULT_STRATEGY;
  if (isExactStrategy(strategy)) return estimateExact(text, strategy, opts);
  if (strategy !== 'calibrated') return estimateTokens(text, { ...opts, profile, strategy });
  if (text.length >= QUICK_CHECK_MIN_CHARS) {
    const quick = clearlyUnder(text, limitTokens, profile, opts);
    if (quick) return quick;
  }
  const { est, risk } = fitWithRisk(text, profile, opts);
  if (opts.exactNearLimit === false) return est;
  const margin = opts.margin ?? EXACT_MARGIN[profile];
  if (!isNearLimit(est.tokens, limitTokens, margin, risk)) {
    if (est.tokens <= limitTokens || risk < RATIO_MIN_RISK * est.tokens) return est;
    // Over the limit even at the risk's worst, so it spills; but the fit's number may be far off
    // (Arabic reads 13x too high), so the message shows it corrected by the real tokenizer.
    return { ...est, tokens: Math.max(Math.ceil((est.tokens - risk) / (1 + margin)), await ratioCorrected(est.tokens, text, profile, opts)) };
  }
  const bytes = opts.utf8Bytes ?? Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_PLAUSIBLE_BYTES_PER_TOKEN * limitTokens) {
    // Only the risk put it near the limit, and it is too big to count on every call: it is over the
    // limit at any plausible density, so it spills, with the corrected number.
    return { ...est, tokens: Math.max(Math.ceil(bytes / MAX_PLAUSIBLE_BYTES_PER_TOKEN), await ratioCorrected(est.tokens, text, profile, opts)) };
  }
  try {
    return await estimateExact(text, profile, opts);
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    // The tokenizer could not run: decide on the worst case the band allows, so an internal error
    // can only cause a spill, never let an oversized result through.
    const worst = margin < 1 ? (est.tokens + risk) / (1 - margin) : (est.tokens + risk) * 2;
    return { ...est, tokens: Math.max(est.tokens, Math.ceil(worst)) };
  }
}

/** Windows of ~RATIO_WINDOW_CHARS counted exactly to correct the fit on a risky text too big to count whole. */
export const RATIO_WINDOWS = 16;
export const RATIO_WINDOW_CHARS = 1024;
const ratioScratch = new Float64Array(FEATURE_COUNT);

/** Risk (share of the estimate) from which a spilled text's number is corrected by exact windows. */
const RATIO_MIN_RISK = 0.05;

/** The fit's estimate corrected by exact counts on spread windows; the estimate itself if that fails. */
async function ratioCorrected(estimate: number, text: string, profile: Profile, opts: DecisionOptions): Promise<number> {
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

/** A risky text up to this many chars is counted exactly by {@link estimateChecked}; a longer one is corrected. */
export const CHECK_EXACT_MAX_CHARS = 64 * 1024;

/**
 * The calibrated estimate for numbers people read (the index, the waste report), checked where the fit
 * can be far off: a text with risk ({@link riskTokens}) of RATIO_MIN_RISK of its estimate or more is
 * counted exactly up to CHECK_EXACT_MAX_CHARS, and corrected by exact windows beyond. One feature pass;
 * `cheap` holds every cheap strategy's count ({@link estimateAll}'s), the fit's own calibrated one too.
 */
export async function estimateChecked(
  text: string,
  opts: Omit<DecisionOptions, 'strategy' | 'exactNearLimit' | 'margin'> = {},
): Promise<{ estimate: Estimate; cheap: Record<CheapStrategy, number> }> {
  const profile = opts.profile ?? DEFAULT_PROFILE;
  const { est, risk } = fitWithRisk(text, profile, opts);
  const cheap = cheapCounts(text, est.tokens);
  // `<=`: an empty text (no risk, no tokens) must not load a tokenizer to count to 0
  if (risk <= RATIO_MIN_RISK * est.tokens) return { estimate: est, cheap };
  try {
    if (text.length <= CHECK_EXACT_MAX_CHARS) return { estimate: await estimateExact(text, profile, opts), cheap };
    return { estimate: { ...est, tokens: await ratioCorrected(est.tokens, text, profile, opts) }, cheap };
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    return { estimate: est, cheap };
  }
}

/** Texts this long are first asked a cheap question: clearly under the limit? (a full pass costs ~10 ns a char) */
export const QUICK_CHECK_MIN_CHARS = 8 * 1024;
/** Standard errors of the quick sample added to the margin: about 1 in 700 samples is off by more. */
export const QUICK_CHECK_SIGMAS = 3;
/** A quick sample noisier than this decides nothing. */
export const QUICK_CHECK_MAX_REL_STDERR = 0.08;
const quickScratch = new Float64Array(FEATURE_COUNT);

/**
 * The estimate from ~3 K chars of windows spread over the text, when even its worst case, the
 * profile's declared margin widened by QUICK_CHECK_SIGMAS standard errors of the sample and by the
 * sample's risk, is under the limit; else undefined (the caller runs the full pass). Keeps the guard's
 * pass-through of a 30 KB result far below the cost of reading it twice.
 */
function clearlyUnder(text: string, limitTokens: number, profile: Profile, opts: DecisionOptions): Estimate | undefined {
  const info = quickSample(text, quickScratch, profile);
  if (!info.trusted || info.relStdErr > QUICK_CHECK_MAX_REL_STDERR) return undefined;
  const est = pricedEstimate(quickScratch, text, profile, opts);
  // the same worst case as isNearLimit's upper end, with the sample's own error added to the margin
  const margin = (opts.margin ?? EXACT_MARGIN[profile]) + QUICK_CHECK_SIGMAS * info.relStdErr;
  if (margin >= 1 || (est.tokens + riskOf(text, quickScratch, profile, est.tokens)) / (1 - margin) > limitTokens) return undefined;
  return est;
}

/** riskTokens of the whole text (an unbroken run included). */
function riskOf(text: string, features: Float64Array, profile: Profile, estimate: number): number {
  return riskTokens(features, profile, text.length, { text, estimate });
}

const shareScratch = new Float64Array(FEATURE_COUNT);
const IDX = Object.fromEntries(FEATURE_NAMES.map((n, i) => [n, i])) as Record<(typeof FEATURE_NAMES)[number], number>;

/** Shares of the text's chars by class (they sum to 1 for non-empty text), from the estimator's pass (sampled on big texts). */
export function densityShares(text: string): DensityShares {
  const n = text.length;
  const zero: DensityShares = { base64: 0, hex: 0, uuid: 0, cjk: 0, otherNonAscii: 0, digits: 0, punctuation: 0, whitespace: 0, letters: 0 };
  if (n === 0) return zero;
  sampleFeatures(text, shareScratch);
  const f = (k: keyof typeof IDX) => shareScratch[IDX[k]]!;
  const uuid = f('uuids') * 36;
  // the + / = between random runs belong to the base64 too (about one per run)
  const glue = Math.min(f('b64Runs'), f('punctChars'));
  const base64 = f('b64Chars') + glue;
  const hex = f('hexChars');
  const cjk = f('han') + f('kana') + f('hangul') + f('cjkPunct');
  const otherNonAscii = f('latinExt') + f('cyrillic') + f('other2') + f('symbols') + f('astral') * 2 + f('privateUse') + f('other3') + f('alphabets');
  const whitespace = f('singleSpaces') + f('wsChars');
  const punctuation = f('punctChars') - glue + f('controls') + f('uEscapes') * 6;
  const digits = f('digitChars');
  const counted = uuid + base64 + hex + cjk + otherNonAscii + whitespace + punctuation + digits;
  // the rest are letters of ordinary words (and of short mixed runs like utf8)
  const letters = Math.max(0, n - counted);
  const total = counted + letters;
  return {
    base64: base64 / total,
    hex: hex / total,
    uuid: uuid / total,
    cjk: cjk / total,
    otherNonAscii: otherNonAscii / total,
    digits: digits / total,
    punctuation: punctuation / total,
    whitespace: whitespace / total,
    letters: letters / total,
  };
}
