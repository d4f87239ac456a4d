/**
 * A payload's head and tail, read through a SessionSource: what full-text search indexes, and
 * what the inspector previews. Never the middle of a big file.
 */
import zlib from 'node:zlib';
import { isBinaryBytes } from '../pipeline/index.js';
import type { SessionSource } from './source.js';
import { FTS_HEAD_BYTES, FTS_TAIL_BYTES, hasBase64Run } from './text.js';

export interface FileWindow {
  head: string;
  tail: string;
  /** The whole file when it fit in head + tail. */
  whole: string | null;
  size: number;
  mtimeMs: number;
  binary: boolean;
  /**
   * False when no base64 run long enough to be an asset can be in head or tail (checked on the
   * bytes, before decoding): the text needs no base64 stripping, the common case by far.
   */
  mayHoldBase64: boolean;
}

/**
 * Buffers a sequential reader (one scan) reuses across windows: a scan reads thousands, and one
 * allocation each mostly feeds the garbage collector. Never shared between concurrent readers.
 */
export class ReadBuffers {
  private head = Buffer.allocUnsafe(FTS_HEAD_BYTES + FTS_TAIL_BYTES);
  private tail = Buffer.allocUnsafe(FTS_TAIL_BYTES);
  headOf(bytes: number): Buffer {
    if (this.head.length < bytes) this.head = Buffer.allocUnsafe(bytes);
    return this.head;
  }
  tailOf(bytes: number): Buffer {
    if (this.tail.length < bytes) this.tail = Buffer.allocUnsafe(bytes);
    return this.tail;
  }
}

/**
 * A unit's content fingerprint, built from its pieces: each buffer as its length and CRC-32,
 * strings kept as they are. It is compared only when a unit's size or mtime changed, and only
 * tells "changed" from "same": a CRC-32 catches every change within 32 consecutive bits (any
 * edited number or word) and misses a larger rewrite of the same length one time in 2^32, at
 * half the cost of SHA-1 (which was the largest cost of listing a sidecar after parsing it).
 */
export class UnitHash {
  private readonly parts: string[] = [];
  update(data: Buffer | string): this {
    this.parts.push(typeof data === 'string' ? data : `${data.length}.${zlib.crc32(data)}`);
    return this;
  }
  digest(): string {
    return this.parts.join('|');
  }
}

export interface WindowOptions {
  headBytes?: number;
  tailBytes?: number;
  /** Fed every byte read (and the size). */
  hash?: UnitHash;
  buffers?: ReadBuffers;
}

/** Read the head and tail of a file (the whole file when it fits in both). */
export async function readWindow(source: SessionSource, file: string, o: WindowOptions = {}): Promise<FileWindow> {
  const headBytes = o.headBytes ?? FTS_HEAD_BYTES;
  const tailBytes = o.tailBytes ?? FTS_TAIL_BYTES;
  const first = await source.readRange(file, 0, headBytes + tailBytes, o.buffers?.headOf(headBytes + tailBytes));
  const size = first.size;
  o.hash?.update(String(size));
  if (size <= headBytes + tailBytes) {
    const b = first.bytes;
    o.hash?.update(b);
    const binary = isBinaryBytes(b);
    const whole = binary ? '' : b.toString('utf8');
    return { head: whole, tail: '', whole, size, mtimeMs: first.mtimeMs, binary, mayHoldBase64: !binary && hasBase64Run(b) };
  }
  const head = first.bytes.subarray(0, headBytes);
  const tail = tailBytes > 0 ? (await source.readRange(file, size - tailBytes, tailBytes, o.buffers?.tailOf(tailBytes))).bytes : Buffer.alloc(0);
  o.hash?.update(head).update(tail);
  const binary = isBinaryBytes(head, { partial: true });
  return {
    head: binary ? '' : decodeSnapped(head, 'end'),
    tail: binary ? '' : decodeSnapped(tail, 'start'),
    whole: null,
    size,
    mtimeMs: first.mtimeMs,
    binary,
    mayHoldBase64: !binary && (hasBase64Run(head) || hasBase64Run(tail)),
  };
}

/** Decode UTF-8 without a broken character at the cut side. */
function decodeSnapped(buf: Buffer, cut: 'start' | 'end'): string {
  let b = buf;
  if (cut === 'start') {
    let i = 0;
    while (i < 4 && i < b.length && (b[i]! & 0xc0) === 0x80) i++;
    b = b.subarray(i);
  } else {
    let i = b.length;
    let back = 0;
    while (back < 4 && i > 0 && (b[i - 1]! & 0xc0) === 0x80) {
      i--;
      back++;
    }
    // i-1 is now the lead byte (or ASCII); drop it if its sequence is incomplete.
    if (i > 0 && b[i - 1]! >= 0xc0) {
      const lead = b[i - 1]!;
      const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
      if (back + 1 < need) b = b.subarray(0, i - 1);
    }
  }
  return b.toString('utf8');
}
