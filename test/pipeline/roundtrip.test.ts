import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { guardLargeResult, readMeta, restorePayload } from '../../src/pipeline/index.js';
import { fixture, tmpSession } from './helpers.js';

const MEDIA = [
  ['sample.png', 'image/png'],
  ['sample.webp', 'image/webp'],
  ['sample.pdf', 'application/pdf'],
  ['sample.wav', 'audio/wav'],
  ['sample.jpg', 'image/jpeg'],
].map(([f, mime]) => ({ bytes: fixture(f!), mime: mime! }));

const medium = fc.constantFrom(...MEDIA);
/** An asset the way real tools send it. */
const assetValue = fc.oneof(
  medium.map((m) => ({ type: 'image', data: m.bytes.toString('base64'), mimeType: m.mime })),
  medium.map((m) => ({ type: 'audio', data: m.bytes.toString('base64'), mimeType: m.mime })),
  medium.map((m) => ({ type: 'resource', resource: { uri: 'file:///a', mimeType: m.mime, blob: m.bytes.toString('base64') } })),
  medium.map((m) => ({ type: 'image', source: { type: 'base64', media_type: m.mime, data: m.bytes.toString('base64') } })),
  medium.map((m) => `data:${m.mime};base64,${m.bytes.toString('base64')}`),
  medium.map((m) => `inline ![x](data:${m.mime};name=f.bin;base64,${m.bytes.toString('base64')}) text`),
  medium.map((m) => m.bytes.toString('base64url')),
  medium.map((m) => ({ b64_json: m.bytes.toString('base64') })),
);

/** JSON with assets spliced in at random places. */
const docWithAssets = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }),
    assetValue,
    fc.array(tie('node'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 8 }), tie('node'), { maxKeys: 4 }),
  ),
})).node;

describe('restore round trip', () => {
  it('property: generated JSON with embedded assets restores byte for byte (text and parsed input)', async () => {
    await fc.assert(
      fc.asyncProperty(docWithAssets, fc.constantFrom(0, 2, '\t'), fc.boolean(), fc.boolean(), async (doc, indent, escapeSlashes, parsed) => {
        const s = tmpSession();
        let text = JSON.stringify({ result: doc, pad: 'lorem ipsum '.repeat(50) }, null, indent);
        if (escapeSlashes) text = text.replace(/\//g, '\\/');
        const input = parsed ? JSON.parse(text) : text;
        const expected = parsed ? JSON.stringify(input) : text;
        const r = await guardLargeResult(input, { sessionPath: s, limitTokens: 100 });
        expect(r).not.toBeNull();
        expect(r!.payloadPath).toBeDefined();
        const back = await restorePayload(r!.payloadPath!);
        expect(back.toString('utf8')).toBe(expected);
        for (const a of r!.assets) {
          const file = fs.readFileSync(a.path);
          expect(file.length).toBe(a.bytes);
          expect(MEDIA.some((m) => m.bytes.equals(file))).toBe(true);
          if (a.sniffed) expect(MEDIA.find((m) => m.bytes.equals(file))!.mime).toBe(a.mimeType);
        }
        if (r!.assets.length) {
          const meta = await readMeta(r!.metaPath!);
          expect(meta.payloadIsOriginal).toBe(false);
          expect(meta.links).toHaveLength(r!.assets.length);
          expect(fs.readFileSync(r!.payloadPath!, 'utf8')).not.toContain(MEDIA[0]!.bytes.toString('base64').slice(0, 200));
        }
        fs.rmSync(s, { recursive: true, force: true });
      }),
      { numRuns: 120 },
    );
  }, 120_000);

  it('every asset in a document is found: one reference per embedded asset', async () => {
    const s = tmpSession();
    const doc = { content: MEDIA.map((m) => ({ type: 'image', data: m.bytes.toString('base64'), mimeType: m.mime })) };
    const r = await guardLargeResult(doc, { sessionPath: s, limitTokens: 100 });
    expect(r!.assets.map((a) => a.mimeType)).toEqual(MEDIA.map((m) => m.mime));
    expect(r!.assets.every((a) => a.sniffed)).toBe(true);
    const linked = JSON.parse(fs.readFileSync(r!.linkedPath!, 'utf8'));
    expect(linked.content.map((c: { data: { $spillwayAsset: { sha256: string } } }) => c.data.$spillwayAsset.sha256)).toEqual(r!.assets.map((a) => a.sha256));
  });
});
