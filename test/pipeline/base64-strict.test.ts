import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseBase64 } from '../../src/pipeline/base64.js';

/**
 * The definition parseBase64 must keep, written the slow, obvious way: one alphabet by character
 * class, '=' only as final padding to a multiple of four, no length of 1 mod 4, zero bits past the
 * last whole byte. parseBase64 checks this by re-encoding what Node decoded (Node's decoder skips
 * foreign characters and reads a UTF-16 unit by its low byte, so decoding alone proves nothing).
 */
function reference(core: string, padLen: number): { bytes: Buffer; alphabet: 'std' | 'url'; pad: boolean } | null {
  let url = false;
  if (!/^[A-Za-z0-9+/]*$/.test(core)) {
    if (!/^[A-Za-z0-9_-]*$/.test(core)) return null;
    url = true;
  }
  if (core.length === 0 || padLen > 2 || (padLen > 0 && (core.length + padLen) % 4 !== 0)) return null;
  const rem = core.length % 4;
  if (rem === 1) return null;
  const value = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'.indexOf(url ? core.at(-1)!.replace('-', '+').replace('_', '/') : core.at(-1)!);
  if ((rem === 2 && (value & 0x0f) !== 0) || (rem === 3 && (value & 0x03) !== 0)) return null;
  return { bytes: Buffer.from(core, url ? 'base64url' : 'base64'), alphabet: url ? 'url' : 'std', pad: padLen > 0 || rem === 0 };
}

/** Characters that break (or look like they might not break) a run: other alphabets, '=', spaces, Latin-1, and UTF-16 units whose low byte is a base64 letter ('Ł' is U+0141, low byte 'A'). */
const INTRUDERS = ['-', '_', '+', '/', '=', ' ', '\t', '\r', '.', '\u00e9', '\u0141', '\u0161', '\u012f', '\uff21', '\ud83d\ude00', '\0', '\\', '"'];

const canonical = fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 200 }), fc.boolean(), fc.boolean()).map(([b, url, pad]) => {
  const buf = Buffer.from(b);
  const s = url ? buf.toString('base64url') : buf.toString('base64');
  return pad ? s : s.replace(/=+$/, '');
});

/** A canonical run, then a few edits: insert or replace a char, flip the last char's low bits, cut or pad it. */
const edited = fc.tuple(canonical, fc.array(fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 0, max: 4 })), { maxLength: 3 })).map(([s, edits]) => {
  for (const [at, pick, op] of edits) {
    const i = s.length ? at % s.length : 0;
    const c = INTRUDERS[pick % INTRUDERS.length]!;
    if (op === 0) s = s.slice(0, i) + c + s.slice(i);
    else if (op === 1) s = s.slice(0, i) + c + s.slice(i + 1);
    else if (op === 2 && s.length) s = s.slice(0, -1) + 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'[pick % 64];
    else if (op === 3) s = s.slice(0, i);
    else s += '='.repeat((pick % 3) + 1);
  }
  return s;
});

describe('parseBase64 accepts exactly the canonical base64 the definition does', () => {
  it('agrees with the character-class definition on canonical and edited runs (same bytes, alphabet, padding)', () => {
    fc.assert(
      fc.property(fc.oneof(canonical, edited), (s) => {
        fc.pre(!s.includes('\n'));
        let padLen = 0;
        while (padLen < 3 && s.charCodeAt(s.length - 1 - padLen) === 61) padLen++;
        const want = reference(s.slice(0, s.length - padLen), padLen);
        const got = parseBase64(s);
        if (want === null) expect(got).toBeNull();
        else {
          expect(got).not.toBeNull();
          expect(got!.bytes.equals(want.bytes)).toBe(true);
          expect(got!.encoding).toEqual({ kind: 'base64', alphabet: want.alphabet, pad: want.pad });
        }
      }),
      { numRuns: 5000 },
    );
  });

  it('checks a long run in every piece it re-encodes, the last included (a foreign character, mixed alphabets, trailing bits)', () => {
    // 300 KB of bytes: re-encoded in several 48 KB pieces; an edit lands in the middle of a later piece or in the last one
    const bytes = Buffer.from(Array.from({ length: 300_001 }, (_, i) => (i * 7919) & 0xff));
    for (const enc of ['base64', 'base64url'] as const) {
      const good = bytes.toString(enc).replace(/=+$/, '');
      expect(parseBase64(good)!.bytes.equals(bytes)).toBe(true);
      for (const at of [200_000, good.length - 5]) {
        for (const c of ['\u0141', ' ', enc === 'base64' ? '-' : '+']) {
          const bad = good.slice(0, at) + c + good.slice(at + 1);
          expect(parseBase64(bad), `${enc} ${JSON.stringify(c)} at ${at}`).toBeNull();
        }
      }
      // the last char's unused low bits set: Node decodes the same bytes, the run is not canonical
      const last = good.at(-1)!;
      const alphabet = enc === 'base64' ? 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/' : 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      expect(parseBase64(good.slice(0, -1) + alphabet[alphabet.indexOf(last) + 1])).toBeNull();
    }
  });

  it('rejects runs Node would decode leniently: a foreign character inside, a UTF-16 unit with a base64 low byte, mixed alphabets, inner padding', () => {
    const good = Buffer.from('spillway keeps the exact bytes!!').toString('base64');
    expect(parseBase64(good)).not.toBeNull();
    for (const bad of [good.slice(0, 8) + '\u0141' + good.slice(9), good.slice(0, 8) + ' ' + good.slice(8), good.slice(0, 8) + '-' + good.slice(9, 12) + '+' + good.slice(13), 'QQ==' + good, good.slice(0, 8) + '\u00c1' + good.slice(9)]) {
      expect(parseBase64(bad), JSON.stringify(bad.slice(0, 16))).toBeNull();
    }
  });
});
