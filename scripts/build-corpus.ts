/**
 * Builds the token-estimation calibration corpus from real files nobody on the Spillway team wrote:
 * what `npm ci` puts in node_modules (sources, minified bundles, .d.ts, JSON, CSS, source maps,
 * READMEs, CHANGELOGs, LICENSEs, YAML, TypeScript's and monaco-editor's translated messages, and the
 * real images, fonts, wasm and native modules some packages ship). Binary files become base64, data
 * URLs, MCP image JSON and hex dumps; logs, CSV and hash-heavy JSON are made only by reformatting real
 * data (file listings, file hashes, npm's lockfile). Nothing is random: the same node_modules gives the
 * same corpus, so the holdout can be rebuilt at test time instead of being stored.
 *
 * Train and holdout are split by SOURCE (a package, or for translations a package+language pair), so
 * the constants never saw any file of a holdout source.
 *
 *   npx tsx scripts/build-corpus.ts [--split train|holdout] [--per-category N] [--out DIR]
 *   npx tsx scripts/build-corpus.ts --write-packages   (record the installed packages as the corpus's)
 * prints a summary, or writes one file per sample into DIR (for looking at, never committed).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readExtraCorpus, type ExtraSample } from './build-script-fixtures.js';

/** Categories built here from node_modules. */
export const NODE_CATEGORIES = [
  'prose',
  'markdown',
  'html',
  'code-js',
  'typescript',
  'minified-js',
  'css',
  'minified-css',
  'json-pretty',
  'json-min',
  'sourcemap',
  'hash-json',
  'base64',
  'data-url',
  'mcp-image',
  'hex-dump',
  'csv',
  'logs',
  'cjk',
  'cyrillic',
  'european',
] as const;

/**
 * Real text Debian ships in scripts and kinds node_modules has little of (translated man pages, UI
 * catalogues in 40 languages, emoji tables, tool output), committed as a small fixture with its split
 * (scripts/build-script-fixtures.ts, test/estimate/fixtures/SOURCES.md).
 */
const EXTRA: readonly ExtraSample[] = readExtraCorpus();
export const EXTRA_CATEGORIES: readonly string[] = [...new Set(EXTRA.map((s) => s.category))];
export const CATEGORIES: readonly string[] = [...NODE_CATEGORIES, ...EXTRA_CATEGORIES];
export type Category = string;
export type Split = 'train' | 'holdout';

export interface CorpusSample {
  /** Stable id: `<category>/<source>/<file>#<n>`. */
  id: string;
  category: Category;
  /** What decides the split: a package name, or `<package>:<language>` for translations. */
  source: string;
  split: Split;
  text: string;
}

export interface CorpusOptions {
  split: Split;
  /** Samples per category (fewer when a category has too little material on that side). */
  perCategory: number;
  /** node_modules to read; default the repo's. */
  nodeModules?: string;
  minChars?: number;
  maxChars?: number;
}

export const SAMPLE_MIN_CHARS = 2_000;
export const SAMPLE_MAX_CHARS = 48_000;
/** Share of sources (by hash) that go to the holdout. */
const HOLDOUT_PERCENT = 30;
/** At most this many documents per source and category, so one big package cannot dominate. */
const MAX_DOCS_PER_SOURCE = 2;
const MAX_FILE_BYTES = 8 * 1024 * 1024;

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// ---------------------------------------------------------------------------------------------
// deterministic helpers

function h32(s: string): number {
  return crypto.createHash('sha1').update(s).digest().readUInt32BE(0);
}

function hashSplit(source: string): Split {
  return h32('split:' + source) % 100 < HOLDOUT_PERCENT ? 'holdout' : 'train';
}

/** Log-uniform target length in [min, max], fixed per key. */
function targetLength(key: string, min: number, max: number): number {
  const u = h32('len:' + key) / 0xffffffff;
  return Math.round(Math.exp(Math.log(min) + u * (Math.log(max) - Math.log(min))));
}

/** A window of about `len` chars from a deterministic offset, snapped to line starts where lines exist. */
function window(text: string, key: string, len: number): string {
  if (text.length <= len) return text;
  let start = h32('off:' + key) % (text.length - len);
  const nl = text.indexOf('\n', start);
  if (nl >= 0 && nl - start < 400 && nl + 1 < text.length - len / 2) start = nl + 1;
  let end = Math.min(text.length, start + len);
  const endNl = text.lastIndexOf('\n', end);
  if (endNl > start + len * 0.8) end = endNl + 1;
  // never cut a surrogate pair: the corpus is meant to be real text
  if (isHigh(text.charCodeAt(end - 1))) end--;
  if (isLow(text.charCodeAt(start))) start++;
  return text.slice(start, end);
}
const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

