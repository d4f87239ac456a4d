import fs from 'node:fs';
import { LineScanner, PatternError, type MatchOptions } from './match.js';

/**
 * Drill-down over saved payload FILES (for the MCP proxy's tools): read a bounded slice by
 * bytes or by lines, and grep with context, streaming, so a 1 GB payload costs a bounded
 * amount of memory and never returns more than a bounded amount of text.
 */

/** Most bytes one slice returns. */
export const MAX_SLICE_BYTES = 64 * 1024;
/** Default bytes / lines of a slice. */
export const DEFAULT_SLICE_BYTES = 16 * 1024;
export const DEFAULT_SLICE_LINES = 200;
/** Most lines one slice returns. */
export const MAX_SLICE_LINES = 2_000;
/** Read-ahead per chunk while streaming. */
const CHUNK_BYTES = 256 * 1024;
/** Grep bounds. */
export const DEFAULT_FILE_GREP_MATCHES = 50;
export const MAX_FILE_GREP_MATCHES = 500;
export const MAX_FILE_GREP_CONTEXT = 20;
/** Chars of a matching line returned (centred on the match); a line longer than this is searched in segments of this size. */
export const MAX_FILE_GREP_LINE_CHARS = 1_000;
/** A "line" longer than this (minified JSON) is searched in pieces so memory stays bounded. */
const MAX_SCAN_LINE_BYTES = 1024 * 1024;

export interface Slice {
  text: string;
  /** Byte range actually returned [start, end), snapped to UTF-8 character boundaries. */
  start: number;
  end: number;
  totalBytes: number;
  /** For line slices: first and last line returned (1-based, inclusive). */
  startLine?: number;
  endLine?: number;
  /** True when there is more after `end`. */
  more: boolean;
  /** True when a limit cut the slice short of what was asked. */
  truncated: boolean;
}

export type SliceRequest = { offset?: number; limit?: number } | { startLine?: number; endLine?: number };

function isContinuation(b: number | undefined): boolean {
  return b !== undefined && (b & 0xc0) === 0x80;
}

/** Read a bounded slice by bytes (`offset`/`limit`) or lines (`startLine`/`endLine`, 1-based, inclusive). */
export async function readSlice(filePath: string, req: SliceRequest = {}): Promise<Slice> {
  const fh = await fs.promises.open(filePath, 'r');
  try {
    const totalBytes = (await fh.stat()).size;
    if ('startLine' in req || 'endLine' in req) return await lineSlice(fh, totalBytes, req as { startLine?: number; endLine?: number });
    const r = req as { offset?: number; limit?: number };
    const offset = Math.max(0, Math.floor(r.offset ?? 0));
    const asked = Math.max(0, Math.floor(r.limit ?? DEFAULT_SLICE_BYTES));
    const limit = Math.min(asked, MAX_SLICE_BYTES);
    if (offset >= totalBytes) return { text: '', start: totalBytes, end: totalBytes, totalBytes, more: false, truncated: false };
    // read 3 extra bytes each side to snap to character boundaries
    const from = Math.max(0, offset - 3);
    const to = Math.min(totalBytes, offset + limit + 3);
    const buf = Buffer.alloc(to - from);
    await fh.read(buf, 0, buf.length, from);
    let s = offset - from;
    while (s < buf.length && isContinuation(buf[s])) s++;
    let e = Math.min(buf.length, offset + limit - from);
    if (offset + limit < totalBytes) while (e > s && isContinuation(buf[e])) e--;
    const start = from + s;
    const end = from + e;
    return { text: buf.subarray(s, e).toString('utf8'), start, end, totalBytes, more: end < totalBytes, truncated: asked > limit && end < totalBytes };
  } finally {
    await fh.close();
  }
}

