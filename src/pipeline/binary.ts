import { isUtf8 } from 'node:buffer';

/**
 * Binary or text: the one binary check of Spillway, for bytes and for strings, in a leaf of its own.
 * detect.ts (content kinds, which also loads the JSON prefix scanner and the kind regexes) re-exports
 * it; the hook's pass-through path (quick.ts) loads only this, since it runs on every tool call.
 */

/** Share of disallowed control characters above which valid UTF-8 is still called binary. */
const MAX_CONTROL_SHARE = 0.01;
/** Share of non-ASCII bytes in non-UTF-8 input below which it is legacy 8-bit text, not binary. */
const MAX_LEGACY_HIGH_SHARE = 0.3;

// Control characters that do not occur in text. Allowed: \t \n \v \f \r, \b (overstrike), ESC (ANSI),
// and BEL, which ends terminal title sequences (ESC ] 0 ; title BEL) in shell output captured from a PTY.
const BAD_CONTROL_RE = /[\x00-\x06\x0e-\x1a\x1c-\x1f\x7f]/g;
const NON_LATIN1_RE = /[^\x00-\xff]/;
const ANY_BAD_CONTROL_RE = /[\x00-\x06\x0e-\x1a\x1c-\x1f\x7f]/;

/** How many times `re` (global) matches in `s`, counting up to just past `stopAt`. */
export function countMatches(s: string, re: RegExp, stopAt: number): number {
  re.lastIndex = 0;
  let n = 0;
  while (re.exec(s) !== null) {
    if (++n > stopAt) break;
  }
  re.lastIndex = 0;
  return n;
}

/** Longest UTF-8 sequence: how many bytes at the end of a cut window may be an unfinished character. */
const MAX_UTF8_SEQUENCE_BYTES = 4;

export interface BinaryCheckOptions {
  /**
   * The bytes are a window cut from a longer input (the head of a file). An unfinished UTF-8
   * character at the cut is then no evidence of binary; thresholds are the same.
   */
  partial?: boolean;
}

/**
 * Bytes: binary or text? The one binary check of Spillway (guard, index, reader, base64
 * extraction), cheap to expensive: a NUL; a PDF signature; more than MAX_CONTROL_SHARE control characters that
 * text never has (ANSI colours, overstrike, form feeds are allowed); valid UTF-8 is then text;
 * other bytes are legacy 8-bit text when at most MAX_LEGACY_HIGH_SHARE of them are non-ASCII.
 * Callers that only read a head pass that head with `partial`.
 */
export function isBinaryBytes(buf: Uint8Array, opts: BinaryCheckOptions = {}): boolean {
  let b = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (b.length === 0) return false;
  if (b.indexOf(0) !== -1) return true;
  if (hasTextLikeBinaryMagic(b)) return true;
  const latin1 = b.toString('latin1');
  const controls = countMatches(latin1, BAD_CONTROL_RE, Math.ceil(b.length * MAX_CONTROL_SHARE));
  if (controls > b.length * MAX_CONTROL_SHARE) return true;
  if (opts.partial) b = b.subarray(0, completeUtf8End(b));
  if (isUtf8(b)) return false;
  // Not UTF-8: legacy 8-bit text has few high bytes; compressed/encoded data has about half.
  let high = 0;
  for (let i = 0; i < b.length; i++) if (b[i]! >= 0x80) high++;
  return high > b.length * MAX_LEGACY_HIGH_SHARE;
}

/**
 * Binary formats whose files can be all printable bytes (a small uncompressed PDF is ASCII with a
 * few high bytes): their signature decides. Formats with NULs or control bytes in their header
 * (PNG, GIF, ZIP, WAV…) are caught by the checks that follow anyway.
 */
const TEXT_LIKE_BINARY_MAGIC = ['%PDF-'];

function hasTextLikeBinaryMagic(b: Uint8Array | string): boolean {
  for (const m of TEXT_LIKE_BINARY_MAGIC) {
    if (b.length < m.length) continue;
    let ok = true;
    for (let i = 0; i < m.length && ok; i++) ok = (typeof b === 'string' ? b.charCodeAt(i) : b[i]) === m.charCodeAt(i);
    if (ok) return true;
  }
  return false;
}

/** Length of `b` without an unfinished UTF-8 character at its end. */
function completeUtf8End(b: Uint8Array): number {
  let i = b.length;
  let cont = 0;
  while (cont < MAX_UTF8_SEQUENCE_BYTES - 1 && i > 0 && (b[i - 1]! & 0xc0) === 0x80) {
    i--;
    cont++;
  }
  if (i === 0) return b.length;
  const lead = b[i - 1]!;
  if (lead < 0xc0) return b.length; // ASCII or a stray continuation byte: nothing was cut
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  return cont + 1 < need ? i - 1 : b.length;
}

/**
 * A string that is binary, and how it carries the bytes:
 *
 * - `latin1`: every unit ≤ 0xFF (bytes read with 'latin1'/'binary'), and it has a NUL, more than
 *   MAX_CONTROL_SHARE control characters text never has, or starts like a PDF. Saved as those bytes, exactly.
 * - `decoded`: it has units above 0xFF, so it is a decode (a client read the bytes as UTF-8), and it
 *   has a NUL, more than MAX_CONTROL_SHARE of those control characters, or more than
 *   MAX_REPLACEMENT_SHARE U+FFFD (at least MIN_REPLACEMENT_CHARS of them): what a lossy UTF-8 decode
 *   of binary leaves. Saved as its UTF-8, which is what was received; the original bytes are lost
 *   wherever a U+FFFD stands.
 *
 * Ordinary text is none of these: tabs, newlines, ANSI colour escapes, backspaces and BEL are
 * allowed controls, and a few U+FFFD (a Latin-1 file read as UTF-8, one bad byte) stay under the bar.
 * Undefined: text.
 */
