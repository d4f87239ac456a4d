import type fs from 'node:fs';
import { isBinaryBytes } from '../pipeline/detect.js';
import { openUntrusted, type UntrustedOpenOptions } from '../pipeline/layout.js';
import { MAX_READ_WINDOW_BYTES, MAX_READ_WINDOW_LINES, type ReadPayloadResponse } from './contract.js';

/**
 * Windowed reads of payload files: never the whole file, always UTF-8 safe, hex for binary,
 * and a sparse line index built lazily (only as far as asked) and cached per file version.
 * The first window of a 100 MB file costs what a 1 KB one does: a stat, an 8 KB sniff and
 * one read of the window.
 */

/** Default byte window when the caller gives only `start`. */
export const DEFAULT_READ_WINDOW_BYTES = 256 * 1024;
/** Default line window. */
export const DEFAULT_READ_WINDOW_LINES = 1_000;
/** Binary windows are hex-dumped (about 4.2 chars per byte), so they are kept smaller. */
export const MAX_HEX_WINDOW_BYTES = 256 * 1024;
/** Bytes read from the head of a file to decide text or binary. */
export const SNIFF_BYTES = 8 * 1024;
/** One line-index checkpoint every this many lines. 100 MB of 80-char lines → ~1,300 checkpoints. */
export const LINE_CHECKPOINT_EVERY = 1_000;
/** Chunk read while scanning for newlines; one chunk is scanned per event-loop turn (a few ms). */
export const LINE_SCAN_CHUNK_BYTES = 1024 * 1024;
/** Line indexes kept in memory (LRU). */
export const MAX_CACHED_LINE_INDEXES = 32;

const NL = 0x0a;

/**
 * Something windows can be read from: a file (opened per read, so nothing is held open), or
 * bytes already in memory (an imported tool result cut out of a transcript line).
 */
export interface ByteSource {
  /** Identifies this version of the content: cache key of its line index. */
  readonly key: string;
  readonly size: number;
  read(start: number, end: number): Promise<Buffer>;
  close(): Promise<void>;
}

/**
 * Open a file as a ByteSource (one handle, closed by `close`). `p` is a real path (confined by the
 * caller): opened the one safe way (safe-open.ts), so a FIFO never blocks and a link or a hard link
 * planted since the check is refused.
 */
export async function fileSource(p: string, o: UntrustedOpenOptions = { root: '/' }): Promise<ByteSource> {
  const { handle: fh, stat: st } = await openUntrusted(p, o);
  try {
    return {
      key: `file\0${p}\0${st.size}\0${st.mtimeMs}`,
      size: st.size,
      read: (start, end) => readRange(fh, start, end),
      close: () => fh.close(),
    };
  } catch (err) {
    await fh.close();
    throw err;
  }
}

/** In-memory bytes as a ByteSource; `key` must change when the bytes do. */
export function bufferSource(key: string, buf: Buffer): ByteSource {
  return {
    key: `mem\0${key}\0${buf.length}`,
    size: buf.length,
    read: async (start, end) => buf.subarray(Math.max(0, start), Math.min(buf.length, end)),
    close: async () => undefined,
  };
}

async function readRange(fh: fs.promises.FileHandle, start: number, end: number): Promise<Buffer> {
  const len = Math.max(0, end - start);
  const buf = Buffer.allocUnsafe(len);
  let off = 0;
  while (off < len) {
    const { bytesRead } = await fh.read(buf, off, len - off, start + off);
    if (bytesRead === 0) break;
    off += bytesRead;
  }
  return off === len ? buf : buf.subarray(0, off);
}

/**
 * Move `pos` back to the start of the UTF-8 character it falls in (at most 3 bytes), so a
 * window never starts or ends inside a character. Consecutive windows requested at any
 * offsets therefore neither lose nor repeat a byte.
 */
export function snapBack(buf: Uint8Array, pos: number): number {
  let p = pos;
  for (let k = 0; k < 3 && p > 0 && p < buf.length && (buf[p]! & 0xc0) === 0x80; k++) p--;
  return p;
}