async function lineSlice(fh: fs.promises.FileHandle, totalBytes: number, req: { startLine?: number; endLine?: number }): Promise<Slice> {
  const startLine = Math.max(1, Math.floor(req.startLine ?? 1));
  const wantEnd = Math.max(startLine, Math.floor(req.endLine ?? startLine + DEFAULT_SLICE_LINES - 1));
  const endLine = Math.min(wantEnd, startLine + MAX_SLICE_LINES - 1);
  let line = 1;
  let pos = 0;
  let sliceStart = -1;
  const parts: Buffer[] = [];
  let taken = 0;
  let truncated = endLine < wantEnd; // the line cap cut the request (reset when the file ends first)
  let lastLine = startLine - 1;
  let sliceEnd = -1;
  const buf = Buffer.alloc(CHUNK_BYTES);
  outer: while (pos < totalBytes) {
    const { bytesRead } = await fh.read(buf, 0, CHUNK_BYTES, pos);
    if (!bytesRead) break;
    let i = 0;
    while (i < bytesRead) {
      if (line < startLine) {
        const nl = buf.indexOf(10, i);
        if (nl === -1 || nl >= bytesRead) {
          i = bytesRead;
          break;
        }
        i = nl + 1;
        line++;
        continue;
      }
      if (sliceStart < 0) sliceStart = pos + i;
      const nl = buf.indexOf(10, i);
      const stop = nl === -1 || nl >= bytesRead ? bytesRead : nl + 1;
      let piece = buf.subarray(i, stop);
      if (taken + piece.length > MAX_SLICE_BYTES) {
        let cut = MAX_SLICE_BYTES - taken;
        while (cut > 0 && isContinuation(piece[cut])) cut--;
        piece = piece.subarray(0, cut);
        parts.push(Buffer.from(piece));
        taken += piece.length;
        sliceEnd = pos + i + piece.length;
        truncated = true;
        lastLine = line;
        break outer;
      }
      if (piece.length) {
        parts.push(Buffer.from(piece));
        taken += piece.length;
        lastLine = line;
      }
      i = stop;
      if (nl !== -1 && nl < bytesRead) {
        if (line >= endLine) {
          sliceEnd = pos + i;
          break outer;
        }
        line++;
      }
    }
    pos += bytesRead;
  }
  if (sliceStart < 0) return { text: '', start: totalBytes, end: totalBytes, totalBytes, startLine, endLine: startLine - 1, more: false, truncated: false };
  if (sliceEnd < 0) {
    sliceEnd = totalBytes;
    truncated = truncated && false; // the file ended before any limit did
  }
  let text = Buffer.concat(parts).toString('utf8');
  if (text.endsWith('\n')) text = text.slice(0, -1);
  if (text.endsWith('\r')) text = text.slice(0, -1);
  return { text, start: sliceStart, end: sliceEnd, totalBytes, startLine, endLine: lastLine, more: sliceEnd < totalBytes, truncated };
}

export interface FileGrepMatch {
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line start. */
  offset: number;
  text: string;
  before?: Array<{ line: number; text: string }>;
  after?: Array<{ line: number; text: string }>;
}

export interface FileGrepResult {
  matches: FileGrepMatch[];
  /** Matches found in all (the scan always reads the whole file). */
  total: number;
  truncated: boolean;
  linesScanned: number;
}

function clipLine(s: string, at: number): string {
  if (s.length <= MAX_FILE_GREP_LINE_CHARS) return s;
  const start = Math.max(0, Math.min(Math.max(0, at) - 200, s.length - MAX_FILE_GREP_LINE_CHARS));
  return `${start > 0 ? `…[${start} chars] ` : ''}${s.slice(start, start + MAX_FILE_GREP_LINE_CHARS)}${start + MAX_FILE_GREP_LINE_CHARS < s.length ? `…[+${s.length - start - MAX_FILE_GREP_LINE_CHARS} chars]` : ''}`;
}

/** Lines collected before each match pass (regexes run in a worker, batch by batch). */
const GREP_BATCH_LINES = 5_000;

