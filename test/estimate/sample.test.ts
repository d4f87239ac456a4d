/**
 * The calibrated estimate reads big texts through stratified windows (src/pipeline/estimate/sample.ts).
 * These tests hold the sampled estimate to the full pass on real corpus text mixed every which way,
 * and check the two escape hatches (standard error, UTF-8 size) send untrustworthy samples to a full scan.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCorpus, type CorpusSample } from '../../scripts/build-corpus.js';
import {
  BOUNDED_SAMPLE_MAX_CHARS,
  boundedSample,
  calibrated,
  calibratedAll,
  estimateTokens,
  FEATURE_NAMES,
  priceFeatures,
  PROFILES,
  SAMPLE_MIN_CHARS,
  sampleFeatures,
  scanFeatures,
} from '../../src/pipeline/estimate/internal.js';

/** Declared bounds of the sampled estimate against the full pass on generated mixtures. */
const MAX_WORST_ERROR = 0.06;
const MAX_P90_ERROR = 0.02;
const TRIALS = 60;

let samples: CorpusSample[] = [];
beforeAll(async () => {
  samples = [...(await buildCorpus({ split: 'holdout', perCategory: 4 })), ...(await buildCorpus({ split: 'train', perCategory: 4 }))];
}, 120_000);

const full = (text: string) => {
  const f = new Float64Array(FEATURE_NAMES.length);
  scanFeatures(text, f);
  return f;
};
const sampled = (text: string) => {
  const f = new Float64Array(FEATURE_NAMES.length);
  const info = sampleFeatures(text, f);
  return { f, info };
};

function lcg(seed: number) {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 4294967296;
}

