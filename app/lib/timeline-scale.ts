import type { ReplayResult, TimelineData } from '../../src/service/contract.js';

/**
 * A window or trigger this many times the session's peak is drawn only on request: a 50k session
 * under a 1M window would otherwise be a flat line at the bottom of the chart.
 */
export const OFF_SCALE_RATIO = 2.5;

/**
 * The top of the token axis: the highest context measured or replayed, and the window and trigger
 * unless they are far above it (each on its own: a trigger near the contexts stays drawn when the
 * window is left out). `off` names the lines left out, for the sentence that says so.
 */
export function chartTop(t: TimelineData, replayed: ReplayResult | undefined, whole: boolean): { top: number; offScale: boolean; off: Array<'window' | 'trigger'> } {
  let peak = 0;
  for (const x of t.turns) peak = Math.max(peak, x.context ?? 0, Object.values(x.stack).reduce((a, n) => a + n, 0));
  for (const v of replayed?.contexts ?? []) peak = Math.max(peak, v ?? 0);
  const off: Array<'window' | 'trigger'> = [];
  let drawn = peak;
  for (const [name, v] of [['window', t.rule.window ?? 0], ['trigger', t.rule.trigger ?? 0]] as const) {
    if (v <= 0) continue;
    if (peak > 0 && v > peak * OFF_SCALE_RATIO) off.push(name);
    else drawn = Math.max(drawn, v);
  }
  const top = whole ? Math.max(peak, t.rule.window ?? 0, t.rule.trigger ?? 0) : drawn;
  return { top: Math.max(1, Math.ceil(top * 1.08)), offScale: off.length > 0, off };
}
