import type { ContentKind } from './types.js';
import { PREVIEW_CHARS } from './limits.js';
import { detectTextKind } from './detect.js';
import { cleanTerminalText, fmtInt, safeCut, safeCutUp, toWellFormed, truncate } from './text.js';
import { errMessage } from './values.js';

/**
 * The preview the model sees when there is no summary: structure for JSON (keys, types, array
 * lengths, a few sample values), head and tail for logs and text. Never base64, never a split
 * surrogate pair, never longer than `maxChars`.
 */

/** Largest JSON text outlined by parsing; bigger JSON gets a head/tail preview. */
const PREVIEW_JSON_PARSE_MAX_CHARS = 16 * 1024 * 1024;
/** Chars of a too-big JSON text outlined from its start. */
const PREVIEW_JSON_PREFIX_CHARS = 512 * 1024;
/** Containers deeper than this are not cut points of a prefix outline. */
const OUTLINE_PREFIX_MAX_DEPTH = 64;
/** Deepest level the JSON outline descends to. */
const OUTLINE_MAX_DEPTH = 6;
/** Items of an array shown one by one. */
const OUTLINE_ARRAY_SAMPLES = 2;
/** Array items inspected for the key/type union. */
const OUTLINE_ARRAY_SCAN = 200;
/** Object keys listed before "… N more". */
const OUTLINE_MAX_KEYS = 25;
/** Chars of a sample string value. */
const SAMPLE_STRING_CHARS = 80;
/** A run of base64-alphabet chars at least this long with mixed case and digits is masked. */
const MASK_RUN_CHARS = 100;

