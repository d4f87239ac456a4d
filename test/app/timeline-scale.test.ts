import { describe, expect, it } from 'vitest';
import { OFF_SCALE_RATIO, chartTop } from '../../app/lib/timeline-scale.js';
import type { ReplayResult, TimelineData } from '../../src/service/contract.js';

const tl = (contexts: number[], window: number | undefined, trigger?: number): TimelineData =>
  ({ turns: contexts.map((c) => ({ context: c, stack: { tool: Math.floor(c / 2) } })), rule: { window, trigger } }) as unknown as TimelineData;

describe('the timeline chart\'s token axis', () => {
  it('fits a small session under a huge window, and says the window is off the scale', () => {
    const r = chartTop(tl([1_000, 5_100, 4_000], 1_000_000, 967_000), undefined, false);
    expect(r.offScale).toBe(true);
    expect(r.top).toBeGreaterThanOrEqual(5_100);
    expect(r.top).toBeLessThan(6_000);
    // asked for, the whole window is drawn
    expect(chartTop(tl([1_000, 5_100], 1_000_000, 967_000), undefined, true).top).toBeGreaterThanOrEqual(1_000_000);
  });

  it('keeps the window and trigger in view when the session comes near them', () => {
    // A trigger near the contexts stays on the scale when the window is left out (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=5).
    const low = chartTop(tl([20_490, 48_504, 33_879], 1_000_000, 49_000), undefined, false);
    expect(low.off).toEqual(['window']);
    expect(low.top).toBeGreaterThan(49_000);
    expect(low.top).toBeLessThan(60_000);
    const near = chartTop(tl([60_000, 150_000], 200_000, 160_000), undefined, false);
    expect(near.offScale).toBe(false);
    expect(near.top).toBeGreaterThanOrEqual(200_000);
    expect(chartTop(tl([10_000], 10_000 * OFF_SCALE_RATIO), undefined, false).offScale).toBe(false);
  });

  it('counts a replay that rises above the measured contexts', () => {
    const replay = { contexts: [2_000, 9_000] } as unknown as ReplayResult;
    expect(chartTop(tl([1_000, 5_000], 1_000_000), replay, false).top).toBeGreaterThanOrEqual(9_000);
  });
});
