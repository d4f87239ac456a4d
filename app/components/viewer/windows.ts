/**
 * Window bookkeeping for the payload viewer: the editor holds at most a few adjacent byte windows
 * of the payload, so a 100 MB file costs what a 1 MB one does. Pure, so it is unit-tested.
 */

/** Payloads up to this size are loaded whole (and JSON is pretty-printed). */
export const WHOLE_LOAD_MAX_BYTES = 1024 * 1024;
/** Bytes per window for text payloads. */
export const TEXT_WINDOW_BYTES = 256 * 1024;
/** Bytes per window for binary payloads (each byte becomes ~4 chars of hex dump). */
export const BINARY_WINDOW_BYTES = 32 * 1024;
/** Windows kept in the editor at once. */
export const MAX_WINDOWS = 3;
/** Pretty-printing is skipped above this size: it would hold the main thread too long. */
export const PRETTY_MAX_BYTES = 1024 * 1024;

export interface Chunk {
  start: number;
  end: number;
  text: string;
  /** Newlines in text. */
  newlines: number;
}

export function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

export function makeChunk(start: number, end: number, text: string): Chunk {
  return { start, end, text, newlines: countNewlines(text) };
}

/** Append a window after the last; drop from the front past MAX_WINDOWS. Returns lines removed at the top. */
export function appendChunk(chunks: readonly Chunk[], next: Chunk): { chunks: Chunk[]; linesRemovedAtTop: number } {
  const all = [...chunks, next];
  let removed = 0;
  while (all.length > MAX_WINDOWS) removed += all.shift()!.newlines;
  return { chunks: all, linesRemovedAtTop: removed };
}

/** Prepend a window before the first; drop from the back past MAX_WINDOWS. Returns lines added at the top. */
export function prependChunk(chunks: readonly Chunk[], prev: Chunk): { chunks: Chunk[]; linesAddedAtTop: number } {
  const all = [prev, ...chunks];
  while (all.length > MAX_WINDOWS) all.pop();
  return { chunks: all, linesAddedAtTop: prev.newlines };
}

/**
 * Keep about `maxChars` of a chunk. Byte offsets of a cut inside the text are not known without
 * encoding, so the end offset is taken from the UTF-8 length of the kept text.
 */
export function cutChunk(chunk: Chunk, maxChars: number): Chunk {
  if (chunk.text.length <= maxChars) return chunk;
  let cut = maxChars;
  const c = chunk.text.charCodeAt(cut - 1);
  if (c >= 0xd800 && c <= 0xdbff) cut--; // never split a surrogate pair
  const text = chunk.text.slice(0, cut);
  return makeChunk(chunk.start, chunk.start + new TextEncoder().encode(text).length, text);
}

export function joinChunks(chunks: readonly Chunk[]): string {
  return chunks.map((c) => c.text).join('');
}

/** A small single-line JSON document reads better formatted. Returns null when it is not JSON or too big. */
export function prettyJson(text: string): string | null {
  if (text.length > PRETTY_MAX_BYTES) return null;
  const t = text.trimStart();
  if (!(t.startsWith('{') || t.startsWith('['))) return null;
  if (countNewlines(text) > 3) return null;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return null;
  }
}