export function binaryStringForm(s: string): BinaryStringForm | undefined {
  if (s.length === 0) return undefined;
  const magic = hasTextLikeBinaryMagic(s);
  // Text has none of these control characters at all (NUL is one of them), and a lossy decode
  // leaves U+FFFD: two native scans settle most strings.
  const small = s.length <= CONTROL_SAMPLE_CHARS;
  if (!magic && small && !ANY_BAD_CONTROL_RE.test(s) && s.indexOf(REPLACEMENT) === -1) return undefined;
  // Which form, asked only of a string already found binary (a whole scan of a big text otherwise).
  const form = (): BinaryStringForm => (NON_LATIN1_RE.test(s) ? 'decoded' : 'latin1');
  // NUL anywhere: a native scan of the whole string.
  if (s.indexOf('\0') !== -1) return form();
  if (magic && form() === 'latin1') return 'latin1';
  // Control-character share: whole string when small, else spread samples (binary without a
  // single NUL is rare, and its controls are spread through it).
  const sample = small ? s : spreadSample(s, CONTROL_SAMPLE_CHARS);
  const controls = countMatches(sample, BAD_CONTROL_RE, Math.ceil(sample.length * MAX_CONTROL_SHARE));
  if (controls > sample.length * MAX_CONTROL_SHARE) return form();
  // A U+FFFD is above 0xFF: a string with enough of them is a decode.
  const replaced = countChar(sample, REPLACEMENT, Math.max(MIN_REPLACEMENT_CHARS, Math.ceil(sample.length * MAX_REPLACEMENT_SHARE)));
  return replaced >= MIN_REPLACEMENT_CHARS && replaced > sample.length * MAX_REPLACEMENT_SHARE ? 'decoded' : undefined;
}

/** How a binary string carries its bytes (see {@link binaryStringForm}). */
export type BinaryStringForm = 'latin1' | 'decoded';

/** A string that is binary, in either form ({@link binaryStringForm}): the model cannot read it as text. */
export function isBinaryString(s: string): boolean {
  return binaryStringForm(s) !== undefined;
}

/** The marks binary leaves in a text or in the JSON that quotes it: a NUL, or the escapes of low controls and of U+FFFD. */
const BINARY_HINTS = ['\0', '\\u000', '\\u001', '\\ufffd', '\\uFFFD'];
const BINARY_HINT_BYTES = BINARY_HINTS.map((h) => Buffer.from(h, 'latin1'));
const REPLACEMENT_BYTES = Buffer.from('\uFFFD', 'utf8');

/** Whether `needle` occurs at least `n` times in `hay` (native searches, stops at the n-th). */
function occursAtLeast(hay: string | Buffer, needle: string | Buffer, n: number): boolean {
  let at = -1;
  for (let k = 0; k < n; k++) {
    at = typeof hay === 'string' ? hay.indexOf(needle as string, at + 1) : hay.indexOf(needle as Buffer, at + 1);
    if (at === -1) return false;
  }
  return true;
}

/**
 * May this text or these bytes (UTF-8, e.g. a JSON-RPC line) hold a string that is binary, as
 * itself or quoted in JSON (`"\u0000…"`)? A few native searches, no decoding; false means no
 * binary string can be in it. U+FFFD counts from MIN_REPLACEMENT_CHARS on (one bad byte in a log is
 * text). ANSI colours quoted in JSON (`\u001b`) say yes too: the full check tells them apart.
 */
export function mayHoldBinaryString(raw: string | Uint8Array): boolean {
  if (typeof raw === 'string') {
    return BINARY_HINTS.some((h) => raw.indexOf(h) !== -1) || occursAtLeast(raw, '\uFFFD', MIN_REPLACEMENT_CHARS) || hasTextLikeBinaryMagic(raw) || raw.indexOf('"%PDF-') !== -1;
  }
  const b = Buffer.isBuffer(raw) ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  return BINARY_HINT_BYTES.some((h) => b.indexOf(h) !== -1) || occursAtLeast(b, REPLACEMENT_BYTES, MIN_REPLACEMENT_CHARS) || b.indexOf('"%PDF-') !== -1 || hasTextLikeBinaryMagic(b);
}

/** U+FFFD, what a UTF-8 decoder puts where bytes were not UTF-8. */
const REPLACEMENT = '\uFFFD';
/** Share of U+FFFD above which a decoded string is binary read as UTF-8 (random bytes give about half; a Latin-1 text read as UTF-8, a few percent). */
const MAX_REPLACEMENT_SHARE = 0.1;
/** Fewer U+FFFD than this never make a string binary (a short text with one bad byte is still text). */
const MIN_REPLACEMENT_CHARS = 8;

function countChar(s: string, ch: string, stopAt: number): number {
  let n = 0;
  for (let i = s.indexOf(ch); i !== -1 && n <= stopAt; i = s.indexOf(ch, i + 1)) n++;
  return n;
}

/** Chars of a string examined for control characters (whole string below this). */
const CONTROL_SAMPLE_CHARS = 256 * 1024;
const SPREAD_SAMPLES = 16;

function spreadSample(s: string, chars: number): string {
  const each = Math.floor(chars / SPREAD_SAMPLES);
  const step = Math.floor(s.length / SPREAD_SAMPLES);
  let out = '';
  for (let k = 0; k < SPREAD_SAMPLES; k++) out += s.slice(k * step, k * step + each);
  return out;
}
