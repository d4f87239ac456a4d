import crypto from 'node:crypto';
import type { AssetEncoding, AssetRef, PayloadLink } from './types.js';
import { MIN_BASE64_ASSET_CHARS, MIN_BINARY_STRING_CHARS, MIN_DECLARED_BASE64_ASSET_CHARS, TEXT_SLICE_CHARS } from './limits.js';
import { textSlices } from './normalize.js';
import { base64Statistics, encodeSpan, hasBase64RunIn, parseBase64 } from './base64.js';
import { binaryStringForm, extForMime, isBinaryBytes, isValidMime, preloadSniffer, sniffBinary } from './detect.js';

/**
 * Assets in a tool result: finding them, then linking them (saved as files, replaced by references).
 *
 * | call | for |
 * | --- | --- |
 * | {@link extractAssets} | the assets in a text: base64 runs (standard, URL-safe, MIME/PEM-wrapped), data URLs, MCP/Anthropic/OpenAI blocks in JSON |
 * | {@link linkAssets} | save what was found through an {@link AssetSink} and build the linked text plus the links restore needs |
 * | {@link linkBinary} | the same for a result that is raw bytes: one asset, and a reference as the linked text |
 *
 * Every find is an exact span of the input plus the encoding that re-creates it, checked by
 * re-encoding, so replacing spans with references is lossless.
 */

export interface FoundAsset {
  /** Span in the text (UTF-16 indices, end exclusive) that the reference replaces. */
  start: number;
  end: number;
  bytes: Buffer;
  encoding: AssetEncoding;
  /** MIME type the context declared (data URL, sibling `mimeType` key…). */
  declaredMime?: string;
  source: AssetRef['source'];
  /** `$.content[0].data`, or `text[<start>:<end>]` for spans found in plain text. */
  jsonPath: string;
  /** The span is a whole JSON string value: replace it with a JSON reference object. */
  jsonValue: boolean;
}

export interface ExtractOptions {
  /** Parse as JSON (true), scan as plain text (false), or decide by trying JSON first (undefined). */
  json?: boolean;
}

export interface ExtractResult {
  assets: FoundAsset[];
  /** True when the text was walked as JSON. */
  json: boolean;
}

const MIME_KEYS = new Set([
  'mimeType',
  'mime_type',
  'mimetype',
  'mediaType',
  'media_type',
  'contentType',
  'content_type',
  'content-type',
  'mime',
]);
const DATA_KEYS = new Set([
  'data',
  'blob',
  'b64_json',
  'base64',
  'b64',
  'bytes',
  'image',
  'image_data',
  'imageData',
  'audio',
  'audio_data',
  'file_data',
  'fileData',
]);
/** Keys whose name alone declares base64 content. */
const SELF_DECLARING_KEYS = new Set(['blob', 'b64_json', 'base64', 'b64']);
const BINARY_TYPES = new Set(['image', 'audio', 'base64', 'blob']);
/** Longest sibling value remembered for context (MIME types and `type` values are short). */
const MAX_SIBLING_CHARS = 256;

