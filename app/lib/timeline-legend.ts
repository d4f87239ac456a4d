/**
 * What the Timeline's legend says for each stacked part: its own tokens at a call, not the running
 * total the chart draws its band at (the bands are stacked: "tool:Bash" is drawn from the parts
 * below it up to their sum plus Bash's share). Away from the chart it shows the peak call, named.
 *
 * | call        | for                                                               |
 * | ----------- | ----------------------------------------------------------------- |
 * | ownShares   | per stacked key, each call's own tokens (`rest`: every key not drawn) |
 * | legendCall  | the call the legend shows: the hovered one, else the peak          |
 *
 * Pure functions over contract rows: no React, no uPlot.
 */
import type { TimelineData } from '../../src/service/contract.js';

/** Each stacked key's own tokens per call (`rest` sums the keys not drawn on their own). */
export function ownShares(t: Pick<TimelineData, 'turns'>, keys: readonly string[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const k of keys) {
    out.set(
      k,
      t.turns.map((x) => (k === 'rest' ? Object.entries(x.stack).filter(([kk]) => !keys.includes(kk)).reduce((a, [, n]) => a + n, 0) : x.stack[k] ?? 0)),
    );
  }
  return out;
}

/** The call with the largest measured context (the first of equals); 0 for a session with none measured. */
export function peakCall(t: Pick<TimelineData, 'turns'>): number {
  let best = 0;
  let top = -Infinity;
  t.turns.forEach((x, i) => {
    if (x.context !== null && x.context > top) {
      top = x.context;
      best = i;
    }
  });
  return best;
}

/** The call the legend describes: the hovered one, else the peak (and whether it is the peak by default). */
export function legendCall(t: Pick<TimelineData, 'turns'>, hovered: number | null | undefined): { call: number; atPeak: boolean } {
  return hovered === null || hovered === undefined ? { call: peakCall(t), atPeak: true } : { call: hovered, atPeak: false };
}
