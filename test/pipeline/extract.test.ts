import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeSpan, extractAssets, parseBase64 } from '../../src/pipeline/index.js';
import { extractAssetsAsync } from '../../src/pipeline/extract.js';
import { fixture, randomBytes } from './helpers.js';

const png = fixture('sample.png');
const webp = fixture('sample.webp');
const pdf = fixture('sample.pdf');

/** Rebuild the original from the found spans: what restore does, in memory. */
function rebuild(text: string, found: ReturnType<typeof extractAssets>['assets']): string {
  let out = '';
  let pos = 0;
  for (const f of found) {
    out += text.slice(pos, f.start) + String(encodeSpan(f.bytes, f.encoding));
    pos = f.end;
  }
  return out + text.slice(pos);
}

describe('parseBase64 is strict and canonical', () => {
  it('accepts standard, URL-safe, unpadded and wrapped (MIME 76/CRLF, PEM 64/LF) forms and re-encodes them exactly', () => {
    const b = randomBytes(1000, 3);
    const std = b.toString('base64');
    const url = b.toString('base64url');
    const mime = std.match(/.{1,76}/g)!.join('\r\n');
    const pem = std.match(/.{1,64}/g)!.join('\n') + '\n';
    for (const s of [std, url, std.replace(/=+$/, ''), mime, pem]) {
      const p = parseBase64(s);
      expect(p, s.slice(0, 20)).not.toBeNull();
      expect(p!.bytes.equals(b)).toBe(true);
      expect(encodeSpan(p!.bytes, p!.encoding)).toBe(s);
    }
  });

  it('rejects non-canonical trailing bits, mixed alphabets, bad padding, ragged wrapping and stray characters', () => {
    const std = randomBytes(302, 4).toString('base64'); // 302 bytes → one '=' of padding, 2 trailing bits
    expect(parseBase64(std)).not.toBeNull();
    const last = std.length - 2;
    const flipped = std.slice(0, last) + (std[last] === 'B' ? 'C' : 'B') + std.slice(last + 1); // non-zero trailing bits
    expect(parseBase64(flipped)).toBeNull();
    expect(parseBase64(std.replace(/[A-Z]/, '-').replace(/[a-z]/, '+'))).toBeNull();
    expect(parseBase64(std + '=')).toBeNull();
    expect(parseBase64(std.slice(0, 100) + '=' + std.slice(100))).toBeNull();
    expect(parseBase64(std.slice(0, 76) + '\n' + std.slice(76, 140) + '\n' + std.slice(140))).toBeNull();
    expect(parseBase64(std.slice(0, 50) + ' ' + std.slice(50))).toBeNull();
    expect(parseBase64('')).toBeNull();
  });
});