const JSON_SPECIAL_RE = /["\\\x00-\x1f\u2028\u2029]/;
const DATA_URL_PREFIX_RE =
  /data:((?:[a-z0-9!#$&^_.+-]+(?:\\?\/)[a-z0-9!#$&^_.+-]+)?)((?:;[a-z0-9!#$&^_.+-]+=[^;,\s"'()<>\\]*)*);base64,/giy;
const DATA_URL_FIND_RE = new RegExp(DATA_URL_PREFIX_RE.source, 'gi');
const B64_RUN_STICKY_RE = /[A-Za-z0-9+/_-]+={0,2}/y;
/** A run of 64+ base64 characters after a non-base64 character (or at the start). Lines of MIME (76) and PEM (64) qualify. */
const RUN_RE = /(?:^|[^A-Za-z0-9+/_-])([A-Za-z0-9+/_-]{64,})/g;
const WRAPPED_STICKY_RE = /(?:[A-Za-z0-9+/]{16,200}\r?\n)+[A-Za-z0-9+/]+={0,2}(?:\r?\n)?/y;

function dataUrlMime(prefix: string): string | undefined {
  DATA_URL_PREFIX_RE.lastIndex = 0;
  const m = DATA_URL_PREFIX_RE.exec(prefix);
  const mime = m?.[1]?.replace('\\/', '/');
  return isValidMime(mime) ? mime : undefined;
}

/** Decoded bytes of a bare base64 run looked at to call it binary (its head: binary shows early). */
const BARE_SNIFF_BYTES = 4 * 1024;

/**
 * Signatures that make decoded bytes binary beyond doubt (PNG, JPEG, GIF, PDF, ZIP, gzip, ELF, WebP):
 * a run that decodes to one of them is an asset even when its characters are skewed, as the
 * base64 of a flat, well-compressed image is (mostly `A`s, which the statistics test refuses).
 */
const STRONG_MAGIC: ReadonlyArray<readonly number[]> = [
  [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
  [0xff, 0xd8, 0xff],
  [0x47, 0x49, 0x46, 0x38],
  [0x25, 0x50, 0x44, 0x46, 0x2d],
  [0x50, 0x4b, 0x03, 0x04],
  [0x1f, 0x8b, 0x08],
  [0x7f, 0x45, 0x4c, 0x46],
];
function hasStrongMagic(bytes: Buffer): boolean {
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP') return true;
  return STRONG_MAGIC.some((m) => bytes.length >= m.length && m.every((b, i) => bytes[i] === b));
}

/** Accept a parsed run with no declared context only if it reads like base64 of binary data. */
function bareOk(body: string, bytes: Buffer): boolean {
  if (body.length < MIN_BASE64_ASSET_CHARS) return false;
  if (hasStrongMagic(bytes)) return true;
  if (!base64Statistics(body)) return false;
  return isBinaryBytes(bytes.subarray(0, BARE_SNIFF_BYTES), { partial: bytes.length > BARE_SNIFF_BYTES });
}

interface Ctx {
  declared: boolean;
  declaredMime?: string;
  source?: AssetRef['source'];
  jsonPath: string;
}

/** A whole JSON string literal `text[start:end]` (quotes included) as an asset, or null. */
function resolveLiteral(text: string, start: number, end: number, hasEscape: boolean, ctx: Ctx): FoundAsset | null {
  const literal = text.slice(start, end);
  let content: string;
  if (hasEscape) {
    try {
      content = JSON.parse(literal) as string;
    } catch {
      return null;
    }
  } else content = literal.slice(1, -1);
  let prefix = '';
  let mime = ctx.declaredMime;
  let declared = ctx.declared;
  let source = ctx.source;
  if (content.startsWith('data:')) {
    DATA_URL_PREFIX_RE.lastIndex = 0;
    const m = DATA_URL_PREFIX_RE.exec(content);
    if (!m) return null;
    prefix = m[0];
    mime = dataUrlMime(prefix) ?? mime;
    declared = true;
    source ??= 'data-url';
  }
  const body = prefix ? content.slice(prefix.length) : content;
  if (body.length < (declared ? MIN_DECLARED_BASE64_ASSET_CHARS : MIN_BASE64_ASSET_CHARS)) return null;
  const parsed = parseBase64(body);
  if (!parsed) return null;
  if (!declared && !bareOk(body, parsed.bytes)) return null;
  const encoding: AssetEncoding = { ...parsed.encoding, json: true };
  if (prefix) encoding.prefix = prefix;
  if (hasEscape && literal.includes('\\/')) encoding.escapeSlash = true;
  // Without escapes the literal is exactly '"' + prefix + base64 + '"' (parseBase64 checked the base64
  // is canonical); with escapes, prove the re-encoding matches character for character.
  if ((hasEscape || JSON_SPECIAL_RE.test(prefix)) && encodeSpan(parsed.bytes, encoding) !== literal) return null;
  return {
    start,
    end,
    bytes: parsed.bytes,
    encoding,
    declaredMime: mime,
    source: source ?? (parsed.encoding.alphabet === 'url' ? 'base64url' : 'base64'),
    jsonPath: ctx.jsonPath,
    jsonValue: true,
  };
}

/**
 * A JWT, JWS or JWE in compact form: base64url segments joined by dots, the first a JSON header
 * (`{"` is `eyJ`). Not anchored at the start: in a JSON string the token may follow an escape
 * (`\neyJ…`), whose letter joins the run.
 */
const JWT_RE = /eyJ[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*){2,4}$/;

function isUrlB64OrDot(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 95 || c === 46;
}

/**
 * Is `text[st:en]` a segment of a JWT? Its signature (342 chars for RS256) decodes to random
 * bytes like any asset, but the token is text the model may need whole.
 */
function inJwt(text: string, st: number, en: number): boolean {
  if (text.charCodeAt(st - 1) !== 46 && text.charCodeAt(en) !== 46) return false;
  let a = st;
  while (a > 0 && isUrlB64OrDot(text.charCodeAt(a - 1))) a--;
  let b = en;
  while (b < text.length && isUrlB64OrDot(text.charCodeAt(b))) b++;
  return JWT_RE.test(text.slice(a, b));
}

/** Step past a JSON escape that a run would otherwise start inside (`\n`, `\u00e9`). */
function escapeAdjust(text: string, start: number, lo: number): number {
  let n = 0;
  for (let k = start - 1; k >= lo && text.charCodeAt(k) === 92; k--) n++;
  if (n % 2 === 0) return start;
  return text.charCodeAt(start) === 117 /* u */ ? start + 5 : start + 1;
}

/**
 * Assets in plain text `text[from:to]`. `inJsonString` means the range is the raw inside of a
 * JSON string literal: runs must not start inside an escape, and references stay JSON-safe.
 */
function scanText(text: string, from: number, to: number, inJsonString: boolean, pathBase: string | null, out: FoundAsset[]): void {
  const found: FoundAsset[] = [];
  const region = from === 0 && to === text.length ? text : text.slice(from, to);
  const at = (i: number) => i + from;
  const pathOf = (s: number, e: number) => pathBase ?? `text[${s}:${e}]`;

  DATA_URL_FIND_RE.lastIndex = 0;
  for (let m = DATA_URL_FIND_RE.exec(region); m; m = DATA_URL_FIND_RE.exec(region)) {
    const prefix = m[0];
    const runStart = m.index + prefix.length;
    B64_RUN_STICKY_RE.lastIndex = runStart;
    const run = B64_RUN_STICKY_RE.exec(region);
    if (!run || run[0].length < MIN_DECLARED_BASE64_ASSET_CHARS) continue;
    const parsed = parseBase64(run[0]);
    if (!parsed) continue;
    const encoding: AssetEncoding = { ...parsed.encoding, prefix };
    const s = at(m.index);
    const e = at(runStart + run[0].length);
    found.push({
      start: s,
      end: e,
      bytes: parsed.bytes,
      encoding,
      declaredMime: dataUrlMime(prefix),
      source: 'data-url',
      jsonPath: pathOf(s, e),
      jsonValue: false,
    });
    DATA_URL_FIND_RE.lastIndex = runStart + run[0].length;
  }

  // One native pass finds every run of 64+ base64 characters; JavaScript only looks at those.
  const dataUrls = found.length;
  let di = 0;
  const overlapsDataUrl = (st: number, en: number): boolean => {
    while (di < dataUrls && found[di]!.end <= st) di++;
    return di < dataUrls && found[di]!.start < en;
  };
  const push = (st: number, en: number, body: string): void => {
    if (en - st < MIN_BASE64_ASSET_CHARS || overlapsDataUrl(st, en) || inJwt(text, st, en)) return;
    const parsed = parseBase64(body);
    if (!parsed || !bareOk(parsed.encoding.lineWidth ? body.replace(/\r?\n/g, '') : body, parsed.bytes)) return;
    found.push({
      start: st,
      end: en,
      bytes: parsed.bytes,
      encoding: parsed.encoding,
      source: parsed.encoding.alphabet === 'url' ? 'base64url' : 'base64',
      jsonPath: pathOf(st, en),
      jsonValue: false,
    });
  };
  RUN_RE.lastIndex = 0;
  for (let m = RUN_RE.exec(region); m; m = RUN_RE.exec(region)) {
    const runStart = m.index + m[0].length - m[1]!.length;
    let runEnd = m.index + m[0].length;
    // MIME/PEM: more lines of the same block follow (plain text only; in JSON, line breaks are escapes)
    const next = region.charCodeAt(runEnd);
    if (!inJsonString && (next === 10 || next === 13)) {
      WRAPPED_STICKY_RE.lastIndex = runStart;
      const w = WRAPPED_STICKY_RE.exec(region);
      if (w && w[0].indexOf('\n') !== w[0].length - 1) {
        const before = found.length;
        push(at(runStart), at(runStart + w[0].length), w[0]);
        if (found.length > before) {
          RUN_RE.lastIndex = runStart + w[0].length;
          continue;
        }
      }
    }
    while (runEnd < region.length && runEnd - runStart < m[1]!.length + 2 && region.charCodeAt(runEnd) === 61) runEnd++;
    let st = at(runStart);
    if (inJsonString) st = escapeAdjust(text, st, from);
    push(st, at(runEnd), st === at(runStart) && runEnd === m.index + m[0].length ? m[1]! : text.slice(st, at(runEnd)));
  }
  found.sort((a, b) => a.start - b.start);
  for (const f of found) out.push(f);
}

/**
 * A JSON string literal `text[start:end]` whose value is binary read as text (a server that put a
 * file's bytes in a string: NULs, control characters, runs of U+FFFD), as an asset, or null. The
 * bytes are the value read back as latin-1 (one char per byte: exact) or, when it has chars above
 * 0xFF (a lossy UTF-8 decode), as UTF-8. The span must be re-created exactly: when the literal is not
 * JSON.stringify's spelling of the value (other escapes), the literal's own UTF-8 is the asset.
 */
const LONE_SURROGATE_RE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function binaryLiteral(text: string, start: number, end: number, value: string, jsonPath: string): FoundAsset | null {
  if (value.length < MIN_BINARY_STRING_CHARS) return null;
  const form = binaryStringForm(value);
  if (!form) return null;
  const literal = text.slice(start, end);
  const charset = form === 'latin1' ? 'latin1' : 'utf8';
  const bytes = Buffer.from(value, charset);
  let encoding: AssetEncoding = { kind: 'text', charset, json: true };
  let asset = bytes;
  if (encodeSpan(bytes, encoding) !== literal) {
    if (encodeSpan(bytes, { ...encoding, escapeSlash: true }) === literal) encoding = { ...encoding, escapeSlash: true };
    // A literal with lone surrogates has no UTF-8 to restore it from: leave it (the spill keeps it whole).
    else if (LONE_SURROGATE_RE.test(literal)) return null;
    else {
      encoding = { kind: 'raw' };
      asset = Buffer.from(literal, 'utf8');
    }
  }
  return { start, end, bytes: asset, encoding, source: 'binary-string', jsonPath, jsonValue: true };
}

const IDENT_RE = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
function pathSegment(key: string): string {
  return IDENT_RE.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

interface Frame {
  obj: boolean;
  key: string;
  index: number;
  sib?: Map<string, string>;
  pend?: Pending[];
}

const enum St {
  Value,
  ValueOrEnd,
  KeyOrEnd,
  Key,
  Colon,
  CommaOrEnd,
  Done,
}

/** What binary leaves in a JSON literal: a raw NUL or U+FFFD, or the escape of a low control or of U+FFFD. */
const BINARY_MARK_RE = /[\x00\uFFFD]|\\u00[01][0-9a-fA-F]|\\u[fF]{3}[dD]/g;

/** A character that cannot appear in a JSON string holding only (possibly wrapped) base64. */
const NOT_B64_VALUE_RE = /[^A-Za-z0-9+/=_\\-]/;

const NUM_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;


/** One pending string of an object, resolved when the object closes (its siblings may declare it binary). */
interface Pending {
  start: number;
  end: number;
  hasEscape: boolean;
  key: string;
  path: string;
}

/**
 * Walks JSON text once, without building values, and collects assets from string values.
 * Iterative, so nesting depth is bounded only by memory. {@link scanJson} runs it.
 */
class JsonAssetWalker {
  private readonly n: number;
  private readonly stack: Frame[] = [];
  readonly found: FoundAsset[] = [];
  private st: St = St.Value;
  private i = 0;
  private nextBackslash = -2;
  /** Next index of a mark binary leaves in a literal (BINARY_MARK_RE), or n + 1: found once per walk, like nextBackslash. */
  private nextBinaryMark = -2;

  /** Assets found that {@link onFound} has seen. */
  private seen = 0;

  /**
   * `onFound` sees each asset found until it returns true (the sniffer's module starts loading at the
   * first one only it can type, while the walk goes on).
   */
  constructor(
    private readonly text: string,
    private onFound?: (a: FoundAsset) => boolean,
  ) {
    this.n = text.length;
  }

  private add(a: FoundAsset): void {
    this.found.push(a);
    this.firstFound();
  }

  private firstFound(): void {
    for (; this.onFound && this.seen < this.found.length; this.seen++) if (this.onFound(this.found[this.seen]!)) this.onFound = undefined;
  }

  /**
   * True when the whole text is one JSON value. With `pauseAt`: undefined once the walk has passed
   * that index, to be resumed by another call (the walk's state is all in the walker).
   */
  run(pauseAt = Infinity): boolean | undefined {
    const { text, n } = this;
    for (;;) {
      if (this.i >= pauseAt) return undefined;
      this.skipWs();
      if (this.i >= n) return this.st === St.Done;
      const c = text.charCodeAt(this.i);
      let ok: boolean;
      switch (this.st) {
        case St.Done:
          return false;
        case St.Colon:
          ok = c === 58;
          if (ok) {
            this.i++;
            this.st = St.Value;
          }
          break;
        case St.CommaOrEnd:
          ok = this.commaOrEnd(c);
          break;
        case St.KeyOrEnd:
        case St.Key:
          ok = this.keyOrEnd(c);
          break;
        case St.ValueOrEnd:
          if (c === 93) {
            this.i++;
            this.stack.pop();
            this.afterValue();
            ok = true;
            break;
          }
          ok = this.value(c);
          break;
        case St.Value:
          ok = this.value(c);
          break;
      }
      if (!ok) return false;
    }
  }

  private pathNow(): string {
    let p = '$';
    for (const f of this.stack) p += f.obj ? pathSegment(f.key) : `[${f.index}]`;
    return p;
  }

  private decodeLiteral(s: number, e: number, hasEscape: boolean): string | null {
    if (!hasEscape) return this.text.slice(s + 1, e - 1);
    try {
      return JSON.parse(this.text.slice(s, e)) as string;
    } catch {
      return null;
    }
  }

  private hasEscapeIn(s: number, e: number): boolean {
    if (this.nextBackslash < s) this.nextBackslash = this.text.indexOf('\\', s);
    if (this.nextBackslash === -1) {
      this.nextBackslash = this.n + 1;
      return false;
    }
    return this.nextBackslash < e;
  }

  /** A string value with no declared context: whole-value base64 or data URL, else runs inside it. */
  private generic(s: number, e: number, hasEscape: boolean, knownPath?: string): void {
    const { text } = this;
    const len = e - s - 2;
    // Cheap filters first: most strings are too short or plainly not base64. Shorter than a bare
    // asset, only a data URL is looked for, and its body is a run of 64+ base64 chars: the skipping
    // scan settles most strings before a search for `base64,` in them (a search of the rest of the
    // text from each string's start read all of a 100 MB text once, ~50 ms).
    if (len < MIN_BASE64_ASSET_CHARS && !(hasBase64RunIn(text, s + 1, e - 1, MIN_DECLARED_BASE64_ASSET_CHARS) && text.slice(s + 1, e - 1).includes('base64,'))) return;
    // made only past the filters: the path of every string of 64+ chars was most of the walk's garbage
    const path = knownPath ?? this.pathNow();
    // A data URL starts the value; a `base64,` elsewhere has a ',' before it, so it is no whole run either.
    const wholeCandidate = text.startsWith('"data:', s) || !NOT_B64_VALUE_RE.test(text.slice(s + 1, e - 1));
    const whole = wholeCandidate ? resolveLiteral(text, s, e, hasEscape, { declared: false, jsonPath: path }) : null;
    if (whole) this.add(whole);
    else {
      scanText(text, s + 1, e - 1, true, path, this.found);
      this.firstFound();
    }
  }

  /** The strings of a closed object, now that its `type` and MIME keys are known. */
  private closeObject(f: Frame): void {
    if (!f.pend) return;
    const type = f.sib?.get('type');
    let mime: string | undefined;
    for (const k of MIME_KEYS) {
      const v = f.sib?.get(k);
      if (isValidMime(v)) {
        mime = v;
        break;
      }
    }
    for (const p of f.pend) {
      const declared = mime !== undefined || (type !== undefined && BINARY_TYPES.has(type)) || SELF_DECLARING_KEYS.has(p.key);
      let source: AssetRef['source'] | undefined;
      if (p.key === 'blob') source = 'mcp-blob';
      else if (type === 'image') source = 'mcp-image';
      else if (type === 'audio') source = 'mcp-audio';
      const a = declared ? resolveLiteral(this.text, p.start, p.end, p.hasEscape, { declared, declaredMime: mime, source, jsonPath: p.path }) : null;
      if (a) this.add(a);
      // A declared binary slot that does not decode is a damaged blob: leave it whole rather than cut out fragments.
      else if (!declared) this.generic(p.start, p.end, p.hasEscape, p.path);
    }
  }

  private skipWs(): void {
    const { text, n } = this;
    while (this.i < n) {
      const c = text.charCodeAt(this.i);
      if (c === 32 || c === 10 || c === 13 || c === 9) this.i++;
      else break;
    }
  }

  /** End (exclusive, after the closing quote) of the string literal opening at i, or -1. */
  private stringEnd(): number {
    const { text, i } = this;
    let j = i + 1;
    for (;;) {
      const q = text.indexOf('"', j);
      if (q === -1) return -1;
      let b = 0;
      for (let k = q - 1; k > i && text.charCodeAt(k) === 92; k--) b++;
      if (b % 2 === 0) return q + 1;
      j = q + 1;
    }
  }

  private afterValue(): void {
    this.st = this.stack.length === 0 ? St.Done : St.CommaOrEnd;
  }

  private commaOrEnd(c: number): boolean {
    const top = this.stack[this.stack.length - 1]!;
    if (c === 44) {
      this.i++;
      if (top.obj) this.st = St.Key;
      else {
        top.index++;
        this.st = St.Value;
      }
      return true;
    }
    if ((top.obj && c === 125) || (!top.obj && c === 93)) {
      this.i++;
      this.stack.pop();
      if (top.obj) this.closeObject(top);
      this.afterValue();
      return true;
    }
    return false;
  }

  private keyOrEnd(c: number): boolean {
    if (this.st === St.KeyOrEnd && c === 125) {
      this.i++;
      this.closeObject(this.stack.pop()!);
      this.afterValue();
      return true;
    }
    if (c !== 34) return false;
    const e = this.stringEnd();
    if (e === -1) return false;
    const key = this.decodeLiteral(this.i, e, this.hasEscapeIn(this.i, e));
    if (key === null) return false;
    this.stack[this.stack.length - 1]!.key = key;
    this.i = e;
    this.st = St.Colon;
    return true;
  }

  private value(c: number): boolean {
    if (c === 123 || c === 91) {
      this.stack.push({ obj: c === 123, key: '', index: 0 });
      this.i++;
      this.st = c === 123 ? St.KeyOrEnd : St.ValueOrEnd;
      return true;
    }
    if (c === 34) return this.stringValue();
    const { text } = this;
    if (c === 116 && text.startsWith('true', this.i)) this.i += 4;
    else if (c === 102 && text.startsWith('false', this.i)) this.i += 5;
    else if (c === 110 && text.startsWith('null', this.i)) this.i += 4;
    else {
      // test, not exec: no match array for each of a big result's numbers
      NUM_RE.lastIndex = this.i;
      if (!NUM_RE.test(text)) return false;
      this.i = NUM_RE.lastIndex;
    }
    this.afterValue();
    return true;
  }

  /** May `text[s:e]` spell a binary value (a NUL, a control or U+FFFD, raw or escaped; a PDF's head)? */
  private binaryMarkIn(s: number, e: number): boolean {
    if (this.nextBinaryMark < s) {
      BINARY_MARK_RE.lastIndex = s;
      const m = BINARY_MARK_RE.exec(this.text);
      this.nextBinaryMark = m ? m.index : this.n + 1;
    }
    return this.nextBinaryMark < e || this.text.startsWith('"%PDF-', s);
  }

  private stringValue(): boolean {
    const i = this.i;
    const e = this.stringEnd();
    if (e === -1) return false;
    const len = e - i - 2;
    const top = this.stack[this.stack.length - 1];
    // Binary as characters: cut out whatever key holds it (a `data` slot that held it was no base64 either).
    if (len >= MIN_BINARY_STRING_CHARS && this.binaryMarkIn(i, e)) {
      const v = this.decodeLiteral(i, e, this.hasEscapeIn(i, e));
      const a = v === null ? null : binaryLiteral(this.text, i, e, v, this.pathNow());
      if (a) {
        this.add(a);
        this.i = e;
        this.afterValue();
        return true;
      }
    }
    if (top?.obj && (MIME_KEYS.has(top.key) || top.key === 'type') && len < MAX_SIBLING_CHARS) {
      const v = this.decodeLiteral(i, e, this.hasEscapeIn(i, e));
      if (v !== null) (top.sib ??= new Map()).set(top.key, v);
    }
    if (len >= MIN_DECLARED_BASE64_ASSET_CHARS) {
      const hasEscape = this.hasEscapeIn(i, e);
      if (top?.obj && DATA_KEYS.has(top.key)) (top.pend ??= []).push({ start: i, end: e, hasEscape, key: top.key, path: this.pathNow() });
      else this.generic(i, e, hasEscape);
    }
    this.i = e;
    this.afterValue();
    return true;
  }
}

/** Collect the assets of a JSON text into `out`; false (and nothing added) when the text is not JSON. */
function scanJson(text: string, out: FoundAsset[]): boolean {
  const w = new JsonAssetWalker(text, (a) => preloadSniffer(a.bytes));
  if (!w.run()) return false;
  for (const f of w.found.sort((a, b) => a.start - b.start)) out.push(f);
  return true;
}

/**
 * Chars walked between turns of the event loop in {@link extractAssetsAsync} (a few ms each). The
 * sniffer's module, whose load starts at the first asset found, is read and compiled in those
 * turns: behind a walk that held the thread for 250 ms it only started loading after it.
 */
const WALK_SLICE_CHARS = 2 * 1024 * 1024;

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** {@link scanJson}, handing the event loop a turn every WALK_SLICE_CHARS. */
async function scanJsonAsync(text: string, out: FoundAsset[]): Promise<boolean> {
  const w = new JsonAssetWalker(text, (a) => preloadSniffer(a.bytes));
  let done: boolean | undefined;
  for (let at = WALK_SLICE_CHARS; (done = w.run(at)) === undefined; at += WALK_SLICE_CHARS) await turn();
  if (!done) return false;
  for (const f of w.found.sort((a, b) => a.start - b.start)) out.push(f);
  return true;
}

/**
 * Find the assets in a text. JSON is walked structurally (MCP `image`/`audio`/`resource`
 * blocks, sibling MIME keys, JSON paths); anything else, or JSON that does not parse, is
 * scanned as text. Spans are sorted and never overlap.
 */
export function extractAssets(text: string, opts: ExtractOptions = {}): ExtractResult {
  const assets: FoundAsset[] = [];
  if (opts.json !== false) {
    const c = text.trimStart().charCodeAt(0);
    const maybeJson = c === 123 || c === 91 || c === 34;
    if (maybeJson || opts.json === true) {
      if (scanJson(text, assets)) return { assets, json: true };
      assets.length = 0;
    }
  }
  scanText(text, 0, text.length, false, null, assets);
  return { assets, json: false };
}

/**
 * {@link extractAssets} for a big text, the same finds, letting other work run while a JSON text is
 * walked (the spill's own: loading the sniffer, saves already started). Small texts are walked at once.
 */
export async function extractAssetsAsync(text: string, opts: ExtractOptions = {}): Promise<ExtractResult> {
  if (text.length <= WALK_SLICE_CHARS || opts.json === false) return extractAssets(text, opts);
  const assets: FoundAsset[] = [];
  const c = text.trimStart().charCodeAt(0);
  if (c === 123 || c === 91 || c === 34 || opts.json === true) {
    if (await scanJsonAsync(text, assets)) return { assets, json: true };
    assets.length = 0;
  }
  scanText(text, 0, text.length, false, null, assets);
  return { assets, json: false };
}

/** Where linked assets go: saves bytes content-addressed and says where they went. */
export interface AssetSink {
  /** Save `bytes` (sha256 already computed) with extension `ext`; `path` is printable, `relPath` is session-relative. */
  save(bytes: Uint8Array, ext: string, sha256: string): Promise<{ path: string; relPath: string }>;
}

/** A payload with its assets cut out. */
export interface LinkedPayload {
  assets: AssetRef[];
  /** Byte spans of the references in the linked form, and how to re-create what they replaced. */
  links: PayloadLink[];
  /**
   * The linked form, in the pieces it is written from (no whole-payload copy before writing), none
   * longer than TEXT_SLICE_CHARS: the writer encodes a piece at a time, and a 40 MB stretch of JSON
   * after the last asset was one 40 MB buffer beside the text during the write.
   */
  pieces: string[];
  /** UTF-16 length of the linked form: deciding whether it fits a message needs no joined copy. */
  chars: number;
  /**
   * The linked form joined: for estimates, the preview and the message. Joined on first read: of
   * a big spill it is a copy of most of the payload, and made before the payload was written it
   * sat beside the decoded assets and the write buffers at the peak.
   */
  readonly text: string;
}

/** A linked payload from its pieces; `text` is joined once, when first read. */
function linkedOf(assets: AssetRef[], links: PayloadLink[], pieces: string[]): LinkedPayload {
  let chars = 0;
  for (const p of pieces) chars += p.length;
  let joined: string | undefined;
  return {
    assets,
    links,
    pieces,
    chars,
    get text() {
      return (joined ??= pieces.length === 1 ? pieces[0]! : pieces.join(''));
    },
  };
}

function sha256Hex(b: Uint8Array): string {
  return crypto.createHash('sha256').update(b).digest('hex');
}

type Where = { path: string; relPath: string };

/**
 * Type the bytes by their magic numbers, start saving them (once per spill per content), and make
 * the reference once the save is done. `saved` holds the saves begun, by content and extension.
 */
async function startSave(sink: AssetSink, saved: Map<string, Promise<Where>>, bytes: Uint8Array, found: Pick<FoundAsset, 'declaredMime' | 'jsonPath' | 'source'>): Promise<() => Promise<AssetRef>> {
  const sniff = await sniffBinary(bytes);
  const mimeType = sniff?.mimeType ?? found.declaredMime ?? 'application/octet-stream';
  const ext = sniff?.ext ?? extForMime(found.declaredMime);
  const sha256 = sha256Hex(bytes);
  let where = saved.get(sha256 + ext);
  if (!where) {
    where = sink.save(bytes, ext, sha256);
    // awaited in order by linkAssets; this only keeps a save that fails after an earlier one did from going unhandled
    where.catch(() => {});
    saved.set(sha256 + ext, where);
  }
  const size = bytes.byteLength;
  const w = where;
  return async () => {
    const { path, relPath } = await w;
    return { path, relPath, mimeType, bytes: size, sha256, jsonPath: found.jsonPath, source: found.source, sniffed: Boolean(sniff) };
  };
}

/** Type, save and reference one asset. */
async function saveOne(sink: AssetSink, bytes: Uint8Array, found: Pick<FoundAsset, 'declaredMime' | 'jsonPath' | 'source'>): Promise<AssetRef> {
  return (await startSave(sink, new Map(), bytes, found))();
}

/**
 * Saves of assets let run at once: each is a few file-system round trips (stat, open, write, link),
 * and one at a time the 30 images of a big spill left the process idle between them.
 */
const SAVES_IN_FLIGHT = 4;

/** The reference that replaces an asset where a JSON value stood. */
export function linkedRefJson(ref: AssetRef): string {
  return JSON.stringify({ $spillwayAsset: { path: ref.relPath, mimeType: ref.mimeType, bytes: ref.bytes, sha256: ref.sha256 } });
}

/** A reference inside text (or inside a JSON string): no quotes or backslashes, so it is safe in both. */
export function linkedRefText(ref: AssetRef): string {
  return `[spillway asset: ${ref.relPath} ${ref.mimeType} ${ref.bytes} bytes]`;
}

/**
 * Save the `found` assets of `text` and replace each span by a reference. `found` is emptied as it
 * goes, so each decoded asset can be collected once it is saved.
 */
export async function linkAssets(text: string, found: FoundAsset[], sink: AssetSink): Promise<LinkedPayload> {
  const saved = new Map<string, Promise<Where>>();
  const refs: Array<Promise<AssetRef>> = [];
  const spans: Array<Pick<FoundAsset, 'start' | 'end' | 'jsonValue' | 'encoding'>> = [];
  try {
    for (let i = 0; i < found.length; i++) {
      const f = found[i]!;
      // at most SAVES_IN_FLIGHT saves running: wait for the oldest before typing the next
      if (i >= SAVES_IN_FLIGHT) await refs[i - SAVES_IN_FLIGHT];
      const ref = (await startSave(sink, saved, f.bytes, f))();
      ref.catch(() => {});
      refs.push(ref);
      spans.push({ start: f.start, end: f.end, jsonValue: f.jsonValue, encoding: f.encoding });
      found[i] = undefined as unknown as FoundAsset; // let the decoded bytes go once saved
    }
    await Promise.all(refs);
  } catch (err) {
    // no save left running behind the caller's back (it may try the next store)
    await Promise.allSettled([...saved.values()]);
    throw err;
  }
  const assets: AssetRef[] = [];
  const links: PayloadLink[] = [];
  const pieces: string[] = [];
  let pos = 0;
  let bytePos = 0;
  for (let i = 0; i < spans.length; i++) {
    const f = spans[i]!;
    const ref = await refs[i]!;
    assets.push(ref);
    const before = text.slice(pos, f.start);
    const refText = f.jsonValue ? linkedRefJson(ref) : linkedRefText(ref);
    pushSlices(pieces, before);
    pieces.push(refText);
    bytePos += Buffer.byteLength(before, 'utf8');
    const refBytes = Buffer.byteLength(refText, 'utf8');
    links.push({ asset: assets.length - 1, start: bytePos, end: bytePos + refBytes, encoding: f.encoding });
    bytePos += refBytes;
    pos = f.end;
  }
  pushSlices(pieces, text.slice(pos));
  return linkedOf(assets, links, pieces);
}

/** `s` as slices of at most TEXT_SLICE_CHARS, never between the halves of a surrogate pair. */
function pushSlices(pieces: string[], s: string): void {
  if (s.length <= TEXT_SLICE_CHARS) pieces.push(s);
  else for (const slice of textSlices(s)) pieces.push(slice);
}

/** A result that is raw bytes: one asset, and its JSON reference as the whole linked form. */
export async function linkBinary(bytes: Uint8Array, sink: AssetSink): Promise<LinkedPayload> {
  const ref = await saveOne(sink, bytes, { jsonPath: '$', source: 'binary' });
  const text = linkedRefJson(ref);
  return linkedOf([ref], [{ asset: 0, start: 0, end: Buffer.byteLength(text), encoding: { kind: 'raw' } }], [text]);
}