function avgLineLength(text: string): number {
  let lines = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lines++;
  return text.length / lines;
}

function readText(file: string): string | undefined {
  try {
    const st = fs.statSync(file);
    if (!st.isFile() || st.size > MAX_FILE_BYTES) return undefined;
    const buf = fs.readFileSync(file);
    if (buf.includes(0)) return undefined;
    return buf.toString('utf8');
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// the file list

interface FileEntry {
  /** Path relative to node_modules, with forward slashes. */
  rel: string;
  abs: string;
  /** Innermost package name. */
  pkg: string;
  base: string;
  size: number;
}

const fileListCache = new Map<string, FileEntry[]>();

/** gpt-tokenizer's rank tables (tiktoken's encoders keep their ranks base64-encoded: ordinary base64 JSON). */
export function isTokenizerVocabulary(rel: string): boolean {
  return /(^|\/)gpt-tokenizer\/.*\/bpeRanks\//.test(rel);
}

/**
 * The installed packages the corpus draws from: their install paths under node_modules, as they were
 * when the constants were fitted. A dependency added later (and its dependencies) would otherwise enter
 * both splits and move which documents each category samples, so the holdout would change under a test
 * that measures it. `--write-packages` rewrites the list from the node_modules at hand: recalibrate then.
 */
export const CORPUS_PACKAGES_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'corpus-packages.txt');

let corpusPackageSet: Set<string> | undefined | null = null;

function corpusPackages(): Set<string> | undefined {
  if (corpusPackageSet !== null) return corpusPackageSet;
  try {
    corpusPackageSet = new Set(fs.readFileSync(CORPUS_PACKAGES_FILE, 'utf8').split('\n').filter(Boolean));
  } catch {
    corpusPackageSet = undefined;
  }
  return corpusPackageSet;
}

/** The install path of the package a file belongs to (`a/node_modules/@s/b`), or '' at the top. */
function packagePath(rel: string): string {
  const parts = rel.split('/');
  let end = 0;
  for (let i = 0; i < parts.length - 1; i++) {
    if (i === 0 || parts[i - 1] === 'node_modules') {
      if (parts[i] === 'node_modules') continue;
      end = parts[i]!.startsWith('@') && i + 1 < parts.length - 1 ? i + 2 : i + 1;
    }
  }
  return parts.slice(0, end).join('/');
}

/** Every package path under node_modules (what `--write-packages` records). */
export function installedPackages(nodeModules: string): string[] {
  return [...new Set(listAllFiles(nodeModules).map((f) => packagePath(f.rel)).filter(Boolean))].sort();
}

/** Every regular file under node_modules of the corpus's packages, sorted, with its innermost package. */
export function listFiles(nodeModules: string): FileEntry[] {
  const hit = fileListCache.get(nodeModules);
  if (hit) return hit;
  const allowed = corpusPackages();
  const all = listAllFiles(nodeModules);
  const out = allowed
    ? all.filter((f) => {
        const pp = packagePath(f.rel);
        return pp === '' || allowed.has(pp);
      })
    : all;
  fileListCache.set(nodeModules, out);
  return out;
}

function listAllFiles(nodeModules: string): FileEntry[] {
  const out: FileEntry[] = [];
  const walk = (dir: string, rel: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name === '.bin' || e.name === '.cache' || e.name === '.vite' || e.name === '.git') continue;
      const abs = path.join(dir, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(abs, r);
      else if (e.isFile()) {
        // Files made at install time differ between machines (compiled, or downloaded only where the
        // network allows): better-sqlite3's build, Electron's binary distribution.
        if (r.startsWith('better-sqlite3/build/') || r.startsWith('electron/dist/') || r === 'electron/path.txt') continue;
        // gpt-tokenizer's rank tables are o200k's and cl100k's vocabularies as literal strings: counted by
        // the tokenizer they define, every entry is one token by construction. That says nothing about real
        // payloads and, with non-ASCII scripts priced, was the corpus's worst sample by far (29%).
        if (isTokenizerVocabulary(r)) continue;
        let size = 0;
        try {
          size = fs.statSync(abs).size;
        } catch {
          continue;
        }
        out.push({ rel: r, abs, pkg: packageOf(r), base: e.name, size });
      }
    }
  };
  walk(nodeModules, '');
  out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return out;
}

