/**
 * The numbers a person reads: every cheap strategy, the number to show (checked by the real
 * tokenizer where the fit can be far off), exact counts on request, how far to trust the fit, and
 * what the text is made of. One function for the inspector, the index, the CLI and the guard's sidecar.
 */
import { PROFILES, type DensityShares, type Estimate, type Profile, type StrategyName } from '../types.js';
import { chars4 } from './baselines.js';
import { cheapCount } from './cheap.js';
import { EXACT_MARGIN } from './constants.js';
import { countTokens } from './exact.js';
import { FEATURE_COUNT, FEATURE_NAMES } from './features.js';
import { pricedEstimate, ratioCorrected, RATIO_MIN_RISK } from './decision.js';
import { claudeCorrectionFor, profileOf, type EstimateOptions } from './options.js';
import { riskAndParts, type RiskPart } from './risk.js';
import { boundedSample, sampleFeatures } from './sample.js';

export interface DescribeOptions extends Pick<EstimateOptions, 'profile' | 'claudeCorrection'> {
  /** Also count with these tokenizers (every one: `true`). */
  exact?: boolean | readonly Profile[];
  /**
   * Check the number to show with the real tokenizer where the fit can be far off (default true):
   * a text whose risk is RATIO_MIN_RISK of its estimate or more is counted exactly up to
   * CHECK_EXACT_MAX_CHARS, and corrected by exact windows beyond. False: no tokenizer is loaded.
   */
  check?: boolean;
  /** Read at most ~0.5 M chars for the cheap counts (a huge text nobody decides with). */
  bounded?: boolean;
  signal?: AbortSignal;
}

export interface TokenReport {
  profile: Profile;
  chars: number;
  /** The number to show: the calibrated estimate, or the real count where the fit can be far off. */
  tokens: Estimate;
  /** Each cheap strategy's count, then each exact count made, with the ms it took. */
  estimates: Array<{ strategy: StrategyName; tokens: number; exact: boolean; ms: number }>;
  /**
   * How far to trust the calibrated estimate: the margin its fit holds on the corpus (share of the
   * estimate), and the tokens that content the fit was never validated on may add, by class.
   */
  trust: { margin: number; riskTokens: number; parts: RiskPart[] };
  density: DensityShares;
  /** The Claude correction in effect (1: none). */
  claudeCorrection: number;
  /** Lines worth telling the user (counted in pieces, corrected by windows...). */
  notes: string[];
}

/** A risky text up to this many chars is counted exactly by describeTokens' check; a longer one is corrected. */
export const CHECK_EXACT_MAX_CHARS = 64 * 1024;
/** Texts longer than this are read in pieces this long, with the event loop turning in between (64 MB never blocks). */
export const DESCRIBE_PIECE_CHARS = 1024 * 1024;

const scratch = new Float64Array(FEATURE_COUNT);
const pieceScratch = new Float64Array(FEATURE_COUNT);
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The numbers a person reads about `text` (see the module comment). One feature pass for all of them. */
export async function describeTokens(text: string, opts: DescribeOptions = {}): Promise<TokenReport> {
  const profile = profileOf(opts);
  const notes: string[] = [];
  const estimates: TokenReport['estimates'] = [];
  const timed = async <T>(fn: () => T | Promise<T>): Promise<[T, number]> => {
    const t0 = performance.now();
    const v = await fn();
    return [v, performance.now() - t0];
  };
  const [c4, c4Ms] = await timed(() => chars4(text));
  estimates.push({ strategy: 'chars4', tokens: c4, exact: false, ms: c4Ms });
  const [craft, craftMs] = await timed(() => inPieces(text, opts, (piece) => cheapCount(piece, 'craft-density', profile, opts)!));
  estimates.push({ strategy: 'craft-density', tokens: craft, exact: false, ms: craftMs });
  const [fit, fitMs] = await timed(async () => {
    await featuresOf(text, profile, opts.bounded === true);
    return pricedEstimate(scratch, text, profile, opts);
  });
  estimates.push({ strategy: 'calibrated', tokens: fit.tokens, exact: false, ms: fitMs });
  const { risk, parts } = riskAndParts(scratch, profile, text.length, { text, estimate: fit.tokens });
  const trust = { margin: EXACT_MARGIN[profile], riskTokens: parts.reduce((a, p) => a + p.tokens, 0), parts };
  const density = densityOf(scratch, text.length);

  let tokens = fit;
  const countOpts = { signal: opts.signal, claudeCorrection: opts.claudeCorrection, notes };
  const exactProfiles = opts.exact === true ? PROFILES : opts.exact || [];
  for (const p of exactProfiles) {
    const [e, ms] = await timed(() => countTokens(text, p, countOpts));
    if (p === profile) tokens = e;
    estimates.push({ strategy: p, tokens: e.tokens, exact: true, ms });
  }
  // `>`: an empty text (no risk, no tokens) must not load a tokenizer to count to 0
  if (!exactProfiles.includes(profile) && opts.check !== false && risk > RATIO_MIN_RISK * fit.tokens) {
    try {
      if (text.length <= CHECK_EXACT_MAX_CHARS) {
        const [e, ms] = await timed(() => countTokens(text, profile, countOpts));
        tokens = e;
        estimates.push({ strategy: profile, tokens: e.tokens, exact: true, ms });
      } else tokens = { ...fit, tokens: await ratioCorrected(fit.tokens, text, profile, countOpts) };
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      notes.push(`could not check the estimate with the ${profile} tokenizer: ${(err as Error).message}`);
    }
  }
  return { profile, chars: text.length, tokens, estimates, trust, density, claudeCorrection: claudeCorrectionFor(opts), notes };
}

