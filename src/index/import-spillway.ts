import path from 'node:path';
import { LINKED_SUFFIX, META_SUFFIX, confine, parseStem } from '../pipeline/index.js';
import type { AssetRef, ContentKind, PayloadMeta, StrategyName, SummaryRun } from '../pipeline/types.js';
import type { Unit } from './discover.js';
import type { PayloadRecord, UnitResult } from './record.js';
import { type FileStat, fillStat } from './discover.js';
import { type Awaitable, type RangeRead, type ReadOptions, type SessionSource, type SourceStat, isPromiseLike } from './source.js';
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
import { assetSizes } from './ledger.js';
import { spillRuleJson } from './spill-rule.js';
import { isObj } from '../pipeline/values.js';
import { CONTENT_KINDS, STRATEGY_NAMES } from '../pipeline/vocab.js';

/** Largest sidecar read; a bigger one is not something the guard wrote. */
export const MAX_META_BYTES = 16 * 1024 * 1024;

const KINDS: ReadonlySet<string> = new Set<ContentKind>(CONTENT_KINDS);
/** A tokenizer's number (an exact count, or one counted until the limit was crossed and extrapolated). */
const EXACT_NAMES: ReadonlySet<string> = new Set<StrategyName>(['o200k', 'cl100k', 'claude']);
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

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
/** A sidecar's id or path field: a short non-empty string, else nothing (a hand-edited sidecar may hold anything). */
const boundedStr = (v: unknown): string | undefined => (typeof v === 'string' && v && v.length <= 4096 ? v : undefined);

