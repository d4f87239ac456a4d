/** Small string helpers the guard needs everywhere: surrogate-safe cuts, ANSI clean-up, well-formedness. */

type WellFormedString = string & { isWellFormed(): boolean; toWellFormed(): string };

/** True when the string has no lone surrogates (it can be encoded as UTF-8 without loss). */
export function isWellFormed(s: string): boolean {
  return (s as WellFormedString).isWellFormed();
}

/** Lone surrogates replaced by U+FFFD (what UTF-8 encoding does anyway, made explicit). */
export function toWellFormed(s: string): string {
  return (s as WellFormedString).toWellFormed();
}

/** Largest index ≤ `i` that does not fall between the halves of a surrogate pair. */
export function safeCut(s: string, i: number): number {
  if (i <= 0) return 0;
  if (i >= s.length) return s.length;
  const prev = s.charCodeAt(i - 1);
  const next = s.charCodeAt(i);
  if (prev >= 0xd800 && prev <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) return i - 1;
  return i;
}

/** Smallest index ≥ `i` that does not fall between the halves of a surrogate pair. */
export function safeCutUp(s: string, i: number): number {
  const j = safeCut(s, i);
  return j === i ? i : i + 1;
}

/** First `max` UTF-16 units at most, never splitting a pair, with an ellipsis when cut. */
export function truncate(s: string, max: number, ellipsis = '…'): string {
  if (s.length <= max) return s;
  const keep = Math.max(0, max - ellipsis.length);
  return s.slice(0, safeCut(s, keep)) + ellipsis;
}

// CSI / OSC / single-char escape sequences, per ECMA-48.
const ANSI_RE = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/g;
// man-page overstrike: `c\bc` (bold) and `_\bc` (underline) keep the last character.
const OVERSTRIKE_RE = /[^\n\b]\x08/g;

/** Text as a terminal would show it: colour codes and overstrike removed, CRLF as LF. */
export function cleanTerminalText(s: string): string {
  let out = s;
  if (out.includes('\x1b')) out = out.replace(ANSI_RE, '');
  if (out.includes('\b')) out = out.replace(OVERSTRIKE_RE, '');
  if (out.includes('\r\n')) out = out.replace(/\r\n/g, '\n');
  return out;
}

/** `12,345` */
export function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(2)} GB`;
}
