/** Strategies, profiles and the Claude correction: the vocabulary every estimate verb takes. */
import type { Profile, StrategyName } from '../types.js';

export const CHEAP_STRATEGIES = ['chars4', 'craft-density', 'calibrated'] as const;
export const EXACT_STRATEGIES = ['o200k', 'cl100k', 'claude'] as const;
export const ALL_STRATEGIES: readonly StrategyName[] = [...CHEAP_STRATEGIES, ...EXACT_STRATEGIES];
export const DEFAULT_STRATEGY: StrategyName = 'calibrated';
export const DEFAULT_PROFILE: Profile = 'o200k';
export type CheapStrategy = (typeof CHEAP_STRATEGIES)[number];

/** Env var the edges read for {@link EstimateOptions.claudeCorrection} (claudeCorrectionFromEnv). */
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
   * (count_tokens API result) / (legacy count) for your model; default 1 (the estimator reads no
   * variable: the package root, the CLI, the hook, the proxy and serve fill it from
   * SPILLWAY_CLAUDE_CORRECTION). Ignored for other profiles.
   */
  claudeCorrection?: number;
}

export function isProfile(x: unknown): x is Profile {
  return x === 'o200k' || x === 'cl100k' || x === 'claude';
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

/**
 * The correction an environment sets (SPILLWAY_CLAUDE_CORRECTION), undefined when it sets none or
 * nonsense (a bad value is ignored, not fatal: it would otherwise break every tool call). Called by
 * the edges that read the process's environment (the CLI, the hook, the proxy, serve, the package
 * root, the guard's normalised options from their `env`); the estimator itself reads no variable.
 */
export function claudeCorrectionFromEnv(env: Readonly<Record<string, string | undefined>> | undefined): number | undefined {
  const raw = env?.[CLAUDE_CORRECTION_ENV];
  if (raw === undefined || raw === '') return undefined;
  try {
    return parseClaudeCorrection(raw);
  } catch {
    return undefined;
  }
}

/** The correction in effect: the option (checked), else 1. */
export function claudeCorrectionFor(opts: { claudeCorrection?: number } = {}): number {
  return opts.claudeCorrection !== undefined ? parseClaudeCorrection(opts.claudeCorrection) : 1;
}

/** A count for `profile` with the Claude correction applied (the only place it is applied). */
export function corrected(tokens: number, profile: Profile, opts: Pick<EstimateOptions, 'claudeCorrection'>): { tokens: number; correction?: number } {
  if (profile !== 'claude') return { tokens };
  const f = claudeCorrectionFor(opts);
  return f === 1 ? { tokens } : { tokens: Math.ceil(tokens * f), correction: f };
}

export function profileOf(opts: { profile?: Profile }): Profile {
  const profile = opts.profile ?? DEFAULT_PROFILE;
  if (!isProfile(profile)) throw new TypeError(`unknown profile: ${String(profile)} (use o200k, cl100k or claude)`);
  return profile;
}
