import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { LINKED_SUFFIX, META_SUFFIX, confine, parseStem, sessionPaths } from '../pipeline/index.js';
import type { AssetRef, ContentKind, PayloadMeta, StrategyName, SummaryRun } from '../pipeline/types.js';
import type { Unit } from './discover.js';
import type { PayloadRecord, UnitResult } from './record.js';
import { ensureStat, fillStat } from './discover.js';
import {
  FTS_GAP,
  FTS_HEAD_BYTES,
  FTS_TAIL_BYTES,
  MAX_ESTIMATE_READ_BYTES,
  READ_NOFOLLOW,
  base64TokensForChars,
  cheapEstimates,
  countLinesIn,
  kindFromFileName,
  readWindow,
  scaleEstimates,
  stableId,
  stripAndScanBase64,
} from './text.js';

/** Largest sidecar read; a bigger one is not something the guard wrote. */
export const MAX_META_BYTES = 16 * 1024 * 1024;

const KINDS: ReadonlySet<string> = new Set<ContentKind>(['json', 'ndjson', 'csv', 'log', 'html', 'xml', 'markdown', 'code', 'text', 'binary']);
/** A tokenizer's number (an exact count, or one counted until the limit was crossed and extrapolated). */
const EXACT_NAMES: ReadonlySet<string> = new Set<StrategyName>(['o200k', 'cl100k', 'claude']);
const STRATEGIES: ReadonlySet<string> = new Set<StrategyName>(['chars4', 'craft-density', 'calibrated', 'o200k', 'cl100k', 'claude']);
const INLINE_SOURCES: ReadonlySet<string> = new Set(['base64', 'base64url', 'data-url', 'mcp-image', 'mcp-audio', 'mcp-blob']);

