/**
 * Accuracy of the `calibrated` strategy against the real tokenizers, on the HOLDOUT: samples from
 * sources (packages, files, translations) the fitted constants never saw. The holdout is rebuilt here
 * from node_modules by the same script that built the training corpus (nothing is stored).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCorpus, CATEGORIES, mixedInput, type CorpusSample } from '../../scripts/build-corpus.js';
import { HOLDOUT_PER_CATEGORY, accuracy } from '../../scripts/calibrate.js';
import { calibratedAll, chars4, countExact, FEATURE_NAMES, PROFILES, sampleFeatures, type Profile } from '../../src/pipeline/estimate/internal.js';

/** Category-balanced mean absolute relative error allowed on the holdout, per profile (the bound). */
const MAX_BALANCED_MAE = 0.05;
/** Worst single holdout sample allowed, per profile (the bound). */
const MAX_SAMPLE_ERROR = 0.15;

let samples: CorpusSample[] = [];
const exact: Record<Profile, number[]> = { o200k: [], cl100k: [], claude: [] };

beforeAll(async () => {
  samples = await buildCorpus({ split: 'holdout', perCategory: HOLDOUT_PER_CATEGORY });
  for (const p of PROFILES) for (const s of samples) exact[p].push(await countExact(s.text, p));
}, 120_000);

describe('calibrated estimate on the holdout', () => {
  it('covers at least 15 categories with several sources each, none of them in the training split', () => {
    const cats = new Set(samples.map((s) => s.category));
    expect(cats.size).toBeGreaterThanOrEqual(15);
    expect([...cats].sort()).toEqual([...CATEGORIES].sort());
    expect(samples.every((s) => s.split === 'holdout')).toBe(true);
    for (const s of samples) expect(s.text.length).toBeGreaterThan(900);
  });

  for (const profile of PROFILES) {
    it(`${profile}: category-balanced MAE <= ${MAX_BALANCED_MAE * 100}% and every sample within ${MAX_SAMPLE_ERROR * 100}%`, () => {
      const rows = samples.map((s, i) => ({ category: s.category, id: s.id, est: calibratedAll(s.text)[profile], exact: exact[profile][i]! }));
      const acc = accuracy(rows);
      const base = accuracy(samples.map((s, i) => ({ category: s.category, id: s.id, est: chars4(s.text), exact: exact[profile][i]! })));
      // print the numbers the README quotes
      console.log(`${profile}: calibrated balanced MAE ${(acc.balancedMae * 100).toFixed(1)}% (worst ${(acc.maxAbs * 100).toFixed(1)}% ${acc.worst}); chars4 ${(base.balancedMae * 100).toFixed(1)}%`);
      expect(acc.balancedMae).toBeLessThanOrEqual(MAX_BALANCED_MAE);
      const bad = rows.filter((r) => Math.abs(r.est / r.exact - 1) > MAX_SAMPLE_ERROR).map((r) => `${r.id}: ${r.est} vs ${r.exact}`);
      expect(bad).toEqual([]);
      // and it must beat the classic baseline by a wide margin
      expect(acc.balancedMae).toBeLessThan(base.balancedMae / 2);
    });
  }

  it('on the mixed input (every holdout sample in one text, estimated from samples) is within 5% for every profile', async () => {
    const mixed = mixedInput(samples);
    const info = sampleFeatures(mixed, new Float64Array(FEATURE_NAMES.length));
    expect(info.full).toBe(false);
    expect(info.scanned / mixed.length).toBeLessThan(0.3);
    const est = calibratedAll(mixed);
    for (const p of PROFILES) {
      const truth = await countExact(mixed, p);
      expect(Math.abs(est[p] / truth - 1)).toBeLessThanOrEqual(MAX_BALANCED_MAE);
    }
  }, 120_000);
});