/** The innermost package a file belongs to (`@s/b`), or its first path segment at the top. */
function packageOf(rel: string): string {
  const pp = packagePath(rel);
  if (!pp) return rel.split('/')[0]!;
  const i = pp.lastIndexOf('node_modules/');
  return i < 0 ? pp : pp.slice(i + 'node_modules/'.length);
}

// ---------------------------------------------------------------------------------------------
// documents: each category lists candidate documents lazily, in a fixed hash order

interface Doc {
  source: string;
  name: string;
  /** Produces the document text (may be expensive); undefined when the file does not qualify. */
  load: () => string | undefined;
}

type DocLister = (ctx: Ctx) => Doc[];

interface Ctx {
  files: FileEntry[];
  nodeModules: string;
}

const byExt = (ctx: Ctx, test: (f: FileEntry) => boolean) => ctx.files.filter(test);

const fileDocs = (files: FileEntry[], load: (f: FileEntry) => string | undefined): Doc[] =>
  files.map((f) => ({ source: f.pkg, name: f.rel, load: () => load(f) }));

/** For categories with few packages (CSS, binaries) the source is the file itself. */
const perFileDocs = (files: FileEntry[], load: (f: FileEntry) => string | undefined): Doc[] =>
  files.map((f) => ({ source: f.rel, name: f.rel, load: () => load(f) }));

/** Big binaries give several documents, each a window at its own offset (same source: the file). */
const BINARY_PARTS_MAX = 4;
const BINARY_PART_BYTES = 150_000;
function binaryDocs(ctx: Ctx, make: (f: FileEntry, key: string) => string): Doc[] {
  const docs: Doc[] = [];
  for (const f of binaryFiles(ctx)) {
    const parts = Math.min(BINARY_PARTS_MAX, Math.max(1, Math.floor(f.size / BINARY_PART_BYTES)));
    for (let k = 0; k < parts; k++) {
      const key = k === 0 ? f.rel : `${f.rel}@${k}`;
      docs.push({ source: f.rel, name: key, load: () => make(f, key) });
    }
  }
  return docs;
}

const isMinifiedName = (b: string) => /\.min\.(js|css)$/.test(b);
const LICENSE_RE = /^(licen[cs]e|copying|notice|thirdpartynotices)(\.(md|txt|markdown))?$/i;
const README_RE = /^(readme|changelog|history|contributing)\.(md|markdown)$/i;

