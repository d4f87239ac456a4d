import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fileTmpDir } from '../helpers/file-tmp.js';
import {
  LINE_CHECKPOINT_EVERY,
  MAX_HEX_WINDOW_BYTES,
  PayloadReader,
  SNIFF_BYTES,
  bufferSource,
  hexDump,
  snapBack,
} from '../../src/service/reader.js';
import { MAX_READ_WINDOW_BYTES } from '../../src/service/contract.js';

const tmp = fileTmpDir('spillway-reader-');

function write(name: string, data: string | Buffer): string {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, data);
  return p;
}

/** Lines as an editor shows them: split on \n, no phantom empty line after a final newline. */
function linesOf(text: string): string[] {
  if (text === '') return [];
  const parts = text.split('\n');
  if (text.endsWith('\n')) parts.pop();
  return parts;
}

describe('PayloadReader byte windows', () => {
  it('snaps both edges back to UTF-8 character starts, so consecutive windows lose and repeat nothing', async () => {
    const reader = new PayloadReader();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', maxLength: 300 }),
        fc.array(fc.nat({ max: 2000 }), { maxLength: 8 }),
        async (text, cutsRaw) => {
          const buf = Buffer.from(text, 'utf8');
          const src = bufferSource(`p${Math.random()}`, buf);
          const cuts = [...new Set(cutsRaw.map((c) => c % (buf.length + 1)))].sort((a, b) => a - b);
          const bounds = [0, ...cuts, buf.length];
          let joined = '';
          let pos = 0;
          for (let k = 1; k < bounds.length; k++) {
            const w = await reader.read(async () => src, { start: pos, end: bounds[k]! }, { binary: false });
            expect(w.start).toBe(pos);
            expect(w.end).toBeLessThanOrEqual(Math.max(bounds[k]!, pos));
            // Whole characters only: the text re-encodes to exactly the bytes of the window.
            expect(Buffer.from(w.text, 'utf8').equals(buf.subarray(w.start, w.end))).toBe(true);
            joined += w.text;
            pos = w.end;
          }
          const rest = await reader.read(async () => src, { start: pos, end: buf.length }, { binary: false });
          joined += rest.text;
          expect(joined).toBe(text);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a window that starts inside a character starts at that character', async () => {
    const p = write('euro.txt', 'a€b'); // € is 3 bytes at offsets 1..3
    const w = await new PayloadReader().readFile(p, { start: 2, end: 5 });
    expect(w.start).toBe(1);
    expect(w.text).toBe('€b');
  });

  it('caps a byte window at MAX_READ_WINDOW_BYTES and reports the real end', async () => {
    const p = write('big.txt', 'x'.repeat(MAX_READ_WINDOW_BYTES + 1000));
    const w = await new PayloadReader().readFile(p, { start: 10, end: MAX_READ_WINDOW_BYTES + 900 });
    expect(w.start).toBe(10);
    expect(w.end).toBe(10 + MAX_READ_WINDOW_BYTES);
    expect(w.text.length).toBe(MAX_READ_WINDOW_BYTES);
    expect(w.totalBytes).toBe(MAX_READ_WINDOW_BYTES + 1000);
  });

  it('a start past the end gives an empty window at EOF', async () => {
    const p = write('small.txt', 'hello\n');
    const w = await new PayloadReader().readFile(p, { start: 1000, end: 2000 });
    expect(w).toMatchObject({ text: '', start: 6, end: 6, totalBytes: 6 });
  });
});

describe('PayloadReader line windows', () => {
  it('returns exactly the requested lines, across checkpoints, with or without a final newline', async () => {
    const reader = new PayloadReader();
    const n = LINE_CHECKPOINT_EVERY * 3 + 17;
    const lines = Array.from({ length: n }, (_, i) => `line ${i} ${'é'.repeat(i % 7)}`);
    for (const trailing of ['\n', '']) {
      const text = lines.join('\n') + trailing;
      const p = write(`lines${trailing ? 'nl' : ''}.txt`, text);
      for (const [startLine, lineCount] of [
        [0, 5],
        [LINE_CHECKPOINT_EVERY - 2, 4],
        [LINE_CHECKPOINT_EVERY * 2 + 3, 1],
        [n - 3, 10],
        [n + 5, 3],
      ] as const) {
        const w = await reader.readFile(p, { startLine, lineCount });
        const expected = lines.slice(startLine, startLine + lineCount);
        expect(w.lineCount).toBe(expected.length);
        expect(linesOf(w.text)).toEqual(expected);
        if (expected.length > 0) expect(Buffer.from(text).subarray(w.start, w.end).toString()).toBe(w.text);
      }
      expect(await reader.countLines(async () => bufferSource('x' + trailing, Buffer.from(text)))).toBe(n);
    }
  });

  it('property: any line window equals the same slice of split lines', async () => {
    const reader = new PayloadReader();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ maxLength: 12 }).map((s) => s.replace(/\n/g, '')), { maxLength: 60 }),
        fc.boolean(),
        fc.nat({ max: 70 }),
        fc.integer({ min: 1, max: 70 }),
        async (lines, trailing, startLine, lineCount) => {
          const text = lines.join('\n') + (trailing && lines.length ? '\n' : '');
          const src = bufferSource(`q${Math.random()}`, Buffer.from(text));
          const w = await reader.read(async () => src, { startLine, lineCount }, { binary: false });
          expect(linesOf(w.text)).toEqual(linesOf(text).slice(startLine, startLine + lineCount));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('answers the first window of a 100 MB file before counting its lines, then gets the count exact', async () => {
    const line = 'x'.repeat(99) + '\n';
    const p = path.join(tmp, 'hundred.log');
    const fd = fs.openSync(p, 'w');
    const block = Buffer.from(line.repeat(10_000)); // 1 MB
    for (let i = 0; i < 100; i++) fs.writeSync(fd, block);
    fs.closeSync(fd);
    const reader = new PayloadReader();
    const first = await reader.readFile(p, { startLine: 0, lineCount: 50 });
    expect(first.lineCount).toBe(50);
    expect(first.totalBytes).toBe(100 * block.length);
    // The first answer did not wait for a full scan.
    expect(first.totalLinesExact).toBe(false);
    expect(first.totalLines).toBeGreaterThan(50);
    expect(await reader.countLines(async () => (await import('../../src/service/reader.js')).fileSource(p))).toBe(1_000_000);
    const again = await reader.readFile(p, { startLine: 999_990, lineCount: 50 });
    expect(again.totalLinesExact).toBe(true);
    expect(again.totalLines).toBe(1_000_000);
    expect(again.lineCount).toBe(10);
    expect(again.start).toBe(999_990 * 100);
  });

  it('a single line longer than the byte cap comes back cut at a character boundary', async () => {
    const p = write('oneline.json', '€'.repeat(MAX_READ_WINDOW_BYTES / 3 + 10));
    const w = await new PayloadReader().readFile(p, { startLine: 0, lineCount: 10 });
    expect(w.lineCount).toBe(1);
    expect(w.end).toBeLessThanOrEqual(MAX_READ_WINDOW_BYTES);
    expect(w.end % 3).toBe(0);
    expect(w.text).not.toContain('\uFFFD');
  });
});

describe('binary payloads', () => {
  it('detects binary and returns a hex dump window, capped', async () => {
    const bytes = Buffer.alloc(MAX_HEX_WINDOW_BYTES * 2);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7) & 0xff;
    const p = write('blob.bin', bytes);
    const w = await new PayloadReader().readFile(p, { start: 16, end: bytes.length });
    expect(w.binary).toBe(true);
    expect(w.text).toBe('');
    expect(w.end - w.start).toBe(MAX_HEX_WINDOW_BYTES);
    expect(w.hex!.split('\n')[0]).toBe(hexDump(bytes.subarray(16, 32), 16));
    // Line windows of a binary file fall back to bytes.
    const l = await new PayloadReader().readFile(p, { startLine: 0, lineCount: 3 });
    expect(l.binary).toBe(true);
    expect(l.hex).toBeDefined();
  });

  it('hexDump shows offsets, bytes and printable ASCII', () => {
    expect(hexDump(Buffer.from([0x41, 0x42, 0x00, 0xff]), 0x20)).toBe(
      '00000020  41 42 00 ff                                       |AB..|',
    );
  });

  it('isBinary (the pipeline isBinaryBytes on the head): text in any script is text; NUL or invalid UTF-8 is binary', async () => {
    const reader = new PayloadReader();
    const isBin = (name: string, b: Buffer) => reader.isBinary(bufferSource(name, b));
    expect(await isBin('cjk', Buffer.from('{"a": "日本語 текст 🎉"}\n'))).toBe(false);
    expect(await isBin('png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]))).toBe(true);
    expect(await isBin('high', Buffer.from(Array.from({ length: 100 }, (_, i) => 0x80 + (i % 60))))).toBe(true);
    // The sniff window cuts a 3-byte character in half: still text.
    const cut = Buffer.from('€'.repeat(SNIFF_BYTES));
    expect(cut.length % 3).toBe(0);
    expect(SNIFF_BYTES % 3).not.toBe(0);
    expect(await isBin('cut', cut)).toBe(false);
  });

  it('snapBack never moves more than 3 bytes', () => {
    expect(snapBack(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80]), 4)).toBe(1);
  });
});
