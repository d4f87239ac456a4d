import crypto from 'node:crypto';
import fs from 'node:fs';
import {
  MIN_BASE64_ASSET_CHARS,
  PREVIEW_CHARS,
  describeTokens,
  estimateTokens,
} from '../pipeline/index.js';
import type { ContentKind, StrategyName } from '../pipeline/types.js';

/**
 * Full-text search indexes a bounded window of every payload: its head and its tail. A 500 MB
 * log adds at most this much text to the database, and the head + tail is where tool output
 * says what it is (headers, first rows, the error at the end).
 */
export const FTS_HEAD_BYTES = 4 * 1024;
export const FTS_TAIL_BYTES = 1024;
/**
 * Between head and tail in the full-text body. ASCII on purpose: one non-Latin-1 character
 * would make V8 store the whole 5 KB body as a two-byte string (twice the memory to copy to
 * the writer thread and to convert for SQLite).
 */
export const FTS_GAP = '\n...\n';
/** Longest single-line input excerpt kept on a payload row. */
export const INPUT_EXCERPT_CHARS = 160;
/** Longest tool input JSON kept in the index (the sidecar keeps the whole input). */
export const MAX_INPUT_JSON_CHARS = 16 * 1024;
/** Longest message (what the model was handed) kept in the index. */
export const MAX_MESSAGE_CHARS_INDEXED = 16 * 1024;
/**
 * Payload files up to this size are read whole to estimate tokens when the sidecar has none
 * (a hand-made session, or the guard's sidecar not written yet); bigger ones are estimated from
 * their head and tail, scaled by size, so one huge file never stalls a scan.
 */
export const MAX_ESTIMATE_READ_BYTES = 4 * 1024 * 1024;
/**
 * What a spill message costs the context, used for "tokens saved" when a result would be
 * spilled: the preview plus the path and framing (about 400 chars), at four chars per token.
 */
export const ESTIMATED_SPILL_MESSAGE_TOKENS = Math.ceil((PREVIEW_CHARS + 400) / 4);

/** Opaque, URL-safe, stable id: a prefix letter and 22 base64url chars of sha256(key). */
export function stableId(prefix: string, key: string): string {
  return prefix + crypto.hash('sha256', key, 'base64url').slice(0, 22);
}

/** Char classes for the base64 scan: 1 = base64/base64url char, |2 upper, |4 lower, |8 digit, |16 not a hex char. */
const B64_CLASS = (() => {
  const t = new Uint8Array(128);
  for (let c = 65; c <= 90; c++) t[c] = 1 | 2 | (c > 70 ? 16 : 0);
  for (let c = 97; c <= 122; c++) t[c] = 1 | 4 | (c > 102 ? 16 : 0);
  for (let c = 48; c <= 57; c++) t[c] = 1 | 8;
  for (const c of [43, 47, 95, 45]) t[c] = 1 | 16;
  return t;
})();

/**
 * Spans [start, end) of base64 runs long enough to be an embedded asset, in one linear pass
 * (a backtracking regex is quadratic-ish on text full of long identifiers). Hex-only runs
 * (hashes, dumps) and runs without upper case, lower case and digits (long identifiers,
 * separators) are not base64.
 */
export function base64Spans(text: string): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c0 = text.charCodeAt(i);
    if (c0 >= 128 || B64_CLASS[c0] === 0) {
      i++;
      continue;
    }
    const start = i;
    let seen = 0;
    while (i < n) {
      const c = text.charCodeAt(i);
      const k = c < 128 ? B64_CLASS[c]! : 0;
      if (k === 0) break;
      seen |= k;
      i++;
    }
    let end = i;
    while (end < n && end - i < 2 && text.charCodeAt(end) === 61) end++;
    // Needs upper, lower, digit and a non-hex char: real base64, not a hash or an identifier.
    if (i - start >= MIN_BASE64_ASSET_CHARS && (seen & 30) === 30) out.push([start, end]);
    i = end;
  }
  return out;
}

export interface Base64Scan {
  runs: number;
  chars: number;
  tokens: number;
}

/** Base64 runs in a text: how many, how many chars, and what they cost in tokens. */
export function scanBase64(text: string): Base64Scan {
  let chars = 0;
  const spans = base64Spans(text);
  for (const [a, b] of spans) chars += b - a;
  return { runs: spans.length, chars, tokens: base64TokensForChars(chars) };
}