/** Plain paragraphs of a markdown file: no headings, code, tables, lists, quotes or HTML. */
function markdownProse(md: string): string {
  const out: string[] = [];
  let inFence = false;
  let para: string[] = [];
  const flush = () => {
    if (para.length) out.push(para.join(' '));
    para = [];
  };
  for (const line of md.split(/\r?\n/)) {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      flush();
      continue;
    }
    if (inFence) continue;
    const t = line.trim();
    if (!t || /^(#|\||[-*+] |\d+\. |>|<|!\[|\[!\[|=+$|-+$)/.test(t) || line.startsWith('    ')) {
      flush();
      continue;
    }
    if (/[`*_]{1,2}\S|\]\(|https?:/.test(t)) {
      // keep the words, drop inline markup
      para.push(t.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*_]{1,2}/g, ''));
    } else para.push(t);
  }
  flush();
  return out.filter((p) => p.length > 80).join('\n\n');
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const MIME: Record<string, string> = {
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.ico': 'image/x-icon',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
  '.node': 'application/octet-stream',
  '.jpg': 'image/jpeg',
};

/** Real binary files shipped in packages (prebuilt native modules included: npm ships them as-is). */
function binaryFiles(ctx: Ctx): FileEntry[] {
  return byExt(ctx, (f) => MIME[path.extname(f.base)] !== undefined && f.size >= 400);
}

/** A deterministic window of a binary file's bytes (big files: a slice at a hashed offset). */
function binaryWindow(f: FileEntry, key: string, maxBytes: number): Buffer {
  const fd = fs.openSync(f.abs, 'r');
  try {
    const len = Math.min(maxBytes, f.size);
    const start = f.size > len ? h32('boff:' + key) % (f.size - len) : 0;
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, start);
    return buf;
  } finally {
    fs.closeSync(fd);
  }
}

function xxd(buf: Buffer, base: number): string {
  const lines: string[] = [];
  for (let off = 0; off < buf.length; off += 16) {
    const row = buf.subarray(off, off + 16);
    let hex = '';
    for (let i = 0; i < 16; i++) {
      hex += i < row.length ? row[i]!.toString(16).padStart(2, '0') : '  ';
      if (i % 2 === 1) hex += ' ';
    }
    let ascii = '';
    for (const b of row) ascii += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.';
    lines.push(`${(base + off).toString(16).padStart(8, '0')}: ${hex} ${ascii}`);
  }
  return lines.join('\n') + '\n';
}

function hexdumpC(buf: Buffer, base: number): string {
  const lines: string[] = [];
  for (let off = 0; off < buf.length; off += 16) {
    const row = buf.subarray(off, off + 16);
    const bytes = [...row].map((b) => b.toString(16).padStart(2, '0'));
    const left = bytes.slice(0, 8).join(' ').padEnd(23, ' ');
    const right = bytes.slice(8).join(' ').padEnd(23, ' ');
    let ascii = '';
    for (const b of row) ascii += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.';
    lines.push(`${(base + off).toString(16).padStart(8, '0')}  ${left}  ${right}  |${ascii}|`);
  }
  return lines.join('\n') + '\n';
}

function wrap(s: string, width: number): string {
  const out: string[] = [];
  for (let i = 0; i < s.length; i += width) out.push(s.slice(i, i + width));
  return out.join('\n');
}

function fileHashes(f: FileEntry) {
  const buf = fs.readFileSync(f.abs);
  const sha256 = crypto.createHash('sha256').update(buf).digest('hex');
  const sha1 = crypto.createHash('sha1').update(buf).digest('hex');
  const integrity = 'sha512-' + crypto.createHash('sha512').update(buf).digest('base64');
  // a v4-shaped UUID taken from the file's own hash, so it is real data, not invented
  const u = crypto.createHash('md5').update(buf).digest('hex');
  const uuid = `${u.slice(0, 8)}-${u.slice(8, 12)}-4${u.slice(13, 16)}-${((parseInt(u[16]!, 16) & 3) | 8).toString(16)}${u.slice(17, 20)}-${u.slice(20, 32)}`;
  return { sha1, sha256, integrity, uuid, size: buf.length, lines: buf.toString('latin1').split('\n').length };
}

/** Files of one package, for listings (CSV, logs, hash JSON). */
function packageFiles(ctx: Ctx): Map<string, FileEntry[]> {
  const m = new Map<string, FileEntry[]>();
  for (const f of ctx.files) {
    if (f.size > MAX_FILE_BYTES) continue;
    let list = m.get(f.pkg);
    if (!list) m.set(f.pkg, (list = []));
    list.push(f);
  }
  return m;
}

/** A timestamp that moves forward by amounts taken from real data (file sizes), from a fixed epoch. */
function clock(seed: string) {
  let t = Date.UTC(2026, 0, 5, 8, 0, 0) + (h32('t:' + seed) % 86_400_000);
  return (stepFrom: number) => {
    t += (stepFrom % 9_973) + 1;
    return new Date(t);
  };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function logLines(pkg: string, files: FileEntry[], style: number): string {
  const tick = clock(pkg);
  const lines: string[] = [];
  for (const f of files) {
    const d = tick(f.size);
    const ms = (f.size % 997) + 1;
    const status = f.size > 200_000 ? 206 : f.base.endsWith('.map') ? 304 : 200;
    const level = f.size > 500_000 ? 'WARN' : f.size < 64 ? 'DEBUG' : 'INFO';
    if (style === 0) {
      lines.push(`${d.toISOString()} ${level.padEnd(5)} [fs-scan] stat path=node_modules/${f.rel} size=${f.size} took=${ms}ms`);
    } else if (style === 1) {
      const ts = `${String(d.getUTCDate()).padStart(2, '0')}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${d.toISOString().slice(11, 19)} +0000`;
      lines.push(`10.0.${f.size % 256}.${(f.size >> 8) % 256} - - [${ts}] "GET /node_modules/${f.rel} HTTP/1.1" ${status} ${f.size} "-" "npm/11.6.2 node/v20.20.0 linux x64 workspaces/false"`);
    } else if (style === 2) {
      const ts = `${MONTHS[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, ' ')} ${d.toISOString().slice(11, 19)}`;
      lines.push(`${ts} buildhost node[${2000 + (f.size % 30000)}]: ${level.toLowerCase()}: loaded ${f.rel} (${f.size} bytes) in ${ms}ms`);
    } else {
      lines.push(JSON.stringify({ level: level === 'WARN' ? 40 : level === 'DEBUG' ? 20 : 30, time: d.getTime(), pid: 2000 + (f.size % 30000), hostname: 'buildhost', pkg, file: f.rel, bytes: f.size, msg: 'file indexed' }));
    }
  }
  return lines.join('\n') + '\n';
}

interface LockPackage {
  version?: string;
  resolved?: string;
  integrity?: string;
  license?: string;
  dev?: boolean;
  optional?: boolean;
  engines?: Record<string, string>;
  dependencies?: Record<string, string>;
}

/**
 * npm's `.package-lock.json` as npm writes it (2-space JSON), holding only the corpus's packages, so
 * the lockfile documents stay the same when a dependency is added.
 */
function corpusLockText(ctx: Ctx): string | undefined {
  const text = readText(path.join(ctx.nodeModules, '.package-lock.json'));
  const allowed = corpusPackages();
  const lock = parseJson(text) as { packages?: Record<string, LockPackage> } | undefined;
  if (!allowed || !lock?.packages) return text;
  const packages: Record<string, LockPackage> = {};
  for (const [k, v] of Object.entries(lock.packages)) {
    if (!k.startsWith('node_modules/') || allowed.has(k.slice('node_modules/'.length))) packages[k] = v;
  }
  return JSON.stringify({ ...lock, packages }, null, 2) + '\n';
}

function lockPackages(ctx: Ctx): Array<[string, LockPackage]> {
  const lock = parseJson(corpusLockText(ctx)) as { packages?: Record<string, LockPackage> } | undefined;
  return Object.entries(lock?.packages ?? {}).filter(([k]) => k.includes('node_modules/'));
}

const csvCell = (v: unknown) => {
  const s = v === undefined || v === null ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** TypeScript's and monaco-editor's translated messages, as plain text (one message per line). */
function translations(ctx: Ctx, langs: string[]): Doc[] {
  const docs: Doc[] = [];
  for (const lang of langs) {
    docs.push({
      source: `typescript:${lang}`,
      name: `typescript/lib/${lang}/diagnosticMessages.generated.json`,
      load: () => {
        const j = parseJson(readText(path.join(ctx.nodeModules, 'typescript/lib', lang, 'diagnosticMessages.generated.json')));
        return j && typeof j === 'object' ? Object.values(j as Record<string, string>).join('\n') + '\n' : undefined;
      },
    });
    docs.push({
      source: `monaco-editor:${lang}`,
      name: `monaco-editor/esm/vs/nls/lang/${lang}.js`,
      load: () => {
        const js = readText(path.join(ctx.nodeModules, 'monaco-editor/esm/vs/nls/lang', `${lang}.js`));
        if (!js) return undefined;
        const start = js.indexOf('=[');
        const end = js.lastIndexOf(']');
        const arr = start >= 0 && end > start ? parseJson(js.slice(start + 1, end + 1)) : undefined;
        return Array.isArray(arr) ? arr.join('\n') + '\n' : undefined;
      },
    });
  }
  return docs;
}

/**
 * Translations split by package x language so every language is on both sides: monaco's copy of a
 * language in this set goes to the holdout and TypeScript's to train, and the other way round.
 */
const HOLDOUT_MONACO_LANGS = new Set(['ja', 'zh-cn', 'ru', 'fr', 'it', 'pl']);
function translationSplit(source: string): Split {
  const [pkg, lang] = source.split(':') as [string, string];
  return (pkg === 'monaco-editor') === HOLDOUT_MONACO_LANGS.has(lang) ? 'holdout' : 'train';
}

const LISTERS: Record<(typeof NODE_CATEGORIES)[number], DocLister> = {
  prose: (ctx) => [
    ...fileDocs(
      byExt(ctx, (f) => LICENSE_RE.test(f.base) && f.size > 900),
      (f) => readText(f.abs),
    ),
    ...fileDocs(
      byExt(ctx, (f) => /^readme\.(md|markdown)$/i.test(f.base) && f.size > 4_000),
      (f) => {
        const p = markdownProse(readText(f.abs) ?? '');
        return p.length > 1_500 ? p : undefined;
      },
    ),
  ],
  markdown: (ctx) =>
    fileDocs(
      byExt(ctx, (f) => (README_RE.test(f.base) || (f.base.endsWith('.md') && f.rel.includes('/docs/'))) && f.size > 2_500),
      (f) => readText(f.abs),
    ),
  html: (ctx) => [
    ...fileDocs(
      byExt(ctx, (f) => f.base.endsWith('.html') && f.size > 1_000),
      (f) => readText(f.abs),
    ),
    ...fileDocs(
      byExt(ctx, (f) => /^readme\.(md|markdown)$/i.test(f.base) && f.size > 3_000),
      (f) => markdownHtml(readText(f.abs), f.pkg),
    ),
  ],
  'code-js': (ctx) =>
    fileDocs(
      byExt(ctx, (f) => /\.(c|m)?js$/.test(f.base) && !isMinifiedName(f.base) && f.size > 2_500 && !f.rel.includes('/nls/')),
      (f) => {
        const t = readText(f.abs);
        return t && avgLineLength(t) < 90 ? t : undefined;
      },
    ),
  typescript: (ctx) =>
    fileDocs(
      byExt(ctx, (f) => /\.(d\.)?[cm]?ts$/.test(f.base) && f.size > 2_500),
      (f) => {
        const t = readText(f.abs);
        return t && avgLineLength(t) < 120 ? t : undefined;
      },
    ),
  'minified-js': (ctx) =>
    fileDocs(
      byExt(ctx, (f) => /\.(c|m)?js$/.test(f.base) && f.size > 5_000 && !f.rel.includes('/nls/')),
      (f) => {
        const t = readText(f.abs);
        return t && avgLineLength(t) > 400 ? t : undefined;
      },
    ),
  css: (ctx) =>
    perFileDocs(
      byExt(ctx, (f) => f.base.endsWith('.css') && f.size > 1_000),
      (f) => {
        const t = readText(f.abs);
        return t && avgLineLength(t) < 100 ? t : undefined;
      },
    ),
  'minified-css': (ctx) =>
    perFileDocs(
      byExt(ctx, (f) => f.base.endsWith('.css') && f.size > 1_000),
      (f) => {
        const t = readText(f.abs);
        if (!t) return undefined;
        // already minified, or minified here by collapsing whitespace and comments (a reformatting)
        return avgLineLength(t) > 300
          ? t
          : t
              .replace(/\/\*[\s\S]*?\*\//g, '')
              .replace(/\s+/g, ' ')
              .replace(/\s*([{}:;,>])\s*/g, '$1')
              .replace(/;}/g, '}');
      },
    ),
  'json-pretty': (ctx) =>
    fileDocs(jsonFiles(ctx), (f) => {
      const j = parseJson(readText(f.abs));
      return j !== undefined && typeof j === 'object' ? JSON.stringify(j, null, h32(f.rel) % 3 === 0 ? 4 : 2) : undefined;
    }),
  'json-min': (ctx) =>
    fileDocs(jsonFiles(ctx), (f) => {
      const j = parseJson(readText(f.abs));
      return j !== undefined && typeof j === 'object' ? JSON.stringify(j) : undefined;
    }),
  sourcemap: (ctx) =>
    fileDocs(
      byExt(ctx, (f) => f.base.endsWith('.map') && f.size > 3_000),
      (f) => readText(f.abs),
    ),
  'hash-json': (ctx) => {
    const docs: Doc[] = [];
    for (const [pkg, files] of packageFiles(ctx)) {
      if (files.length < 8) continue;
      docs.push({
        source: pkg,
        name: `${pkg} file hashes`,
        load: () => {
          const rows = files.slice(0, 400).map((f) => {
            const h = fileHashes(f);
            return h32(pkg) % 2
              ? { id: h.uuid, path: f.rel, size: h.size, sha256: h.sha256, integrity: h.integrity }
              : { uuid: h.uuid, file: f.rel, sha1: h.sha1, sha256: h.sha256 };
          });
          return h32(pkg) % 3 === 0 ? JSON.stringify(rows) : JSON.stringify({ package: pkg, files: rows }, null, 2);
        },
      });
    }
    docs.push({
      source: 'npm-lockfile',
      name: '.package-lock.json',
      load: () => corpusLockText(ctx),
    });
    return docs;
  },
  base64: (ctx) =>
    binaryDocs(ctx, (f, key) => {
      const b64 = binaryWindow(f, key, 40_000).toString('base64');
      return h32('wrap:' + key) % 3 === 0 ? wrap(b64, 76) : b64;
    }),
  'data-url': (ctx) =>
    binaryDocs(ctx, (f, key) => {
      const url = `data:${MIME[path.extname(f.base)]};base64,${binaryWindow(f, key, 36_000).toString('base64')}`;
      switch (h32('ctx:' + key) % 4) {
        case 0:
          return `.icon-${path.basename(f.base, path.extname(f.base))} {\n  background-image: url("${url}");\n  background-size: contain;\n}\n`;
        case 1:
          return `<p>${f.pkg}</p>\n<img alt="${f.base}" src="${url}">\n`;
        case 2:
          return `![${f.base}](${url})\n`;
        default:
          return JSON.stringify({ name: f.base, package: f.pkg, src: url });
      }
    }),
  'mcp-image': (ctx) =>
    binaryDocs(ctx, (f, key) => {
      const data = binaryWindow(f, key, 36_000).toString('base64');
      const result = {
        content: [
          { type: 'text', text: `Rendered ${f.rel} (${f.size} bytes)` },
          { type: 'image', data, mimeType: MIME[path.extname(f.base)]?.startsWith('image/') ? MIME[path.extname(f.base)] : 'image/png' },
        ],
        isError: false,
      };
      return h32('fmt:' + key) % 2 ? JSON.stringify(result) : JSON.stringify({ jsonrpc: '2.0', id: h32(key) % 1000, result });
    }),
  'hex-dump': (ctx) =>
    binaryDocs(ctx, (f, key) => {
      const buf = binaryWindow(f, key, 12_000);
      return h32('hex:' + key) % 2 ? xxd(buf, 0) : hexdumpC(buf, 0);
    }),
  csv: (ctx) => {
    const docs: Doc[] = [];
    for (const [pkg, files] of packageFiles(ctx)) {
      if (files.length < 10) continue;
      docs.push({
        source: pkg,
        name: `${pkg} file listing`,
        load: () => {
          const rows = ['path,bytes,lines,extension,sha1'];
          for (const f of files.slice(0, 600)) {
            const h = fileHashes(f);
            rows.push([f.rel, h.size, h.lines, path.extname(f.base) || '(none)', h.sha1.slice(0, 12)].map(csvCell).join(','));
          }
          return rows.join('\n') + '\n';
        },
      });
    }
    docs.push({
      source: 'npm-lockfile',
      name: '.package-lock.json as CSV',
      load: () => {
        const rows = ['name,version,license,dev,optional,integrity,dependencies'];
        for (const [k, v] of lockPackages(ctx)) {
          rows.push(
            [k.slice(k.lastIndexOf('node_modules/') + 13), v.version, v.license, v.dev ? 1 : 0, v.optional ? 1 : 0, v.integrity, Object.keys(v.dependencies ?? {}).length]
              .map(csvCell)
              .join(','),
          );
        }
        return rows.join('\n') + '\n';
      },
    });
    return docs;
  },
  logs: (ctx) => {
    const docs: Doc[] = [];
    for (const [pkg, files] of packageFiles(ctx)) {
      if (files.length < 10) continue;
      docs.push({ source: pkg, name: `${pkg} log`, load: () => logLines(pkg, files.slice(0, 800), h32('style:' + pkg) % 4) });
    }
    return docs;
  },
  cjk: (ctx) => translations(ctx, ['zh-cn', 'zh-tw', 'ja', 'ko']),
  cyrillic: (ctx) => translations(ctx, ['ru']),
  european: (ctx) => translations(ctx, ['de', 'fr', 'es', 'it', 'pl', 'cs', 'tr', 'pt-br']),
};

const TRANSLATION_CATEGORIES = new Set<Category>(['cjk', 'cyrillic', 'european']);

function jsonFiles(ctx: Ctx): FileEntry[] {
  return byExt(
    ctx,
    (f) => f.base.endsWith('.json') && f.size > 1_500 && !f.rel.includes('diagnosticMessages') && f.base !== '.package-lock.json' && f.base !== 'package-lock.json',
  );
}

let markedModule: { marked: { parse: (md: string, o?: object) => string | Promise<string> } } | undefined;
function markdownHtml(md: string | undefined, pkg: string): string | undefined {
  if (!md || !markedModule) return undefined;
  const body = markedModule.marked.parse(md, { async: false }) as string;
  return `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${pkg}</title>\n</head>\n<body>\n<main class="markdown-body">\n${body}</main>\n</body>\n</html>\n`;
}

// ---------------------------------------------------------------------------------------------

/** Which side of the split a source of a category is on. */
export function splitOf(category: Category, source: string): Split {
  return TRANSLATION_CATEGORIES.has(category) ? translationSplit(source) : hashSplit(source);
}

/**
 * The corpus for one side of the split: up to `perCategory` samples per category, chosen in a fixed
 * hash order, each a window of SAMPLE_MIN_CHARS..SAMPLE_MAX_CHARS chars. Categories with few documents
 * take several windows per document.
 */
/**
 * Every sample in one text, categories interleaved in a fixed order: the "mixed input" that
 * `npm run bench estimate` times and test/estimate/accuracy.test.ts holds to 5%.
 */
export function mixedInput(samples: readonly CorpusSample[]): string {
  const key = (s: CorpusSample) => (s.id.length * 31 + s.text.length) % 97;
  return [...samples].sort((a, b) => key(a) - key(b)).map((s) => s.text).join('\n');
}

export async function buildCorpus(opts: CorpusOptions): Promise<CorpusSample[]> {
  const nodeModules = opts.nodeModules ?? path.join(REPO, 'node_modules');
  const minChars = opts.minChars ?? SAMPLE_MIN_CHARS;
  const maxChars = opts.maxChars ?? SAMPLE_MAX_CHARS;
  if (!markedModule) {
    try {
      markedModule = (await import('marked')) as unknown as typeof markedModule;
    } catch {
      markedModule = undefined;
    }
  }
  const ctx: Ctx = { files: listFiles(nodeModules), nodeModules };
  const out: CorpusSample[] = [];
  for (const category of NODE_CATEGORIES) {
    const docs = LISTERS[category](ctx)
      .filter((d) => splitOf(category, d.source) === opts.split)
      .map((d) => ({ d, k: h32(`${category}:${d.name}`) }))
      .sort((a, b) => a.k - b.k)
      .map((x) => x.d);
    // first pass: one window per document, at most MAX_DOCS_PER_SOURCE documents per source
    const perSource = new Map<string, number>();
    const loaded: Array<{ doc: Doc; text: string }> = [];
    const seen = new Set<string>();
    for (const doc of docs) {
      if (loaded.length >= opts.perCategory) break;
      if ((perSource.get(doc.source) ?? 0) >= MAX_DOCS_PER_SOURCE) continue;
      const text = doc.load();
      if (!text || text.length < minChars) continue;
      const digest = crypto.createHash('sha1').update(text).digest('hex');
      if (seen.has(digest)) continue; // the same LICENSE in 40 packages is one document
      seen.add(digest);
      perSource.set(doc.source, (perSource.get(doc.source) ?? 0) + 1);
      loaded.push({ doc, text });
    }
    // then more windows from the same documents while the category is short
    for (let round = 0; out.filter((s) => s.category === category).length < opts.perCategory && round < 8; round++) {
      let added = false;
      for (const { doc, text } of loaded) {
        if (out.filter((s) => s.category === category).length >= opts.perCategory) break;
        if (round > 0 && text.length < maxChars * 1.5) continue;
        const key = `${category}:${doc.name}#${round}`;
        const sample = window(text, key, targetLength(key, minChars, maxChars));
        if (sample.length < minChars / 2) continue;
        out.push({ id: `${category}/${doc.name}#${round}`, category, source: doc.source, split: opts.split, text: sample });
        added = true;
      }
      if (!added) break;
    }
  }
  const taken = new Map<string, number>();
  EXTRA.forEach((s, i) => {
    if (s.split !== opts.split || (taken.get(s.category) ?? 0) >= opts.perCategory) return;
    taken.set(s.category, (taken.get(s.category) ?? 0) + 1);
    out.push({ id: `${s.category}/${s.source}#${i}`, category: s.category, source: s.source, split: s.split, text: s.text });
  });
  return out;
}

