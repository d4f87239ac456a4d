import type { Estimate, Profile, StrategyName } from '../types.js';
import { chars4, craftDensity } from './baselines.js';
import { calibrated } from './calibrated.js';

export { chars4, craftDensity } from './baselines.js';

export const CHEAP_STRATEGIES = ['chars4', 'craft-density', 'calibrated'] as const;
export const EXACT_STRATEGIES = ['o200k', 'cl100k', 'claude'] as const;
export const ALL_STRATEGIES: readonly StrategyName[] = [...CHEAP_STRATEGIES, ...EXACT_STRATEGIES];
export const DEFAULT_STRATEGY: StrategyName = 'calibrated';
export const DEFAULT_PROFILE: Profile = 'o200k';

export interface EstimateOptions {
  strategy?: StrategyName;
  profile?: Profile;
}

/**
 * Synchronous, cheap estimate. Exact strategies are async (tokenizers load lazily):
 * use {@link countExact} for those.
 */
export function estimateTokens(text: string, opts: EstimateOptions = {}): Estimate {
  const profile = opts.profile ?? DEFAULT_PROFILE;
  const strategy = opts.strategy ?? DEFAULT_STRATEGY;
  switch (strategy) {
    case 'chars4':
      return { tokens: chars4(text), strategy, profile, exact: false };
    case 'craft-density':
      return { tokens: craftDensity(text), strategy, profile, exact: false };
    case 'calibrated':
      return { tokens: calibrated(text, profile), strategy, profile, exact: false };
    default:
      throw new TypeError(`strategy ${strategy} is exact and async: use countExact()`);
  }
}

/**
 * The estimate the guard decides with. Cheap first; when the cheap estimate falls within a
 * margin of the limit, count exactly for the profile (the estimation work fills this in).
 */
export async function estimateForDecision(
  text: string,
  limitTokens: number,
  opts: EstimateOptions = {},
): Promise<Estimate> {
  void limitTokens;
  return estimateTokens(text, opts);
}
