import type { AssetEncoding } from './types.js';

/**
 * Strict base64: a run counts only when decoding and re-encoding it with the same alphabet,
 * padding and line wrapping gives back exactly the same characters. That canonical round trip
 * is what lets `spillway restore` rebuild the original bytes from an asset file.
 */

export interface ParsedBase64 {
  bytes: Buffer;
  encoding: AssetEncoding;
}

/** Encode bytes the way `enc` says: the inverse of {@link parseBase64}. */
export function encodeBase64(bytes: Uint8Array, enc: AssetEncoding): string {
  const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let s = enc.alphabet === 'url' ? b.toString('base64url') : b.toString('base64');
  if (enc.alphabet === 'url') {
    if (enc.pad && s.length % 4 !== 0) s += '='.repeat(4 - (s.length % 4));
  } else if (!enc.pad) {
    let end = s.length;
    while (end > 0 && s.charCodeAt(end - 1) === 61) end--;
    s = s.slice(0, end);
  }
  if (enc.lineWidth && enc.lineWidth > 0) {
    const eol = enc.eol ?? '\n';
    const lines: string[] = [];
    for (let i = 0; i < s.length; i += enc.lineWidth) lines.push(s.slice(i, i + enc.lineWidth));
    s = lines.join(eol) + (enc.finalEol ? eol : '');
  }
  return s;
}

/** The exact text of a span from the asset bytes and its encoding. */
export function encodeSpan(bytes: Uint8Array, enc: AssetEncoding): string | Buffer {
  if (enc.kind === 'raw') return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes);
  const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const inner = enc.kind === 'text' ? b.toString(enc.charset === 'utf8' ? 'utf8' : 'latin1') : (enc.prefix ?? '') + encodeBase64(bytes, enc);
  if (!enc.json) return inner;
  const lit = JSON.stringify(inner);
  return enc.escapeSlash ? lit.replace(/\//g, '\\/') : lit;
}

/**
 * Parse a base64 run (optionally line-wrapped). Returns null unless it is canonical: one
 * alphabet, padding only at the end, uniform line width, zero trailing bits.
 */
export function parseBase64(s: string): ParsedBase64 | null {
  if (s.length === 0) return null;
  let body = s;
  let lineWidth = 0;
  let eol: '\n' | '\r\n' | undefined;
  let finalEol = false;
  if (s.indexOf('\n') !== -1) {
    eol = s.indexOf('\r\n') !== -1 ? '\r\n' : '\n';
    let t = s;
    if (t.endsWith(eol)) {
      finalEol = true;
      t = t.slice(0, -eol.length);
    }
    const lines = t.split(eol);
    lineWidth = lines[0]!.length;
    if (lineWidth === 0 || lineWidth % 4 !== 0) return null;
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i]!;
      if (i < lines.length - 1 ? l.length !== lineWidth : l.length === 0 || l.length > lineWidth) return null;
    }
    if (lines.length === 1 && !finalEol) return null;
    body = lines.join('');
  }
  let padLen = 0;
  while (padLen < 3 && body.charCodeAt(body.length - 1 - padLen) === 61) padLen++;
  if (padLen > 2) return null;
  const coreLen = body.length - padLen;
  if (coreLen === 0) return null;
  const core = padLen ? body.slice(0, coreLen) : body;
  if (padLen > 0 && body.length % 4 !== 0) return null;
  const rem = coreLen % 4;
  if (rem === 1) return null;
  // One alphabet only: '-' or '_' makes it URL-safe, and then no '+' or '/' may appear (native scans).
  const url = core.indexOf('-') !== -1 || core.indexOf('_') !== -1;
  const alphabet: 'std' | 'url' = url ? 'url' : 'std';
  // Node's decoder skips what is not base64 (and reads a UTF-16 unit by its low byte), so the
  // decoded bytes are checked by re-encoding them: canonical base64 in that alphabet (no other
  // character, '=' only at the end, zero bits past the last byte) gives back exactly `core`.
  // Natively this is several times faster than a character-class regex over the run.
  const bytes = Buffer.from(core, url ? 'base64url' : 'base64');
  if (bytes.length !== Math.floor((coreLen * 3) / 4)) return null;
  if (!reencodes(bytes, core, url ? 'base64url' : 'base64')) return null;
  const encoding: AssetEncoding = { kind: 'base64', alphabet, pad: padLen > 0 || rem === 0 };
  if (lineWidth) Object.assign(encoding, { lineWidth, eol, finalEol });
  return { bytes, encoding };
}

/**
 * Bytes re-encoded per comparison: 3 × 16 K, so each piece is whole base64 groups and its 64 K
 * chars a small heap string. Node returns an encoding of more than ~1 MB as an external string,
 * which the collector does not count as heap: the 2 MB re-encodings of a big spill's 30 images
 * piled up as ~30 MB of garbage until a full collection.
 */
const REENCODE_BYTES = 3 * 16 * 1024;

