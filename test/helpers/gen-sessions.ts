/**
 * A realistic sessions root for tests, e2e runs and benchmarks.
 *
 * `generateSessionsRoot(dir, { sessions, payloads, seed })` fills `dir` with `sessions` session
 * folders holding `payloads` spilled payloads in total, in the on-disk layout of
 * `src/pipeline/layout.ts` (payload file + `.meta.json` sidecar + content-addressed assets).
 * Content is real: source files, JSON, READMEs and PNG icons taken from node_modules, sliced
 * and repeated to a seeded size distribution. The same seed always gives the same tree
 * (file names, bytes and meta), so tests can assert exact figures.
 *
 * Every payload is written by the real guard (`handleLargeResponse`), so assets, linked forms
 * and sidecars are exactly what agents produce.
 */
import fs from 'node:fs';
import path from 'node:path';
import { META_SUFFIX, handleLargeResponse } from '../../src/pipeline/index.js';
import type { ContentKind } from '../../src/pipeline/types.js';

const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');
const NODE_MODULES = path.join(REPO_ROOT, 'node_modules');

/** Smallest and largest generated payload (the big one aside). */
const MIN_PAYLOAD_BYTES = 512;
const MAX_PAYLOAD_BYTES = 4 * 1024 * 1024;
/** Default mean payload size: small enough for unit tests to stay fast. */
const DEFAULT_MEAN_PAYLOAD_BYTES = 24 * 1024;
/** Largest source file pulled into the content pool. */
const MAX_POOL_FILE_BYTES = 2 * 1024 * 1024;
const GEN_START = Date.UTC(2026, 10, 1, 8, 0, 0);

export interface GenerateOptions {
  /** Number of session folders. */
  sessions: number;
  /** Payloads in total, spread round-robin over the sessions. */
  payloads: number;
  /** PRNG seed: same seed, same tree. */
  seed: number;
  /** When set, the first payload of the first session is a text payload of exactly this many bytes. */
  bigPayloadBytes?: number;
  /** Mean payload size (log-normal spread, clamped to 512 B … 4 MB). Default 24 KB. */
  meanPayloadBytes?: number;
  /** Share of payloads that are MCP screenshots carrying a base64 PNG (extracted to an asset). Default 0.05. */
  imageShare?: number;
  /**
   * Run the guard for about this many payloads only; the remaining sessions are byte copies of
   * the guard-written ones (the guard runs at a few MB/s, too slow to write 1 GB for a bench).
   * Default: every payload goes through the guard.
   */
  uniquePayloads?: number;
}

export interface GeneratedPayload {
  session: string;
  stem: string;
  tool: string;
  kind: ContentKind;
  bytes: number;
  payloadPath: string;
  metaPath: string;
  assets: number;
}

export interface GeneratedRoot {
  root: string;
  sessions: string[];
  payloads: GeneratedPayload[];
  /** Bytes of payload files (originals or linked forms) plus meta and assets written. */
  bytesOnDisk: number;
  /** Distinct asset files. */
  assets: number;
}

/** mulberry32: tiny, seeded, good enough to pick content. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Pool {
  code: string[];
  json: string[];
  markdown: string[];
  png: Buffer[];
}

let poolCache: Pool | undefined;

function listFiles(dir: string, test: (name: string, size: number) => boolean, max: number, out: string[] = [], depth = 0): string[] {
  if (out.length >= max || depth > 6) return out;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (out.length >= max) break;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) listFiles(p, test, max, out, depth + 1);
    else if (e.isFile()) {
      const size = fs.statSync(p).size;
      if (size <= MAX_POOL_FILE_BYTES && test(e.name, size)) out.push(p);
    }
  }
  return out;
}

/** Real content from node_modules, read once per process, in a deterministic order. */
function contentPool(): Pool {
  if (poolCache) return poolCache;
  const read = (files: string[]) => files.map((f) => fs.readFileSync(f, 'utf8')).filter((s) => s.length > 0);
  const pkgs = ['typescript/lib', 'vitest', 'commander', 'chokidar', 'better-sqlite3', 'zod', 'react', 'vite', 'diff', 'fast-check'];
  const code: string[] = [];
  const markdown: string[] = [];
  const json: string[] = [];
  for (const p of pkgs) {
    const d = path.join(NODE_MODULES, p);
    code.push(...read(listFiles(d, (n, s) => /\.(js|ts|mjs|cjs)$/.test(n) && !n.endsWith('.d.ts') && s > 2_000, 12)));
    markdown.push(...read(listFiles(d, (n, s) => /\.md$/i.test(n) && s > 1_000, 4)));
    json.push(...read(listFiles(d, (n, s) => n.endsWith('.json') && s > 500, 6)));
  }
  markdown.push(...read(listFiles(NODE_MODULES, (n, s) => /^readme\.md$/i.test(n) && s > 8_000, 40)));
  json.push(...read(listFiles(path.join(NODE_MODULES, 'typescript', 'lib'), (n) => n === 'diagnosticMessages.generated.json', 4)));
  const png = listFiles(NODE_MODULES, (n, s) => n.endsWith('.png') && s > 2_000 && s < 300_000, 12).map((f) => fs.readFileSync(f));
  if (code.length === 0 || json.length === 0 || markdown.length === 0 || png.length === 0) {
    throw new Error('gen-sessions: node_modules has no usable content (run npm install)');
  }
  poolCache = { code, json, markdown, png };
  return poolCache;
}