const HEX_DIGITS = Buffer.from('0123456789abcdef');
/** `00000010  41 42 …  |AB…|`: 8 + 2 + 16*3 + 1 + 1 + 1 + 16 + 1 chars, then `\n`. */
const HEX_LINE_CHARS = 78;

/**
 * Classic 16-bytes-a-line hex dump with offsets and an ASCII column. Written straight into a
 * byte buffer: a 256 KiB window dumps in a few milliseconds.
 */
export function hexDump(buf: Uint8Array, baseOffset = 0): string {
  const rows = Math.ceil(buf.length / 16);
  if (rows === 0) return '';
  const out = Buffer.alloc(rows * (HEX_LINE_CHARS + 1), 0x20);
  let o = 0;
  for (let i = 0; i < buf.length; i += 16) {
    const off = baseOffset + i;
    for (let k = 7; k >= 0; k--) out[o + 7 - k] = HEX_DIGITS[Math.floor(off / 16 ** k) % 16]!;
    const n = Math.min(16, buf.length - i);
    let h = o + 10;
    // The ASCII column starts after the 49-char hex area (16 × 3 + the middle gap) and ` |`.
    const a = o + 10 + 49 + 2;
    out[a - 1] = 0x7c;
    for (let j = 0; j < n; j++) {
      const b = buf[i + j]!;
      out[h] = HEX_DIGITS[b >> 4]!;
      out[h + 1] = HEX_DIGITS[b & 15]!;
      h += j === 7 ? 4 : 3;
      out[a + j] = b >= 0x20 && b < 0x7f ? b : 0x2e;
    }
    out[a + n] = 0x7c;
    const end = a + n + 1;
    if (i + 16 < buf.length) {
      out[end] = 0x0a;
      o = end + 1;
    } else o = end;
  }
  return out.toString('latin1', 0, o);
}

/** Opens a fresh ByteSource for the same content (the background scan outlives one request). */
export type SourceOpener = () => Promise<ByteSource>;

/**
 * Sparse line index of one content version: the byte offset of every LINE_CHECKPOINT_EVERY-th
 * line start, filled only as far as a request needs, then completed in the background in
 * chunks that each take about a millisecond.
 */
class LineIndex {
  /** checkpoints[k] = byte offset where line k*LINE_CHECKPOINT_EVERY starts. */
  readonly checkpoints: number[] = [0];
  /** Bytes scanned so far, and newlines seen in them. */
  scannedBytes = 0;
  scannedLines = 0;
  complete = false;
  /** Last byte of the content (a final line without newline still counts). */
  lastByte: number | undefined;
  private scanning: Promise<void> | null = null;

  constructor(
    readonly size: number,
    private readonly open: SourceOpener,
  ) {
    if (size === 0) this.complete = true;
  }

  /** Exact when complete: newlines, plus one if the last line has no newline. */
  get exactLines(): number {
    return this.scannedLines + (this.size > 0 && this.lastByte !== NL ? 1 : 0);
  }

  /**
   * The best count without a full scan: exact when complete, else extrapolated from the part
   * scanned, or from the window just read when nothing is scanned yet.
   */
  estimate(sample?: Uint8Array): { totalLines: number; exact: boolean } {
    if (this.complete) return { totalLines: this.exactLines, exact: true };
    let lines = this.scannedLines;
    let bytes = this.scannedBytes;
    if (bytes === 0 && sample && sample.length > 0) {
      const b = Buffer.from(sample.buffer, sample.byteOffset, sample.length);
      bytes = b.length;
      for (let i = b.indexOf(NL); i !== -1; i = b.indexOf(NL, i + 1)) lines++;
    }
    const guess = bytes > 0 ? Math.ceil((lines / bytes) * this.size) : 0;
    return { totalLines: Math.max(guess, this.scannedLines + 1), exact: false };
  }

  /** Scan until the checkpoint at or before `line` is known, or EOF. */
  async ensure(line: number): Promise<void> {
    const target = Math.floor(line / LINE_CHECKPOINT_EVERY);
    if (!this.complete && this.checkpoints.length - 1 < target) await this.scanWhile(() => this.checkpoints.length - 1 < target);
  }

  async completeAll(): Promise<void> {
    if (!this.complete) await this.scanWhile(() => true);
  }