/** Do `bytes`, encoded in `enc`, give back `core` exactly (the unpadded form: no `=`)? */
function reencodes(bytes: Buffer, core: string, enc: 'base64' | 'base64url'): boolean {
  for (let b = 0, c = 0; b < bytes.length; b += REENCODE_BYTES, c += (REENCODE_BYTES / 3) * 4) {
    let again = bytes.toString(enc, b, Math.min(bytes.length, b + REENCODE_BYTES));
    // only the last piece can end in padding, which `core` does not have
    if (c + again.length > core.length) again = again.slice(0, core.length - c);
    if (again !== (b === 0 && again.length === core.length ? core : core.slice(c, c + again.length))) return false;
  }
  return true;
}

/** Sample size for the character-statistics test. */
const STATS_SAMPLE_CHARS = 64 * 1024;
/** Share of the distinct symbols uniform base64 would show that a bare run must show. */
const MIN_DISTINCT_SHARE = 0.75;
/** Longest mean run of lower-case letters (uniform base64: ~1.7; English words: 4+). */
const MAX_MEAN_LOWER_RUN = 3;

/**
 * Does a run with no declared context read like base64 of binary data? Real base64 of
 * compressed or random bytes spreads over all 64 symbols (about 41% upper, 41% lower, 16%
 * digits) with short same-case runs; English, hex ids and identifiers do not.
 */
export function base64Statistics(body: string): boolean {
  const n = Math.min(body.length, STATS_SAMPLE_CHARS);
  let upper = 0;
  let lower = 0;
  let digit = 0;
  let sym = 0;
  let nonHex = 0;
  let lowerRuns = 0;
  let inLower = false;
  const seen = new Uint8Array(128);
  let distinct = 0;
  for (let i = 0; i < n; i++) {
    const c = body.charCodeAt(i);
    const isLower = c >= 97 && c <= 122;
    if (isLower && !inLower) lowerRuns++;
    inLower = isLower;
    if (c < 128 && c !== 61 && c !== 10 && c !== 13 && !seen[c]) {
      seen[c] = 1;
      distinct++;
    }
    if (c >= 65 && c <= 90) {
      upper++;
      if (c > 70) nonHex++;
    } else if (isLower) {
      lower++;
      if (c > 102) nonHex++;
    } else if (c >= 48 && c <= 57) digit++;
    else if (c === 43 || c === 47 || c === 45 || c === 95) {
      sym++;
      nonHex++;
    }
  }
  const total = upper + lower + digit + sym; // '=' and line breaks excluded
  if (total === 0 || nonHex === 0) return false;
  const expectedDistinct = 64 * (1 - Math.pow(63 / 64, total));
  if (distinct < expectedDistinct * MIN_DISTINCT_SHARE) return false;
  if (lowerRuns > 0 && lower / lowerRuns > MAX_MEAN_LOWER_RUN) return false;
  const share = (x: number) => x / total;
  return (
    share(upper) >= 0.2 &&
    share(upper) <= 0.65 &&
    share(lower) >= 0.2 &&
    share(lower) <= 0.65 &&
    share(digit) >= 0.03 &&
    share(digit) <= 0.35 &&
    share(sym) <= 0.1
  );
}

/**
 * Chars that may continue a base64 run as it stands in a text: both alphabets and `=`, plus the
 * line breaks of wrapped base64 (`\n`, `\r`) and the backslash of their JSON escapes (`\n`, `\/`).
 */
const RUN_CHAR = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_=\n\r\\') RUN_CHAR[c.charCodeAt(0)] = 1;

/**
 * Is there a run of at least `minChars` chars that base64 could be made of? A cheap, linear
 * pre-filter before the strict parse (no regex, no backtracking): it looks at the LAST char of
 * each window first, so in prose or code, where runs are short, it reads about one char in
 * (minChars / word length) and jumps. Each char is read at most once. It never misses a base64
 * body of `minChars` or more, wrapped or JSON-escaped; what it finds may still be no base64.
 */
export function hasBase64Run(s: string, minChars: number): boolean {
  return hasBase64RunIn(s, 0, s.length, minChars);
}

/** {@link hasBase64Run} in `s[from:to]`, without slicing it. */
export function hasBase64RunIn(s: string, from: number, to: number, minChars: number): boolean {
  const n = to;
  let start = from; // the window [start, start + minChars) is the candidate run
  let verifiedEnd = from; // s[start, verifiedEnd) are known run chars
  while (start + minChars <= n) {
    const end = start + minChars;
    let j = end - 1;
    for (; j >= verifiedEnd; j--) {
      const c = s.charCodeAt(j);
      if (c >= 128 || RUN_CHAR[c] === 0) break;
    }
    if (j < verifiedEnd) return true;
    // No run of minChars can contain s[j]: the next candidate starts after it, and s(j, end) are run chars.
    start = j + 1;
    verifiedEnd = end;
  }
  return false;
}

/** {@link hasBase64Run} over bytes (ASCII is all it looks for, so UTF-8 needs no decoding). */
export function hasBase64RunBytes(b: Uint8Array, minChars: number): boolean {
  const n = b.length;
  let start = 0;
  let verifiedEnd = 0;
  while (start + minChars <= n) {
    const end = start + minChars;
    let j = end - 1;
    for (; j >= verifiedEnd; j--) {
      const c = b[j]!;
      if (c >= 128 || RUN_CHAR[c] === 0) break;
    }
    if (j < verifiedEnd) return true;
    start = j + 1;
    verifiedEnd = end;
  }
  return false;
}
