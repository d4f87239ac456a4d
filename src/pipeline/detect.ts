import type { ContentKind } from './types.js';
import { scanJsonPrefix } from './json-prefix.js';
import { countMatches, isBinaryBytes, isBinaryString } from './binary.js';

// The binary check lives in binary.ts (a leaf the hook's fast path loads alone); its importers keep this door.
export { binaryStringForm, isBinaryBytes, isBinaryString, mayHoldBinaryString, type BinaryCheckOptions, type BinaryStringForm } from './binary.js';

// JSON cut short is part of telling kinds apart; the summarizer closes it to read its schema.
export { closeJsonPrefix } from './json-prefix.js';

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

/** Head of the text the kind heuristics look at. */
const KIND_SNIFF_CHARS = 64 * 1024;
/** Up to this size the JSON kind is confirmed with JSON.parse; above it, by shape. */
const JSON_CONFIRM_MAX_CHARS = 1024 * 1024;

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

const HTML_RE = /^\s*(?:<!doctype\s+html|<html[\s>]|<head[\s>]|<body[\s>])/i;
const XML_RE = /^\s*<\?xml\s/;
const LOG_LINE_RE =
  /^(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\[?\d{2}:\d{2}:\d{2}|\[?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL)\b|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}|\s*at \S+ \(|\x1b\[)/;
/** A timestamp anywhere (ISO 8601, syslog, Apache/nginx access log); also used to parse logs. */
export const TIMESTAMP_RE =
  /\b(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2}|\d{2}\/(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\/\d{4}:\d{2}:\d{2}:\d{2}(?: [+-]\d{4})?)/;
/** A log level word or `level=…` field; also used to parse logs. */
export const LEVEL_RE =
  /\b(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|CRIT|PANIC|SEVERE|EMERG|ALERT)\b|\blevel["']?\s*[:=]\s*["']?(trace|debug|info|notice|warn|warning|error|fatal|critical|panic)\b/i;
/** Chars at the start of a line searched for a timestamp (prefixes such as `web-1  | ` come before it). */
const LOG_TIMESTAMP_CHARS = 64;
/** Fewer lines than this with a timestamp are a message that mentions a time, not a log. */
const MIN_LOG_LINES = 3;
const CODE_LINE_RE =
  /^\s*(?:import\s|export\s|from\s\S+\simport|function\s|async\s+function\s|def\s|class\s|interface\s|type\s+\w+\s*=|const\s|let\s|var\s|#include\s|package\s|fn\s|func\s|pub\s|use\s|public\s|private\s|return\b|if\s*\(|for\s*\(|while\s*\(|}|\/\/|\/\*|\*\s|\*\/|@import\s|['"]use (?:client|strict)['"])/;
/** Statement and block ends: code lines that start with a name (`x = f();`, `body {`) end like this. */
const CODE_END_RE = /[;{}]\s*$/;
const MD_LINE_RE = /^(?:#{1,6}\s|```|\s*[-*+]\s+\S|\s*\d+\.\s+\S|>\s|\|.*\|\s*$)/;
/**
 * Markdown that only a writer of Markdown puts in a line: **bold**, `code`, [links](…). Bounded
 * spans, so a hostile line of 64K `[` costs linear time, not quadratic.
 */
const MD_INLINE_RE = /\*\*[^*\n]{1,200}\*\*|`[^`\n]{1,200}`|\[[^\]\n]{1,200}\]\([^)\s]{1,500}\)/g;
/** Inline Markdown marks that make bullet lists Markdown without a heading (plain `* item` output is not). */
const MIN_MD_INLINE_MARKS = 3;
/** How a source file opens: an import, an export, a directive, a package line. */
const MODULE_START_RE = /^\s*(?:import\s.+\sfrom\s|import\s+['"]|export\s|['"]use (?:client|strict)['"]|package\s|#include\s|from\s\S+\simport\s|#!\/)/;
/** Share of code-like lines enough for a text that opens like a module. */
const MIN_MODULE_CODE_SHARE = 0.1;

/**
 * Share of Markdown-looking lines; a fenced block counts as its fence lines only (a spec with a
 * long JSON example is still Markdown).
 */
function markdownShare(lines: string[]): number {
  let md = 0;
  let total = 0;
  let fenced = false;
  for (const l of lines) {
    const fence = l.trimStart().startsWith('```');
    if (fence) fenced = !fenced;
    if (fenced && !fence) continue;
    total++;
    if (fence || MD_LINE_RE.test(l)) md++;
  }
  return total === 0 ? 0 : md / total;
}

function splitHeadLines(head: string, max: number): string[] {
  const lines = head.split('\n', max + 1);
  if (lines.length > max) lines.length = max;
  return lines;
}

/** Split one CSV record (RFC 4180 quotes; records spanning lines are handled by the caller). */
export function splitCsvLine(line: string, delim: string): string[] {
  if (!line.includes('"')) return (line.endsWith('\r') ? line.slice(0, -1) : line).split(delim);
  const out: string[] = [];
  let cur = '';
  let q = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (q) {
      if (c === '"') {
        if (line[i + 1] === '"') {
          cur += '"';
          i++;
        } else q = false;
      } else cur += c;
    } else if (c === '"' && cur === '') q = true;
    else if (c === delim) {
      out.push(cur);
      cur = '';
    } else if (c !== '\r') cur += c;
  }
  out.push(cur);
  return out;
}

/** CSV delimiters tried, most common first. */
const CSV_DELIMITERS = [',', '\t', ';', '|'] as const;
/** Rows of a table sniffed for its delimiter. */
const CSV_SNIFF_ROWS = 20;
/** Share of sniffed rows that must have the first row's column count. */
const MIN_CSV_CONSISTENT_SHARE = 0.9;

/**
 * The delimiter of a table: the one giving most columns (at least two) with the same column
 * count on nearly every row, or null. Two-column "tables" whose fields are phrases are prose
 * with one comma per line, not CSV.
 */
export function detectDelimiter(lines: string[]): string | null {
  const rows = lines.filter((l) => l.trim() !== '').slice(0, CSV_SNIFF_ROWS);
  if (rows.length < 2) return null;
  let best: string | null = null;
  let bestCols = 1;
  for (const d of CSV_DELIMITERS) {
    const cells = rows.map((r) => splitCsvLine(r, d));
    const first = cells[0]!.length;
    if (first <= bestCols) continue;
    if (cells.filter((c) => c.length === first).length < rows.length * MIN_CSV_CONSISTENT_SHARE) continue;
    if (first === 2 && cells.some((c) => c.some((f) => f.trim().split(/\s+/).length > 3))) continue;
    // A delimiter that only ends the lines (`key: value,` in a dump) makes no second column.
    if (first === 2 && cells.filter((c) => (c[1] ?? '').trim() === '').length * 2 > rows.length) continue;
    best = d;
    bestCols = first;
  }
  return best;
}

function looksCsv(lines: string[]): boolean {
  // Three rows at least: a header and one row is too little to tell a table from two lines of prose.
  return lines.filter((l) => l.trim() !== '').length >= 3 && detectDelimiter(lines) !== null;
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

/**
 * How a tool wrapped the content it shows: `line-numbers` for a numbered listing (Claude Code's
 * Read `     1→x`, `cat -n` and `nl -ba` `     1\tx`), `exec-output` for the header Codex CLI puts
 * before a command's output (`Chunk ID: …`, `Wall time: …`, `Output:`).
 */
export type TextWrapper = 'line-numbers' | 'exec-output';

export interface TextFormat {
  /** The kind of the content; inside wrappers, of what they wrap (a Read of a .json file is `json`). */
  kind: ContentKind;
  /** Outermost first; empty for a plain text. The text itself is then NOT a file of `kind`. */
  wrappers: TextWrapper[];
}

/** Claude Code's Read prefix (`→`, right-aligned number; since 2.1.x a bare number and a tab), or cat -n / nl's (space-padded number, tab). */
const NUMBERED_LINE_RE = /^ *(\d{1,9})→|^ *(\d{1,9})\t/;
/** Lines sampled to decide that a text is a numbered listing. */
const NUMBERED_SNIFF_LINES = 200;
/**
 * Share of the sampled non-empty lines that carry a number. Below 1 because tools add lines of
 * their own: Edit's "Here's the result of running `cat -n`…" header, a trailing
 * `<system-reminder>`.
 */
const MIN_NUMBERED_SHARE = 0.6;
/** Share of consecutive numbered lines counting up by one: a real listing, not a column of ids. */
const MIN_SEQUENTIAL_SHARE = 0.9;
/** Codex CLI's exec header (an MCP call's output has no `Chunk ID:` line); the output follows `Output:` (and its own line count). */
const EXEC_HEADER_RE = /^(?:Chunk ID: [^\n]*\n)?Wall time: [^\n]*\n(?:(?!Output:)[^\n]*\n){0,4}Output:\n(?:Total output lines: \d+\n\n?)?/;
/** Chars of a text searched for the exec header. */
const EXEC_HEADER_MAX_CHARS = 1024;
/** Wrappers unwrapped at most (an exec output holding a numbered listing is two). */
const MAX_WRAPPERS = 2;

function isNumberedListing(head: string): boolean {
  let lines = 0;
  let numbered = 0;
  let pairs = 0;
  let sequential = 0;
  let prev = -1;
  let reminder = false;
  for (const line of splitHeadLines(head, NUMBERED_SNIFF_LINES)) {
    // Claude Code appends a <system-reminder> block to a Read: its lines are not the listing's.
    if (line.startsWith('<system-reminder>')) reminder = true;
    if (reminder) {
      if (line.includes('</system-reminder>')) reminder = false;
      continue;
    }
    if (line.trim() === '') continue;
    lines++;
    const m = NUMBERED_LINE_RE.exec(line);
    if (!m) continue;
    // A bare `1\t` (Claude Code's Read since 2.1.x) must start the text: a TSV's running-id column follows its header.
    if (m[2] !== undefined && !line.startsWith(' ') && numbered === 0 && lines > 1) return false;
    numbered++;
    const n = Number(m[1] ?? m[2]);
    if (prev !== -1) {
      pairs++;
      if (n === prev + 1) sequential++;
    }
    prev = n;
  }
  return numbered > 0 && numbered >= lines * MIN_NUMBERED_SHARE && sequential >= pairs * MIN_SEQUENTIAL_SHARE;
}

/** The numbered lines of a listing without their numbers; the tool's own unnumbered lines dropped. */
function stripLineNumbers(text: string): string {
  const out: string[] = [];
  let at = 0;
  while (at <= text.length) {
    let end = text.indexOf('\n', at);
    if (end === -1) end = text.length;
    const line = text.slice(at, end);
    const m = NUMBERED_LINE_RE.exec(line);
    if (m) out.push(line.slice(m[0].length));
    at = end + 1;
  }
  return out.join('\n');
}

function unwrapOnce(text: string, head: string): { wrapper: TextWrapper; body: string } | null {
  const exec = EXEC_HEADER_RE.exec(head.length > EXEC_HEADER_MAX_CHARS ? head.slice(0, EXEC_HEADER_MAX_CHARS) : head);
  if (exec) return { wrapper: 'exec-output', body: text.slice(exec[0].length) };
  if (isNumberedListing(head)) return { wrapper: 'line-numbers', body: stripLineNumbers(text) };
  return null;
}

/**
 * The content inside the wrappers {@link detectTextFormat} finds (the text itself when none):
 * what a digest or a parser should read. `maxChars` bounds the part of `text` unwrapped.
 */
export function unwrapText(text: string, maxChars = Infinity): string {
  let t = text.length > maxChars ? text.slice(0, maxChars) : text;
  for (let i = 0; i < MAX_WRAPPERS; i++) {
    const u = unwrapOnce(t, t.length > KIND_SNIFF_CHARS ? t.slice(0, KIND_SNIFF_CHARS) : t);
    if (!u) break;
    t = u.body;
  }
  return t;
}

/**
 * The one content-kind sniffer of Spillway (guard, index import, summaries), cheapest check
 * first: JSON, NDJSON, HTML, XML, then line statistics over the head. A tool's wrapper (line
 * numbers, an exec header) is seen through: the kind is the wrapped content's.
 */
export function detectTextFormat(text: string): TextFormat {
  const wrappers: TextWrapper[] = [];
  let t = text;
  for (let i = 0; i < MAX_WRAPPERS; i++) {
    const head = t.length > KIND_SNIFF_CHARS ? t.slice(0, KIND_SNIFF_CHARS) : t;
    // Past JSON_CONFIRM_MAX_CHARS only the head is judged anyway: unwrap no more than that.
    const u = unwrapOnce(t.length > JSON_CONFIRM_MAX_CHARS ? head : t, head);
    if (!u) break;
    wrappers.push(u.wrapper);
    t = u.body;
  }
  return { kind: plainTextKind(t), wrappers };
}

/** The kind of a text, from its head (and, for JSON, a parse when it is small). See {@link detectTextFormat}. */
export function detectTextKind(text: string): ContentKind {
  return detectTextFormat(text).kind;
}

/** Lines, or chars, a cut JSON text must span before it is called JSON: `{` and a word are not a file. */
const MIN_CUT_JSON_LINES = 3;
const MIN_CUT_JSON_CHARS = 1_000;

function looksLikeCutJson(text: string): boolean {
  let nl = 0;
  for (let i = text.indexOf('\n'); i !== -1 && nl < MIN_CUT_JSON_LINES; i = text.indexOf('\n', i + 1)) nl++;
  return (nl >= MIN_CUT_JSON_LINES || text.length >= MIN_CUT_JSON_CHARS) && scanJsonPrefix(text).state === 'prefix';
}

function plainTextKind(text: string): ContentKind {
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
  // Bytes decoded as text (a PNG read as UTF-8): isBinaryBytes's first rule, a NUL, still shows.
  if (head.includes('\0')) return 'binary';
  const lines = splitHeadLines(head, 200);
  if ((c === 0x7b || c === 0x5b) && looksNdjson(lines)) return 'ndjson';
  // JSON cut short (a Read stopped at the client's token cap, a head): still JSON by its content.
  // A large text is judged by its head, as above.
  if ((c === 0x7b || c === 0x5b) && looksLikeCutJson(text.length <= JSON_CONFIRM_MAX_CHARS ? text : head)) return 'json';
  if (HTML_RE.test(head)) return 'html';
  if (XML_RE.test(head)) return 'xml';
  const sample = lines.slice(0, 100).filter((l) => l.trim() !== '');
  if (sample.length === 0) return 'text';
  const share = (test: (l: string) => boolean) => sample.filter(test).length / sample.length;
  // Terminal output: colour codes on many lines, wherever they start.
  if (share((l) => LOG_LINE_RE.test(l) || l.includes('\x1b[')) >= 0.3) return 'log';
  if (sample.length >= MIN_LOG_LINES && share((l) => TIMESTAMP_RE.test(l.slice(0, LOG_TIMESTAMP_CHARS))) >= 0.5) return 'log';
  if (looksCsv(lines)) return 'csv';
  if (markdownShare(sample) >= 0.15 && (/^#{1,6}\s|^```/m.test(head) || countMatches(head, MD_INLINE_RE, MIN_MD_INLINE_MARKS) >= MIN_MD_INLINE_MARKS)) {
    return 'markdown';
  }
  const code = share((l) => CODE_LINE_RE.test(l) || CODE_END_RE.test(l));
  // A file that opens like a module (imports, 'use client') is code even when most lines are JSX markup.
  if ((code >= 0.3 || (code >= MIN_MODULE_CODE_SHARE && MODULE_START_RE.test(sample[0]!))) && /[{};()=]/.test(head)) return 'code';
  if (head.includes('\x1b[')) return 'log';
  return 'text';
}

/** Binary or text, and which kind of text. Synchronous; binary MIME types come from {@link sniffBinary}. */
export function detectContent(input: string | Uint8Array): ContentDetection {
  if (typeof input === 'string') {
    if (isBinaryString(input)) return { binary: true, kind: 'binary', ...KIND_INFO.binary };
    return textDetection(detectTextFormat(input));
  }
  if (isBinaryBytes(input)) return { binary: true, kind: 'binary', ...KIND_INFO.binary };
  const b = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const head = b.subarray(0, KIND_SNIFF_CHARS * 4).toString('utf8');
  return textDetection(detectTextFormat(b.length <= JSON_CONFIRM_MAX_CHARS ? b.toString('utf8') : head));
}

/** A wrapped text (a numbered Read of a .json file) has its content's kind but is itself plain text. */
function textDetection(f: TextFormat): ContentDetection {
  return { binary: f.kind === 'binary', kind: f.kind, ...KIND_INFO[f.wrappers.length ? 'text' : f.kind] };
}

type FileType = typeof import('file-type');
let fileType: Promise<FileType> | undefined;
const loadFileType = () => (fileType ??= import('file-type'));

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const PNG_TYPE = { mimeType: 'image/png', ext: '.png' } as const;

/**
 * file-type's answer for the commonest asset, without loading it (its import is ~50 ms of a cold
 * process, more under a loader): a PNG whose 13-byte IHDR is followed by an IDAT chunk. file-type
 * walks the chunks the same way and answers png at that IDAT (an APNG's acTL comes before it), and
 * no check it makes before PNG's matches a PNG signature (test/pipeline/detect-kind.test.ts holds
 * the two equal). Anything else is for file-type.
 */
export function quickSniff(b: Uint8Array): { mimeType: string; ext: string } | undefined {
  // file-type reads the next chunk only while 8 more bytes follow the IHDR (offset 33)
  if (b.length <= 41) return undefined;
  for (let i = 0; i < 8; i++) if (b[i] !== PNG_SIGNATURE[i]) return undefined;
  const ihdr = b[8] === 0 && b[9] === 0 && b[10] === 0 && b[11] === 13 && b[12] === 0x49 && b[13] === 0x48 && b[14] === 0x44 && b[15] === 0x52;
  // the IDAT length read as a signed 32-bit int: negative, file-type answers nothing
  const idat = b[33]! < 0x80 && b[37] === 0x49 && b[38] === 0x44 && b[39] === 0x41 && b[40] === 0x54;
  return ihdr && idat ? { ...PNG_TYPE } : undefined;
}

/**
 * Start loading file-type (its first import costs tens of milliseconds) while other work goes on:
 * the asset walk calls this for the first find {@link quickSniff} cannot type, so the module's files
 * are read before that asset is typed. True when the load was started (or is not needed again).
 * Never throws; a failed load is seen again by sniffBinary.
 */
export function preloadSniffer(bytes?: Uint8Array): boolean {
  if (bytes && quickSniff(bytes)) return false;
  loadFileType().catch(() => {
    fileType = undefined;
  });
  return true;
}

/** What file-type says about some bytes (magic numbers), or nothing. */
export async function sniffBinary(bytes: Uint8Array): Promise<{ mimeType: string; ext: string } | undefined> {
  const quick = quickSniff(bytes);
  if (quick) return quick;
  try {
    const { fileTypeFromBuffer } = await loadFileType();
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
