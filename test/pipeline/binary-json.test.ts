import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { guardLargeResult, restorePayload } from '../../src/pipeline/index.js';
import { binaryStringForm } from '../../src/pipeline/detect.js';
import { randomBytes, tmpSession } from './helpers.js';

/**
 * Binary inside JSON values (#29): an MCP result whose content block or structuredContent holds a
 * file's bytes as a JSON string (latin-1 read, or a lossy UTF-8 decode: NULs, controls, U+FFFD). The
 * string is cut out to an asset; the JSON keeps its shape with a reference where it stood; the
 * payload restores byte-exact; nothing binary reaches the model, which is what the guard's message is.
 */

const elf = () => fs.readFileSync(process.execPath).subarray(0, 4000);
// What the model must never read: NULs and controls text never has, or a run of U+FFFD.
const BINARY_IN_MESSAGE_RE = /[\x00-\x06\x0e-\x1a\x1c-\x1f\x7f]|\\u000[0-6]|(?:\uFFFD|\\ufffd){8}/i;

/** A spilled MCP result's linked JSON (assets replaced by references). */
const linkedOf = (p: string) => JSON.parse(fs.readFileSync(p, 'utf8')) as Record<string, any>;

describe('binary as a JSON string in an MCP result', () => {
  it('a text block of latin-1 bytes and structuredContent of a lossy decode: both cut out, shape kept, restored byte-exact', async () => {
    const session = tmpSession();
    const bytes = elf();
    const result = {
      content: [{ type: 'text', text: bytes.toString('latin1') }],
      structuredContent: { path: '/usr/bin/x', content: bytes.toString('utf8'), size: bytes.length },
    };
    const r = await guardLargeResult(result, { sessionPath: session, toolName: 'mcp__fs__read_text_file', limitTokens: 100_000 });
    expect(r, 'a result of binary strings must not pass, however small').not.toBeNull();
    expect(r!.message).not.toMatch(BINARY_IN_MESSAGE_RE);
    expect(r!.assets.map((a) => a.source)).toEqual(['binary-string', 'binary-string']);
    // The latin-1 string is the bytes exactly; the decode's asset is the UTF-8 that was received.
    expect(fs.readFileSync(r!.assets[0]!.path).equals(bytes)).toBe(true);
    expect(r!.assets[0]!.mimeType).toBe('application/x-elf');
    expect(fs.readFileSync(r!.assets[1]!.path).equals(Buffer.from(bytes.toString('utf8'), 'utf8'))).toBe(true);
    const linked = linkedOf(r!.linkedPath!);
    expect(linked.content[0].type).toBe('text');
    expect(linked.content[0].text.$spillwayAsset.sha256).toBe(r!.assets[0]!.sha256);
    expect(linked.structuredContent).toMatchObject({ path: '/usr/bin/x', size: bytes.length, content: { $spillwayAsset: { sha256: r!.assets[1]!.sha256 } } });
    expect((await restorePayload(r!.payloadPath!)).toString('utf8')).toBe(JSON.stringify(result));
  });

  it('a JSON text (what Claude Code gives its hook for an MCP result) with a string of escaped NULs', async () => {
    const session = tmpSession();
    const text = JSON.stringify({ content: randomBytes(2000, 7).toString('latin1') });
    expect(text).toContain('\\u0000');
    const r = await guardLargeResult(text, { sessionPath: session, toolName: 'mcp__fs__read_text_file', limitTokens: 100_000 });
    expect(r).not.toBeNull();
    expect(r!.message).not.toMatch(BINARY_IN_MESSAGE_RE);
    expect(r!.assets).toHaveLength(1);
    expect(fs.readFileSync(r!.assets[0]!.path).equals(randomBytes(2000, 7))).toBe(true);
    expect((await restorePayload(r!.payloadPath!)).toString('utf8')).toBe(text);
  });

  it('a literal spelled other than JSON.stringify spells it (escaped é, escaped /): still cut, still restored exactly', async () => {
    const session = tmpSession();
    const raw = `{"a":"\\u00e9\\/${'\\u0000'.repeat(40)}x"}`;
    const r = await guardLargeResult(raw, { sessionPath: session, toolName: 'mcp__x__y', limitTokens: 100_000 });
    expect(r).not.toBeNull();
    expect(r!.message).not.toMatch(BINARY_IN_MESSAGE_RE);
    expect((await restorePayload(r!.payloadPath!)).toString('utf8')).toBe(raw);
  });

  it('short control strings and ANSI-coloured text in JSON still pass', async () => {
    const session = tmpSession();
    const v = { sep: '\u0000', log: '\x1b[31mred\x1b[0m line\n'.repeat(50), ok: 'fine' };
    expect(await guardLargeResult(v, { sessionPath: session, limitTokens: 100_000 })).toBeNull();
    expect(await guardLargeResult(JSON.stringify(v), { sessionPath: session, limitTokens: 100_000 })).toBeNull();
  });

  // Hostile values: binary at any depth of any JSON, as a latin-1 string or a lossy UTF-8 decode,
  // beside ordinary values, handed over as a value or as its JSON text, under any limit.
  const binaryArb = fc
    .tuple(fc.uint8Array({ minLength: 40, maxLength: 3000 }), fc.nat(), fc.boolean())
    .map(([b, at, latin1]) => {
      const out = Buffer.from(b);
      out[at % out.length] = 0;
      return latin1 ? out.toString('latin1') : out.toString('utf8');
    });
  const jsonArb = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.string(),
      fc.integer(),
      fc.constant(null),
      binaryArb,
      fc.array(tie('node'), { maxLength: 4 }),
      fc.dictionary(fc.string({ maxLength: 8 }), tie('node'), { maxKeys: 4 }),
    ),
  })).node;
  const hasBinary = (v: unknown): boolean =>
    typeof v === 'string' ? v.length >= 32 && binaryStringForm(v) !== undefined : Array.isArray(v) ? v.some(hasBinary) : v !== null && typeof v === 'object' ? Object.values(v).some(hasBinary) : false;

  it('property: never throws, never lets a binary string through, restores byte-exact, and claims only what it saved', async () => {
    const session = tmpSession();
    await fc.assert(
      fc.asyncProperty(jsonArb, fc.boolean(), fc.integer({ min: 1_000, max: 200_000 }), async (value, asText, limitTokens) => {
        const input = asText ? JSON.stringify(value) : { content: [{ type: 'text', text: 'x' }], structuredContent: value };
        const r = await guardLargeResult(input, { sessionPath: session, toolName: 'mcp__s__t', limitTokens });
        if (!hasBinary(value)) return;
        expect(r, 'binary in the value must not pass').not.toBeNull();
        expect(r!.message).not.toMatch(BINARY_IN_MESSAGE_RE);
        const whole = typeof input === 'string' ? input : JSON.stringify(input);
        expect((await restorePayload(r!.payloadPath!)).toString('utf8')).toBe(whole);
        for (const a of r!.assets) expect(fs.statSync(a.path).size).toBe(a.bytes);
      }),
      { numRuns: 80 },
    );
  });
});