// CLI: summary, or dump into a folder for inspection
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  if (process.argv.includes('--write-packages')) {
    const list = installedPackages(path.join(REPO, 'node_modules'));
    fs.writeFileSync(CORPUS_PACKAGES_FILE, list.join('\n') + '\n');
    console.log(`${list.length} packages written to ${path.relative(REPO, CORPUS_PACKAGES_FILE)}`);
    process.exit(0);
  }
  const split = (arg('--split') ?? 'train') as Split;
  const perCategory = Number(arg('--per-category') ?? 30);
  const outDir = arg('--out');
  const t0 = performance.now();
  const samples = await buildCorpus({ split, perCategory });
  const ms = performance.now() - t0;
  for (const c of CATEGORIES) {
    const s = samples.filter((x) => x.category === c);
    const sources = new Set(s.map((x) => x.source));
    const chars = s.reduce((a, x) => a + x.text.length, 0);
    console.log(`${c.padEnd(14)} ${String(s.length).padStart(3)} samples  ${String(sources.size).padStart(3)} sources  ${(chars / 1024).toFixed(0).padStart(6)} KiB`);
  }
  console.log(`${samples.length} ${split} samples in ${ms.toFixed(0)} ms`);
  if (outDir) {
    fs.mkdirSync(outDir, { recursive: true });
    for (const s of samples) fs.writeFileSync(path.join(outDir, s.id.replace(/[^A-Za-z0-9.#-]+/g, '_') + '.txt'), s.text);
  }
}
