import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { guardLargeResult, readMeta, restorePayload } from '../../src/pipeline/index.js';
import { binaryStringForm } from '../../src/pipeline/detect.js';
import { fmtBytes } from '../../src/pipeline/text.js';
import { randomBytes, tmpSession } from './helpers.js';

/**
 * Binary a client already decoded as UTF-8 before the guard saw it (Claude Code's Bash reads a
 * command's output as UTF-8: `head -c 3000 /usr/bin/ls` reaches the hook as a string with NULs and
 * U+FFFD). The rule is detect.ts's binaryStringForm, documented in docs/guard.md.
 */

/** The head of an executable as a client that decodes output as UTF-8 hands it on. */
const elfHead = () => fs.readFileSync(process.execPath).subarray(0, 3000).toString('utf8');

const lossy = (b: Uint8Array) => Buffer.from(b).toString('utf8');

// Bytes as binary files have them: a NUL somewhere, or dense control bytes, or mostly high bytes.
const binaryBytesArb = fc.oneof(
  fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 3000 }), fc.nat()).map(([b, at]) => {
    const out = Buffer.from(b);
    out[at % out.length] = 0;
    return out;
  }),
  fc.integer({ min: 16, max: 5000 }).chain((n) => fc.integer({ min: 1, max: 1 << 30 }).map((seed) => randomBytes(n, seed))),
  fc.uint8Array({ minLength: 16, maxLength: 2000 }).map((b) => Buffer.from(b.map((x) => 0x80 | x))),
);

// Text as tools print it: any Unicode, tabs and newlines, ANSI colours, backspaces, BEL, and a few
// scattered U+FFFD (a Latin-1 byte in a UTF-8 log). Nothing of it is binary.
const ordinaryArb = fc
  .array(
    fc.oneof(
      { weight: 8, arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }) },
      { weight: 2, arbitrary: fc.constantFrom('\t', '\n', '\r\n', '\x1b[31m', '\x1b[0m', '\x1b[1;32m', 'a\bb', '\x07', '\x1b]0;title\x07') },
      { weight: 1, arbitrary: fc.constant('caf\uFFFD ') },
    ),
    { maxLength: 60 },
  )
  .map((parts) => parts.join(''))
  // the rule's bar: fewer than 8 U+FFFD, or at most 10% of the text
  .filter((s) => (s.match(/\uFFFD/g)?.length ?? 0) <= Math.max(7, s.length / 10) && !/[\x00-\x06\x0e-\x1a\x1c-\x1f\x7f]/.test(s));

describe('binary a client already decoded (a string with NULs, control characters, runs of U+FFFD)', () => {
  it('the rule: NUL, dense controls or many U+FFFD make a decoded string binary; ordinary text stays text', () => {
    expect(binaryStringForm(elfHead())).toBe('decoded');
    expect(binaryStringForm('\x7fELF\x02\x01\x01\0\0\0')).toBe('latin1');
    expect(binaryStringForm(lossy(Buffer.from([0xff, 0xfe, 0xfd, 0xfa, 0xc0, 0xc1, 0xf5, 0xf8, 0x80, 0x81]).subarray(0, 10)))).toBe('decoded');
    expect(binaryStringForm('one bad byte: caf\uFFFD, fine')).toBeUndefined();
    expect(binaryStringForm('\x1b[31mred\x1b[0m\tcol\ttab\r\n')).toBeUndefined();
    expect(binaryStringForm('naïve café – ✓ 日本語 🎉')).toBeUndefined();
    fc.assert(fc.property(ordinaryArb, (s) => binaryStringForm(s) === undefined));
    fc.assert(fc.property(binaryBytesArb, (b) => binaryStringForm(lossy(b)) !== undefined));
  });

  it('property: the guard never throws, never passes such a string, and saves exactly what it received (no more than it says)', async () => {
    const session = tmpSession();
    await fc.assert(
      fc.asyncProperty(binaryBytesArb, fc.integer({ min: 1_000, max: 200_000 }), async (bytes, limitTokens) => {
        const s = lossy(bytes);
        const r = await guardLargeResult(s, { sessionPath: session, toolName: 'Bash', limitTokens });
        expect(r, 'a decoded binary string must never pass').not.toBeNull();
        expect(r!.action).toBe('spill');
        expect(r!.message).not.toMatch(/[\x00-\x06\x0e-\x1a\x1c-\x1f\x7f]/);
        // A string of units ≤ 0xFF is taken as bytes carried in latin1 (as Node's 'binary' reads give);
        // with a unit above, it is a decode: what was received is its UTF-8.
        const form = binaryStringForm(s);
        const received = Buffer.from(s, form === 'latin1' ? 'latin1' : 'utf8');
        // The asset is the text as received, byte for byte; the message states that size, no other.
        expect(r!.assets).toHaveLength(1);
        expect(r!.assets[0]!.bytes).toBe(received.length);
        expect(fs.readFileSync(r!.assets[0]!.path).equals(received)).toBe(true);
        expect((await restorePayload(r!.payloadPath!)).equals(received)).toBe(true);
        expect(r!.message).toContain(fmtBytes(received.length));
        const meta = await readMeta(r!.metaPath!);
        expect(meta.bytes).toBe(received.length);
        expect(meta.origin).toBe(form === 'latin1' ? 'latin1-string' : 'string');
        const wasLossy = s.includes('\uFFFD');
        expect(r!.message.includes('decoded these bytes as UTF-8, lossily')).toBe(wasLossy);
        expect((meta.errors ?? []).some((e) => e.includes('lossily'))).toBe(wasLossy);
      }),
      { numRuns: 60 },
    );
  });

  it('property: ordinary text under the limit still passes', async () => {
    const session = tmpSession();
    await fc.assert(
      fc.asyncProperty(ordinaryArb, async (s) => {
        expect(await guardLargeResult(s, { sessionPath: session, limitTokens: 100_000 })).toBeNull();
      }),
      { numRuns: 100 },
    );
  });

  it('the head of an executable: an ELF asset, with the lossy decode said in the message', async () => {
    const session = tmpSession();
    const s = elfHead();
    const r = (await guardLargeResult(s, { sessionPath: session, toolName: 'Bash' }))!;
    expect(r.assets[0]!.mimeType).toBe('application/x-elf');
    expect(r.message).toMatch(/binary data \(application\/x-elf/);
    expect(r.message).toContain('The client had already decoded these bytes as UTF-8, lossily');
    expect(r.message).toContain('rebuilds exactly the text as received');
  });
});
