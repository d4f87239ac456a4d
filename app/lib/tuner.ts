/**
 * Pure math behind the limit tuner. What a limit does is the Timeline's replay, computed by the
 * service per session (limitTuner); here it is only summed. Payload sizes (each once) place the
 * histogram's marker, so the slider moves the marker without a round trip.
 */
import type { ReplayTotals, SessionReplay } from '../../src/service/contract.js';

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

/** Payloads over a limit by size (each once): what the histogram's marker splits; not a cost. */
export function overLimit(sizes: readonly SizeRow[], limit: number): number {
  return sizes.length - firstAbove(sizes, limit);
}

/**
 * The replay's figures of several sessions summed: tokens and dollars add up, the peak is the
 * largest. The same sum for one session or a folder, so the view states one answer either way.
 */
export function sumReplays(sessions: readonly SessionReplay[]): { asRan: ReplayTotals; noGuard: ReplayTotals; atLimit: ReplayTotals } {
  const zero = (): ReplayTotals => ({ sentTokens: 0, cacheReadTokens: 0, costUsd: 0, peak: 0, compactions: 0, replaced: 0, pending: 0 });
  const out = { asRan: zero(), noGuard: zero(), atLimit: zero() };
  for (const s of sessions) {
    for (const k of ['asRan', 'noGuard', 'atLimit'] as const) {
      const t = out[k];
      const r = s[k];
      t.sentTokens += r.sentTokens;
      t.cacheReadTokens += r.cacheReadTokens;
      t.costUsd += r.costUsd;
      t.peak = Math.max(t.peak, r.peak);
      t.compactions += r.compactions;
      t.replaced += r.replaced;
      t.pending += r.pending;
    }
  }
  return out;
}

/** What a limit saves against the client on its own ("no guard"): negative when the guard cost more than it kept out. */
export function savings(noGuard: ReplayTotals, atLimit: ReplayTotals): { tokens: number; usd: number } {
  return { tokens: noGuard.sentTokens - atLimit.sentTokens, usd: noGuard.costUsd - atLimit.costUsd };
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
