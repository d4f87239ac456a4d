/**
 * estimateForDecision: exact where it matters, free elsewhere. This file runs in its own process
 * (vitest forks), so "the tokenizer was never loaded" is a real observation of this process.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCorpus } from '../../scripts/build-corpus.js';
import {
  EXACT_MARGIN,
  MEASURED_ERROR,
  calibrated,
  countExact,
  describeTokens,
  estimateForDecision,
  isNearLimit,
  isTokenizerLoaded,
  QUICK_CHECK_MIN_CHARS,
} from '../../src/pipeline/estimate/internal.js';

const NM = path.resolve(import.meta.dirname, '../../node_modules');
const read = (rel: string, n = 60_000) => fs.readFileSync(path.join(NM, rel), 'utf8').slice(0, n);

describe('estimateForDecision', () => {
  it('far from the limit: calibrated only, and no tokenizer is ever loaded', async () => {
    const small = read('commander/Readme.md', 3_000);
    const huge = read('typescript/lib/lib.dom.d.ts', 400_000);
    const a = await estimateForDecision(small, 12_000, { profile: 'o200k' });
    const b = await estimateForDecision(huge, 12_000, { profile: 'cl100k' });
    const c = await estimateForDecision(small, 12_000, { profile: 'claude' });
    for (const e of [a, b, c]) expect(e).toMatchObject({ strategy: 'calibrated', exact: false });
    // the index's checked estimate, on text like the corpus and on nothing at all
    for (const t of [small, '']) expect((await describeTokens(t)).tokens).toMatchObject({ strategy: 'calibrated', exact: false });
    expect(isTokenizerLoaded('o200k') || isTokenizerLoaded('cl100k') || isTokenizerLoaded('claude')).toBe(false);
  });

  it('near the limit: counts with the profile\'s tokenizer, as far as the decision needs', async () => {
    const text = read('commander/Readme.md', 20_000);
    const truth = await countExact(text, 'o200k');
    // exactly at the limit: the whole text is counted
    const at = await estimateForDecision(text, truth, { profile: 'o200k' });
    expect(at).toMatchObject({ strategy: 'o200k', profile: 'o200k', exact: true, tokens: truth });
    expect(isTokenizerLoaded('o200k')).toBe(true);
    expect(isTokenizerLoaded('cl100k')).toBe(false);
    // well over it: the count stops once it has crossed the limit; the number is the tokenizer's, extrapolated
    for (const f of [0.8, 0.9]) {
      const notes: string[] = [];
      const limit = Math.floor(truth * f);
      const e = await estimateForDecision(text, limit, { profile: 'o200k', notes });
      expect(e).toMatchObject({ strategy: 'o200k', exact: false });
      expect(e.tokens).toBeGreaterThan(limit);
      expect(Math.abs(e.tokens / truth - 1)).toBeLessThan(0.03);
      expect(notes.join(' ')).toMatch(/counted exactly as far as the decision needed \((\d+)% of the text\)/);
      expect(Number(/\((\d+)% of the text/.exec(notes.join(' '))![1])).toBeLessThan(100);
    }
  });

  it('declares a margin at least as wide as the worst error measured on the corpus text it trusts to the fit (the rest: riskTokens)', () => {
    for (const p of ['o200k', 'cl100k', 'claude'] as const) {
      const m = MEASURED_ERROR[p];
      expect(EXACT_MARGIN[p]).toBeGreaterThanOrEqual(m.trustedMax);
      expect(EXACT_MARGIN[p]).toBeLessThan(1);
    }
  });

  it('never passes or spills wrongly: decisions match the real tokenizer around the limit', async () => {
    const texts = [
      read('commander/Readme.md', 30_000),
      fs.readFileSync(path.join(NM, 'app-builder-lib/templates/icons/electron-linux/128x128.png')).toString('base64'),
      read('typescript/lib/ko/diagnosticMessages.generated.json', 20_000),
      read('monaco-editor/esm/vs/nls/lang/ru.js', 25_000),
      JSON.stringify(JSON.parse(fs.readFileSync(path.join(NM, '.package-lock.json'), 'utf8')), null, 2).slice(0, 30_000),
    ];
    for (const profile of ['o200k', 'cl100k', 'claude'] as const) {
      for (const text of texts) {
        const truth = await countExact(text, profile);
        for (const f of [0.75, 0.9, 0.99, 1, 1.01, 1.1, 1.3]) {
          const limit = Math.round(truth * f);
          const e = await estimateForDecision(text, limit, { profile });
          expect({ profile, limit, spill: e.tokens > limit }).toEqual({ profile, limit, spill: truth > limit });
        }
      }
    }
  });

  it('exact strategies always count; the baselines are returned as chosen', async () => {
    const text = read('commander/Readme.md', 8_000);
    const exact = await estimateForDecision(text, 1_000_000, { strategy: 'cl100k' });
    expect(exact).toMatchObject({ strategy: 'cl100k', exact: true, tokens: await countExact(text, 'cl100k') });
    const base = await estimateForDecision(text, Math.ceil(text.length / 4), { strategy: 'chars4' });
    expect(base).toMatchObject({ strategy: 'chars4', exact: false, tokens: Math.ceil(text.length / 4) });
    const off = await estimateForDecision(text, calibrated(text, 'o200k'), { exactNearLimit: false });
    expect(off.exact).toBe(false);
  });

  it('isNearLimit brackets the real count from the estimate and the margin', () => {
    // est 1000 with a 25% margin: the real count is within [800, 1333.3]
    expect(isNearLimit(1000, 799, 0.25)).toBe(false);
    expect(isNearLimit(1000, 800, 0.25)).toBe(true);
    expect(isNearLimit(1000, 1333, 0.25)).toBe(true);
    expect(isNearLimit(1000, 1334, 0.25)).toBe(false);
  });

  it('the quick sampled check never waves through a result the tokenizer puts over the limit', async () => {
    // texts in the quick check's range (8 K+ chars), mixed from real corpus samples, with limits from
    // half the real count to twice it: every decision must match the real tokenizer's
    const samples = await buildCorpus({ split: 'holdout', perCategory: 6 });
    let x = 7;
    const rnd = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 4294967296;
    let passes = 0;
    for (let trial = 0; trial < 90; trial++) {
      const target = QUICK_CHECK_MIN_CHARS + Math.floor(rnd() * 56_000);
      let text = '';
      while (text.length < target) {
        const s = samples[Math.floor(rnd() * samples.length)]!.text;
        const a = Math.floor(rnd() * s.length);
        text += s.slice(a, a + (trial % 2 ? 40_000 : 3_000)) + '\n';
      }
      const profile = (['o200k', 'cl100k', 'claude'] as const)[trial % 3]!;
      const truth = await countExact(text, profile);
      for (const f of [0.5, 0.7, 0.95, 1.05, 1.2, 1.4, 1.7, 2.2]) {
        const limit = Math.floor(truth * f);
        const e = await estimateForDecision(text, limit, { profile });
        if (e.tokens <= limit) passes++;
        expect({ trial, profile, f, spilled: e.tokens > limit }).toEqual({ trial, profile, f, spilled: truth > limit });
      }
    }
    expect(passes).toBe(90 * 5); // the five limits over the real count
  }, 120_000);
});
