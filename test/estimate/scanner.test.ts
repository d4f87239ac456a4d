/**
 * The scanner reads code units through a block buffer instead of charCodeAt (features.ts); it must
 * give exactly the features the plain charCodeAt scanner gave (reference-features.ts), on the whole
 * corpus, on every kind of V8 string (flat, two-byte, sliced, cons), on windows at any offset, and on
 * hostile random text, including runs, UUIDs, escapes and surrogate pairs cut by a block's edge.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCorpus, type CorpusSample } from '../../scripts/build-corpus.js';
import { addRangeFeatures, FEATURE_COUNT, FEATURE_NAMES } from '../../src/pipeline/estimate/internal.js';
import * as reference from './reference-features.js';

const a = new Float64Array(FEATURE_COUNT);
const b = new Float64Array(FEATURE_COUNT);
/** The first feature that differs between the two scanners on text[start..end), or undefined. */
function differs(text: string, start = 0, end = text.length): string | undefined {
  a.fill(0);
  b.fill(0);
  reference.addRangeFeatures(text, start, end, a);
  addRangeFeatures(text, start, end, b);
  for (let f = 0; f < FEATURE_COUNT; f++) if (a[f] !== b[f]) return `${FEATURE_NAMES[f]}: ${a[f]} vs ${b[f]} (${start}..${end} of ${text.length})`;
  return undefined;
}

/** Block size of the scanner's buffer (features.ts UNIT_BLOCK): the edges worth cutting at. */
const BLOCK = 16 * 1024;

let corpus: CorpusSample[] = [];
beforeAll(async () => {
  corpus = [...(await buildCorpus({ split: 'train', perCategory: 40 })), ...(await buildCorpus({ split: 'holdout', perCategory: 8 }))];
}, 120_000);

const piece = fc.oneof(
  fc.constantFrom('the', 'tokenizer', 'getElementById', 'AAAA', 'iVBORw0KGgo', '0x1f', '550e8400-e29b-41d4-a716-446655440000', 'a1b2c3d4e5f6a7b8c9d0'),
  fc.constantFrom(' ', '\n', '  ', '\t', '{"a":', '},', '\\u00e9', '\\U0041', '世界', 'Привет', 'Ελλάδα', '😀', '👩‍💻', '\ud800', '\udc00', 'é', 'ǅ', '\u0000', '─┼─'),
  fc.stringMatching(/^[A-Za-z0-9+/=_-]{1,120}$/),
  fc.stringMatching(/^[a-z]{1,300}$/),
  fc.integer({ min: 0, max: 1e9 }).map(String),
);
const texty = fc.array(piece, { maxLength: 200 }).map((p) => p.join(''));
const codeUnits = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 600 }).map((u) => String.fromCharCode(...u));

describe('the block-buffered scanner', () => {
  it('gives the reference scanner\'s features on every corpus sample, whole and in windows', () => {
    const bad: string[] = [];
    for (const s of corpus) {
      const d = differs(s.text) ?? differs(s.text, 7, s.text.length - 3) ?? differs(s.text, Math.floor(s.text.length / 3), Math.floor((2 * s.text.length) / 3));
      if (d) bad.push(`${s.id}: ${d}`);
    }
    expect(corpus.length).toBeGreaterThan(1000);
    expect(bad).toEqual([]);
  });

  it('gives the same features on flat, two-byte, sliced and cons strings, and across block edges', () => {
    const joined = corpus.slice(0, 200).map((s) => s.text).join('\n'); // several blocks, every kind of content
    const bad: string[] = [];
    for (const len of [BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 17]) {
      for (let at = 0; at + len < joined.length && at < 40 * BLOCK; at += 4 * BLOCK + 1234) {
        const sliced = joined.slice(at, at + len);
        const flat = JSON.parse(JSON.stringify(sliced)) as string;
        const cons = sliced.slice(0, 100) + sliced.slice(100);
        for (const t of [sliced, flat, cons, 'Ω' + sliced]) {
          const d = differs(t) ?? differs(t, BLOCK - 40, t.length);
          if (d) bad.push(d);
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it('property: hostile text gives the same features whole and in any window, block edges included', () => {
    fc.assert(
      fc.property(fc.oneof(texty, codeUnits), fc.nat({ max: BLOCK + 200 }), fc.nat(), fc.nat(), (t, pad, s, e) => {
        // pad with letters so that runs, UUIDs and escapes land on a block edge
        const text = 'x'.repeat(pad) + t + 'y'.repeat(pad % 97);
        const start = s % (text.length + 1);
        const end = start + (e % (text.length - start + 2));
        expect(differs(text)).toBeUndefined();
        expect(differs(text, start, end)).toBeUndefined();
        expect(differs(text, BLOCK - (s % 64), text.length)).toBeUndefined();
      }),
      { numRuns: 600 },
    );
  });

  it('a lower case run longer than a block, and a UUID right at a block edge, are priced as before', () => {
    const run = 'a'.repeat(3 * BLOCK + 5);
    expect(differs(run)).toBeUndefined();
    for (let k = -40; k <= 40; k++) {
      const text = 'q'.repeat(BLOCK + k) + ' 550e8400-e29b-41d4-a716-446655440000 \\u00e9😀';
      expect(differs(text)).toBeUndefined();
    }
  });
});