const LONG_RUN_RE = new RegExp(`[A-Za-z0-9+/_=-]{${MASK_RUN_CHARS},}`, 'g');
const DATA_URL_RE = /data:([a-z0-9!#$&^_.+\\/-]*)(?:;[^,\s"']*)?;base64,[A-Za-z0-9+/_=-]*/gi;

/** Replace data URLs and long base64-looking runs with a short marker. */
export function maskBase64(s: string): string {
  let out = s;
  if (out.includes('base64,')) out = out.replace(DATA_URL_RE, (m, mime: string) => `[data URL ${mime || ''}, ${fmtInt(m.length)} chars]`);
  return out.replace(LONG_RUN_RE, (m) =>
    /[A-Z]/.test(m) && /[a-z]/.test(m) && /[0-9]/.test(m) ? `[base64-like, ${fmtInt(m.length)} chars]` : m,
  );
}

function sampleString(s: string): string {
  const cleaned = maskBase64(truncate(s, SAMPLE_STRING_CHARS * 4));
  return JSON.stringify(truncate(cleaned, SAMPLE_STRING_CHARS));
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function isAssetRef(v: unknown): v is { $spillwayAsset: { path?: unknown; mimeType?: unknown; bytes?: unknown } } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.hasOwn(v, '$spillwayAsset');
}

function keyText(k: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(k) ? k : JSON.stringify(truncate(k, 60));
}

function scalar(v: unknown): string {
  if (typeof v === 'string') return v.length > SAMPLE_STRING_CHARS ? `string (${fmtInt(v.length)} chars) ${sampleString(v)}` : sampleString(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return typeName(v);
}

function shapeOf(v: unknown): string {
  if (isAssetRef(v)) return 'asset';
  if (Array.isArray(v)) return `array(${v.length})`;
  return typeName(v);
}

class Outline {
  lines: string[] = [];
  chars = 0;
  full = false;
  constructor(private readonly max: number) {}
  push(depth: number, s: string): boolean {
    if (this.full) return false;
    const line = '  '.repeat(depth) + s;
    if (this.chars + line.length + 1 > this.max) {
      this.full = true;
      return false;
    }
    this.lines.push(line);
    this.chars += line.length + 1;
    return true;
  }
}

function describe(out: Outline, label: string, v: unknown, depth: number): void {
  if (out.full) return;
  if (isAssetRef(v)) {
    const a = v.$spillwayAsset;
    out.push(depth, `${label}asset ${String(a.mimeType)} (${fmtInt(Number(a.bytes))} bytes) → ${String(a.path)}`);
    return;
  }
  if (Array.isArray(v)) {
    const cut = v.length > 0 && v[v.length - 1] === TRUNCATED;
    if (cut) v = v.slice(0, -1);
    if (!Array.isArray(v)) return;
    const types = new Map<string, number>();
    const keys = new Map<string, Set<string>>();
    const scan = Math.min(v.length, OUTLINE_ARRAY_SCAN);
    for (let i = 0; i < scan; i++) {
      const t = shapeOf(v[i]).replace(/\(\d+\)$/, '');
      types.set(t, (types.get(t) ?? 0) + 1);
      const item = v[i];
      if (t === 'object' && item && typeof item === 'object') {
        for (const k of Object.keys(item)) {
          if (k === TRUNCATED || (keys.size >= OUTLINE_MAX_KEYS && !keys.has(k))) continue;
          let set = keys.get(k);
          if (!set) keys.set(k, (set = new Set()));
          set.add(shapeOf((item as Record<string, unknown>)[k]).replace(/\(\d+\)$/, ''));
        }
      }
    }
    const typeList = [...types].map(([t, c]) => (types.size > 1 ? `${t}×${c}` : t)).join(', ');
    out.push(depth, `${label}array (${cut ? '≥ ' : ''}${fmtInt(v.length)} items${v.length ? ` of ${typeList}` : ''})`);
    if (keys.size > 0) {
      const ks = [...keys].map(([k, ts]) => `${keyText(k)}: ${[...ts].join('|')}`).join(', ');
      out.push(depth + 1, `item keys: {${truncate(ks, 400)}}`);
    }
    if (depth >= OUTLINE_MAX_DEPTH) return;
    const show = Math.min(v.length, OUTLINE_ARRAY_SAMPLES);
    for (let i = 0; i < show; i++) describe(out, `[${i}]: `, v[i], depth + 1);
    if (v.length > show) {
      out.push(depth + 1, `… ${fmtInt(v.length - show)} more${cut ? ' (and more past the outlined part)' : ''}`);
      if (v.length > show + 1 && !cut) describe(out, `[${v.length - 1}]: `, v[v.length - 1], depth + 1);
    }
    return;
  }
  if (v !== null && typeof v === 'object') {
    let keys = Object.keys(v);
    const cut = Object.hasOwn(v, TRUNCATED);
    if (cut) keys = keys.filter((k) => k !== TRUNCATED);
    out.push(depth, `${label}object (${cut ? '≥ ' : ''}${fmtInt(keys.length)} key${keys.length === 1 ? '' : 's'})`);
    if (depth >= OUTLINE_MAX_DEPTH) {
      if (keys.length) out.push(depth + 1, `keys: ${truncate(keys.slice(0, OUTLINE_MAX_KEYS).map(keyText).join(', '), 300)}`);
      return;
    }
    const shown = keys.slice(0, OUTLINE_MAX_KEYS);
    for (const k of shown) describe(out, `${keyText(k)}: `, (v as Record<string, unknown>)[k], depth + 1);
    if (keys.length > shown.length) out.push(depth + 1, `… ${fmtInt(keys.length - shown.length)} more keys`);
    return;
  }
  out.push(depth, label + scalar(v));
}

/** Marks where a prefix outline was cut (a string no JSON text produces by accident: it starts with NUL). */
const TRUNCATED = '\u0000spillway:truncated';

/**
 * Parse the first `maxChars` of a JSON text that is too big to parse whole: cut after the last
 * complete member or element and close what is open, marking each cut container.
 */
export function parseJsonPrefix(text: string, maxChars: number): unknown {
  const end = Math.min(text.length, maxChars);
  const stack: number[] = [];
  let inString = false;
  let cut = -1;
  let cutStack: number[] = [];
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) stack.push(c);
    else if (c === 125 || c === 93) stack.pop();
    else if (c === 44 && stack.length <= OUTLINE_PREFIX_MAX_DEPTH) {
      cut = i;
      cutStack = stack.slice();
    }
  }
  if (cut === -1) return undefined;
  const sentinel = JSON.stringify(TRUNCATED);
  let closers = '';
  for (let k = cutStack.length - 1; k >= 0; k--) closers += cutStack[k] === 91 ? `,${sentinel}]` : `,${sentinel}:0}`;
  try {
    return JSON.parse(text.slice(0, cut) + closers);
  } catch {
    return undefined;
  }
}

/** `total`: the length of the whole text, of which `text` may be only the first PREVIEW_JSON_PREFIX_CHARS when it is over PREVIEW_JSON_PARSE_MAX_CHARS. */
function jsonOutline(text: string, maxChars: number, total = text.length): string | null {
  let value: unknown;
  let note = '';
  if (total > PREVIEW_JSON_PARSE_MAX_CHARS) {
    value = parseJsonPrefix(text, PREVIEW_JSON_PREFIX_CHARS);
    if (value === undefined) return null;
    note = `(outline of the first ${fmtInt(PREVIEW_JSON_PREFIX_CHARS / 1024)} KB of ${fmtInt(total / 1024)} KB)\n`;
  } else {
    try {
      value = JSON.parse(text);
    } catch {
      return null;
    }
  }
  const out = new Outline(maxChars - 40 - note.length);
  if (note) out.lines.push(note.trimEnd());
  describe(out, '', value, 0);
  // A JSON envelope around one big text (an MCP text block): show that text too.
  const lines = out.lines.join('\n');
  const inner = note ? null : dominantText(value, text.length);
  if (inner !== null) {
    const left = maxChars - lines.length - 60;
    if (left > 200) return `${lines}\n\nlargest text value (${fmtInt(inner.length)} chars):\n${textPreview(inner, detectTextKind(inner), left)}`;
  }
  return out.full ? `${lines}\n…` : lines;
}

/** The one string value holding most of the document (≥ half), if any; bounded walk. */
function dominantText(value: unknown, total: number): string | null {
  const stack: unknown[] = [value];
  let visited = 0;
  while (stack.length && visited++ < 10_000) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.length >= total / 2) return v;
    } else if (v && typeof v === 'object') {
      for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push(x);
    }
  }
  return null;
}

