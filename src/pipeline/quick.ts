import { DEFAULT_LIMIT_TOKENS, MIN_INLINE_ASSET_RUN_CHARS, limitForContextWindow } from './limits.js';
import { hasBase64Run, hasBase64RunBytes } from './base64.js';

import { isBinaryString, mayHoldBinaryString } from './binary.js';

export { isBinaryString, mayHoldBinaryString } from './binary.js';

/**
 * The checks a caller's fast path makes before it decides to call the guard, in a module that
 * loads nothing heavy (no estimator, tokenizer, store or summarizer): the Claude Code hook runs
 * once per tool call, and on a result that passes only these and the hook's own shapes load.
 */

/** The limit a call decides with: explicit, else default, narrowed by the context window. */
export function resolveLimit(o: { limitTokens?: number; contextWindowTokens?: number }): number {
  const base = o.limitTokens !== undefined && Number.isFinite(o.limitTokens) && o.limitTokens > 0 ? Math.floor(o.limitTokens) : DEFAULT_LIMIT_TOKENS;
  return limitForContextWindow(o.contextWindowTokens, base);
}

/**
 * For a caller that passes results by size without calling the guard: false means a result of
 * this text or these bytes (UTF-8, e.g. a JSON-RPC line) holds no base64 or binary string the guard would cut,
 * so the size alone decides. True: call the guard. One cheap linear scan.
 */
export function mayCarryInlineAssets(raw: string | Uint8Array): boolean {
  // A binary string (NULs, U+FFFD, as characters or JSON escapes) is cut out at any size too.
  if (mayHoldBinaryString(raw)) return true;
  return typeof raw === 'string' ? hasBase64Run(raw, MIN_INLINE_ASSET_RUN_CHARS) : hasBase64RunBytes(raw, MIN_INLINE_ASSET_RUN_CHARS);
}

/**
 * Bytes of a result as the model would read it (a string's UTF-8, bytes as they are, anything else
 * as JSON); infinite when it cannot be serialised. No tokenizer makes more tokens than bytes, so
 * a result this many bytes fits any limit at least as large, however it is counted.
 */
export function sizeOf(v: unknown): number {
  if (typeof v === 'string') return Buffer.byteLength(v);
  if (v instanceof Uint8Array) return v.byteLength;
  try {
    return Buffer.byteLength(JSON.stringify(v) ?? '');
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * A text the guard need not see: it fits the limit by bytes, and holds no base64 worth cutting and
 * no binary (`cat` of an image; `head -c` of an executable decoded as UTF-8): the model can use
 * neither as text, at any size.
 */
export function fitsAsText(text: string, limitTokens: number): boolean {
  return Buffer.byteLength(text) <= limitTokens && !mayCarryInlineAssets(text) && !isBinaryString(text);
}
