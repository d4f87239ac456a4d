import type { ReplayResult, TimelineData } from '../../src/service/contract.js';

/**
 * A window or trigger this many times the session's peak is drawn only on request: a 50k session
 * under a 1M window would otherwise be a flat line at the bottom of the chart.
 */
export const OFF_SCALE_RATIO = 2.5;

/** The top of the token axis: the highest context measured or replayed, and the window and trigger unless they are far above it. */
export function chartTop(t: TimelineData, replayed: ReplayResult | undefined, whole: boolean): { top: number; offScale: boolean } {
  let peak = 0;
  for (const x of t.turns) peak = Math.max(peak, x.context ?? 0, Object.values(x.stack).reduce((a, n) => a + n, 0));
  for (const v of replayed?.contexts ?? []) peak = Math.max(peak, v ?? 0);
  const lines = Math.max(t.rule.window ?? 0, t.rule.trigger ?? 0);
  const offScale = lines > 0 && peak > 0 && lines > peak * OFF_SCALE_RATIO;
  const top = offScale && !whole ? peak : Math.max(peak, lines);
  return { top: Math.max(1, Math.ceil(top * 1.08)), offScale };
}
