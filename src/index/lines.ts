import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Yielder } from './yielder.js';

/** Read size for transcripts. */
const CHUNK_BYTES = 1024 * 1024;
/**
 * A JSONL line longer than this is skipped (and reported), not buffered: a transcript line
 * holding a 500 KB pasted image is normal, a 256 MB one is not something to parse.
 */
export const MAX_LINE_BYTES = 256 * 1024 * 1024;

export interface LineScan {
  hash: string;
  lines: number;
  bytes: number;
  skippedLongLines: number;
}

/**
 * Stream a file line by line with each line's byte offset, hashing it on the way. Lines are
 * handed over as Buffers so callers can skip uninteresting huge lines without decoding them.
 */
export async function forEachLine(
  file: string,
  yielder: Yielder,
  /** May return a promise (an import that counts a payload exactly): the next line waits for it. */
  onLine: (line: Buffer, index: number, offset: number) => void | Promise<void>,
): Promise<LineScan> {
  const fd = fs.openSync(file, 'r');
  const hash = crypto.createHash('sha256');
  let index = 0;
  let pos = 0;
  let lineStart = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let skipping = false;
  let skippedLongLines = 0;
  try {
    const buf = Buffer.alloc(CHUNK_BYTES);
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, pos);
      if (n === 0) break;
      const chunk = buf.subarray(0, n);
      hash.update(chunk);
      let from = 0;
      for (;;) {
        const nl = chunk.indexOf(10, from);
        if (nl === -1) break;
        if (!skipping) {
          const part = chunk.subarray(from, nl);
          const line = pending.length ? Buffer.concat([...pending, part]) : part;
          if (line.length > 0) {
            const r = onLine(line, index, lineStart);
            if (r) await r;
          }
        }
        skipping = false;
        pending = [];
        pendingBytes = 0;
        index++;
        lineStart = pos + nl + 1;
        from = nl + 1;
      }
      if (from < n && !skipping) {
        pendingBytes += n - from;
        if (pendingBytes > MAX_LINE_BYTES) {
          skipping = true;
          skippedLongLines++;
          pending = [];
          pendingBytes = 0;
        } else {
          // Copy: `buf` is reused for the next chunk.
          pending.push(Buffer.from(chunk.subarray(from)));
        }
      }
      pos += n;
      await yielder.maybe();
    }
    if (!skipping && pending.length) {
      const line = Buffer.concat(pending);
      if (line.length > 0) {
        const r = onLine(line, index, lineStart);
        if (r) await r;
      }
      index++;
    }
  } finally {
    fs.closeSync(fd);
  }
  return { hash: hash.digest('hex'), lines: index, bytes: pos, skippedLongLines };
}

/** Read `length` bytes at `offset` (one transcript line, to re-extract a payload's text). */
export async function readRange(file: string, offset: number, length: number): Promise<Buffer> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const buf = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const { bytesRead } = await fh.read(buf, got, length - got, offset + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return buf.subarray(0, got);
  } finally {
    await fh.close();
  }
}