/** Exactly `bytes` UTF-8 bytes-ish of text made by slicing and repeating real sources from a random offset. */
function sizedText(sources: string[], bytes: number, r: () => number): string {
  const parts: string[] = [];
  let len = 0;
  while (len < bytes) {
    const src = sources[Math.floor(r() * sources.length)]!;
    const start = Math.floor(r() * Math.max(1, src.length - 1));
    const piece = src.slice(start, start + (bytes - len));
    parts.push(piece);
    len += piece.length;
  }
  let text = parts.join('');
  // Multi-byte characters make the byte size larger than the char count; trim to the byte target.
  while (Buffer.byteLength(text) > bytes) text = text.slice(0, text.length - Math.max(1, Buffer.byteLength(text) - bytes));
  return text;
}

/** A JSON array of real JSON documents (parsed and re-serialized, so it is valid JSON) of about `bytes`. */
function sizedJson(pool: Pool, bytes: number, r: () => number): string {
  const items: unknown[] = [];
  let len = 2;
  while (len < bytes) {
    const src = pool.json[Math.floor(r() * pool.json.length)]!;
    let value: unknown;
    try {
      value = JSON.parse(src);
    } catch {
      value = { text: src.slice(0, 2_000) };
    }
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      // Big objects (diagnostic messages) are cut to a random window of keys.
      const entries = Object.entries(value as Record<string, unknown>);
      const start = Math.floor(r() * Math.max(1, entries.length - 1));
      const take = Math.max(1, Math.min(entries.length - start, Math.ceil((bytes - len) / 60)));
      value = Object.fromEntries(entries.slice(start, start + take));
    }
    const s = JSON.stringify(value);
    items.push(value);
    len += s.length + 1;
  }
  return JSON.stringify({ results: items, count: items.length }, null, 1);
}

function sizedLog(pool: Pool, bytes: number, r: () => number, t0: number): string {
  const src = pool.code[Math.floor(r() * pool.code.length)]!.split('\n').filter((l) => l.trim().length > 0);
  const levels = ['INFO', 'INFO', 'INFO', 'DEBUG', 'WARN', 'ERROR'];
  const lines: string[] = [];
  let len = 0;
  let i = Math.floor(r() * src.length);
  let t = t0;
  while (len < bytes) {
    t += Math.floor(r() * 250);
    const line = `${new Date(t).toISOString()} ${levels[Math.floor(r() * levels.length)]} worker-${Math.floor(r() * 8)} ${src[i % src.length]!.trim()}`;
    lines.push(line);
    len += line.length + 1;
    i++;
  }
  return lines.join('\n');
}

