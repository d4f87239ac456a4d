/**
 * The pass side's headroom (src/pipeline/estimate/headroom.ts, fitted by scripts/fit-headroom.ts):
 * its linear programme solves what it says, and the shipped constants keep the structure the fit
 * promises. Coverage of the holdout and of mixtures is asserted in accuracy.test.ts, with its counts.
 */
import { describe, expect, it } from 'vitest';
import { FITTED_FEATURES, minCover } from '../../scripts/fit-headroom.js';
import {
  FEATURE_COUNT,
  FEATURE_NAMES,
  HEADROOM,
  HEADROOM_FIT,
  headroomTokens,
  PROFILES,
  scanFeatures,
  WEIGHTS,
} from '../../src/pipeline/estimate/internal.js';

describe('headroom', () => {
  it('minCover solves min c.u subject to A u >= b, u >= 0', () => {
    // min u1 + 2 u2 with u1 + u2 >= 2, u1 >= 0.5, u2 >= 0.5: u = (1.5, 0.5), cost 2.5
    const u = minCover([[1, 1], [1, 0], [0, 1]], [2, 0.5, 0.5], [1, 2]);
    expect(u[0]).toBeCloseTo(1.5, 9);
    expect(u[1]).toBeCloseTo(0.5, 9);
    // a constraint nothing needs leaves u at 0
    expect(minCover([[1, 0]], [0], [1, 1])).toEqual([0, 0]);
    // infeasible primal: nothing can cover a positive need with a zero row
    expect(() => minCover([[0, 0]], [1], [1, 1])).toThrow(/unbounded/);
  });

  it('every feature keeps at least its floor share of headroom, and scripts keep the old margin', () => {
    for (const p of PROFILES) {
      expect(HEADROOM[p]).toHaveLength(FEATURE_COUNT);
      FEATURE_NAMES.forEach((name, j) => {
        const floor = (FITTED_FEATURES.has(name) ? HEADROOM_FIT.minShare : HEADROOM_FIT.scriptShare) * WEIGHTS[p][j]!;
        expect(HEADROOM[p][j]!).toBeGreaterThanOrEqual(floor * 0.9999);
        if (!FITTED_FEATURES.has(name)) expect(HEADROOM[p][j]!).toBeCloseTo(floor, 4);
      });
    }
  });

  it('adds up over the parts of a text, and carries more for dense punctuation than for prose', () => {
    const prose = 'The quick brown fox jumps over the lazy dog, and then it runs away into the woods. '.repeat(40);
    const json = JSON.stringify(Array.from({ length: 60 }, (_, i) => ({ id: i, ok: i % 2 === 0, tag: `t-${i}` })));
    const f = (t: string) => {
      const x = new Float64Array(FEATURE_COUNT);
      scanFeatures(t, x);
      return x;
    };
    for (const p of PROFILES) {
      const a = headroomTokens(f(prose), p);
      const b = headroomTokens(f(json), p);
      expect(headroomTokens(f(prose + '\n' + json), p)).toBeCloseTo(a + b, -1);
      const share = (t: string, h: number) => h / [...f(t)].reduce((s, v, j) => s + v * WEIGHTS[p][j]!, 0);
      expect(share(json, b)).toBeGreaterThan(share(prose, a));
      // with the Claude correction the headroom scales like the estimate
      if (p === 'claude') expect(headroomTokens(f(prose), p, { claudeCorrection: 1.5 })).toBeCloseTo(1.5 * a, 6);
    }
  });
});
