import crypto from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import type { PayloadOrigin, ToolResult } from './types.js';
import { TEXT_SLICE_CHARS } from './limits.js';
import { binaryStringForm, isBinaryBytes } from './detect.js';
import { isWellFormed, safeCut, toWellFormed } from './text.js';

/**
 * The guard's first phase: what a tool result is, as the later phases need it.
 *
 * | call | for |
 * | --- | --- |
 * | {@link normalize} | a tool result as a {@link Subject} (string, bytes, parsed value), or null when it always passes |
 * | {@link preparePayload} | the exact bytes a spill saves, their size and sha256, and the text the other phases read |
 * | {@link textSlices} | a big string in surrogate-safe slices, to hash or write it without one whole UTF-8 copy |
 */

/** A tool result as the guard works on it. Binary is told apart here, whatever the size. */
export type Subject =
  /** `textBytes`: its UTF-8 size, once a phase has counted it (a native pass over the whole string). */
  | { origin: 'string'; text: string; textBytes?: number }
  | { origin: 'bytes'; bytes: Buffer; binary: boolean }
  /** Bytes carried in a JS string (read as 'latin1'/'binary'): saved as those bytes. */
  | { origin: 'latin1-string'; bytes: Buffer; binary: true }
  /**
   * Binary a client already decoded as UTF-8 (NULs, control characters, U+FFFD: detect.ts's
   * binaryStringForm): saved as the string's UTF-8, what was received. `lossy`: it holds U+FFFD,
   * so the original bytes are lost wherever one stands.
   */
  | { origin: 'decoded-string'; bytes: Buffer; binary: true; lossy: boolean }
  | { origin: 'json-value'; value: unknown };

/** What a spill saves: the original bytes, exactly, and the text the other phases read. */
export interface Payload {
  origin: PayloadOrigin;
  /** The text form (well-formed); absent when the payload is binary. */
  text?: string;
  /** The bytes of a binary payload (as received, or carried in a latin1 string). */
  binary?: Buffer;
  /** The original: bytes as received, or a string whose UTF-8 is the original. */
  original: Buffer | string;
  /** UTF-8 bytes of the original. */
  byteLength: number;
  sha256: string;
  /** `text` is exactly the original, so spans of it can be cut out and rebuilt. */
  textIsExact: boolean;
  /** What preparing it changed (lone surrogates replaced), for the sidecar's `errors`. */
  notes: readonly string[];
  /** Binary the client had already decoded as UTF-8, lossily: what is saved is what was received, not the original bytes. */
  lossy?: boolean;
}

function asBuffer(v: Uint8Array | ArrayBuffer): Buffer {
  if (v instanceof ArrayBuffer) return Buffer.from(v);
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** The subject of a tool result; null for results that are always passed (null, undefined, numbers, booleans). */
export function normalize(result: ToolResult): Subject | null {
  if (result === null || result === undefined || typeof result === 'number' || typeof result === 'boolean') return null;
  if (typeof result === 'string') {
    const form = binaryStringForm(result);
    if (form === 'latin1') return { origin: 'latin1-string', bytes: Buffer.from(result, 'latin1'), binary: true };
    // Lone surrogates become U+FFFD in UTF-8 too, like every byte the client could not decode.
    if (form === 'decoded') return { origin: 'decoded-string', bytes: Buffer.from(result, 'utf8'), binary: true, lossy: result.includes('\uFFFD') || !isWellFormed(result) };
    return { origin: 'string', text: result };
  }
  if (result instanceof Uint8Array || result instanceof ArrayBuffer) {
    const bytes = asBuffer(result);
    return { origin: 'bytes', bytes, binary: isBinaryBytes(bytes) };
  }
  if (ArrayBuffer.isView(result)) {
    const v = result as ArrayBufferView;
    return normalize(Buffer.from(v.buffer, v.byteOffset, v.byteLength));
  }
  return { origin: 'json-value', value: result };
}

/** Slices of a string for encoding piecewise, never cutting a surrogate pair. */
export function* textSlices(text: string, size = TEXT_SLICE_CHARS): Generator<string> {
  for (let i = 0; i < text.length; ) {
    const j = i + size >= text.length ? text.length : safeCut(text, i + size);
    yield text.slice(i, j > i ? j : i + size);
    i = j > i ? j : i + size;
  }
}

/** `ascii`: the string is known to be ASCII (its UTF-8 size is its length), so latin1 gives its UTF-8 bytes with a plain copy. */
function hashData(data: string | Buffer, ascii = false): string {
  const h = crypto.createHash('sha256');
  if (typeof data !== 'string') return h.update(data).digest('hex');
  for (const part of textSlices(data)) h.update(part, ascii ? 'latin1' : 'utf8');
  return h.digest('hex');
}

/** The sidecar's note for binary a client decoded lossily before the guard saw it. */
export const LOSSY_NOTE = 'the client had already decoded these bytes as UTF-8, lossily (U+FFFD where bytes were not UTF-8): saved is the text as received, not the original bytes';

/**
 * The payload of a subject being spilled. `text` is the text the decision measured (the string,
 * the bytes decoded, or the JSON of a parsed value), and `textBytes` its UTF-8 size when known.
 * Lone surrogates, which UTF-8 cannot hold, are saved as U+FFFD and noted.
 */
export function preparePayload(subject: Subject, text: string | undefined, textBytes?: number): Payload {
  if (subject.origin === 'decoded-string') {
    // The original is the UTF-8 of the string received: origin 'string' says so to restore and the index.
    const b = subject.bytes;
    const notes = subject.lossy ? [LOSSY_NOTE] : [];
    return { origin: 'string', original: b, byteLength: b.byteLength, sha256: hashData(b), notes, binary: b, textIsExact: false, ...(subject.lossy ? { lossy: true } : {}) };
  }
  if (subject.origin === 'bytes' || subject.origin === 'latin1-string') {
    const b = subject.bytes;
    const base = { origin: subject.origin, original: b, byteLength: b.byteLength, sha256: hashData(b), notes: [] };
    if (subject.binary) return { ...base, binary: b, textIsExact: false };
    return { ...base, text: text ?? b.toString('utf8'), textIsExact: isUtf8(b) };
  }
  let t = text ?? (subject.origin === 'string' ? subject.text : '');
  const byteLength = textBytes ?? Buffer.byteLength(t, 'utf8');
  // Pure ASCII (UTF-8 length = length) cannot hold a lone surrogate: skip the scan.
  const notes: string[] = [];
  if (byteLength !== t.length && !isWellFormed(t)) {
    t = toWellFormed(t);
    notes.push('the text had lone surrogates; they were saved as U+FFFD (UTF-8 cannot hold them)');
  }
  return { origin: subject.origin, text: t, original: t, byteLength, sha256: hashData(t, byteLength === t.length), textIsExact: true, notes };
}
