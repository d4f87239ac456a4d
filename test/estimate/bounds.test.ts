/**
 * The lower bound the decision puts on the text it has not counted yet (decision.ts, countToDecide):
 * a text with k certain piece boundaries (features.ts countPieceCuts) costs every tokenizer at least
 * k + 1 tokens. Checked against the real tokenizers on corpus text in every script and on hostile
 * random text built to sit on the edges of the rule (apostrophes, underscores, < >, accents, digits,
 * combining marks, NFKC-sensitive letters, CRLF).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildCorpus } from '../../scripts/build-corpus.js';
import { countExact, countPieceCuts, nextCut, PROFILES } from '../../src/pipeline/estimate/internal.js';

const minTokens = (s: string) => (s.length ? countPieceCuts(s, 1, s.length) + 1 : 0);

/** The plain rule, char by char, for checking the buffered loop. */
function cutsRef(s: string): number {
  const letter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  let k = 0;
  for (let p = 1; p < s.length; p++) {
    const c = s.charCodeAt(p);
    if (c === 32 ? letter(s.charCodeAt(p - 1)) && letter(s.charCodeAt(p + 1)) : c < 128 && '!"#$%&()*+,-./:;=?@[\\]^`{|}~'.includes(s[p]!) && letter(s.charCodeAt(p - 1))) k++;
  }
  return k;
}

const edge = fc.oneof(
  fc.constantFrom('a', 'Z', 'word', ' ', '  ', "'", "'s", "'ll", '_', '<', '>', '.', ',', '-', '"', '\\', '/', '(', ')', '{', '}', '[', ']', '!', '?', ';', ':', '=', '+', '*', '&', '%', '#', '@', '^', '`', '|', '~', '$'),
  fc.constantFrom('é', 'ß', 'ﬁ', 'Ω', 'я', '中', '😀', '\u0301', '\u00a0', 'ǅ', 'ŉ', '１', '\r\n', '\n', '\t', '0', '12', '1234', 'x1', '\ud800'),
  fc.stringMatching(/^[a-zA-Z]{1,12}$/),
);
const hostile = fc.array(edge, { minLength: 1, maxLength: 80 }).map((a) => a.join(''));

describe('the lower bound of an uncounted rest', () => {
  it('countPieceCuts counts the rule, in any range, across block edges', () => {
    fc.assert(
      fc.property(hostile, fc.nat({ max: 70_000 }), (t, pad) => {
        const s = 'ab '.repeat(Math.floor(pad / 3)) + t;
        expect(countPieceCuts(s, 1, s.length)).toBe(cutsRef(s));
        const a = Math.floor(s.length / 3);
        expect(countPieceCuts(s, 1, a) + countPieceCuts(s, a, s.length)).toBe(cutsRef(s));
      }),
      { numRuns: 60 },
    );
  });

  it('property: every tokenizer spends at least (piece boundaries + 1) tokens on hostile text', async () => {
    const texts = fc.sample(hostile, { numRuns: 400, seed: 13 });
    for (const p of PROFILES) {
      for (const t of texts) {
        const real = await countExact(t, p);
        if (real < minTokens(t)) throw new Error(`${p}: ${JSON.stringify(t)} costs ${real} < ${minTokens(t)}`);
      }
    }
  }, 120_000);

  it('holds on corpus text in every script, whole and from a safe cut on, and is not trivially loose', async () => {
    const samples = await buildCorpus({ split: 'holdout', perCategory: 3 });
    const share: Record<string, number[]> = {};
    for (const s of samples) {
      // the rest after the first safe cut past a third of the text, as the decision sees it
      const rest = s.text.slice(nextCut(s.text, 0, Math.floor(s.text.length / 3), 4096));
      for (const p of PROFILES) {
        const real = await countExact(s.text, p);
        expect(real).toBeGreaterThanOrEqual(minTokens(s.text));
        expect(await countExact(rest, p)).toBeGreaterThanOrEqual(minTokens(rest));
        if (p === 'o200k') (share[s.category] ??= []).push(minTokens(s.text) / real);
      }
    }
    const mean = (c: string) => share[c]!.reduce((a, b) => a + b, 0) / share[c]!.length;
    // English prose has a boundary at nearly every word: the bound is most of the count there
    expect(mean('prose')).toBeGreaterThan(0.6);
    expect(mean('json-min')).toBeGreaterThan(0.2);
  }, 180_000);
});