const LISTED: ReadOptions = { listed: true };

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
 * Read a sidecar from a session source, defensively (restore.ts's `readMeta` is the strict check of a local file): a hand-edited or half-written meta must not break a scan. One
 * ranged read; with `hash`, the raw bytes are fed to it too. A promise only when the source
 * answers with one.
 */
export function readSidecar(source: SessionSource, file: string, o: { hash?: UnitHash; buffers?: ReadBuffers; listed?: boolean } = {}): Awaitable<MetaRead> {
  let r: Awaitable<RangeRead>;
  try {
    r = source.readRange(file, 0, MAX_META_BYTES, o.buffers?.headOf(META_SCRATCH_BYTES), o.listed ? LISTED : undefined);
  } catch (err) {
    return { meta: null, error: (err as Error).message };
  }
  if (!isPromiseLike(r)) return metaOf(r, o.hash);
  return Promise.resolve(r).then(
    (read) => metaOf(read, o.hash),
    (err: unknown) => ({ meta: null, error: (err as Error).message }),
  );
}

function metaOf(r: RangeRead, hash: UnitHash | undefined): MetaRead {
  const { size, mtimeMs } = r;
  if (size > MAX_META_BYTES) return { meta: null, error: `meta over ${MAX_META_BYTES} bytes`, size, mtimeMs };
  let text: string;
  try {
    hash?.update(r.bytes);
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
  // The known names looked up (six), not every key the sidecar has walked: listing's hot path.
  for (const k of STRATEGY_NAMES) {
    const x = Object.hasOwn(v, k) ? num(v[k]) : undefined;
    if (x !== undefined) out[k] = Math.round(x);
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

/** One stem's files by role (a unit's files all share its stem, so the suffix says which is which). */
interface StemFiles {
  all: FileStat[];
  meta?: FileStat;
  linked?: FileStat;
  /** The first by name of the others. */
  plain?: FileStat;
}

function stemFiles(files: FileStat[]): StemFiles {
  // Every field set from the start: one object shape, whichever files the stem has.
  const out: StemFiles = { all: files, meta: undefined, linked: undefined, plain: undefined };
  for (const f of files) {
    if (f.name.endsWith(META_SUFFIX)) out.meta = f;
    else if (f.name.endsWith(LINKED_SUFFIX)) out.linked = f;
    else if (!out.plain || f.name < out.plain.name) out.plain = f;
  }
  return out;
}

/** The file of this stem a sidecar names, if it is one of them. */
function declaredFile(files: StemFiles, name: unknown): FileStat | undefined {
  if (typeof name !== 'string') return undefined;
  if (name === files.plain?.name) return files.plain;
  for (const f of files.all) if (f.name === name) return f;
  return undefined;
}

/** The payload file of a stem: the one the sidecar names (if it is one of this stem's regular files), else the stem's payload file (the first by name), else its linked form. */
const payloadFileOf = (m: Partial<Record<keyof PayloadMeta, unknown>>, files: StemFiles) => declaredFile(files, m.payloadFile) ?? files.plain ?? files.linked;

/** The linked form of a stem: the one the sidecar names, else `<stem>.linked.json`, if the stem has it. */
const linkedFileOf = (m: Partial<Record<keyof PayloadMeta, unknown>>, files: StemFiles) => declaredFile(files, m.linkedFile) ?? files.linked;

/**
 * `dir/name` as path.join makes it, for a folder path.join already made (the walk builds every
 * `long_responses/` path so) and a name from its listing: no normalizing pass per file.
 */
const inDir = (dir: string, name: string) => `${dir}${path.sep}${name}`;

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
 * payload's size (payload files are written once, never rewritten in place). A promise only
 * when the source answers with one (see `isPromiseLike`).
 */
export function readSpillwayUnit(source: SessionSource, unit: Unit, buffers?: ReadBuffers): Awaitable<UnitResult> {
  // The walk built the key from the resolved session folder: `<session>/long_responses/<stem>`.
  const s: StemRead = { source, unit, buffers, files: stemFiles(unit.files), longResponses: path.dirname(unit.key), hash: new UnitHash(), warnings: [] };
  const metaStat = s.files.meta;
  if (!metaStat) return withMeta(s, null);
  // A unit's files were listed as regular files by the walk (discover.ts), or stat'ed as such (the scanner's resolveSpill).
  const r = readSidecar(source, inDir(s.longResponses, metaStat.name), { hash: s.hash, buffers, listed: true });
  return isPromiseLike(r) ? r.then((read) => withMeta(s, read)) : withMeta(s, r);
}

/** One stem being read. */
interface StemRead {
  source: SessionSource;
  unit: Unit;
  buffers: ReadBuffers | undefined;
  files: StemFiles;
  longResponses: string;
  hash: UnitHash;
  warnings: string[];
}

const noPayload = (s: StemRead): UnitResult => ({ payloads: [], hash: s.hash.digest(), warnings: s.warnings });

/** The stem once its sidecar is read (`r`), or known to be missing (null). */
function withMeta(s: StemRead, r: MetaRead | null): Awaitable<UnitResult> {
  let meta: PayloadMeta | null = null;
  if (r) {
    fillStat(s.files.meta!, r.size, r.mtimeMs);
    if (r.meta) meta = r.meta;
    else s.warnings.push(`${inDir(s.longResponses, s.files.meta!.name)}: ${r.error}`);
  }
  const m = (meta ?? {}) as Partial<Record<keyof PayloadMeta, unknown>>;
  const payloadStat = payloadFileOf(m, s.files);
  // A sidecar without its payload: deleted by hand, or not written yet. Nothing to show.
  if (!payloadStat) return noPayload(s);
  const payloadPath = inDir(s.longResponses, payloadStat.name);
  // The sidecar is written last, as the commit marker: without it the spill did not finish.
  if (!r) s.warnings.push(`${payloadPath}: incomplete spill (no ${META_SUFFIX} sidecar: still being written, or its writer stopped)`);
  const estimates = validEstimates(m.estimates);
  const kindRaw = str(m.kind);
  const complete = kindRaw !== undefined && KINDS.has(kindRaw) && estimates.calibrated !== undefined && estimates.chars4 !== undefined && estimates['craft-density'] !== undefined;
  const p: StemPayload = { m, meta, payloadStat, payloadPath, estimates };
  let facts: Awaitable<PayloadFileFacts>;
  try {
    facts = payloadFacts(s.source, payloadPath, payloadStat, m, complete ? undefined : { hash: s.hash, buffers: s.buffers });
  } catch (err) {
    return payloadUnreadable(s, p, err);
  }
  if (!isPromiseLike(facts)) return withFacts(s, p, facts);
  return facts.then(
    (f) => withFacts(s, p, f),
    (err: unknown) => payloadUnreadable(s, p, err),
  );
}

function payloadUnreadable(s: StemRead, p: StemPayload, err: unknown): UnitResult {
  s.warnings.push(`${p.payloadPath}: ${(err as Error).message}`);
  return noPayload(s);
}

/** A stem's sidecar as read, and its payload file. */
interface StemPayload {
  m: Partial<Record<keyof PayloadMeta, unknown>>;
  meta: PayloadMeta | null;
  payloadStat: FileStat;
  payloadPath: string;
  estimates: Partial<Record<StrategyName, number>>;
}

function withFacts(s: StemRead, p: StemPayload, facts: PayloadFileFacts): Awaitable<UnitResult> {
  if (!facts.win) return stemResult(s, p, facts, p.estimates);
  return estimateFile(s.source, p.payloadPath, facts.win).then((e) => stemResult(s, p, facts, { ...e, ...p.estimates }));
}

function stemResult(s: StemRead, p: StemPayload, facts: PayloadFileFacts, estimates: Partial<Record<StrategyName, number>>): Awaitable<UnitResult> {
  const linkedName = linkedFileOf(p.m, s.files)?.name;
  const linkedPath = linkedName === undefined ? undefined : inDir(s.longResponses, linkedName);
  const { unit, longResponses } = s;
  const rec = spillwayRecord({ stem: unit.stem!, sessionDir: unit.session.path, longResponses, m: p.m, meta: p.meta, payloadName: p.payloadStat.name, payloadPath: p.payloadPath, linkedPath, facts, estimates });
  const client = boundedStr(p.m.client);
  const cwd = boundedStr(p.m.cwd);
  // The ledger's figures: what the model was handed (the message stays in the sidecar), and the sizes of the images cut out.
  const message = str(p.m.message);
  if (message !== undefined) rec.messageChars = message.length;
  const result: UnitResult = { payloads: [rec], hash: s.hash.digest(), warnings: s.warnings, ...(client || cwd ? { spill: { client, cwd } } : {}) };
  const sizes = assetSizes(s.source, rec.assets);
  if (sizes === undefined) return result;
  if (!isPromiseLike(sizes)) {
    rec.assetSizes = sizes;
    return result;
  }
  return sizes.then((x) => ((rec.assetSizes = x), result));
}

/**
 * What the listing needs from the payload file itself: nothing when the sidecar is complete (its
 * size too), its size when the sidecar lacks it, its head and tail when the sidecar lacks the
 * kind or the estimates.
 */
function payloadFacts(
  source: SessionSource,
  file: string,
  st: FileStat,
  m: Partial<Record<keyof PayloadMeta, unknown>>,
  read?: { hash: UnitHash; buffers?: ReadBuffers },
): Awaitable<PayloadFileFacts> {
  if (read) {
    return readWindow(source, file, read).then((win) => {
      fillStat(st, win.size, win.mtimeMs);
      return { size: win.size, win };
    });
  }
  const declared = num(m.bytes);
  if (declared !== undefined) return { size: declared };
  const stat = source.stat(file);
  return isPromiseLike(stat) ? stat.then(sizeOf) : sizeOf(stat);
}

function sizeOf(st: SourceStat | null): PayloadFileFacts {
  if (!st) throw new Error('payload file is gone');
  return { size: st.size };
}

function spillwayRecord(o: {
  stem: string;
  sessionDir: string;
  longResponses: string;
  m: Partial<Record<keyof PayloadMeta, unknown>>;
  meta: PayloadMeta | null;
  payloadName: string;
  payloadPath: string;
  linkedPath: string | undefined;
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
    path: o.payloadPath,
    linkedPath: o.linkedPath,
    metaPath: o.meta ? inDir(o.longResponses, o.stem + META_SUFFIX) : undefined,
    // The message stays in the sidecar (getPayload reads it there): no second copy per row.
    binary: facts.win ? facts.win.binary : kind === 'binary',
    lines: facts.win?.whole != null ? countLinesIn(facts.win.whole) : undefined,
    b64: { runs: b64Runs, chars: b64Chars, tokens: base64TokensForChars(b64Chars) },
    summaryRuns: validRuns(m.summaryRuns),
    callId: boundedStr(m.toolCallId),
    callClient: boundedStr(m.client),
    ruleJson: spillRuleJson(m.rule, m.limitTokens, m.summaryRuns),
  };
}
