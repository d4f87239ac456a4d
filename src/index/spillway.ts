import path from 'node:path';
import { LINKED_SUFFIX, META_SUFFIX, confine, parseStem } from '../pipeline/index.js';
import type { AssetRef, ContentKind, PayloadMeta, StrategyName, SummaryRun } from '../pipeline/types.js';
import type { Unit } from './discover.js';
import type { PayloadRecord, UnitResult } from './record.js';
import { type FileStat, fillStat } from './discover.js';
import type { SessionSource } from './source.js';
import { canonicalS3Root, isS3Path } from './s3.js';
import {
  MAX_ESTIMATE_READ_BYTES,
  base64TokensForChars,
  cheapEstimates,
  countLinesIn,
  kindFromFileName,
  scaleEstimates,
  stableId,
} from './text.js';
import { type FileWindow, type ReadBuffers, UnitHash, readWindow } from './window.js';

/** Largest sidecar read; a bigger one is not something the guard wrote. */
export const MAX_META_BYTES = 16 * 1024 * 1024;

const KINDS: ReadonlySet<string> = new Set<ContentKind>(['json', 'ndjson', 'csv', 'log', 'html', 'xml', 'markdown', 'code', 'text', 'binary']);
/** A tokenizer's number (an exact count, or one counted until the limit was crossed and extrapolated). */
const EXACT_NAMES: ReadonlySet<string> = new Set<StrategyName>(['o200k', 'cl100k', 'claude']);
const STRATEGIES: ReadonlySet<string> = new Set<StrategyName>(['chars4', 'craft-density', 'calibrated', 'o200k', 'cl100k', 'claude']);
const INLINE_SOURCES: ReadonlySet<string> = new Set(['base64', 'base64url', 'data-url', 'mcp-image', 'mcp-audio', 'mcp-blob']);