/**
 * Stream a file and return matching lines with context. Plain, case-insensitive text by default;
 * `regex: true` runs a checked regex in a worker with a time budget (see match.ts).
 */
export async function grepFile(
  filePath: string,
  pattern: string,
  opts: { context?: number; maxMatches?: number; signal?: AbortSignal; regexTimeoutMs?: number } & MatchOptions = {},
): Promise<FileGrepResult> {
  const scanner = new LineScanner(pattern, { ...opts, timeoutMs: opts.regexTimeoutMs });
  try {
    return await grepWith(filePath, scanner, opts);
  } finally {
    await scanner.close();
  }
}

async function grepWith(filePath: string, scanner: LineScanner, opts: { context?: number; maxMatches?: number; signal?: AbortSignal }): Promise<FileGrepResult> {
  const context = Math.max(0, Math.min(MAX_FILE_GREP_CONTEXT, Math.floor(opts.context ?? 0)));
  const max = Math.max(1, Math.min(MAX_FILE_GREP_MATCHES, Math.floor(opts.maxMatches ?? DEFAULT_FILE_GREP_MATCHES)));
  const matches: FileGrepMatch[] = [];
  const ring: Array<{ line: number; text: string }> = [];
  const open: Array<{ m: FileGrepMatch; need: number }> = [];
  let total = 0;
  let lineNo = 0;
  let carry: Buffer[] = [];
  let carryLen = 0;
  let lineOffset = 0;
  let pos = 0;
  let batch: Array<{ text: string; offset: number }> = [];

  const flush = async () => {
    if (!batch.length) return;
    const ats = await scanner.scan(batch.map((b) => b.text));
    for (let k = 0; k < batch.length; k++) {
      const { text, offset } = batch[k]!;
      const at = ats[k]!;
      lineNo++;
      for (const o of open) {
        if (o.need > 0) {
          o.m.after!.push({ line: lineNo, text: clipLine(text, 0) });
          o.need--;
        }
      }
      while (open.length && open[0]!.need === 0) open.shift();
      if (at >= 0) {
        total++;
        if (matches.length < max) {
          const m: FileGrepMatch = { line: lineNo, offset, text: clipLine(text, at) };
          if (context) {
            m.before = ring.slice(-context);
            m.after = [];
            open.push({ m, need: context });
          }
          matches.push(m);
        }
      }
      if (context) {
        ring.push({ line: lineNo, text: clipLine(text, 0) });
        if (ring.length > context) ring.shift();
      }
    }
    batch = [];
  };
  const onLine = async (raw: Buffer, offset: number) => {
    let text = raw.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    batch.push({ text, offset });
    if (batch.length >= GREP_BATCH_LINES) await flush();
  };

  const stream = fs.createReadStream(filePath, { highWaterMark: CHUNK_BYTES, signal: opts.signal });
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let i = 0;
    while (i < chunk.length) {
      const nl = chunk.indexOf(10, i);
      if (nl === -1) {
        carry.push(chunk.subarray(i));
        carryLen += chunk.length - i;
        // a giant single line (minified JSON): search it in bounded pieces
        if (carryLen > MAX_SCAN_LINE_BYTES) {
          const whole = Buffer.concat(carry);
          let cut = whole.length;
          while (cut > 0 && isContinuation(whole[cut])) cut--;
          await onLine(whole.subarray(0, cut), lineOffset);
          lineOffset += cut;
          carry = [whole.subarray(cut)];
          carryLen = whole.length - cut;
        }
        break;
      }
      const piece = chunk.subarray(i, nl);
      const line = carryLen ? Buffer.concat([...carry, piece]) : piece;
      await onLine(line, lineOffset);
      carry = [];
      carryLen = 0;
      lineOffset = pos + nl + 1;
      i = nl + 1;
    }
    pos += chunk.length;
  }
  if (carryLen) await onLine(Buffer.concat(carry), lineOffset);
  await flush();
  return { matches, total, truncated: total > matches.length, linesScanned: lineNo };
}

export { PatternError };