  /** Scan chunk after chunk while `more()` holds; one scan at a time, callers share it. */
  private async scanWhile(more: () => boolean): Promise<void> {
    while (!this.complete && more()) {
      if (this.scanning) {
        await this.scanning;
        continue;
      }
      this.scanning = this.scanRun(more).finally(() => {
        this.scanning = null;
      });
      await this.scanning;
    }
  }

  /** One open of the source for many chunks; yields to the event loop after each chunk. */
  private async scanRun(more: () => boolean): Promise<void> {
    const src = await this.open();
    try {
      while (!this.complete && more()) {
        const start = this.scannedBytes;
        const end = Math.min(this.size, start + LINE_SCAN_CHUNK_BYTES);
        const buf = await src.read(start, end);
        let i = buf.indexOf(NL);
        while (i !== -1) {
          this.scannedLines++;
          if (this.scannedLines % LINE_CHECKPOINT_EVERY === 0) this.checkpoints.push(start + i + 1);
          i = buf.indexOf(NL, i + 1);
        }
        this.scannedBytes = start + buf.length;
        if (buf.length > 0) this.lastByte = buf[buf.length - 1];
        if (buf.length === 0 || this.scannedBytes >= this.size) this.complete = true;
        // Yield so a 100 MB scan never holds the event loop.
        await new Promise<void>((r) => setImmediate(r));
      }
    } finally {
      await src.close();
    }
  }
}

/** A window as the contract returns it; the reader always knows whether its line count is exact. */
export type WindowResult = ReadPayloadResponse & { totalLinesExact: boolean };

export interface WindowRequest {
  start?: number;
  end?: number;
  startLine?: number;
  lineCount?: number;
}

export class PayloadReader {
  private readonly indexes = new Map<string, LineIndex>();
  private readonly binaryCache = new Map<string, boolean>();

  private lineIndex(src: ByteSource, reopen: SourceOpener): LineIndex {
    let idx = this.indexes.get(src.key);
    if (idx) {
      this.indexes.delete(src.key); // LRU: re-insert as newest
      this.indexes.set(src.key, idx);
      return idx;
    }
    idx = new LineIndex(src.size, reopen);
    this.indexes.set(src.key, idx);
    while (this.indexes.size > MAX_CACHED_LINE_INDEXES) this.indexes.delete(this.indexes.keys().next().value!);
    return idx;
  }

  /** Exact line count (scans what is not scanned yet, yielding between chunks). */
  async countLines(open: SourceOpener): Promise<number> {
    const src = await open();
    let idx: LineIndex;
    try {
      idx = this.lineIndex(src, open);
    } finally {
      await src.close();
    }
    await idx.completeAll();
    return idx.exactLines;
  }

  /** Text or binary, from the first SNIFF_BYTES (cached per content version). */
  async isBinary(src: ByteSource): Promise<boolean> {
    const cached = this.binaryCache.get(src.key);
    if (cached !== undefined) return cached;
    const head = await src.read(0, Math.min(src.size, SNIFF_BYTES));
    const bin = isBinaryBytes(head, { partial: head.length < src.size });
    if (this.binaryCache.size > 1024) this.binaryCache.clear();
    this.binaryCache.set(src.key, bin);
    return bin;
  }

  /** Read a window of a file. `p` must already be confined by the caller. */
  async readFile(p: string, req: WindowRequest, opts: { binary?: boolean } = {}): Promise<WindowResult> {
    return this.read(() => fileSource(p), req, opts);
  }

  /** Read one window from whatever `open` yields. */
  async read(open: SourceOpener, req: WindowRequest, opts: { binary?: boolean } = {}): Promise<WindowResult> {
    const src = await open();
    try {
      const binary = opts.binary ?? (await this.isBinary(src));
      const idx = this.lineIndex(src, open);
      const lineMode = req.startLine !== undefined || req.lineCount !== undefined;
      const result =
        lineMode && !binary
          ? await this.readLines(src, idx, req.startLine ?? 0, req.lineCount ?? DEFAULT_READ_WINDOW_LINES)
          : await this.readBytes(src, idx, req, binary);
      if (!idx.complete) void idx.completeAll().catch(() => undefined);
      return result;
    } finally {
      await src.close();
    }
  }

