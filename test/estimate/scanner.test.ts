/**
 * The scanner reads code units through a block buffer instead of charCodeAt (features.ts); it must
 * give exactly the features the plain charCodeAt scanner gave (reference-features.ts), on the whole
 * corpus, on every kind of V8 string (flat, two-byte, sliced, cons), on windows at any offset, and on
 * hostile random text, including runs, UUIDs, escapes and surrogate pairs cut by a block's edge.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCorpus, type CorpusSample } from '../../scripts/build-corpus.js';
import { addRangeFeatures, FEATURE_COUNT, FEATURE_NAMES, holdUnits, releaseUnits, windowIn } from '../../src/pipeline/estimate/internal.js';
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
const BLOCK = 64 * 1024;

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

  it('prices every UTF-16 code unit as before, alone and between each kind of neighbour', () => {
    // the other scripts are priced from a table built from code point ranges: every unit, so no
    // range edge can drift; the neighbours exercise the word and run kinds on both sides of it
    const neighbours = [' ', 'a', 'Q', '7', '-', '\\', 'Ж', 'ж', 'Ω', 'ש', 'अ', 'ა', '中', 'か', '한', '\u0301', '\ud83d', '\ude00', 'é', '\u200d', '\ufe0f'];
    const bad: string[] = [];
    for (let first = 0; first < 0x10000; first += 512) {
      let text = '';
      for (let c = first; c < first + 512; c++) {
        const ch = String.fromCharCode(c);
        text += ch + neighbours[c % neighbours.length] + ch + ch + neighbours[(c >> 3) % neighbours.length];
      }
      const d = differs(text) ?? differs(text, 1, text.length - 1);
      if (d) bad.push(`U+${first.toString(16)}..: ${d}`);
    }
    expect(bad).toEqual([]);
  });

  it('windows of a held text (loaded once for the sampler) give the same features, and another text never reads it', () => {
    const texts = corpus.slice(0, 60).map((s) => s.text);
    const bad: string[] = [];
    for (let i = 0; i + 1 < texts.length; i++) {
      const [t, other] = [texts[i]!, texts[i + 1]!];
      holdUnits(t);
      try {
        for (let k = 0; k < 8; k++) {
          const start = k < 4 ? Math.floor((k * t.length) / 8) : (k - 4) * 50;
          const d = differs(t, start, start + 200);
          if (d) bad.push(d);
          // a scan of another text in between takes the buffer; the held one must be reloaded after
          if (k === 3) {
            const e = differs(other);
            if (e) bad.push(e);
          }
        }
      } finally {
        releaseUnits();
      }
    }
    expect(bad).toEqual([]);
  });

  it('a lower case run longer than a block, and a UUID right at a block edge, are priced as before', () => {
    const run = 'a'.repeat(3 * BLOCK + 5);
    expect(differs(run)).toBeUndefined();
    for (let k = -40; k <= 40; k++) {
      const text = 'q'.repeat(BLOCK + k) + ' 550e8400-e29b-41d4-a716-446655440000 \\u00e9😀';
      expect(differs(text)).toBeUndefined();
    }
  });

  it('sample windows snap to whitespace exactly as the charCodeAt loop did', () => {
    // the loop sample.ts had: past the next whitespace within 32 chars, else off a low surrogate
    const snapRef = (text: string, i: number, limit: number) => {
      const stop = Math.min(limit, i + 32);
      for (let j = i; j < stop; j++) {
        const c = text.charCodeAt(j);
        if (c === 32 || c === 10 || c === 9 || c === 13) return j + 1;
      }
      const c = text.charCodeAt(i);
      return c >= 0xdc00 && c <= 0xdfff ? i + 1 : i;
    };
    const jitterRef = (k: number, r: number) => {
      let h = Math.imul(k + 1, 0x9e3779b1) ^ Math.imul(r + 7, 0x85ebca77);
      h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
      h ^= h >>> 12;
      return (h >>> 0) / 4294967296;
    };
    const windowRef = (text: string, k: number, windows: number, chars: number, round: number): [number, number] => {
      const n = text.length;
      const lo = Math.floor(k * (n / windows));
      const hi = Math.floor((k + 1) * (n / windows));
      const at = lo + Math.floor(jitterRef(k, round) * Math.max(0, hi - lo - chars));
      const start = snapRef(text, at, hi);
      return [start, Math.min(n, snapRef(text, Math.min(n, start + chars), n))];
    };
    fc.assert(
      fc.property(fc.oneof(texty, codeUnits), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 300 }), fc.nat({ max: 3 }), (t, windows, chars, round) => {
        for (let k = 0; k < windows; k++) expect(windowIn(t, k, windows, chars, round)).toEqual(windowRef(t, k, windows, chars, round));
      }),
      { numRuns: 300 },
    );
  });
});
