import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { grepFile, MAX_SLICE_BYTES, PatternError, readSlice } from '../../src/compress/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-drill-'));
const write = (name: string, data: string | Buffer) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, data);
  return p;
};

describe('readSlice', () => {
  const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i + 1}: ${'é'.repeat(i % 5)} value=${i * 7}`);
  const file = write('log.txt', lines.join('\n') + '\n');

  it('by lines: 1-based inclusive, exact text', async () => {
    const s = await readSlice(file, { startLine: 5_000, endLine: 5_003 });
    expect(s.text).toBe(lines.slice(4_999, 5_003).join('\n'));
    expect(s.startLine).toBe(5_000);
    expect(s.endLine).toBe(5_003);
    expect(s.more).toBe(true);
    const last = await readSlice(file, { startLine: 9_999, endLine: 20_000 });
    expect(last.text).toBe(lines.slice(9_998).join('\n'));
    expect(last.endLine).toBe(10_000);
    expect(last.more).toBe(false);
    const past = await readSlice(file, { startLine: 20_000 });
    expect(past.text).toBe('');
  });

  it('by bytes: never splits a UTF-8 character, bounded', async () => {
    const total = fs.statSync(file).size;
    for (const offset of [0, 1, 17, 18, 19, 1_000, total - 5]) {
      const s = await readSlice(file, { offset, limit: 33 });
      expect(s.text).not.toContain('\uFFFD');
      expect(Buffer.from(s.text, 'utf8').equals(fs.readFileSync(file).subarray(s.start, s.end))).toBe(true);
      expect(s.end - s.start).toBeLessThanOrEqual(33);
    }
    const big = await readSlice(file, { offset: 0, limit: 10 * 1024 * 1024 });
    expect(big.end - big.start).toBeLessThanOrEqual(MAX_SLICE_BYTES);
    expect(big.truncated).toBe(true);
  });

  it('property: any byte window of a multibyte file decodes cleanly and matches the file', async () => {
    const text = fc.sample(fc.string({ unit: 'grapheme', minLength: 200, maxLength: 400 }), 1)[0]!;
    const f = write('uni.txt', text);
    const buf = fs.readFileSync(f);
    await fc.assert(
      fc.asyncProperty(fc.nat(buf.length), fc.nat(64), async (offset, limit) => {
        const s = await readSlice(f, { offset, limit });
        expect(Buffer.from(s.text, 'utf8').equals(buf.subarray(s.start, s.end))).toBe(true);
      }),
      { numRuns: 150 },
    );
  });

  it('a single giant line is cut at the byte bound', async () => {
    const f = write('mini.json', JSON.stringify({ data: 'x'.repeat(500_000) }));
    const s = await readSlice(f, { startLine: 1, endLine: 1 });
    expect(Buffer.byteLength(s.text)).toBeLessThanOrEqual(MAX_SLICE_BYTES);
    expect(s.truncated).toBe(true);
  });
});

describe('grepFile', () => {
  const lines = Array.from({ length: 200_000 }, (_, i) => (i === 123_456 ? 'ERROR payment declined for order 98231' : `INFO ok ${i}`));
  const file = write('big.log', lines.join('\n'));

  it('finds the line with context, case-insensitive plain text by default', async () => {
    const r = await grepFile(file, 'payment DECLINED', { context: 2 });
    expect(r.total).toBe(1);
    expect(r.linesScanned).toBe(200_000);
    expect(r.matches[0]!.line).toBe(123_457);
    expect(r.matches[0]!.text).toBe('ERROR payment declined for order 98231');
    expect(r.matches[0]!.before!.map((b) => b.text)).toEqual(['INFO ok 123454', 'INFO ok 123455']);
    expect(r.matches[0]!.after!.map((b) => b.text)).toEqual(['INFO ok 123457', 'INFO ok 123458']);
    const bytes = fs.readFileSync(file);
    expect(bytes.subarray(r.matches[0]!.offset, r.matches[0]!.offset + 5).toString()).toBe('ERROR');
  });

  it('bounds matches and says how many there were', async () => {
    const r = await grepFile(file, 'INFO ok 1', { maxMatches: 10 });
    expect(r.matches).toHaveLength(10);
    expect(r.truncated).toBe(true);
    expect(r.total).toBeGreaterThan(10_000);
  });

  it('regex is opt-in; catastrophic patterns are refused; hostile input cannot stall it', async () => {
    const r = await grepFile(file, 'order \\d{5}$', { regex: true });
    expect(r.total).toBe(1);
    for (const bad of ['(a+)+$', '(a|aa)*b', '(x*y?){2,}z', '(\\w+\\s?)+$', '(a)\\1', '(?=a)b']) {
      await expect(grepFile(file, bad, { regex: true }), bad).rejects.toBeInstanceOf(PatternError);
    }
    // polynomial backtracking that passes the shape rules is stopped by the worker's time budget
    const evil = write('evil.txt', ('a'.repeat(50_000) + '!\n').repeat(3));
    const t0 = Date.now();
    await expect(grepFile(evil, 'a*a*a*a*a*b', { regex: true, regexTimeoutMs: 500 })).rejects.toThrow(/took longer than 500 ms/);
    expect(Date.now() - t0).toBeLessThan(3_000);
  });

  it('a giant single-line file is scanned in bounded pieces', async () => {
    const f = write('oneline.json', JSON.stringify({ a: 'x'.repeat(3 * 1024 * 1024), needle: 'FINDME', b: 'y'.repeat(100) }));
    const r = await grepFile(f, 'findme');
    expect(r.total).toBe(1);
    expect(r.matches[0]!.text.length).toBeLessThan(1_200);
    expect(r.matches[0]!.text).toContain('FINDME');
  });
});