function lineCount(s: string): number {
  let n = 1;
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

function clean(s: string): string {
  return maskBase64(cleanTerminalText(s)).replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, '\uFFFD');
}

/** Head and tail of a text, cut at line ends when possible; the cut part is counted on the original. */
function headTail(text: string, maxChars: number, headShare = 0.6): string {
  const cleanedWhole = text.length <= maxChars * 2 ? clean(text) : undefined;
  if (cleanedWhole !== undefined && cleanedWhole.length <= maxChars) return cleanedWhole;
  const note = 70;
  const headBudget = Math.floor((maxChars - note) * headShare);
  const tailBudget = maxChars - note - headBudget;
  let headEnd = safeCut(text, headBudget);
  const nl = text.lastIndexOf('\n', headEnd);
  if (nl > headBudget * 0.6) headEnd = nl;
  let tailStart = safeCutUp(text, Math.max(headEnd, text.length - tailBudget));
  const nl2 = text.indexOf('\n', tailStart);
  if (nl2 !== -1 && nl2 < tailStart + tailBudget * 0.4) tailStart = nl2 + 1;
  const middleLen = tailStart - headEnd;
  let middleLines = 0;
  for (let i = text.indexOf('\n', headEnd); i !== -1 && i < tailStart; i = text.indexOf('\n', i + 1)) middleLines++;
  const head = clean(text.slice(0, headEnd));
  const tail = clean(text.slice(tailStart));
  const omitted = `\n… [${fmtInt(middleLines)} line${middleLines === 1 ? '' : 's'}, ${fmtInt(middleLen)} chars omitted] …\n`;
  return truncate(head, headBudget) + omitted + tail.slice(safeCutUp(tail, Math.max(0, tail.length - tailBudget)));
}

function textPreview(text: string, kind: ContentKind, maxChars: number): string {
  if (kind === 'csv' || kind === 'ndjson') {
    const rows = lineCount(text.trimEnd());
    const label = `(${fmtInt(rows)} ${kind === 'csv' ? 'rows incl. header' : 'lines'})\n`;
    return label + headTail(text, maxChars - label.length, 0.8);
  }
  return headTail(text, maxChars, kind === 'log' ? 0.4 : 0.65);
}

/** A safe preview of `text`: structure for JSON, head and tail otherwise. */
export function buildPreview(text: string, kind?: ContentKind, maxChars: number = PREVIEW_CHARS): string {
  try {
    const max = Math.max(80, Math.floor(maxChars));
    if (text.length === 0) return '(empty)';
    const k = kind ?? detectTextKind(text);
    let out: string | null = null;
    if (k === 'json') out = jsonOutline(text, max);
    if (out === null) out = textPreview(text, k, max);
    return finish(out, max);
  } catch (err) {
    return `(preview unavailable: ${errMessage(err)})`;
  }
}

function finish(out: string, max: number): string {
  out = toWellFormed(out);
  return out.length > max ? out.slice(0, safeCut(out, max - 1)) + '…' : out;
}

/**
 * {@link buildPreview} of a text held in pieces (a linked form), `chars` long in all. A big JSON
 * text is outlined from its head alone, so the pieces are joined (`join`) only when that fails or
 * the text is of another kind: joined, a 100 MB spill's linked form was a 40 MB copy at its peak.
 */
export function buildPreviewOfPieces(pieces: readonly string[], chars: number, join: () => string, kind: ContentKind, maxChars: number = PREVIEW_CHARS): string {
  if (kind === 'json' && chars > PREVIEW_JSON_PARSE_MAX_CHARS) {
    try {
      let head = '';
      for (const p of pieces) {
        if (head.length >= PREVIEW_JSON_PREFIX_CHARS) break;
        head += p.length > PREVIEW_JSON_PREFIX_CHARS ? p.slice(0, PREVIEW_JSON_PREFIX_CHARS) : p;
      }
      const max = Math.max(80, Math.floor(maxChars));
      const out = jsonOutline(head.slice(0, PREVIEW_JSON_PREFIX_CHARS), max, chars);
      if (out !== null) return finish(out, max);
    } catch {
      /* the whole text's preview says what went wrong */
    }
  }
  return buildPreview(join(), kind, maxChars);
}