/** Tokens the default strategy gives `chars` of base64 (for assets the guard already cut out). */
export function base64TokensForChars(chars: number): number {
  if (chars <= 0) return 0;
  return Math.ceil(chars * base64TokensPerChar());
}

let b64Ratio: number | undefined;
function base64TokensPerChar(): number {
  if (b64Ratio === undefined) {
    // A deterministic pseudo-random base64 sample: what an encoded image looks like to a tokenizer.
    let sample = '';
    let seed = Buffer.from('spillway');
    while (sample.length < 16 * 1024) {
      seed = crypto.createHash('sha256').update(seed).digest();
      sample += seed.toString('base64').replace(/=/g, '');
    }
    b64Ratio = estimateTokens(sample).tokens / sample.length;
  }
  return b64Ratio;
}

/** Replace base64 runs (noise to full-text search and previews) by a short marker. */
export function stripBase64(text: string): string {
  return stripAndScanBase64(text).text;
}

/** stripBase64 and scanBase64 in one pass. */
export function stripAndScanBase64(text: string): { text: string; scan: Base64Scan } {
  const spans = base64Spans(text);
  if (!spans.length) return { text, scan: { runs: 0, chars: 0, tokens: 0 } };
  let out = '';
  let at = 0;
  let chars = 0;
  for (const [a, b] of spans) {
    out += text.slice(at, a) + `[base64 ${b - a} chars]`;
    chars += b - a;
    at = b;
  }
  return { text: out + text.slice(at), scan: { runs: spans.length, chars, tokens: base64TokensForChars(chars) } };
}

/** Every cheap strategy's estimate for `text` (default profile, no tokenizer), for the scanner's synchronous path. */
export function cheapEstimates(text: string): Partial<Record<StrategyName, number>> {
  const out: Partial<Record<StrategyName, number>> = {};
  for (const strategy of ['chars4', 'craft-density', 'calibrated'] as const) out[strategy] = estimateTokens(text, { strategy }).tokens;
  return out;
}

function countsOf(report: Awaited<ReturnType<typeof describeTokens>>): Partial<Record<StrategyName, number>> {
  return Object.fromEntries(report.estimates.map((e) => [e.strategy, e.tokens]));
}

/**
 * Every cheap estimate, and the payload's tokens: the calibrated estimate, checked where the fit can
 * be far off (Greek, Arabic, control characters...: counted exactly, or corrected by exact windows on a
 * long text), so the tokens column and the waste report are right for them too. An exact count is
 * also kept under its strategy.
 */
export async function checkedEstimates(text: string): Promise<{ estimates: Partial<Record<StrategyName, number>>; tokens: number }> {
  const report = await describeTokens(text);
  return { estimates: countsOf(report), tokens: report.tokens.tokens };
}

/** Scale estimates made on a sample to the whole (for payloads too big to read whole). */
export function scaleEstimates(
  est: Partial<Record<StrategyName, number>>,
  factor: number,
): Partial<Record<StrategyName, number>> {
  const out: Partial<Record<StrategyName, number>> = {};
  for (const [k, v] of Object.entries(est)) out[k as StrategyName] = Math.ceil((v ?? 0) * factor);
  return out;
}

const HAS_WHITESPACE_RE = /\s/;

/** One line, at most INPUT_EXCERPT_CHARS, of a tool input. */
export function inputExcerpt(input: unknown): string | undefined {
  if (input === undefined || input === null) return undefined;
  let s: string;
  if (typeof input === 'string') s = input;
  else {
    try {
      s = JSON.stringify(input) ?? '';
    } catch {
      s = String(input);
    }
  }
  // Most inputs (a path, a URL, a small JSON object) hold no whitespace: nothing to collapse.
  if (HAS_WHITESPACE_RE.test(s)) s = s.replace(/\s+/g, ' ').trim();
  if (!s) return undefined;
  return s.length > INPUT_EXCERPT_CHARS ? s.slice(0, INPUT_EXCERPT_CHARS - 1) + '…' : s;
}

export function inputJson(input: unknown): string | null {
  if (input === undefined) return null;
  try {
    const s = JSON.stringify(input);
    if (s === undefined) return null;
    return s.length > MAX_INPUT_JSON_CHARS ? JSON.stringify({ $truncated: true, head: s.slice(0, MAX_INPUT_JSON_CHARS) }) : s;
  } catch {
    return null;
  }
}

export function clip(s: string | undefined, max: number): string | undefined {
  if (s === undefined) return undefined;
  return s.length > max ? s.slice(0, max) + `… [${s.length - max} more chars]` : s;
}

