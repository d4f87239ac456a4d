import crypto from 'node:crypto';
import type { SessionSource } from './source.js';
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
  source: SessionSource,
  file: string,
  yielder: Yielder,
  /** May return a promise (an import that counts a payload exactly): the next line waits for it. */
  onLine: (line: Buffer, index: number, offset: number) => void | Promise<void>,
): Promise<LineScan> {
  const hash = crypto.createHash('sha256');
  let index = 0;
  let pos = 0;
  let lineStart = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let skipping = false;
  let skippedLongLines = 0;
  const buf = Buffer.alloc(CHUNK_BYTES);
  for (;;) {
    const chunk = (await source.readRange(file, pos, CHUNK_BYTES, buf)).bytes;
    const n = chunk.length;
    if (n === 0) break;
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
  return { hash: hash.digest('hex'), lines: index, bytes: pos, skippedLongLines };
}

/** A read longer than this is made in pieces of this size, with a turn for the event loop between. */
const READ_PIECE_BYTES = 4 * 1024 * 1024;

/**
 * Read `length` bytes at `offset` (one transcript line, to re-extract a payload's text). The local
 * source reads synchronously: a 100 MB line read at once held the process for seconds on a busy
 * machine, so a long range is read in pieces into one buffer, giving the event loop a turn between.
 */
export async function readRange(source: SessionSource, file: string, offset: number, length: number, yielder?: Yielder): Promise<Buffer> {
  if (length <= READ_PIECE_BYTES || !yielder) return (await source.readRange(file, offset, length)).bytes;
  const out = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const n = Math.min(READ_PIECE_BYTES, length - got);
    // Straight into `out` where the source reads into a given buffer (the local one does); else copied.
    const piece = (await source.readRange(file, offset + got, n, out.subarray(got, got + n))).bytes;
    if (piece.length === 0) break;
    if (piece.buffer !== out.buffer || piece.byteOffset !== out.byteOffset + got) piece.copy(out, got);
    got += piece.length;
    await yielder.maybe();
  }
  return out.subarray(0, got);
}
