/**
 * Pure math behind the limit tuner, so the slider moves without a round trip: the service sends
 * every payload's size once (sorted), and the UI recomputes on each slider move.
 */

/**
 * Same rule and constants as src/pipeline/limits.ts (`limitForContextWindow`): the renderer may not
 * import pipeline code, so test/app/tuner.test.ts pins these against the originals.
 */
export const DEFAULT_LIMIT_TOKENS = 12_000;
export const MIN_LIMIT_TOKENS = 2_000;
export const CONTEXT_WINDOW_SHARE = 0.1;

export function limitForContextWindow(contextWindowTokens?: number | null, baseLimitTokens = DEFAULT_LIMIT_TOKENS): number {
  if (!contextWindowTokens || !Number.isFinite(contextWindowTokens) || contextWindowTokens <= 0) return baseLimitTokens;
  return Math.max(MIN_LIMIT_TOKENS, Math.min(baseLimitTokens, Math.floor(contextWindowTokens * CONTEXT_WINDOW_SHARE)));
}

export interface SizeRow {
  id: string;
  tokens: number;
  tool: string;
}

/** Index of the first size strictly above the limit (sizes sorted ascending). */
export function firstAbove(sizes: readonly SizeRow[], limit: number): number {
  let lo = 0;
  let hi = sizes.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sizes[mid]!.tokens > limit) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

export interface TunerStats {
  total: number;
  spilled: number;
  tokensTotal: number;
  /** Tokens that stay out of the context: the full size of every spilled result. */
  tokensKeptOut: number;
  dollarsKeptOut: number;
}

/** Prefix sums make each slider move O(log n). */
export function prefixSums(sizes: readonly SizeRow[]): Float64Array {
  const out = new Float64Array(sizes.length + 1);
  for (let i = 0; i < sizes.length; i++) out[i + 1] = out[i]! + sizes[i]!.tokens;
  return out;
}

export function statsAt(sizes: readonly SizeRow[], sums: Float64Array, limit: number, pricePerMTok: number): TunerStats {
  const i = firstAbove(sizes, limit);
  const tokensTotal = sums[sizes.length]!;
  const tokensKeptOut = tokensTotal - sums[i]!;
  return {
    total: sizes.length,
    spilled: sizes.length - i,
    tokensTotal,
    tokensKeptOut,
    dollarsKeptOut: (tokensKeptOut / 1_000_000) * pricePerMTok,
  };
}

/** Payloads whose decision differs between two limits: spilled at one, kept at the other. */
export function flips(sizes: readonly SizeRow[], fromLimit: number, toLimit: number): { direction: 'now-spilled' | 'now-kept'; rows: SizeRow[] } {
  const a = firstAbove(sizes, fromLimit);
  const b = firstAbove(sizes, toLimit);
  if (b < a) return { direction: 'now-spilled', rows: sizes.slice(b, a) };
  return { direction: 'now-kept', rows: sizes.slice(a, b) };
}

/** Slider position (0..1) ↔ tokens, on a log scale so small and huge limits are both reachable. */
export const SLIDER_MIN_TOKENS = 100;
export const SLIDER_MAX_TOKENS = 1_000_000;

export function sliderToTokens(pos: number): number {
  const lo = Math.log(SLIDER_MIN_TOKENS);
  const hi = Math.log(SLIDER_MAX_TOKENS);
  const raw = Math.exp(lo + Math.min(1, Math.max(0, pos)) * (hi - lo));
  // Round to 3 significant digits: values read like a config a person would write, and one
  // keyboard step (1/1000 of the scale, ~0.9%) still moves the value.
  const mag = 10 ** Math.max(0, Math.floor(Math.log10(raw)) - 2);
  return Math.round(raw / mag) * mag;
}

export function tokensToSlider(tokens: number): number {
  const lo = Math.log(SLIDER_MIN_TOKENS);
  const hi = Math.log(SLIDER_MAX_TOKENS);
  return Math.min(1, Math.max(0, (Math.log(Math.max(tokens, 1)) - lo) / (hi - lo)));
}

/** The config a user pastes into their guard setup. */
export function configSnippet(opts: { limitTokens: number; strategy: string; profile: string; contextWindowTokens?: number | null }): string {
  const cfg: Record<string, unknown> = { limitTokens: opts.limitTokens, strategy: opts.strategy, profile: opts.profile };
  if (opts.contextWindowTokens) cfg.contextWindowTokens = opts.contextWindowTokens;
  return JSON.stringify(cfg, null, 2);
}
