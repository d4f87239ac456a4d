import { isUtf8 } from 'node:buffer';
import type { ContentKind } from './types.js';

/**
 * Content detection, cheapest check first: emptiness, NUL bytes, UTF-8 validity and control
 * characters over the WHOLE input (native scans), then the text kind from the head.
 * Magic-byte typing of binary is async (file-type): {@link sniffBinary}.
 */

export interface ContentDetection {
  binary: boolean;
  kind: ContentKind;
  mimeType?: string;
  ext?: string;
}

/** Share of disallowed control characters above which valid UTF-8 is still called binary. */
const MAX_CONTROL_SHARE = 0.01;
/** Share of non-ASCII bytes in non-UTF-8 input below which it is legacy 8-bit text, not binary. */
const MAX_LEGACY_HIGH_SHARE = 0.3;
/** Head of the text the kind heuristics look at. */
const KIND_SNIFF_CHARS = 64 * 1024;
/** Up to this size the JSON kind is confirmed with JSON.parse; above it, by shape. */
const JSON_CONFIRM_MAX_CHARS = 1024 * 1024;

// Control characters that do not occur in text. Allowed: \t \n \v \f \r, \b (overstrike), ESC (ANSI).
// eslint-disable-next-line no-control-regex
const BAD_CONTROL_RE = /[\x00-\x07\x0e-\x1a\x1c-\x1f\x7f]/g;
const NON_LATIN1_RE = /[^\x00-\xff]/;

export const KIND_INFO: Record<ContentKind, { mimeType: string; ext: string }> = {
  json: { mimeType: 'application/json', ext: '.json' },
  ndjson: { mimeType: 'application/x-ndjson', ext: '.ndjson' },
  csv: { mimeType: 'text/csv', ext: '.csv' },
  log: { mimeType: 'text/plain', ext: '.log' },
  html: { mimeType: 'text/html', ext: '.html' },
  xml: { mimeType: 'application/xml', ext: '.xml' },
  markdown: { mimeType: 'text/markdown', ext: '.md' },
  code: { mimeType: 'text/plain', ext: '.txt' },
  text: { mimeType: 'text/plain', ext: '.txt' },
  binary: { mimeType: 'application/octet-stream', ext: '.bin' },
};

function countMatches(s: string, re: RegExp, stopAt: number): number {
  re.lastIndex = 0;
  let n = 0;
  while (re.exec(s) !== null) {
    if (++n > stopAt) break;
  }
  re.lastIndex = 0;
  return n;
}

/** Bytes: binary or text? Whole input, cheap to expensive. */
export function isBinaryBytes(buf: Uint8Array): boolean {
  const b = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (b.length === 0) return false;
  if (b.indexOf(0) !== -1) return true;
  const latin1 = b.toString('latin1');
  const controls = countMatches(latin1, BAD_CONTROL_RE, Math.ceil(b.length * MAX_CONTROL_SHARE));
  if (controls > b.length * MAX_CONTROL_SHARE) return true;
  if (isUtf8(b)) return false;
  // Not UTF-8: legacy 8-bit text has few high bytes; compressed/encoded data has about half.
  let high = 0;
  for (let i = 0; i < b.length; i++) if (b[i]! >= 0x80) high++;
  return high > b.length * MAX_LEGACY_HIGH_SHARE;
}

/**
 * A JS string that carries bytes (read with 'latin1'/'binary'): every unit ≤ 0xFF and it
 * has NULs or the control characters of binary data. Such a string is saved as those bytes.
 */