const ISO_UTC_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A time as canonical ISO UTC (the guard writes it so already: kept as is), or undefined. */
function isoTime(s: string | undefined): string | undefined {
  if (s === undefined) return undefined;
  if (ISO_UTC_RE.test(s)) return s;
  const t = Date.parse(s);
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

/** The payload id of a Spillway payload: stable across rebuilds, derived from its location. */
export function spillwayPayloadId(longResponsesDir: string, stem: string): string {
  // An S3 path is not resolved against the working folder: its id must not depend on where the inspector runs.
  return stableId('p', `${isS3Path(longResponsesDir) ? canonicalS3Root(longResponsesDir) : path.resolve(longResponsesDir)}/${stem}`);
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Sidecars up to this size are read into the scan's reused buffer (the guard's are a few KB). */
const META_SCRATCH_BYTES = 64 * 1024;

export interface MetaRead {
  meta: PayloadMeta | null;
  error?: string;
  /** Size and mtime of the sidecar that was read, when it could be opened. */
  size?: number;
  mtimeMs?: number;
}

/**
 * Parse a sidecar defensively: a hand-edited or half-written meta must not break a scan. One
 * ranged read; with `hash`, the raw bytes are fed to it too.
 */
export async function readMeta(source: SessionSource, file: string, o: { hash?: UnitHash; buffers?: ReadBuffers } = {}): Promise<MetaRead> {
  let text: string;
  let size: number;
  let mtimeMs: number;
  try {
    const r = await source.readRange(file, 0, MAX_META_BYTES, o.buffers?.headOf(META_SCRATCH_BYTES));
    size = r.size;
    mtimeMs = r.mtimeMs;
    if (size > MAX_META_BYTES) return { meta: null, error: `meta over ${MAX_META_BYTES} bytes`, size, mtimeMs };
    o.hash?.update(r.bytes);
    text = r.bytes.toString('utf8');
  } catch (err) {
    return { meta: null, error: (err as Error).message };
  }
  try {
    const v = JSON.parse(text) as unknown;
    if (!isObj(v)) return { meta: null, error: 'meta is not a JSON object', size, mtimeMs };
    return { meta: v as unknown as PayloadMeta, size, mtimeMs };
  } catch (err) {
    return { meta: null, error: `meta is not valid JSON: ${(err as Error).message}`, size, mtimeMs };
  }
}

/** `relPath` inside an S3 session, as an `s3://` URL; throws when it would leave it. */
function confineS3(sessionDir: string, relPath: string): string {
  const segs = relPath.split('/');
  if (relPath.includes('\0') || relPath.includes('\\') || segs.some((s) => s === '' || s === '.' || s === '..')) throw new Error(`asset path leaves the session: ${relPath}`);
  return `${canonicalS3Root(sessionDir)}/${relPath}`;
}

function validAssets(v: unknown, sessionDir: string): AssetRef[] {
  if (!Array.isArray(v)) return [];
  const out: AssetRef[] = [];
  for (const a of v) {
    if (!isObj(a)) continue;
    const relPath = str(a.relPath);
    const sha256 = str(a.sha256);
    if (!relPath || !sha256 || !/^[0-9a-f]{64}$/.test(sha256)) continue;
    let p: string;
    try {
      // Never trust the absolute path in the sidecar: the session may have moved, and a hostile
      // meta could point anywhere. Resolve the relative one inside the session.
      p = isS3Path(sessionDir) ? confineS3(sessionDir, relPath) : confine(sessionDir, relPath);
    } catch {
      continue;
    }
    out.push({
      path: p,
      relPath,
      mimeType: str(a.mimeType) ?? 'application/octet-stream',
      bytes: num(a.bytes) ?? 0,
      sha256,
      jsonPath: str(a.jsonPath) ?? '',
      source: (str(a.source) ?? 'binary') as AssetRef['source'],
      sniffed: a.sniffed === true,
    });
  }
  return out;
}

function validRuns(v: unknown): SummaryRun[] {
  if (!Array.isArray(v)) return [];
  return v.filter((r): r is SummaryRun => isObj(r) && typeof r.id === 'string' && typeof r.summary === 'string');
}

function validEstimates(v: unknown): Partial<Record<StrategyName, number>> {
  const out: Partial<Record<StrategyName, number>> = {};
  if (!isObj(v)) return out;
  for (const [k, n] of Object.entries(v)) {
    const x = num(n);
    if (STRATEGIES.has(k) && x !== undefined) out[k as StrategyName] = Math.round(x);
  }
  return out;
}

/** Estimates for a payload file whose sidecar has none: read it whole when reasonable, else scale its head + tail. */
async function estimateFile(source: SessionSource, file: string, win: FileWindow): Promise<Partial<Record<StrategyName, number>>> {
  if (win.binary) return {};
  if (win.whole !== null) return cheapEstimates(win.whole);
  if (win.size <= MAX_ESTIMATE_READ_BYTES) {
    try {
      return cheapEstimates((await source.readRange(file, 0, MAX_ESTIMATE_READ_BYTES)).bytes.toString('utf8'));
    } catch {
      /* fall through to the sample */
    }
  }
  const sample = `${win.head}\n${win.tail}`;
  return scaleEstimates(cheapEstimates(sample), win.size / Math.max(1, Buffer.byteLength(sample)));
}

/** The payload file of a stem: the one the sidecar names (if it is one of this stem's regular files), else the stem's payload file, else its linked form. */
function payloadFileOf(stem: string, m: Partial<Record<keyof PayloadMeta, unknown>>, names: Set<string>): string | undefined {
  const declared = str(m.payloadFile);
  if (declared && path.basename(declared) === declared && names.has(declared)) return declared;
  const metaName = stem + META_SUFFIX;
  const linkedName = stem + LINKED_SUFFIX;
  const plain = [...names].filter((n) => n !== metaName && n !== linkedName).sort()[0];
  return plain ?? (names.has(linkedName) ? linkedName : undefined);
}

/** The linked form of a stem: the one the sidecar names, else `<stem>.linked.json`, if the stem has it. */
function linkedFileOf(stem: string, m: Partial<Record<keyof PayloadMeta, unknown>>, names: Set<string>): string | undefined {
  const declared = str(m.linkedFile);
  if (declared && path.basename(declared) === declared && names.has(declared)) return declared;
  return names.has(stem + LINKED_SUFFIX) ? stem + LINKED_SUFFIX : undefined;
}

/** What the sidecar does not say about the payload, read from the payload file itself. */
interface PayloadFileFacts {
  size: number;
  /** Read only when the sidecar lacks the kind or the estimates (a hand-made session, a sidecar not written yet). */
  win?: FileWindow;
}

/**
 * Read one stem of a Spillway session into a payload record (zero records when incomplete): the
 * listing phase. The sidecar says nearly everything (tool, size, kind, estimates, assets), so a
 * payload whose sidecar is complete is listed without opening the payload file; its head and
 * tail are read later, for full-text search. The unit's hash covers the sidecar's bytes and the
 * payload's size (payload files are written once, never rewritten in place).
 */
export async function readSpillwayUnit(source: SessionSource, unit: Unit, buffers?: ReadBuffers): Promise<UnitResult> {
  const warnings: string[] = [];
  const stem = unit.stem!;
  // The walk built the key from the resolved session folder: `<session>/long_responses/<stem>`.
  const sp = { session: unit.session.path, longResponses: path.dirname(unit.key) };
  const byName = new Map(unit.files.map((f) => [f.name, f]));
  const names = new Set(byName.keys());
  const metaName = stem + META_SUFFIX;
  const h = new UnitHash();
  let meta: PayloadMeta | null = null;
  const metaStat = byName.get(metaName);
  if (metaStat) {
    const r = await readMeta(source, `${sp.longResponses}${path.sep}${metaName}`, { hash: h, buffers });
    fillStat(metaStat, r.size, r.mtimeMs);
    if (r.meta) meta = r.meta;
    else warnings.push(`${path.join(sp.longResponses, metaName)}: ${r.error}`);
  }
  const m = (meta ?? {}) as Partial<Record<keyof PayloadMeta, unknown>>;
  const payloadName = payloadFileOf(stem, m, names);
  // A sidecar without its payload: deleted by hand, or not written yet. Nothing to show.
  if (!payloadName) return { payloads: [], hash: h.digest(), warnings };
  const payloadPath = path.join(sp.longResponses, payloadName);
  // The sidecar is written last, as the commit marker: without it the spill did not finish.
  if (!metaStat) warnings.push(`${payloadPath}: incomplete spill (no ${META_SUFFIX} sidecar: still being written, or its writer stopped)`);
  let estimates = validEstimates(m.estimates);
  const kindRaw = str(m.kind);
  const complete = kindRaw !== undefined && KINDS.has(kindRaw) && estimates.calibrated !== undefined && estimates.chars4 !== undefined && estimates['craft-density'] !== undefined;
  let facts: PayloadFileFacts;
  try {
    facts = await payloadFacts(source, payloadPath, byName.get(payloadName)!, m, complete ? undefined : { hash: h, buffers });
  } catch (err) {
    warnings.push(`${payloadPath}: ${(err as Error).message}`);
    return { payloads: [], hash: h.digest(), warnings };
  }
  if (facts.win) estimates = { ...(await estimateFile(source, payloadPath, facts.win)), ...estimates };
  const linkedName = linkedFileOf(stem, m, names);
  const rec = spillwayRecord({ stem, sessionDir: sp.session, longResponses: sp.longResponses, m, meta, payloadName, facts, estimates });
  if (linkedName) rec.linkedPath = path.join(sp.longResponses, linkedName);
  return { payloads: [rec], hash: h.digest(), warnings };
}

/**
 * What the listing needs from the payload file itself: nothing when the sidecar is complete (its
 * size too), its size when the sidecar lacks it, its head and tail when the sidecar lacks the
 * kind or the estimates.
 */
async function payloadFacts(
  source: SessionSource,
  file: string,
  st: FileStat,
  m: Partial<Record<keyof PayloadMeta, unknown>>,
  read?: { hash: UnitHash; buffers?: ReadBuffers },
): Promise<PayloadFileFacts> {
  if (read) {
    const win = await readWindow(source, file, read);
    fillStat(st, win.size, win.mtimeMs);
    return { size: win.size, win };
  }
  const declared = num(m.bytes);
  if (declared !== undefined) return { size: declared };
  const done = await source.stat(file);
  if (!done) throw new Error('payload file is gone');
  return { size: done.size };
}

function spillwayRecord(o: {
  stem: string;
  sessionDir: string;
  longResponses: string;
  m: Partial<Record<keyof PayloadMeta, unknown>>;
  meta: PayloadMeta | null;
  payloadName: string;
  facts: PayloadFileFacts;
  estimates: Partial<Record<StrategyName, number>>;
}): PayloadRecord {
  const { m, facts, estimates } = o;
  const estimate = isObj(m.estimate) ? m.estimate : undefined;
  // The number the guard decided with is the best it had: an exact count near the limit, or the fit
  // corrected for content it misprices (Greek read 0.65x, Arabic 13x); else the calibrated estimate.
  const decided = estimate?.exact === true || estimate?.strategy === 'calibrated' || EXACT_NAMES.has(String(estimate?.strategy)) ? num(estimate?.tokens) : undefined;
  const tokens = decided ?? estimates.calibrated ?? num(estimate?.tokens) ?? estimates.chars4 ?? Math.ceil(facts.size / 4);
  const assets = validAssets(m.assets, o.sessionDir);
  let b64Chars = 0;
  let b64Runs = 0;
  for (const a of assets) {
    if (INLINE_SOURCES.has(a.source)) {
      b64Runs++;
      b64Chars += Math.ceil(a.bytes / 3) * 4;
    }
  }
  const tool = str(m.tool);
  const createdAt = isoTime(str(m.createdAt));
  // The stem says when and which tool when the sidecar does not.
  const parsed = tool === undefined || createdAt === undefined ? parseStem(o.stem) : null;
  const kindRaw = str(m.kind);
  const kind: ContentKind = kindRaw && KINDS.has(kindRaw) ? (kindRaw as ContentKind) : facts.win?.binary ? 'binary' : kindFromFileName(o.payloadName);
  return {
    // o.longResponses is resolved already (the walk built it so): the id spillwayPayloadId gives, without resolving again.
    id: stableId('p', `${o.longResponses}/${o.stem}`),
    tool: tool ?? parsed?.tool ?? 'tool',
    createdAt: createdAt ?? (parsed?.time ?? new Date(0)).toISOString(),
    bytes: num(m.bytes) ?? facts.size,
    action: m.action === 'inline-assets' ? 'inline-assets' : 'spill',
    kind,
    assets,
    input: m.toolInput,
    intent: str(m.intent),
    estimates,
    tokens,
    path: path.join(o.longResponses, o.payloadName),
    metaPath: o.meta ? path.join(o.longResponses, o.stem + META_SUFFIX) : undefined,
    // The message stays in the sidecar (getPayload reads it there): no second copy per row.
    binary: facts.win ? facts.win.binary : kind === 'binary',
    lines: facts.win?.whole != null ? countLinesIn(facts.win.whole) : undefined,
    b64: { runs: b64Runs, chars: b64Chars, tokens: base64TokensForChars(b64Chars) },
    summaryRuns: validRuns(m.summaryRuns),
  };
}
