/** The cheap estimate: synchronous, no tokenizer, one pass (or a bounded sample) over the text. */
import type { Estimate, Profile } from '../types.js';
import { chars4, craftDensity } from './baselines.js';
import { calibrated, priceFeatures, roundTokens } from './calibrated.js';
import { FEATURE_COUNT } from './features.js';
import { corrected, DEFAULT_STRATEGY, isExactStrategy, profileOf, type CheapStrategy, type EstimateOptions } from './options.js';
import { boundedSample } from './sample.js';

export interface CheapOptions extends EstimateOptions {
  /**
   * Read at most ~0.5 M chars of the text, whatever its size (calibrated: 256 K in spread windows; craft-density:
   * evenly spread samples, scaled). For numbers nobody decides with: a 500 MB result is over any limit.
   */
  bounded?: boolean;
}

/** Texts this long are read in samples by a bounded estimate's craft-density (16 x 16 K chars). */
const BOUNDED_CRAFT_SAMPLES = 16;
const BOUNDED_CRAFT_SAMPLE_CHARS = 16 * 1024;
const boundedScratch = new Float64Array(FEATURE_COUNT);

/**
 * A cheap strategy's count (default: calibrated, the o200k profile). Exact strategies are async
 * (tokenizers load lazily): use countTokens for those.
 */
export function estimateTokens(text: string, opts: CheapOptions = {}): Estimate {
  const profile = profileOf(opts);
  const strategy = opts.strategy ?? DEFAULT_STRATEGY;
  if (isExactStrategy(strategy)) throw new TypeError(`strategy ${strategy} is exact and async: use countTokens()`);
  const tokens = cheapCount(text, strategy as CheapStrategy, profile, opts);
  if (tokens === undefined) throw new TypeError(`unknown strategy: ${String(strategy)}`);
  return { ...(strategy === 'calibrated' ? corrected(tokens, profile, opts) : { tokens }), strategy, profile, exact: false };
}

/** One cheap strategy's raw count (no correction); undefined for an unknown name. */
export function cheapCount(text: string, strategy: CheapStrategy, profile: Profile, opts: Pick<CheapOptions, 'bounded'> = {}): number | undefined {
  const bounded = opts.bounded === true && text.length > BOUNDED_CRAFT_SAMPLES * BOUNDED_CRAFT_SAMPLE_CHARS;
  switch (strategy) {
    case 'chars4':
      return chars4(text);
    case 'craft-density':
      return bounded ? sampledCraftDensity(text) : craftDensity(text);
    case 'calibrated':
      if (!bounded) return calibrated(text, profile);
      boundedSample(text, boundedScratch, profile);
      return roundTokens(priceFeatures(boundedScratch, profile), text.length);
    default:
      return undefined;
  }
}

/** craft-density from evenly spread samples, scaled to the whole text (surrogate pairs kept whole). */
function sampledCraftDensity(text: string): number {
  const step = Math.floor(text.length / BOUNDED_CRAFT_SAMPLES);
  let sample = '';
  for (let k = 0; k < BOUNDED_CRAFT_SAMPLES; k++) {
    const a = keepPair(text, k * step);
    sample += text.slice(a, keepPair(text, Math.min(text.length, a + BOUNDED_CRAFT_SAMPLE_CHARS)));
  }
  return Math.ceil(craftDensity(sample) * (text.length / Math.max(1, sample.length)));
}

function keepPair(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return c >= 0xdc00 && c <= 0xdfff ? i + 1 : i;
}