/** Fill `scratch` with features standing for the whole text: bounded windows, one sampled pass, or per piece. */
async function featuresOf(text: string, profile: Profile, bounded: boolean): Promise<void> {
  if (bounded) {
    boundedSample(text, scratch, profile);
    return;
  }
  if (text.length <= DESCRIBE_PIECE_CHARS) {
    sampleFeatures(text, scratch, profile);
    return;
  }
  scratch.fill(0);
  await inPieces(text, {}, (piece) => {
    sampleFeatures(piece, pieceScratch, profile);
    for (let f = 0; f < FEATURE_COUNT; f++) scratch[f]! += pieceScratch[f]!;
    return 0;
  });
}

/** Sum of `count` over pieces of DESCRIBE_PIECE_CHARS (surrogate pairs kept whole), yielding in between; bounded: one call. */
async function inPieces(text: string, opts: Pick<DescribeOptions, 'bounded' | 'signal'>, count: (piece: string) => number): Promise<number> {
  if (opts.bounded || text.length <= DESCRIBE_PIECE_CHARS) return count(text);
  let total = 0;
  for (let i = 0; i < text.length; ) {
    let end = Math.min(text.length, i + DESCRIBE_PIECE_CHARS);
    const c = text.charCodeAt(end - 1);
    if (c >= 0xd800 && c <= 0xdbff && end < text.length) end++;
    total += count(text.slice(i, end));
    i = end;
    opts.signal?.throwIfAborted();
    await yieldToLoop();
  }
  return total;
}

/** The cheap strategies' counts of a report, by name (what the index and the sidecar store). */
export function countsOf(report: TokenReport): Partial<Record<StrategyName, number>> {
  const out: Partial<Record<StrategyName, number>> = {};
  for (const e of report.estimates) out[e.strategy] = e.tokens;
  return out;
}

const IDX = Object.fromEntries(FEATURE_NAMES.map((n, i) => [n, i])) as Record<(typeof FEATURE_NAMES)[number], number>;

/** Shares of the text's chars by class (they sum to 1 for non-empty text), from the estimator's features. */
function densityOf(features: Float64Array, n: number): DensityShares {
  const zero: DensityShares = { base64: 0, hex: 0, uuid: 0, cjk: 0, otherNonAscii: 0, digits: 0, punctuation: 0, whitespace: 0, letters: 0 };
  if (n === 0) return zero;
  const f = (k: keyof typeof IDX) => features[IDX[k]]!;
  const uuid = f('uuids') * 36;
  // the + / = between random runs belong to the base64 too (about one per run)
  const glue = Math.min(f('b64Runs'), f('punctChars'));
  const base64 = f('b64Chars') + glue;
  const hex = f('hexChars');
  const cjk = f('han') + f('kana') + f('hangul') + f('cjkPunct');
  const otherNonAscii =
    f('latinExt') + f('cyrillic') + f('greek') + f('armenian') + f('hebrew') + f('arabic') + f('combining') + f('other2') +
    f('devanagari') + f('indic') + f('thai') + f('georgian') + f('ethiopic') + f('latinExtAdd') + f('alphabets') +
    f('symbols') + f('boxDrawing') + f('emojiGlue') + (f('astral') + f('emoji')) * 2 + f('privateUse') + f('other3');
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

