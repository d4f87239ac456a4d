import { describe, expect, it } from 'vitest';
import { extractAssets, linkAssets, type AssetSink } from '../../src/pipeline/extract.js';
import { TEXT_SLICE_CHARS } from '../../src/pipeline/limits.js';
import { isWellFormed } from '../../src/pipeline/text.js';
import { fixture, randomBytes } from './helpers.js';

/**
 * linkAssets saves the assets found and builds the linked form. Saves run a few at a time (each is
 * several file-system round trips), yet the references, links and pieces come out in text order;
 * the pieces it is written from are never longer than TEXT_SLICE_CHARS.
 */

const png = fixture('sample.png');

/** A sink whose saves finish in an order of its choosing, counting how many run at once. */
function slowSink(delayOf: (n: number) => number, failAt?: number) {
  const state = { running: 0, most: 0, saves: 0, runningAtEnd: -1 };
  const sink: AssetSink = {
    save: async (bytes, ext, sha) => {
      const n = state.saves++;
      state.running++;
      state.most = Math.max(state.most, state.running);
      await new Promise((r) => setTimeout(r, delayOf(n)));
      state.running--;
      if (n === failAt) throw new Error(`disk full at save ${n}`);
      return { path: `/store/${sha}${ext}`, relPath: `assets/${sha}${ext}` };
    },
  };
  return { sink, state };
}

/** JSON with `n` distinct images (and a repeat of the first), then `tail` chars of records. */
function payload(n: number, tail = 0): string {
  const images = Array.from({ length: n }, (_, i) => {
    const bytes = Buffer.concat([png.subarray(0, 64), randomBytes(3000 + i, i + 1)]);
    return { type: 'image', mimeType: 'image/png', data: bytes.toString('base64') };
  });
  images.push(images[0]!);
  return JSON.stringify({ images, notes: 'x'.repeat(tail) });
}

describe('linkAssets', () => {
  it('saves several assets at once, each content once, and links them in text order', async () => {
    const text = payload(9);
    const found = extractAssets(text).assets;
    expect(found).toHaveLength(10);
    const spans = found.map((f) => [f.start, f.end] as const);
    // later saves finish first
    const { sink, state } = slowSink((n) => 40 - 4 * n);
    const linked = await linkAssets(text, found, sink);
    expect(state.most, 'saves overlap').toBeGreaterThan(1);
    expect(state.most, 'a bounded number at once').toBeLessThanOrEqual(4);
    expect(state.saves, 'the repeated image is saved once').toBe(9);
    expect(linked.assets[9]!.sha256).toBe(linked.assets[0]!.sha256);
    // the linked text is the original with each span replaced by its reference, in order
    let want = '';
    let pos = 0;
    for (let i = 0; i < spans.length; i++) {
      const ref = linked.assets[i]!;
      want += text.slice(pos, spans[i]![0]) + JSON.stringify({ $spillwayAsset: { path: ref.relPath, mimeType: ref.mimeType, bytes: ref.bytes, sha256: ref.sha256 } });
      pos = spans[i]![1];
    }
    want += text.slice(pos);
    expect(linked.text).toBe(want);
    expect(linked.pieces.join('')).toBe(want);
    // each link's byte span holds its reference
    const bytes = Buffer.from(want);
    for (const l of linked.links) expect(JSON.parse(bytes.subarray(l.start, l.end).toString()).$spillwayAsset.sha256).toBe(linked.assets[l.asset]!.sha256);
  });

  it('cuts a long stretch between or after assets into pieces of at most TEXT_SLICE_CHARS, never inside a pair', async () => {
    // an astral char straddling every slice boundary the cut could pick
    const tail = '😀'.repeat(TEXT_SLICE_CHARS + 7);
    const text = payload(2).replace('"notes":""', `"notes":"${tail}"`);
    const linked = await linkAssets(text, extractAssets(text).assets, slowSink(() => 0).sink);
    expect(Math.max(...linked.pieces.map((p) => p.length))).toBeLessThanOrEqual(TEXT_SLICE_CHARS);
    for (const p of linked.pieces) expect(isWellFormed(p), 'no piece starts or ends inside a surrogate pair').toBe(true);
    expect(linked.pieces.join('')).toBe(linked.text);
    expect(linked.text.endsWith(`"notes":"${tail}"}`)).toBe(true);
  });

  it('fails with the first failed save, and only once no save it started is still running', async () => {
    const text = payload(9);
    const { sink, state } = slowSink((n) => (n === 2 ? 5 : 30), 2);
    const err = await linkAssets(text, extractAssets(text).assets, sink).then(
      () => undefined,
      (e: Error) => {
        state.runningAtEnd = state.running;
        return e;
      },
    );
    expect(err?.message).toBe('disk full at save 2');
    expect(state.runningAtEnd).toBe(0);
  });
});