describe('sampled calibrated estimate', () => {
  it('scans small texts whole, so their estimate is the full pass exactly', () => {
    const text = samples.map((s) => s.text).join('\n').slice(0, SAMPLE_MIN_CHARS);
    const { f, info } = sampled(text);
    expect(info).toEqual({ scanned: text.length, full: true, relStdErr: 0 });
    expect([...f]).toEqual([...full(text)]);
  });

  it('samples a big homogeneous text, reads a small share of it, and stays within 2% of the full pass', () => {
    const prose = samples.filter((s) => s.category === 'prose').map((s) => s.text).join('\n');
    let text = '';
    while (text.length < 2_000_000) text += prose + '\n';
    const { f, info } = sampled(text);
    expect(info.full).toBe(false);
    expect(info.scanned / text.length).toBeLessThan(0.1);
    for (const p of PROFILES) expect(Math.abs(priceFeatures(f, p) / priceFeatures(full(text), p) - 1)).toBeLessThan(0.02);
  });

  it('is deterministic: the same text always gives the same estimate', () => {
    const text = samples.map((s) => s.text).join('\n');
    expect(text.length).toBeGreaterThan(SAMPLE_MIN_CHARS);
    expect(calibratedAll(text)).toEqual(calibratedAll(text));
    expect(calibrated(text, 'claude')).toBe(calibratedAll(text).claude);
  });

  it(`stays within ${MAX_WORST_ERROR * 100}% of the full pass (p90 ${MAX_P90_ERROR * 100}%) on ${TRIALS} mixtures of real corpus text`, () => {
    const rnd = lcg(20261130);
    const errors: number[] = [];
    for (let trial = 0; trial < TRIALS; trial++) {
      const target = SAMPLE_MIN_CHARS + Math.floor(rnd() * rnd() * 1_500_000);
      const mode = trial % 3; // 0: short random pieces; 1: one kind with dense pieces in it; 2: long runs of a few kinds
      const base = samples[Math.floor(rnd() * samples.length)]!.text;
      const parts: string[] = [];
      let len = 0;
      while (len < target) {
        let piece: string;
        if (mode === 1 && rnd() < 0.8) {
          const a = Math.floor(rnd() * base.length);
          piece = base.slice(a, a + 5000);
        } else {
          const s = samples[Math.floor(rnd() * samples.length)]!.text;
          const a = Math.floor(rnd() * s.length);
          piece = s.slice(a, a + (mode === 2 ? 40_000 : Math.floor(rnd() * 6000)));
        }
        parts.push(piece);
        len += piece.length + 1;
      }
      const text = parts.join('\n');
      const want = priceFeatures(full(text), 'o200k');
      errors.push(Math.abs(priceFeatures(sampled(text).f, 'o200k') / want - 1));
    }
    errors.sort((a, b) => a - b);
    expect(errors[errors.length - 1]!).toBeLessThanOrEqual(MAX_WORST_ERROR);
    expect(errors[Math.floor(0.9 * (errors.length - 1))]!).toBeLessThanOrEqual(MAX_P90_ERROR);
  });

  it('keeps a block of another script hidden in a big ASCII text within 3% of the full pass', () => {
    // Were the windows to miss the CJK, the whole text's UTF-8 size (one native call) would not match
    // theirs and the sampler would read more: either way the estimate must hold.
    const ascii = 'plain ascii words and numbers 12345 in a line\n'.repeat(40_000);
    const cjk = samples.filter((s) => s.category === 'cjk').map((s) => s.text).join('').slice(0, 60_000);
    const text = ascii.slice(0, 900_000) + cjk + ascii.slice(900_000);
    const { f, info } = sampled(text);
    const err = Math.abs(priceFeatures(f, 'o200k') / priceFeatures(full(text), 'o200k') - 1);
    expect(err).toBeLessThan(0.03);
    expect(info.scanned).toBeGreaterThan(0);
  });

  it('falls back to a full scan when the windows disagree too much to be trusted', () => {
    // alternating 3 KB blocks of prose and of base64: every window sees one kind or the other
    const prose = samples.filter((s) => s.category === 'prose').map((s) => s.text).join(' ').replace(/\s+/g, ' ');
    const b64 = samples.filter((s) => s.category === 'base64').map((s) => s.text).join('').replace(/\s+/g, '');
    expect(prose.length).toBeGreaterThan(6000);
    expect(b64.length).toBeGreaterThan(6000);
    const block = (src: string, i: number) => {
      const at = (i * 3000) % (src.length - 3000);
      return src.slice(at, at + 3000);
    };
    const parts: string[] = [];
    for (let i = 0; i < 40; i++) parts.push(block(i % 2 ? b64 : prose, i));
    const text = parts.join('\n');
    const { f, info } = sampled(text);
    expect(info.full).toBe(true);
    expect([...f]).toEqual([...full(text)]);
  });

  it('survives hostile big inputs, within 15% of the full pass even where windows cut one giant run into many', () => {
    // (3 M spaces are left out of the comparison: the full pass prices one giant whitespace run at
    // about one token for some profiles, so any cut of it looks "wrong"; both must still be finite.)
    const spaces = sampled(' '.repeat(3_000_000));
    for (const p of PROFILES) expect(Number.isFinite(priceFeatures(spaces.f, p))).toBe(true);
    for (const t of ['\ud800'.repeat(300_000), '\udc00'.repeat(300_000), 'x'.repeat(3_000_000), '9'.repeat(3_000_000), '😀'.repeat(200_000)]) {
      const { f, info } = sampled(t);
      expect(info.scanned).toBeGreaterThan(0);
      for (const p of PROFILES) {
        const est = priceFeatures(f, p);
        const want = priceFeatures(full(t), p);
        expect(Number.isFinite(est)).toBe(true);
        expect(Math.abs(est - want)).toBeLessThanOrEqual(0.15 * want + 1);
      }
      expect(calibratedAll(t).o200k).toBeGreaterThan(0);
    }
  });

  it('the bounded variant reads at most ~1 M chars of a huge mixed text and stays near the full pass', () => {
    // 12 M chars of real text in 40 KB blocks of every kind: the checked sampler may need more rounds, the
    // bounded one never does
    const parts: string[] = [];
    let len = 0;
    for (let i = 0; len < 12_000_000; i++) {
      const s = samples[(i * 7) % samples.length]!.text;
      parts.push(s.slice(0, 40_000));
      len += Math.min(40_000, s.length) + 1;
    }
    const text = parts.join('\n');
    const f = new Float64Array(FEATURE_NAMES.length);
    scanFeatures(text, f);
    for (const p of PROFILES) {
      const want = priceFeatures(f, p);
      const got = estimateTokens(text, { profile: p, bounded: true });
      expect(got).toMatchObject({ strategy: 'calibrated', profile: p, exact: false });
      expect(Math.abs(got.tokens / want - 1)).toBeLessThan(0.05);
    }
    const info = boundedSample(text, new Float64Array(FEATURE_NAMES.length), 'o200k');
    // windows stretch to whitespace: up to ~2 x 32 chars each
    expect(info.scanned).toBeLessThanOrEqual(BOUNDED_SAMPLE_MAX_CHARS * 1.3);
    expect(info.full).toBe(false);
  });
});