/** The bounded text full-text search gets for a payload held in memory. */
export function ftsWindow(text: string): string {
  const headChars = FTS_HEAD_BYTES;
  const tailChars = FTS_TAIL_BYTES;
  if (text.length <= headChars + tailChars) return stripBase64(text);
  return stripBase64(text.slice(0, headChars)) + FTS_GAP + stripBase64(text.slice(text.length - tailChars));
}

/**
 * Whether `bytes` holds a run of at least MIN_BASE64_ASSET_CHARS base64 characters, the only
 * thing base64Spans can report. UTF-8 continuation and lead bytes are never base64 characters,
 * so bytes and decoded text have the same runs. Probes every MIN-th byte and looks back only
 * from base64 characters, so ordinary text costs a few dozen reads per 4 KB.
 */
export function hasBase64Run(bytes: Uint8Array): boolean {
  const min = MIN_BASE64_ASSET_CHARS;
  const n = bytes.length;
  let i = 0;
  while (i + min <= n) {
    const j = i + min - 1;
    const cj = bytes[j]!;
    if (cj >= 128 || B64_CLASS[cj] === 0) {
      i = j + 1;
      continue;
    }
    let k = j - 1;
    while (k >= i) {
      const c = bytes[k]!;
      if (c >= 128 || B64_CLASS[c] === 0) break;
      k--;
    }
    if (k < i) return true;
    i = k + 1;
  }
  return false;
}

/** Count `\n` in a file (async, chunked, so a 500 MB file does not block the event loop). */
export async function countLines(file: string): Promise<number> {
  const fh = await fs.promises.open(file, 'r');
  try {
    const buf = Buffer.alloc(1024 * 1024);
    let lines = 0;
    let pos = 0;
    let last = -1;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      let i = -1;
      while ((i = buf.indexOf(10, i + 1)) !== -1 && i < bytesRead) lines++;
      last = buf[bytesRead - 1]!;
      pos += bytesRead;
    }
    // A last line without a trailing newline is still a line.
    return pos === 0 ? 0 : last === 10 ? lines : lines + 1;
  } finally {
    await fh.close();
  }
}

export function countLinesIn(text: string): number {
  if (text.length === 0) return 0;
  let n = 0;
  let i = -1;
  while ((i = text.indexOf('\n', i + 1)) !== -1) n++;
  return text.endsWith('\n') ? n : n + 1;
}

const EXT_KIND: Record<string, ContentKind> = {
  json: 'json',
  jsonl: 'ndjson',
  ndjson: 'ndjson',
  csv: 'csv',
  tsv: 'csv',
  log: 'log',
  html: 'html',
  htm: 'html',
  xml: 'xml',
  svg: 'xml',
  md: 'markdown',
  markdown: 'markdown',
  ts: 'code',
  js: 'code',
  py: 'code',
  rs: 'code',
  go: 'code',
  txt: 'text',
  bin: 'binary',
};

export function kindFromFileName(name: string): ContentKind {
  const m = /\.([A-Za-z0-9]+)$/.exec(name.replace(/\.linked\.json$/, '.json'));
  return (m && EXT_KIND[m[1]!.toLowerCase()]) || 'text';
}

/**
 * A plain user query made safe for FTS5: each whitespace-separated term becomes a quoted
 * string (so `-`, `:`, `"`, `(`, `*`, `NEAR` mean nothing special), ANDed together. A trailing
 * `*` on a term keeps prefix search.
 */
export function ftsQuery(q: string): string | null {
  const terms = q
    .normalize('NFKC')
    .split(/\s+/)
    .map((t) => t.trim())
    .filter(Boolean)
    .slice(0, 32);
  const parts: string[] = [];
  for (const t of terms) {
    const prefix = t.endsWith('*') && t.length > 1;
    const body = (prefix ? t.slice(0, -1) : t).replace(/"/g, '""');
    if (!/[\p{L}\p{N}]/u.test(body)) continue;
    parts.push(`"${body}"${prefix ? '*' : ''}`);
  }
  return parts.length ? parts.join(' ') : null;
}

/** A safe preview: base64 stripped, structure first, at most PREVIEW_CHARS. */
export function makePreview(text: string): string {
  const s = stripBase64(text.slice(0, PREVIEW_CHARS * 4));
  return s.length > PREVIEW_CHARS ? s.slice(0, PREVIEW_CHARS) + '…' : s;
}