describe('extractAssets', () => {
  it('finds MCP image/audio/resource blocks, Anthropic sources and data URLs with parameters inside JSON, with JSON paths', () => {
    const doc = {
      content: [
        { type: 'image', data: png.toString('base64'), mimeType: 'image/png' },
        { type: 'audio', data: fixture('sample.wav').toString('base64'), mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///x.pdf', mimeType: 'application/pdf', blob: pdf.toString('base64') } },
        { type: 'image', source: { type: 'base64', media_type: 'image/webp', data: webp.toString('base64') } },
        { type: 'text', text: `see ![x](data:image/png;name=a%20b.png;base64,${png.toString('base64')}) ok` },
        { 'weird key': `data:image/webp;base64,${webp.toString('base64')}` },
      ],
    };
    const text = JSON.stringify(doc, null, 2);
    const { assets, json } = extractAssets(text);
    expect(json).toBe(true);
    expect(assets.map((a) => [a.jsonPath, a.source, a.declaredMime])).toEqual([
      ['$.content[0].data', 'mcp-image', 'image/png'],
      ['$.content[1].data', 'mcp-audio', 'audio/wav'],
      ['$.content[2].resource.blob', 'mcp-blob', 'application/pdf'],
      ['$.content[3].source.data', 'base64', 'image/webp'],
      ['$.content[4].text', 'data-url', 'image/png'],
      ['$.content[5]["weird key"]', 'data-url', 'image/webp'],
    ]);
    expect(assets[0]!.bytes.equals(png)).toBe(true);
    expect(assets[2]!.bytes.equals(pdf)).toBe(true);
    expect(assets[4]!.jsonValue).toBe(false); // embedded inside a longer string
    expect(rebuild(text, assets)).toBe(text);
  });

  it('finds base64 in plain text: whole, embedded, data URLs and PEM-wrapped blocks', () => {
    const b64 = pdf.toString('base64');
    const wrapped = b64.match(/.{1,76}/g)!.join('\n');
    const text = `first line\nraw=${b64}\n<img src="data:image/webp;base64,${webp.toString('base64')}">\n-----BEGIN BLOB-----\n${wrapped}\n-----END BLOB-----\n`;
    const { assets, json } = extractAssets(text);
    expect(json).toBe(false);
    expect(assets.map((a) => a.source)).toEqual(['base64', 'data-url', 'base64']);
    expect(assets[2]!.encoding.lineWidth).toBe(76);
    expect(assets[2]!.bytes.equals(pdf)).toBe(true);
    expect(rebuild(text, assets)).toBe(text);
  });

  it('handles JSON escapes: escaped slashes and line-wrapped base64 inside a JSON string', () => {
    const wrapped = pdf.toString('base64').match(/.{1,64}/g)!.join('\n');
    const text = JSON.stringify({ data: wrapped, mimeType: 'application/pdf', url: `data:image/png;base64,${png.toString('base64')}` }).replace(/\//g, '\\/');
    const { assets } = extractAssets(text);
    expect(assets).toHaveLength(2);
    expect(assets.every((a) => a.encoding.escapeSlash)).toBe(true);
    expect(rebuild(text, assets)).toBe(text);
  });

  it('never takes English, hex ids, UUIDs or long identifiers for base64', () => {
    const word = fc.constantFrom('the', 'quick', 'brown', 'fox', 'Jumps', 'OVER', 'lazy', 'dog', 'Request', 'id', 'HTTP2', 'v8', 'x86');
    const english = fc.array(word, { minLength: 50, maxLength: 400 }).map((w) => w.join(' '));
    const hex = fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 128, maxLength: 2048 }).map((a) => Buffer.from(a).toString('hex'));
    const hexUpper = hex.map((h) => h.toUpperCase());
    const camel = fc.array(word, { minLength: 60, maxLength: 300 }).map((w) => w.map((x) => x[0]!.toUpperCase() + x.slice(1)).join(''));
    const snake = fc.array(word, { minLength: 60, maxLength: 300 }).map((w) => w.join('_'));
    const kebabDigits = fc.array(fc.tuple(word, fc.nat(99)), { minLength: 60, maxLength: 300 }).map((w) => w.map(([a, n]) => `${a}-${n}`).join('-'));
    const uuids = fc.array(fc.uuid(), { minLength: 10, maxLength: 60 }).map((u) => u.join(''));
    const path = fc.array(word, { minLength: 60, maxLength: 200 }).map((w) => '/' + w.join('/'));
    fc.assert(
      fc.property(fc.oneof(english, hex, hexUpper, camel, snake, kebabDigits, uuids, path), (s) => {
        expect(extractAssets(s).assets).toEqual([]);
        expect(extractAssets(JSON.stringify({ id: s, data: s })).assets).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('never takes base64 of plain text (no declared context) for an asset, but does when the context declares it', () => {
    const t = Buffer.from('This is an ordinary sentence, repeated to be long. '.repeat(20)).toString('base64');
    expect(extractAssets(`value: ${t}`).assets).toEqual([]);
    expect(extractAssets(JSON.stringify({ blob: t, mimeType: 'text/plain' })).assets).toHaveLength(1);
  });

  it('leaves malformed base64 alone, even in declared slots', () => {
    const good = png.toString('base64');
    const bad = [good.slice(0, -3) + '!!!', good.slice(1), good + '====', good.replace(/A/g, '\u00e9')];
    for (const b of bad) {
      const text = JSON.stringify({ type: 'image', data: b, mimeType: 'image/png' });
      expect(extractAssets(text).assets).toEqual([]);
    }
  });

  it('property: any mix of text and embedded assets rebuilds to the identical text', () => {
    const media = [png, webp, pdf, randomBytes(700, 9)];
    const piece = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom(...media).map((m) => m.toString('base64')),
      fc.constantFrom(...media).map((m) => `data:application/octet-stream;base64,${m.toString('base64url')}`),
      fc.constantFrom(...media).map((m) => m.toString('base64').match(/.{1,76}/g)!.join('\r\n')),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), fc.constantFrom(' ', '\n', '"', ''), (pieces, sep) => {
        const text = pieces.join(sep);
        const { assets } = extractAssets(text);
        for (let i = 1; i < assets.length; i++) expect(assets[i]!.start).toBeGreaterThanOrEqual(assets[i - 1]!.end);
        expect(rebuild(text, assets)).toBe(text);
      }),
      { numRuns: 200 },
    );
  });

  it('finds a short data URL (under the 256 chars of a bare asset) inside a JSON string, also in the pending data slot of an object, and not a short run alone', () => {
    const tiny = Buffer.alloc(60, 7).toString('base64'); // 80 chars
    const url = `data:application/octet-stream;base64,${tiny}`;
    const text = JSON.stringify({ a: { data: `look: ${url} here`, note: `x`.repeat(300) }, b: `and ${url}`, c: tiny + ' '.repeat(100) });
    const { assets } = extractAssets(text);
    expect(assets.map((a) => [a.jsonPath, a.source, a.bytes.length])).toEqual([
      ['$.a.data', 'data-url', 60],
      ['$.b', 'data-url', 60],
    ]);
    expect(rebuild(text, assets)).toBe(text);
  });

  it('extractAssetsAsync finds exactly what extractAssets finds, in a text walked in many slices', async () => {
    const items = Array.from({ length: 40_000 }, (_, i) => (i % 5000 === 0 ? { type: 'image', mimeType: 'image/png', data: png.toString('base64') } : { id: i, body: `row ${i} `.repeat(8), url: i % 7000 === 1 ? `data:image/webp;base64,${webp.toString('base64')}` : 'none' }));
    const text = JSON.stringify({ items });
    expect(text.length).toBeGreaterThan(4 * 1024 * 1024);
    const sync = extractAssets(text);
    const async_ = await extractAssetsAsync(text);
    expect(async_.json).toBe(true);
    expect(async_.assets.length).toBe(sync.assets.length);
    expect(async_.assets.map((a) => [a.start, a.end, a.jsonPath, a.source])).toEqual(sync.assets.map((a) => [a.start, a.end, a.jsonPath, a.source]));
    // not JSON after all (cut short): the text scan, as extractAssets does it
    const cut = text.slice(0, -2);
    expect((await extractAssetsAsync(cut)).assets.map((a) => a.start)).toEqual(extractAssets(cut).assets.map((a) => a.start));
  });

  it('walks 100,000-deep nesting and __proto__ keys without throwing', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(extractAssets(deep)).toEqual({ assets: [], json: true });
    const proto = `{"__proto__":{"type":"image","mimeType":"image/png","data":"${png.toString('base64')}"},"constructor":1}`;
    const r = extractAssets(proto);
    expect(r.assets[0]!.jsonPath).toBe('$.__proto__.data');
    expect(({} as Record<string, unknown>).type).toBeUndefined();
  });
});