function sizedCsv(pool: Pool, bytes: number, r: () => number): string {
  const diag = pool.json.find((j) => j.length > 100_000) ?? pool.json[0]!;
  let obj: Record<string, unknown>;
  try {
    obj = JSON.parse(diag) as Record<string, unknown>;
  } catch {
    obj = { a: diag };
  }
  const keys = Object.keys(obj);
  const lines = ['id,key,category,code,message'];
  let len = lines[0]!.length;
  let n = Math.floor(r() * keys.length);
  while (len < bytes) {
    const k = keys[n % keys.length]!;
    const msg = String(obj[k]).replace(/"/g, '""');
    const line = `${n},"${k.replace(/"/g, '""').slice(0, 60)}",${['Error', 'Message', 'Suggestion'][n % 3]},${1000 + (n % 9000)},"${msg}"`;
    lines.push(line);
    len += line.length + 1;
    n++;
  }
  return lines.join('\n');
}

interface Spec {
  tool: string;
  kind: ContentKind;
  ext: string;
  input: unknown;
  text: string;
  /** For screenshots: the PNG that sits base64-encoded inside `text`. */
  png?: Buffer;
}

const TOOLS: Array<{ tool: string; kind: ContentKind | 'image'; weight: number }> = [
  { tool: 'read_file', kind: 'code', weight: 5 },
  { tool: 'search_issues', kind: 'json', weight: 4 },
  { tool: 'fetch', kind: 'markdown', weight: 3 },
  { tool: 'run_command', kind: 'log', weight: 3 },
  { tool: 'query_table', kind: 'csv', weight: 2 },
  { tool: 'mcp__browser__screenshot', kind: 'image', weight: 1 },
];

function pickTool(r: () => number, imageShare: number): (typeof TOOLS)[number] {
  if (r() < imageShare) return TOOLS.find((t) => t.kind === 'image')!;
  const rest = TOOLS.filter((t) => t.kind !== 'image');
  const total = rest.reduce((a, t) => a + t.weight, 0);
  let x = r() * total;
  for (const t of rest) {
    x -= t.weight;
    if (x <= 0) return t;
  }
  return rest[0]!;
}

/** Log-normal size with the given mean, clamped. */
function pickSize(r: () => number, mean: number): number {
  const sigma = 1.1;
  const mu = Math.log(mean) - (sigma * sigma) / 2;
  const u1 = Math.max(r(), 1e-12);
  const u2 = r();
  const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  return Math.round(Math.min(MAX_PAYLOAD_BYTES, Math.max(MIN_PAYLOAD_BYTES, Math.exp(mu + sigma * z))));
}

function makeSpec(pool: Pool, r: () => number, size: number, imageShare: number, t: number, forceText = false): Spec {
  const pick = forceText ? TOOLS[0]! : pickTool(r, imageShare);
  const n = Math.floor(r() * 100_000);
  switch (pick.kind) {
    case 'code':
      return { tool: pick.tool, kind: 'code', ext: '.txt', input: { path: `src/module_${n}.ts` }, text: sizedText(pool.code, size, r) };
    case 'json':
      return { tool: pick.tool, kind: 'json', ext: '.json', input: { query: `label:bug page ${n}` }, text: sizedJson(pool, size, r) };
    case 'markdown':
      return { tool: pick.tool, kind: 'markdown', ext: '.md', input: { url: `https://example.org/docs/${n}` }, text: sizedText(pool.markdown, size, r) };
    case 'log':
      return { tool: pick.tool, kind: 'log', ext: '.log', input: { command: `npm test -- --shard=${n % 8}` }, text: sizedLog(pool, size, r, t) };
    case 'csv':
      return { tool: pick.tool, kind: 'csv', ext: '.csv', input: { sql: `select * from diagnostics limit ${n}` }, text: sizedCsv(pool, size, r) };
    default: {
      const png = pool.png[Math.floor(r() * pool.png.length)]!;
      const text = JSON.stringify({
        content: [
          { type: 'text', text: `Screenshot of https://example.org/page/${n}` },
          { type: 'image', data: png.toString('base64'), mimeType: 'image/png' },
        ],
      });
      return { tool: pick.tool, kind: 'json', ext: '.json', input: { url: `https://example.org/page/${n}` }, text, png };
    }
  }
}

export interface SpillOneOptions {
  tool: string;
  input?: unknown;
  intent?: string;
  text: string;
  time: Date;
  limitTokens?: number;
}

export interface SpillOneResult {
  stem: string;
  payloadPath: string;
  metaPath: string;
  /** Bytes of the original result. */
  bytes: number;
  assetPaths: string[];
}

/**
 * Spill one result into `sessionDir` with the real guard (`handleLargeResponse`): payload (or
 * its linked form when assets were cut out), content-addressed assets, then the meta sidecar.
 */
export async function spillOne(sessionDir: string, o: SpillOneOptions): Promise<SpillOneResult> {
  const res = await handleLargeResponse({
    text: o.text,
    sessionPath: sessionDir,
    context: { toolName: o.tool, toolInput: o.input, intent: o.intent, limitTokens: o.limitTokens },
    now: () => o.time,
  });
  if (!res.payloadPath || !res.metaPath) throw new Error(`the guard did not save the payload: ${res.errors.join('; ')}`);
  return {
    stem: path.basename(res.metaPath).slice(0, -META_SUFFIX.length),
    payloadPath: res.payloadPath,
    metaPath: res.metaPath,
    bytes: Buffer.byteLength(o.text),
    assetPaths: [...new Set(res.assets.map((a) => a.path))],
  };
}

/**
 * Fill `dir` with a seeded, realistic sessions root. Session folders are `session-NNN`;
 * payload times start at 2026-11-01T08:00Z and advance per payload.
 */
export async function generateSessionsRoot(dir: string, opts: GenerateOptions): Promise<GeneratedRoot> {
  const pool = contentPool();
  const r = rng(opts.seed);
  const mean = opts.meanPayloadBytes ?? DEFAULT_MEAN_PAYLOAD_BYTES;
  const imageShare = opts.imageShare ?? 0.05;
  const sessionCount = Math.max(1, opts.sessions);
  // Sessions written by the guard; the rest (bench sizes) are byte copies of them.
  const guardSessions =
    opts.uniquePayloads !== undefined && opts.uniquePayloads < opts.payloads
      ? Math.max(1, Math.min(sessionCount, Math.ceil((sessionCount * opts.uniquePayloads) / Math.max(1, opts.payloads))))
      : sessionCount;
  fs.mkdirSync(dir, { recursive: true });
  const sessions: string[] = [];
  for (let s = 0; s < sessionCount; s++) {
    const sdir = path.join(dir, `session-${String(s).padStart(3, '0')}`);
    fs.mkdirSync(sdir, { recursive: true });
    sessions.push(sdir);
  }
  const payloads: GeneratedPayload[] = [];
  const assetSet = new Set<string>();
  let bytesOnDisk = 0;
  const account = (p: GeneratedPayload, assetPaths: string[]) => {
    for (const a of assetPaths) {
      if (!assetSet.has(a)) bytesOnDisk += fs.statSync(a).size;
      assetSet.add(a);
    }
    bytesOnDisk += fs.statSync(p.payloadPath).size + fs.statSync(p.metaPath).size;
    payloads.push(p);
  };
  const assetsOf = new Map<string, string[]>();
  for (let i = 0; i < opts.payloads; i++) {
    const sIdx = i % sessionCount;
    if (sIdx >= guardSessions) continue;
    const session = sessions[sIdx]!;
    const big = i === 0 && opts.bigPayloadBytes !== undefined;
    const size = big ? opts.bigPayloadBytes! : pickSize(r, mean);
    const t = GEN_START + i * 1_337;
    const spec = makeSpec(pool, r, size, imageShare, t, big);
    const out = await spillOne(session, { tool: spec.tool, input: spec.input, text: spec.text, time: new Date(t) });
    assetsOf.set(out.payloadPath, out.assetPaths);
    account(
      { session, stem: out.stem, tool: spec.tool, kind: spec.kind, bytes: out.bytes, payloadPath: out.payloadPath, metaPath: out.metaPath, assets: out.assetPaths.length },
      out.assetPaths,
    );
    // Let timers and I/O callbacks run during long generations (bench sizes).
    if (i % 50 === 49) await new Promise((res) => setImmediate(res));
  }
  const originals = [...payloads];
  for (let sIdx = guardSessions; sIdx < sessionCount; sIdx++) {
    const from = sessions[sIdx % guardSessions]!;
    const to = sessions[sIdx]!;
    fs.rmSync(to, { recursive: true, force: true });
    fs.cpSync(from, to, { recursive: true });
    const map = (p: string) => path.join(to, path.relative(from, p));
    for (const p of originals.filter((x) => x.session === from)) {
      account(
        { ...p, session: to, payloadPath: map(p.payloadPath), metaPath: map(p.metaPath) },
        (assetsOf.get(p.payloadPath) ?? []).map(map),
      );
    }
    await new Promise((res) => setImmediate(res));
  }
  return { root: path.resolve(dir), sessions, payloads, bytesOnDisk, assets: assetSet.size };
}
