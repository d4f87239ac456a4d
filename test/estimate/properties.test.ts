import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ALL_STRATEGIES, CHEAP_STRATEGIES, calibratedAll, describeTokens, estimateTokens, PROFILES } from '../../src/pipeline/estimate/internal.js';

/** Any UTF-16 code unit, lone surrogates included. */
const codeUnits = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 400 }).map((a) => String.fromCharCode(...a));
/** Text made of realistic pieces (words, digits, base64, hex, CJK, emoji, whitespace), so runs and words form. */
const piece = fc.oneof(
  fc.constantFrom('the', 'tokenizer', 'getElementById', 'AAAA', 'OAAO,', 'iVBORw0KGgo', '0x1f', '550e8400-e29b-41d4-a716-446655440000'),
  fc.constantFrom(' ', '\n', '  ', '\t', '{"a":', '},', '\\u00e9', '世界', 'Привет', '😀', '\ud800', 'é'),
  fc.stringMatching(/^[A-Za-z0-9+/]{1,80}$/),
  fc.integer({ min: 0, max: 1e9 }).map(String),
);
const texty = fc.array(piece, { maxLength: 120 }).map((a) => a.join(''));
const anyText = fc.oneof(codeUnits, texty, fc.string({ unit: 'grapheme', maxLength: 300 }));

describe('estimate properties', () => {
  it('every cheap strategy returns a finite non-negative integer, 0 only for empty text', () => {
    fc.assert(
      fc.property(anyText, fc.constantFrom(...PROFILES), (text, profile) => {
        for (const strategy of CHEAP_STRATEGIES) {
          const t = estimateTokens(text, { strategy, profile }).tokens;
          expect(Number.isInteger(t)).toBe(true);
          expect(t).toBeGreaterThanOrEqual(0);
          expect(t === 0).toBe(text.length === 0);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('is monotone-ish: appending text never lowers the estimate by more than a few tokens, and is near additive', () => {
    fc.assert(
      fc.property(anyText, anyText, fc.constantFrom(...PROFILES), (a, b, profile) => {
        const ea = calibratedAll(a)[profile];
        const eb = calibratedAll(b)[profile];
        const eab = calibratedAll(a + b)[profile];
        // only the seam can change: the base64-like span across it ([A-Za-z0-9+/=_-], the chars that
        // chain random-looking runs) may be re-priced as a whole (a word becomes unknown, short runs
        // become one random run), by at most ~1 token per 2 chars of that span, plus a few tokens for
        // escapes and whitespace split at the seam
        const seamRun = (/[A-Za-z0-9+/=_-]*$/.exec(a)?.[0].length ?? 0) + (/^[A-Za-z0-9+/=_-]*/.exec(b)?.[0].length ?? 0);
        const slack = 4 + Math.ceil(seamRun / 2);
        expect(eab).toBeGreaterThanOrEqual(ea - slack);
        expect(eab).toBeLessThanOrEqual(ea + eb + slack);
      }),
      { numRuns: 400 },
    );
  });

  it('density shares are finite, in [0, 1] and sum to 1', async () => {
    await fc.assert(
      fc.asyncProperty(anyText.filter((t) => t.length > 0), async (text) => {
        const d = (await describeTokens(text, { check: false })).density;
        const v = Object.values(d);
        expect(v.every((x) => Number.isFinite(x) && x >= 0 && x <= 1)).toBe(true);
        expect(v.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
      }),
      { numRuns: 300 },
    );
  });

  it('handles huge and hostile inputs in one pass', () => {
    const lone = '\ud800'.repeat(1_000_000);
    const huge = 'x'.repeat(30_000_000);
    const digits = '9'.repeat(5_000_000);
    for (const t of [lone, huge, digits, '\udc00a\ud800', '-'.repeat(40)]) {
      for (const p of PROFILES) {
        const n = calibratedAll(t)[p];
        expect(Number.isFinite(n) && n > 0).toBe(true);
      }
    }
    // long runs are priced by length, not as one token
    expect(calibratedAll(huge).o200k).toBeGreaterThan(huge.length / 100);
  });

  it('names every strategy it can compute', () => {
    expect([...ALL_STRATEGIES].sort()).toEqual(['calibrated', 'chars4', 'cl100k', 'claude', 'craft-density', 'o200k']);
  });
});