export function isBinaryString(s: string): boolean {
  if (s.length === 0) return false;
  // NUL anywhere: a native scan of the whole string.
  const hasNul = s.indexOf('\0') !== -1;
  if (!hasNul) {
    // Control-character share: whole string when small, else spread samples (binary without a
    // single NUL is rare, and its controls are spread through it).
    const sample = s.length <= CONTROL_SAMPLE_CHARS ? s : spreadSample(s, CONTROL_SAMPLE_CHARS);
    const controls = countMatches(sample, BAD_CONTROL_RE, Math.ceil(sample.length * MAX_CONTROL_SHARE));
    if (controls <= sample.length * MAX_CONTROL_SHARE) return false;
  }
  return !NON_LATIN1_RE.test(s);
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

const HTML_RE = /^\s*(?:<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])/i;
const XML_RE = /^\s*<\?xml\s/;
const LOG_LINE_RE =
  /^(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\[?\d{2}:\d{2}:\d{2}|\[?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL)\b|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}|\s*at \S+ \(|\x1b\[)/;
const CODE_LINE_RE =
  /^\s*(?:import\s|export\s|from\s\S+\simport|function\s|def\s|class\s|const\s|let\s|var\s|#include\s|package\s|fn\s|pub\s|use\s|public\s|private\s|return\b|if\s*\(|for\s*\(|while\s*\(|}\s*$|\/\/|\/\*|\*\s)/;
const MD_LINE_RE = /^(?:#{1,6}\s|```|\s*[-*+]\s+\S|\s*\d+\.\s+\S|>\s|\|.*\|\s*$)/;

function splitHeadLines(head: string, max: number): string[] {
  const lines = head.split('\n', max + 1);
  if (lines.length > max) lines.length = max;
  return lines;
}

function looksCsv(lines: string[]): boolean {
  const rows = lines.filter((l) => l.trim() !== '').slice(0, 20);
  if (rows.length < 3) return false;
  for (const sep of [',', '\t', ';']) {
    const counts = rows.map((r) => r.split(sep).length - 1);
    const first = counts[0]!;
    if (first < 1 || counts.filter((c) => c === first).length < rows.length * 0.9) continue;
    // prose with one comma per line is not a table: two columns need short fields
    if (first === 1 && rows.some((r) => r.split(sep).some((f) => f.trim().split(/\s+/).length > 3))) continue;
    return true;
  }
  return false;
}

function looksNdjson(lines: string[]): boolean {
  const rows = lines.filter((l) => l.trim() !== '').slice(0, 5);
  if (rows.length < 2) return false;
  for (const r of rows) {
    const t = r.trim();
    if (!(t.startsWith('{') && t.endsWith('}')) && !(t.startsWith('[') && t.endsWith(']'))) return false;
    try {
      JSON.parse(t);
    } catch {
      return false;
    }
  }
  return true;
}

/** The kind of a text, from its head (and, for JSON, a parse when it is small). */
export function detectTextKind(text: string): ContentKind {
  const head = text.length > KIND_SNIFF_CHARS ? text.slice(0, KIND_SNIFF_CHARS) : text;
  const trimmed = head.trimStart();
  const c = trimmed.charCodeAt(0);
  if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
    if (text.length <= JSON_CONFIRM_MAX_CHARS) {
      try {
        JSON.parse(text);
        return 'json';
      } catch {
        /* maybe ndjson */
      }
    } else {
      const tail = text.slice(-64).trimEnd();
      const last = tail.charCodeAt(tail.length - 1);
      if ((c === 0x7b && last === 0x7d) || (c === 0x5b && last === 0x5d)) {
        if (!looksNdjson(splitHeadLines(head, 6))) return 'json';
      }
    }
  }
  const lines = splitHeadLines(head, 200);
  if ((c === 0x7b || c === 0x5b) && looksNdjson(lines)) return 'ndjson';
  if (HTML_RE.test(head)) return 'html';
  if (XML_RE.test(head)) return 'xml';
  const sample = lines.slice(0, 100).filter((l) => l.trim() !== '');
  if (sample.length === 0) return 'text';
  const share = (re: RegExp) => sample.filter((l) => re.test(l)).length / sample.length;
  if (share(LOG_LINE_RE) >= 0.3) return 'log';
  if (looksCsv(lines)) return 'csv';
  if (share(MD_LINE_RE) >= 0.15 && /^#{1,6}\s|^```/m.test(head)) return 'markdown';
  if (share(CODE_LINE_RE) >= 0.3 && /[{};()=]/.test(head)) return 'code';
  if (head.includes('\x1b[')) return 'log';
  return 'text';
}

/** Binary or text, and which kind of text. Synchronous; binary MIME types come from {@link sniffBinary}. */
export function detectContent(input: string | Uint8Array): ContentDetection {
  if (typeof input === 'string') {
    if (isBinaryString(input)) return { binary: true, kind: 'binary', ...KIND_INFO.binary };
    const kind = detectTextKind(input);
    return { binary: false, kind, ...KIND_INFO[kind] };
  }
  if (isBinaryBytes(input)) return { binary: true, kind: 'binary', ...KIND_INFO.binary };
  const b = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const head = b.subarray(0, KIND_SNIFF_CHARS * 4).toString('utf8');
  const kind = b.length <= JSON_CONFIRM_MAX_CHARS ? detectTextKind(b.toString('utf8')) : detectTextKind(head);
  return { binary: false, kind, ...KIND_INFO[kind] };
}

/** What file-type says about some bytes (magic numbers), or nothing. */
export async function sniffBinary(bytes: Uint8Array): Promise<{ mimeType: string; ext: string } | undefined> {
  try {
    const { fileTypeFromBuffer } = await import('file-type');
    const t = await fileTypeFromBuffer(bytes);
    return t ? { mimeType: t.mime, ext: `.${t.ext}` } : undefined;
  } catch {
    return undefined;
  }
}

/** Extension for a declared MIME type when magic bytes said nothing. */
const MIME_EXT: Record<string, string> = {
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/jpg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'image/svg+xml': '.svg',
  'image/bmp': '.bmp',
  'image/avif': '.avif',
  'image/heic': '.heic',
  'image/tiff': '.tif',
  'image/x-icon': '.ico',
  'audio/wav': '.wav',
  'audio/x-wav': '.wav',
  'audio/wave': '.wav',
  'audio/mpeg': '.mp3',
  'audio/mp3': '.mp3',
  'audio/ogg': '.ogg',
  'audio/flac': '.flac',
  'audio/webm': '.weba',
  'audio/aac': '.aac',
  'audio/mp4': '.m4a',
  'video/mp4': '.mp4',
  'video/webm': '.webm',
  'video/quicktime': '.mov',
  'application/pdf': '.pdf',
  'application/zip': '.zip',
  'application/gzip': '.gz',
  'application/json': '.json',
  'application/xml': '.xml',
  'application/octet-stream': '.bin',
  'text/plain': '.txt',
  'text/html': '.html',
  'text/csv': '.csv',
  'text/markdown': '.md',
};

const MIME_RE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i;

export function isValidMime(m: unknown): m is string {
  return typeof m === 'string' && MIME_RE.test(m);
}

export function extForMime(mime: string | undefined): string {
  if (!mime) return '.bin';
  return MIME_EXT[mime.toLowerCase()] ?? '.bin';
}

/** Quick look at decoded bytes: do they look like binary rather than text? (first 4 KB) */
export function bytesLookBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, 4096);
  if (n === 0) return false;
  let sample = Buffer.from(bytes.buffer, bytes.byteOffset, n);
  for (let i = 0; i < n; i++) if (sample[i] === 0) return true;
  let controls = 0;
  for (let i = 0; i < n; i++) {
    const c = sample[i]!;
    if ((c < 0x20 && c !== 9 && c !== 10 && c !== 13 && c !== 12 && c !== 27 && c !== 8) || c === 0x7f) controls++;
  }
  if (controls > n * 0.05) return true;
  if (n < bytes.length) {
    // don't judge a UTF-8 sequence cut by the sample boundary
    let end = n;
    while (end > n - 4 && end > 0 && (sample[end - 1]! & 0xc0) === 0x80) end--;
    if (end > 0 && sample[end - 1]! >= 0xc0) end--;
    sample = sample.subarray(0, end);
  }
  return !isUtf8(sample);
}