/** The payload id of a Spillway payload: stable across rebuilds, derived from its location. */
export function spillwayPayloadId(longResponsesDir: string, stem: string): string {
  return stableId('p', `${path.resolve(longResponsesDir)}/${stem}`);
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Sidecars up to this size are read into a reused buffer (the guard's are a few KB). */
const META_SCRATCH_BYTES = 64 * 1024;
let metaScratch = Buffer.allocUnsafe(META_SCRATCH_BYTES);

export interface MetaRead {
  meta: PayloadMeta | null;
  error?: string;
  /** Size and mtime of the sidecar that was read (from the open file), when it could be opened. */
  size?: number;
  mtimeMs?: number;
}

/**
 * Parse a sidecar defensively: a hand-edited or half-written meta must not break a scan. One
 * open, one fstat, one read; with `hash`, the raw bytes are fed to it too.
 */
export function readMeta(file: string, hash?: crypto.Hash): MetaRead {
  let text: string;
  let size: number;
  let mtimeMs: number;
  try {
    const fd = fs.openSync(file, READ_NOFOLLOW);
    try {
      const st = fs.fstatSync(fd);
      size = st.size;
      mtimeMs = st.mtimeMs;
      if (size > MAX_META_BYTES) return { meta: null, error: `meta over ${MAX_META_BYTES} bytes`, size, mtimeMs };
      const buf = size <= metaScratch.length ? metaScratch : Buffer.allocUnsafe(size);
      let n = 0;
      while (n < size) {
        const r = fs.readSync(fd, buf, n, size - n, n);
        if (r === 0) break;
        n += r;
      }
      hash?.update(buf.subarray(0, n));
      text = buf.toString('utf8', 0, n);
    } finally {
      fs.closeSync(fd);
    }
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
      p = confine(sessionDir, relPath);
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

/** Estimates for a payload file whose sidecar has none: read it whole when reasonable, else sample head + tail. */
function estimateFile(file: string, size: number, sample: string): Partial<Record<StrategyName, number>> {
  if (size <= MAX_ESTIMATE_READ_BYTES) {
    try {
      return cheapEstimates(fs.readFileSync(file, 'utf8'));
    } catch {
      /* fall through to the sample */
    }
  }
  const sampleBytes = Math.max(1, Buffer.byteLength(sample));
  return scaleEstimates(cheapEstimates(sample), size / sampleBytes);
}

/** Read one stem of a Spillway session into a payload record (zero records when incomplete). */
export function readSpillwayUnit(unit: Unit): UnitResult {
  const warnings: string[] = [];
  const stem = unit.stem!;
  const sp = sessionPaths(unit.session.path);
  const byName = new Map(unit.files.map((f) => [path.basename(f.path), f]));
  const metaName = stem + META_SUFFIX;
  const linkedName = stem + LINKED_SUFFIX;
  const h = crypto.createHash('sha256');

  let meta: PayloadMeta | null = null;
  const metaStat = byName.get(metaName);
  if (metaStat) {
    const r = readMeta(path.join(sp.longResponses, metaName), h);
    fillStat(metaStat, r.size, r.mtimeMs);
    if (r.meta) meta = r.meta;
    else warnings.push(`${path.join(sp.longResponses, metaName)}: ${r.error}`);
  }
  const m = (meta ?? {}) as Partial<Record<keyof PayloadMeta, unknown>>;

  // The payload file: the one the sidecar names (if it is one of this stem's regular files), else
  // the stem's payload file, else its linked form.
  let payloadName: string | undefined;
  const declared = str(m.payloadFile);
  if (declared && path.basename(declared) === declared && byName.has(declared)) payloadName = declared;
  if (!payloadName) {
    payloadName = [...byName.keys()].filter((n) => n !== metaName && n !== linkedName).sort()[0];
  }
  if (!payloadName && byName.has(linkedName)) payloadName = linkedName;
  if (!payloadName) {
    // A sidecar without its payload: deleted by hand, or not written yet. Nothing to show.
    return { payloads: [], hash: h.digest('hex'), warnings };
  }
  const payloadPath = path.join(sp.longResponses, payloadName);
  let win;
  try {
    win = readWindow(payloadPath, FTS_HEAD_BYTES, FTS_TAIL_BYTES, h);
  } catch (err) {
    warnings.push(`${payloadPath}: ${(err as Error).message}`);
    return { payloads: [], hash: h.digest('hex'), warnings };
  }
  fillStat(byName.get(payloadName)!, win.size, win.mtimeMs);
  const declaredLinked = str(m.linkedFile);
  const linkedPath =
    declaredLinked && path.basename(declaredLinked) === declaredLinked && byName.has(declaredLinked)
      ? path.join(sp.longResponses, declaredLinked)
      : byName.has(linkedName)
        ? path.join(sp.longResponses, linkedName)
        : undefined;
  if (linkedPath) h.update(`linked:${ensureStat(byName.get(path.basename(linkedPath))!).size}`);

  const parsed = parseStem(stem);
  const sample = win.whole ?? `${win.head}\n${win.tail}`;
  let estimates = validEstimates(m.estimates);
  const estimate = isObj(m.estimate) ? m.estimate : undefined;
  if (estimates.calibrated === undefined || estimates.chars4 === undefined || estimates['craft-density'] === undefined) {
    const computed = win.binary ? {} : estimateFile(payloadPath, win.size, sample);
    estimates = { ...computed, ...estimates };
  }
  // The number the guard decided with is the best it had: an exact count near the limit, or the fit
  // corrected for content it misprices (Greek read 0.65x, Arabic 13x); else the calibrated estimate.
  const decided = estimate?.exact === true || estimate?.strategy === 'calibrated' || EXACT_NAMES.has(String(estimate?.strategy)) ? num(estimate?.tokens) : undefined;
  const tokens = decided ?? estimates.calibrated ?? num(estimate?.tokens) ?? estimates.chars4 ?? Math.ceil(win.size / 4);
  const assets = validAssets(m.assets, sp.session);
  let b64Chars = 0;
  let b64Runs = 0;
  for (const a of assets) {
    if (INLINE_SOURCES.has(a.source)) {
      b64Runs++;
      b64Chars += Math.ceil(a.bytes / 3) * 4;
    }
  }
  const ftsText = win.binary ? '' : (win.whole ?? win.head + FTS_GAP + win.tail);
  const fts = win.mayHoldBase64 ? stripAndScanBase64(ftsText) : { text: ftsText, scan: { runs: 0, chars: 0, tokens: 0 } };
  const leftover = fts.scan;
  const createdAtRaw = str(m.createdAt);
  const createdAt =
    createdAtRaw && !Number.isNaN(Date.parse(createdAtRaw)) ? new Date(createdAtRaw).toISOString() : (parsed?.time ?? new Date(0)).toISOString();
  const kindRaw = str(m.kind);
  const action = m.action === 'inline-assets' ? 'inline-assets' : 'spill';
  const rec: PayloadRecord = {
    id: spillwayPayloadId(sp.longResponses, stem),
    tool: str(m.tool) ?? parsed?.tool ?? 'tool',
    createdAt,
    bytes: num(m.bytes) ?? win.size,
    action,
    kind: kindRaw && KINDS.has(kindRaw) ? (kindRaw as ContentKind) : win.binary ? 'binary' : kindFromFileName(payloadName),
    assets,
    input: m.toolInput,
    intent: str(m.intent),
    estimates,
    tokens,
    path: payloadPath,
    linkedPath,
    metaPath: meta ? path.join(sp.longResponses, metaName) : undefined,
    // The message stays in the sidecar (getPayload reads it there): no second copy per row.
    binary: win.binary,
    lines: win.whole !== null ? countLinesIn(win.whole) : undefined,
    ftsBody: fts.text,
    b64: {
      runs: b64Runs + leftover.runs,
      chars: b64Chars + leftover.chars,
      tokens: base64TokensForChars(b64Chars) + leftover.tokens,
    },
    summaryRuns: validRuns(m.summaryRuns),
  };
  return { payloads: [rec], hash: h.digest('hex'), warnings };
}