  private async readBytes(src: ByteSource, idx: LineIndex, req: WindowRequest, binary: boolean): Promise<WindowResult> {
    const size = src.size;
    const cap = binary ? MAX_HEX_WINDOW_BYTES : MAX_READ_WINDOW_BYTES;
    const start = Math.min(req.start ?? 0, size);
    const wantEnd = req.end ?? start + (binary ? MAX_HEX_WINDOW_BYTES : DEFAULT_READ_WINDOW_BYTES);
    const end = Math.min(size, wantEnd, start + cap);
    // Read 3 bytes before and after, so both edges can be snapped to character starts.
    const pad = binary ? 0 : 3;
    const from = Math.max(0, start - pad);
    const buf = await src.read(from, Math.min(size, end + pad));
    let s = start - from;
    let e = Math.min(end - from, buf.length);
    if (!binary) {
      s = snapBack(buf, s);
      e = end >= size ? buf.length : snapBack(buf, e);
      if (e < s) e = s;
    }
    const slice = buf.subarray(s, e);
    const counts = idx.estimate(binary ? undefined : slice);
    return {
      text: binary ? '' : slice.toString('utf8'),
      start: from + s,
      end: from + e,
      totalBytes: size,
      totalLines: counts.totalLines,
      totalLinesExact: counts.exact,
      binary,
      ...(binary ? { hex: hexDump(slice, from + s) } : {}),
    };
  }

  private async readLines(src: ByteSource, idx: LineIndex, startLine: number, lineCount: number): Promise<WindowResult> {
    const size = src.size;
    const want = Math.min(lineCount, MAX_READ_WINDOW_LINES);
    await idx.ensure(startLine);
    const cpIdx = Math.min(Math.floor(startLine / LINE_CHECKPOINT_EVERY), idx.checkpoints.length - 1);
    let pos = idx.checkpoints[cpIdx]!;
    let line = cpIdx * LINE_CHECKPOINT_EVERY;
    // Walk from the checkpoint to startLine (fewer than LINE_CHECKPOINT_EVERY lines).
    while (line < startLine && pos < size) {
      const buf = await src.read(pos, Math.min(size, pos + LINE_SCAN_CHUNK_BYTES));
      if (buf.length === 0) break;
      let i = 0;
      while (line < startLine) {
        const nl = buf.indexOf(NL, i);
        if (nl === -1) break;
        line++;
        i = nl + 1;
      }
      pos += line < startLine ? buf.length : i;
    }
    if (line < startLine || pos >= size) {
      const counts = idx.estimate();
      // Past the end: an empty window at EOF.
      return {
        text: '',
        start: size,
        end: size,
        startLine,
        lineCount: 0,
        totalBytes: size,
        totalLines: counts.totalLines,
        totalLinesExact: counts.exact,
        binary: false,
      };
    }
    const limit = Math.min(size, pos + MAX_READ_WINDOW_BYTES);
    // One byte past the cap, so a cut can be snapped to a character start.
    const full = await src.read(pos, Math.min(size, limit + 1));
    const buf = full.subarray(0, limit - pos);
    let got = 0;
    let i = 0;
    while (got < want) {
      const nl = buf.indexOf(NL, i);
      if (nl === -1) {
        if (limit >= size) {
          // The last line, without a newline.
          if (i < buf.length) got++;
          i = buf.length;
        } else if (got === 0) {
          // One line longer than the byte cap: its first MAX_READ_WINDOW_BYTES, UTF-8 safe
          // (`end` shows where it was cut; byte windows read the rest).
          i = snapBack(full, buf.length);
          got = 1;
        }
        break;
      }
      got++;
      i = nl + 1;
    }
    const counts = idx.estimate(buf.subarray(0, i));
    return {
      text: buf.subarray(0, i).toString('utf8'),
      start: pos,
      end: pos + i,
      startLine,
      lineCount: got,
      totalBytes: size,
      totalLines: counts.exact ? counts.totalLines : Math.max(counts.totalLines, startLine + got),
      totalLinesExact: counts.exact,
      binary: false,
    };
  }
}
