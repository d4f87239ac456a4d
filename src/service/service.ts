/**
 * The inspector service: every method of the contract (src/service/contract.ts), composed from
 * the index (src/index), the guard (src/pipeline) and summaries (src/summarize). Electron's main
 * process and `spillway serve` both wrap one of these; neither holds logic of its own.
 *
 * Every argument is validated at run time (validate.ts) and every path confined (paths.ts): to a
 * registered root, the app-data folder, or a file the user dropped. Payload content is read in
 * windows (reader.ts), never whole.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  ALL_STRATEGIES,
  DEFAULT_LIMIT_TOKENS,
  DEFAULT_PROFILE,
  MAX_SUMMARY_OUTPUT_TOKENS,
  DEFAULT_STRATEGY,
  PROFILES,
  appPaths,
  ASSETS_DIR,
  LINKED_SUFFIX,
  LONG_RESPONSES_DIR,
  META_SUFFIX,
  appendSummaryRun,
  classifyLongResponseFile,
  isInside,
  metaPathFor,
  resolveLimit,
  sanitizeToolName,
  stemTime,
} from '../pipeline/index.js';
import type { AssetRef, SummaryOutput, SummaryRun } from '../pipeline/types.js';
import { IndexError, agentHomeRoots, openIndex, type SpillIndex } from '../index/index.js';
import type { Readable } from 'node:stream';
import { RoutedSource } from '../index/s3.js';
import { S3Reads, isS3Path } from './s3-read.js';
import { claudeToolResultsDir } from '../index/discover.js';
import {
  createSummarizer,
  deleteTemplate as deleteTemplateFile,
  isProviderName,
  listProviders as listSummaryProviders,
  listTemplates as listTemplateFiles,
  saveTemplate as saveTemplateFile,
  TemplateError,
  ProviderError,
} from '../summarize/index.js';
import { VERSION } from '../version.js';
import {
  ServiceError,
  type AnalyzeRequest,
  type AnalyzeResponse,
  type AppInfo,
  type DensityShares,
  type EstimateRequest,
  type EstimateResponse,
  type EventName,
  type IndexStats,
  type InspectorEvents,
  type MethodName,
  type MethodRequest,
  type MethodResponse,
  type PayloadDetail,
  type ReadAssetRequest,
  type ReadAssetResponse,
  type ReadPayloadRequest,
  type ReadPayloadResponse,
  type RootInfo,
  type SessionInfo,
  type SummarizeRequest,
} from './contract.js';
import { createComputePool } from './compute.js';
import type { AnalyzeContentResult } from './heavy.js';
import { InspectorEmitter } from './events.js';
import { MAX_WHOLE_READ_BYTES, estimateText, notReadNote, readHead, utf8Prefix, utf8PrefixLength, yieldToLoop } from './heavy.js';
import { PathGuard, checkPathText } from './paths.js';
import { PayloadReader, bufferSource, fileSource, type ByteSource } from './reader.js';
import { MAX_ANALYZE_BYTES, MAX_ASSET_INLINE_BYTES, isMethodName, validateRequest } from './validate.js';

export { estimateText, MAX_WHOLE_READ_BYTES, ESTIMATE_CHUNK_CHARS, EXACT_SLICE_CHARS, BINARY_ESTIMATE_SAMPLE_BYTES } from './heavy.js';
export { COMPUTE_INLINE_MAX_BYTES } from './compute.js';

/** Dollars per million input tokens when a request names none. */
export const DEFAULT_PRICE_PER_MTOK = 3;
/** readAsset returns base64 up to this size unless the request asks for less (or up to MAX_ASSET_INLINE_BYTES). */
export const DEFAULT_ASSET_INLINE_BYTES = 8 * 1024 * 1024;
/** Hash in slices this big, with the event loop turning in between. */
const HASH_SLICE_BYTES = 4 * 1024 * 1024;

async function sha256Yielding(bytes: Buffer): Promise<string> {
  const h = crypto.createHash('sha256');
  for (let i = 0; i < bytes.length; i += HASH_SLICE_BYTES) {
    h.update(bytes.subarray(i, i + HASH_SLICE_BYTES));
    if (i + HASH_SLICE_BYTES < bytes.length) await yieldToLoop();
  }
  return h.digest('hex');
}

/**
 * Backstop for one summary run. The summarizer enforces its own deadline (SUMMARY_TIMEOUT_MS,
 * retries and map-reduce chunks included); this only guarantees a request can never hang.
 */
export const SUMMARY_BACKSTOP_MS = 10 * 60_000;
/** Payloads whose linked path and assets are kept in memory between reads. */
const PAYLOAD_FILE_CACHE_ENTRIES = 256;
/** Summary provider when a request names none: offline, always available. */
export const DEFAULT_SUMMARY_PROVIDER = 'structural';

export type Transport = AppInfo['transport'];

export interface CreateServiceOptions {
  /** SQLite index file; default `appPaths().db` (app-data `index.sqlite`). */
  dbPath?: string;
  /** Roots to register (persisted in the index). With none given and none registered, the app-data sessions root. */
  roots?: string[];
  /**
   * The agents' own session folders in $HOME (`~/.claude/projects`, `~/.codex/sessions`,
   * `~/.gemini/tmp`, where they exist): true opens them read-only, marked auto; false drops the ones
   * opened so before; unset leaves them as they are. From the CLI or config, never the HTTP API.
   */
  defaultRoots?: boolean;
  /** App-data folder; default `appPaths(env).root` ($SPILLWAY_HOME or the OS default). */
  appDataDir?: string;
  env?: NodeJS.ProcessEnv;
  transport: Transport;
  /** Watch the roots live (default true). */
  watch?: boolean;
  /** Scan every root once at start, in the background (default true). */
  scanOnStart?: boolean;
  /**
   * Treat `analyze({ path })` as a file the user dropped, and allow reading it. True by default
   * for Electron (the preload sends only real dropped paths); false for HTTP, where a path must
   * lie in a root or the app-data folder.
   */
  trustDroppedPaths?: boolean;
  /** Problems worth a log line (a root that vanished, a failed background scan). */
  onWarning?: (message: string) => void;
  /**
   * Inputs of `summarize` (structural) and `analyze` up to this many bytes run on the service's
   * thread; bigger ones in the compute worker (default COMPUTE_INLINE_MAX_BYTES; 0: always the
   * worker; Infinity: never).
   */
  computeInlineMaxBytes?: number;
}

/** Per-call options a transport may pass with a request. */
export interface CallOptions {
  /** Abort the call (the client went away): heavy work in the compute worker stops. */
  signal?: AbortSignal;
}

type Methods = { [M in MethodName]: (req: MethodRequest<M>, call?: CallOptions) => Promise<MethodResponse<M>> };

export interface InspectorService extends Methods {
  /** Resolves when the index is open and the roots are registered (methods wait for it themselves). */
  readonly ready: Promise<void>;
  readonly dbPath: string;
  readonly appDataDir: string;
  on<E extends EventName>(event: E, listener: (payload: InspectorEvents[E]) => void): () => void;
  /** Validate a method name and run it: what transports call with untrusted input. */
  invoke(method: string, req: unknown, call?: CallOptions): Promise<unknown>;
  /** The confined file of an asset, for streaming (`GET /api/asset/...`). */
  resolveAsset(req: { payloadId: string; sha256: string }): Promise<ResolvedAsset>;
  /** Allow reading one file the user picked (Electron's Open File dialog). */
  allowDroppedFile(p: string): void;
  /** Whether the compute worker is running a summary or an analysis now (diagnostics, tests). */
  readonly computeBusy: boolean;
  /** Stop watching, wait for the running scan, close the database. */
  close(): Promise<void>;
}

/** An asset to stream: a local file, or (`open`) an object read from a bucket, bytes [start, end). */
export interface ResolvedAsset {
  path: string;
  mimeType: string;
  bytes: number;
  sha256: string;
  open?: (start: number, end: number) => Promise<Readable>;
}

interface ServiceState {
  index: SpillIndex;
  stopWatch?: () => Promise<void>;
}

function toServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  if (err instanceof IndexError) return new ServiceError(err.code, err.message);
  if (err instanceof TemplateError) {
    const code = err.code === 'NOT_FOUND' ? 'NOT_FOUND' : 'BAD_REQUEST';
    return new ServiceError(code, err.message);
  }
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT') return new ServiceError('NOT_FOUND', e.message);
  if (e?.code === 'EACCES' || e?.code === 'EPERM') return new ServiceError('FORBIDDEN_PATH', e.message);
  return new ServiceError('INTERNAL', err instanceof Error ? err.message : String(err));
}


/** Scratch analyses (dropped files) older than this are deleted when the service starts. */
export const SCRATCH_MAX_AGE_DAYS = 30;
const SCRATCH_NAME_RE = /^(\d{8}T\d{9}Z)_[A-Za-z0-9._-]*_[0-9a-f]{6}$/;

/**
 * Delete scratch sessions older than SCRATCH_MAX_AGE_DAYS. Only folders this service named
 * (time_name_random) directly under the scratch folder are touched; anything else is left alone.
 */
export async function pruneScratch(scratchDir: string, now = new Date(), maxAgeDays = SCRATCH_MAX_AGE_DAYS): Promise<string[]> {
  const removed: string[] = [];
  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(scratchDir, { withFileTypes: true });
  } catch {
    return removed;
  }
  for (const e of entries) {
    const m = SCRATCH_NAME_RE.exec(e.name);
    if (!e.isDirectory() || !m) continue;
    const t = m[1]!;
    const at = Date.parse(`${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(9, 11)}:${t.slice(11, 13)}:${t.slice(13, 15)}Z`);
    if (!Number.isFinite(at) || now.getTime() - at < maxAgeDays * 86_400_000) continue;
    await fs.promises.rm(path.join(scratchDir, e.name), { recursive: true, force: true });
    removed.push(e.name);
  }
  return removed;
}

/** A scratch session folder name: sortable, readable, unique. */
function scratchSessionName(name: string, now: Date): string {
  return `${stemTime(now)}_${sanitizeToolName(name).slice(0, 40)}_${crypto.randomBytes(3).toString('hex')}`;
}

export function createInspectorService(opts: CreateServiceOptions): InspectorService {
  const env = opts.env ?? process.env;
  const baseEnv: NodeJS.ProcessEnv = opts.appDataDir ? { ...env, SPILLWAY_HOME: path.resolve(opts.appDataDir) } : env;
  const paths = appPaths(baseEnv);

  /** Payload ids are opaque, URL-safe hashes; anything else never becomes a file name. */
  const runsFileFor = (payloadId: string) => {
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(payloadId)) throw new ServiceError('BAD_REQUEST', `bad payload id ${JSON.stringify(payloadId)}`);
    return path.join(paths.summaryRuns, `${payloadId}.jsonl`);
  };
  /** One JSON line per run; a single O_APPEND write of a line is atomic and never rewrites earlier runs. */
  const keepImportedRun = async (payloadId: string, run: SummaryRun) => {
    const file = runsFileFor(payloadId);
    await fs.promises.mkdir(paths.summaryRuns, { recursive: true });
    await fs.promises.appendFile(file, JSON.stringify(run) + '\n', { flag: 'a' });
  };
  /** After a scan (a rebuilt database included), put kept runs back into the index. */
  const restoreImportedRuns = async (index: SpillIndex) => {
    let files: string[];
    try {
      files = await fs.promises.readdir(paths.summaryRuns);
    } catch {
      return;
    }
    for (const f of files) {
      if (!f.endsWith('.jsonl')) continue;
      const payloadId = f.slice(0, -'.jsonl'.length);
      let text: string;
      try {
        text = await fs.promises.readFile(runsFileFor(payloadId), 'utf8');
      } catch {
        continue;
      }
      const known = new Set(index.summaryRuns(payloadId).map((run) => run.id));
      for (const line of text.split('\n')) {
        if (!line.trim()) continue;
        try {
          const run = JSON.parse(line) as SummaryRun;
          if (!known.has(run.id)) index.addSummaryRun(payloadId, run);
        } catch (err) {
          // The payload is gone (its transcript was deleted): keep the file, it may come back.
          if (err instanceof IndexError && err.code === 'NOT_FOUND') break;
          warn(`skipped a damaged summary run in ${f}: ${(err as Error).message}`);
        }
      }
    }
  };
  const dbPath = path.resolve(opts.dbPath ?? paths.db);
  const transport = opts.transport;
  const trustDropped = opts.trustDroppedPaths ?? transport === 'electron';
  const warn = opts.onWarning ?? (() => undefined);
  const compute = createComputePool({ inlineMaxBytes: opts.computeInlineMaxBytes, onWarning: warn });
  const emitter = new InspectorEmitter((err) => warn(`event listener failed: ${err instanceof Error ? err.message : String(err)}`));
  const guard = new PathGuard();
  // Sessions in buckets (s3:// roots): read by Range GET, confined to the registered roots.
  const source = new RoutedSource();
  const s3 = new S3Reads(source);
  const confined = (p: string, o: { what: string; mustExist?: boolean }) => (isS3Path(p) ? s3.confine(p, o.what) : guard.resolve(p, o));
  const reader = new PayloadReader();
  /**
   * The linked path and assets of recently opened payloads: the viewer reads many windows and
   * the gallery many assets of one payload, and each would otherwise re-read its detail.
   * Cleared whenever the index reports a change.
   */
  const fileCache = new Map<string, { linkedPath?: string; assets: AssetRef[] }>();
  emitter.on('onDidIndex', () => fileCache.clear());
  let closed = false;
  let state: ServiceState | undefined;

  /**
   * What a root lets us read. A folder: everything under it. A single file: the file, plus what
   * belongs to it: a spilled payload's sidecar, linked form and assets folder; a Claude Code
   * transcript's persisted tool-results folder.
   */
  const allowRootArea = (root: RootInfo): void => {
    if (isS3Path(root.path)) return s3.allowRoot(root.path);
    guard.allowRoot(root.path);
    if (root.kind !== 'file') return;
    const dir = path.dirname(root.path);
    const c = classifyLongResponseFile(path.basename(root.path));
    if (c && path.basename(dir) === LONG_RESPONSES_DIR) {
      guard.allowFile(path.join(dir, c.stem + META_SUFFIX), 'root sidecar');
      guard.allowFile(path.join(dir, c.stem + LINKED_SUFFIX), 'root linked form');
      guard.allowDir(path.join(dir, ASSETS_DIR), 'root assets');
    } else if (root.path.endsWith('.jsonl')) {
      guard.allowDir(claudeToolResultsDir(root.path), 'transcript tool results');
    }
  };

  const ready: Promise<void> = (async () => {
    for (const d of [paths.root, paths.sessions, paths.scratch, paths.templates]) await fs.promises.mkdir(d, { recursive: true });
    const pruned = await pruneScratch(paths.scratch).catch(() => []);
    if (pruned.length) warn(`removed ${pruned.length} scratch analyses older than ${SCRATCH_MAX_AGE_DAYS} days`);
    guard.allowDir(paths.root, 'app data');
    const index = openIndex({ dbPath, source, onEvent: (e) => emitter.emit(e.event, e.payload as never) });
    state = { index };
    for (const w of index.warnings) warn(w);
    for (const r of opts.roots ?? []) {
      const abs = isS3Path(r) ? r : path.resolve(r);
      try {
        index.addRoot(abs);
      } catch (err) {
        throw new ServiceError('BAD_REQUEST', `cannot add root ${abs}: ${(err as Error).message}`);
      }
    }
    const userRoots = () => index.listRoots().filter((r) => !r.auto && !isInside(paths.scratch, r.path));
    if (userRoots().length === 0) index.addRoot(paths.sessions);
    if (opts.defaultRoots !== undefined) index.syncAutoRoots(opts.defaultRoots ? agentHomeRoots(env) : null);
    // Scratch sessions (dropped files) live in their own root, so the viewer can open them.
    if (!index.listRoots().some((r) => isInside(r.path, paths.scratch))) index.addRoot(paths.scratch);
    for (const r of index.listRoots()) allowRootArea(r);
    if (opts.watch ?? true) state.stopWatch = await index.watch();
    if (opts.scanOnStart ?? true) {
      void index
        .scan()
        .then(() => restoreImportedRuns(index))
        .catch((err: unknown) => warn(`initial scan failed: ${(err as Error).message}`));
    }
  })();
  // Callers see a failed start through every method; do not crash on an unobserved rejection.
  ready.catch(() => undefined);

  const idx = async (): Promise<SpillIndex> => {
    if (closed) throw new ServiceError('UNAVAILABLE', 'the service is closed');
    try {
      await ready;
    } catch (err) {
      throw new ServiceError('UNAVAILABLE', `the index could not be opened: ${err instanceof Error ? err.message : String(err)}`);
    }
    return state!.index;
  };

  const isScratch = (p: string) => isInside(paths.scratch, p);

  const decorateSession = (s: SessionInfo): SessionInfo => (isScratch(s.path) ? { ...s, kind: 'scratch' } : s);

  /** Payload detail from the index (callers confine every path in it before opening one). */
  const detailOf = async (id: string): Promise<PayloadDetail> => {
    const index = await idx();
    const d = await index.getPayload(id);
    remember(id, d);
    return d;
  };

  const remember = (id: string, d: PayloadDetail) => {
    if (fileCache.size >= PAYLOAD_FILE_CACHE_ENTRIES) fileCache.delete(fileCache.keys().next().value!);
    fileCache.set(id, { linkedPath: d.linkedPath, assets: d.assets });
  };

  const filesOf = async (id: string): Promise<{ linkedPath?: string; assets: AssetRef[] }> => fileCache.get(id) ?? (await detailOf(id));

  /** Open the content of a payload as a ByteSource factory, confined. */
  const contentOpener = async (id: string, variant: 'raw' | 'linked' | undefined) => {
    const index = await idx();
    if (variant === 'linked') {
      const d = await filesOf(id);
      if (!d.linkedPath) throw new ServiceError('NOT_FOUND', `payload ${id} has no linked form`);
      const real = confined(d.linkedPath, { what: 'linked payload path' });
      return { open: () => (isS3Path(real) ? s3.open(real) : fileSource(real)), binary: false };
    }
    const c = await index.payloadContent(id);
    if (c.type === 'file') {
      const real = confined(c.path, { what: 'payload path' });
      if (isS3Path(real)) return { open: () => s3.open(real), binary: undefined };
      return { open: () => fileSource(real), binary: undefined, file: real };
    }
    const buf = Buffer.from(c.text, 'utf8');
    const key = `${id}\0${crypto.createHash('sha1').update(buf).digest('hex')}`;
    return { open: async () => bufferSource(key, buf), binary: undefined };
  };

  const findAsset = async (payloadId: string, sha256: string): Promise<AssetRef & { realPath: string }> => {
    const d = await filesOf(payloadId);
    const hash = sha256.toLowerCase();
    const a = d.assets.find((x) => x.sha256 === hash) ?? (hash.length < 64 ? d.assets.find((x) => x.sha256.startsWith(hash)) : undefined);
    if (!a) throw new ServiceError('NOT_FOUND', `payload ${payloadId} has no asset ${sha256}`);
    const realPath = confined(a.path, { what: 'asset path' });
    return { ...a, realPath };
  };

  /** Up to MAX_WHOLE_READ_BYTES of a payload, cut at a character start; a fresh buffer the caller owns. */
  const readWholeBytes = async (open: () => Promise<ByteSource>): Promise<{ bytes: Buffer; totalBytes: number; readBytes: number }> => {
    const src = await open();
    try {
      const n = Math.min(src.size, MAX_WHOLE_READ_BYTES);
      const buf = await src.read(0, n);
      return { bytes: n < src.size ? buf.subarray(0, utf8PrefixLength(buf)) : buf, totalBytes: src.size, readBytes: buf.length };
    } finally {
      await src.close();
    }
  };

  const readWholeText = async (id: string): Promise<{ text: string; totalBytes: number; readBytes: number }> => {
    const w = await readWholeBytes((await contentOpener(id, undefined)).open);
    return { text: w.bytes.toString('utf8'), totalBytes: w.totalBytes, readBytes: w.readBytes };
  };

  const methods: Methods = {
    async getInfo(req) {
      validateRequest('getInfo', req);
      return {
        version: VERSION,
        appDataDir: paths.root,
        dbPath,
        defaults: { limitTokens: DEFAULT_LIMIT_TOKENS, profile: DEFAULT_PROFILE, strategy: DEFAULT_STRATEGY, pricePerMTok: DEFAULT_PRICE_PER_MTOK },
        strategies: [...ALL_STRATEGIES],
        profiles: [...PROFILES],
        transport,
      };
    },

    async listRoots(req) {
      validateRequest('listRoots', req);
      return (await idx()).listRoots();
    },

    async addRoot(req) {
      const { path: p } = validateRequest('addRoot', req);
      checkPathText(p);
      // A bucket prefix (s3://bucket/prefix) is a read-only root; the index checks the URL.
      const s3Root = /^s3:\/\//i.test(p);
      if (!s3Root && !path.isAbsolute(p)) throw new ServiceError('BAD_REQUEST', `root must be an absolute path: ${JSON.stringify(p)}`);
      const index = await idx();
      let real: string;
      try {
        real = s3Root ? p : await fs.promises.realpath(p);
      } catch {
        throw new ServiceError('NOT_FOUND', `no such folder or file: ${p}`);
      }
      if (!s3Root && path.parse(real).root === real) throw new ServiceError('BAD_REQUEST', 'the file-system root cannot be a sessions root');
      if (isInside(real, paths.root) && real !== paths.root) {
        throw new ServiceError('BAD_REQUEST', `a root may not contain Spillway's app-data folder (${paths.root})`);
      }
      let root: RootInfo;
      try {
        root = index.addRoot(real);
      } catch (err) {
        throw toServiceError(err);
      }
      allowRootArea(root);
      void index.scan({ rootId: root.id }).catch((err: unknown) => warn(`scan of ${root.path} failed: ${(err as Error).message}`));
      return root;
    },

    async removeRoot(req) {
      const { id } = validateRequest('removeRoot', req);
      const index = await idx();
      const root = index.listRoots().find((r) => r.id === id);
      if (!root) throw new ServiceError('NOT_FOUND', `no root with id ${JSON.stringify(id)}`);
      if (isInside(root.path, paths.scratch)) throw new ServiceError('BAD_REQUEST', 'the scratch root holds dropped-file analyses and stays registered');
      index.removeRoot(id);
      if (isS3Path(root.path)) s3.forget(root.path);
      else guard.forget(root.path);
      return { ok: true as const };
    },

    async reindex(req) {
      const { rootId } = validateRequest('reindex', req);
      const index = await idx();
      const r = await index.scan({ rootId });
      await restoreImportedRuns(index);
      const stats: IndexStats = { sessions: r.sessions, payloads: r.payloads, assets: r.assets, bytes: r.bytes, seconds: r.seconds };
      return stats;
    },

    async listSessions(req) {
      const r = validateRequest('listSessions', req);
      return (await idx()).listSessions(r).map(decorateSession);
    },

    async listPayloads(req) {
      const r = validateRequest('listPayloads', req);
      return (await idx()).listPayloads(r);
    },

    async getPayload(req) {
      const { id } = validateRequest('getPayload', req);
      const d = await detailOf(id);
      // The detail names files; check them so a sidecar cannot point the UI outside the roots.
      confined(d.path, { what: 'payload path', mustExist: false });
      if (d.linkedPath) confined(d.linkedPath, { what: 'linked payload path', mustExist: false });
      return d;
    },

    async readPayload(req) {
      const r: ReadPayloadRequest = validateRequest('readPayload', req);
      const { open, binary } = await contentOpener(r.id, r.variant);
      const w = await reader.read(open, { start: r.start, end: r.end, startLine: r.startLine, lineCount: r.lineCount }, binary === undefined ? {} : { binary });
      const res: ReadPayloadResponse = {
        text: w.text,
        start: w.start,
        end: w.end,
        totalBytes: w.totalBytes,
        totalLines: w.totalLines,
        totalLinesExact: w.totalLinesExact,
        binary: w.binary,
      };
      if (w.startLine !== undefined) res.startLine = w.startLine;
      if (w.lineCount !== undefined) res.lineCount = w.lineCount;
      if (w.hex !== undefined) res.hex = w.hex;
      return res;
    },

    async readAsset(req) {
      const r: ReadAssetRequest = validateRequest('readAsset', req);
      const a = await findAsset(r.payloadId, r.sha256);
      const size = isS3Path(a.realPath) ? await s3.size(a.realPath) : (await fs.promises.stat(a.realPath)).size;
      const cap = Math.min(r.maxBytes ?? DEFAULT_ASSET_INLINE_BYTES, MAX_ASSET_INLINE_BYTES);
      const res: ReadAssetResponse = { mimeType: a.mimeType, bytes: size, sha256: a.sha256, path: a.realPath };
      if (size <= cap) {
        const bytes = isS3Path(a.realPath) ? await s3.readAll(a.realPath, size) : await fs.promises.readFile(a.realPath);
        const got = await sha256Yielding(bytes);
        // Content-addressed: a file whose bytes do not match its name is damaged, not the asset.
        if (got !== a.sha256) throw new ServiceError('NOT_FOUND', `asset file ${a.realPath} is damaged (sha256 mismatch)`);
        res.base64 = bytes.toString('base64');
      }
      return res;
    },

    async revealPath(req) {
      const r = validateRequest('revealPath', req);
      if (r.sha256) return { path: (await findAsset(r.payloadId, r.sha256)).realPath };
      const d = await detailOf(r.payloadId);
      return { path: confined(d.path, { what: 'payload path' }) };
    },

    async estimate(req) {
      const r: EstimateRequest = validateRequest('estimate', req);
      const profile = r.profile ?? DEFAULT_PROFILE;
      let text: string;
      let bytes: number;
      let scale = 1;
      if (r.text !== undefined) {
        text = r.text;
        bytes = Buffer.byteLength(text, 'utf8');
      } else if (r.path !== undefined) {
        const real = guard.resolve(r.path, { what: 'path' });
        const { buf, size } = await readHead(real, MAX_WHOLE_READ_BYTES);
        text = buf.length < size ? utf8Prefix(buf) : buf.toString('utf8');
        bytes = size;
        if (buf.length < size && buf.length > 0) scale = size / buf.length;
      } else {
        const whole = await readWholeText(r.payloadId!);
        text = whole.text;
        bytes = whole.totalBytes;
        if (whole.readBytes < whole.totalBytes && whole.readBytes > 0) scale = whole.totalBytes / whole.readBytes;
      }
      const est = await estimateText(text, profile, r.exact ?? false, scale);
      return { ...est, bytes };
    },

    async analyze(req, call) {
      const r: AnalyzeRequest = validateRequest('analyze', req);
      const index = await idx();
      let content: Buffer;
      if (r.path !== undefined) {
        let real: string;
        checkPathText(r.path);
        if (!path.isAbsolute(r.path)) throw new ServiceError('BAD_REQUEST', 'a dropped file path must be absolute');
        if (trustDropped) {
          guard.allowFile(r.path, 'dropped file');
          real = guard.resolve(r.path, { what: 'dropped file' });
        } else real = guard.resolve(r.path, { what: 'path' });
        const st = await fs.promises.stat(real);
        if (!st.isFile()) throw new ServiceError('BAD_REQUEST', `not a regular file: ${r.path}`);
        if (st.size > MAX_ANALYZE_BYTES) throw new ServiceError('BAD_REQUEST', `file is larger than ${MAX_ANALYZE_BYTES} bytes; index its folder as a root instead`);
        // Read only: the user's file is never written, renamed or touched.
        content = await fs.promises.readFile(real);
      } else if (r.base64 !== undefined) {
        content = Buffer.from(r.base64.replace(/\s+/g, ''), r.base64.includes('-') || r.base64.includes('_') ? 'base64url' : 'base64');
        if (content.length > MAX_ANALYZE_BYTES) throw new ServiceError('BAD_REQUEST', `content is larger than ${MAX_ANALYZE_BYTES} bytes`);
      } else {
        content = Buffer.from(r.text!, 'utf8');
      }
      const profile = r.profile ?? DEFAULT_PROFILE;
      const limitTokens = resolveLimit({ limitTokens: r.limitTokens, contextWindowTokens: r.contextWindowTokens });
      const bytes = content.length;
      const sessionPath = path.join(paths.scratch, scratchSessionName(r.name, new Date()));
      let core: AnalyzeContentResult;
      try {
        // Detection, estimates, the guard and the scratch save run off this thread for big drops.
        core = await compute.analyze(content, { name: r.name, sessionPath, limitTokens, profile }, call);
      } catch (err) {
        // A cancelled or failed analysis leaves no half-written scratch session behind.
        await fs.promises.rm(sessionPath, { recursive: true, force: true }).catch(() => undefined);
        throw err;
      }
      let payloadId: string | undefined;
      let sessionId: string | undefined;
      if (core.payloadPath) {
        try {
          const scratchRoot = index.listRoots().find((x) => isInside(x.path, sessionPath));
          await index.scan({ rootId: scratchRoot?.id, scopes: [sessionPath] });
          const sessions = index.listSessions({ rootId: scratchRoot?.id });
          const session = sessions.find((s) => path.resolve(s.path) === path.resolve(sessionPath));
          sessionId = session?.id;
          if (session) {
            const rows = index.listPayloads({ sessionId: session.id, limit: 10 }).rows;
            payloadId = rows[0]?.id;
          }
        } catch (err) {
          warn(`indexing the scratch analysis failed: ${(err as Error).message}`);
        }
      }
      const res: AnalyzeResponse = {
        name: r.name,
        bytes,
        mimeType: core.mimeType,
        kind: core.kind,
        assets: core.assets,
        estimate: core.estimate,
        decision: core.decision,
      };
      if (payloadId) res.payloadId = payloadId;
      if (sessionId) res.sessionId = sessionId;
      return res;
    },

    async summarize(req, call) {
      const r: SummarizeRequest = validateRequest('summarize', req);
      const index = await idx();
      const provider = r.provider ?? DEFAULT_SUMMARY_PROVIDER;
      if (!isProviderName(provider)) throw new ServiceError('BAD_REQUEST', `unknown provider ${JSON.stringify(provider)}`);
      const info = listSummaryProviders(env).find((p) => p.name === provider);
      if (info && !info.available) throw new ServiceError('UNAVAILABLE', `${provider} is not available: ${info.reason ?? 'not configured'}`);
      const detail = await index.getPayload(r.payloadId);
      const content = await contentOpener(r.payloadId, undefined);
      let summarizer;
      try {
        summarizer = createSummarizer({ provider, model: r.model, template: r.template, templatesDir: paths.templates, env });
      } catch (err) {
        throw new ServiceError('BAD_REQUEST', (err as Error).message);
      }
      const createdAt = new Date().toISOString();
      const id = `run_${stemTime(new Date())}_${crypto.randomBytes(4).toString('hex')}`;
      let run: SummaryRun;
      const t0 = performance.now();
      const backstop = AbortSignal.timeout(SUMMARY_BACKSTOP_MS);
      const signal = call?.signal ? AbortSignal.any([backstop, call.signal]) : backstop;
      try {
        const fields = {
          toolName: detail.row.tool,
          toolInput: detail.meta?.toolInput ?? detail.source?.toolInput,
          focus: r.focus,
          template: r.template,
          model: r.model,
          maxOutputTokens: MAX_SUMMARY_OUTPUT_TOKENS,
        };
        // The offline summary is CPU work (seconds on 50 MB): off this thread. Providers wait on the network.
        let out: SummaryOutput;
        if (provider === 'structural' && content.file) {
          // The worker reads the file itself: this thread never holds the 50 MB.
          out = await compute.structuralFile(content.file, fields, { signal });
        } else {
          const whole = await readWholeBytes(content.open);
          const suffix = notReadNote(whole.totalBytes, whole.readBytes);
          out =
            provider === 'structural'
              ? await compute.structural(whole.bytes, suffix, fields, { signal })
              : await summarizer.summarize({ ...fields, text: whole.bytes.toString('utf8') + suffix }, { signal });
        }
        run = { ...out, id, createdAt, status: 'ok' };
      } catch (err) {
        // The caller gave up, or the service is closing: nothing to record, the run never finished.
        if (call?.signal?.aborted) throw new ServiceError('UNAVAILABLE', 'the summary was cancelled');
        if (closed) throw new ServiceError('UNAVAILABLE', 'the service is closed');
        const timedOut = (err instanceof ProviderError && err.kind === 'timeout') || backstop.aborted;
        run = {
          summary: '',
          provider,
          model: r.model ?? info?.defaultModel ?? provider,
          ...(r.template ? { template: r.template } : {}),
          ...(r.focus ? { focus: r.focus } : {}),
          inputTokens: 0,
          outputTokens: 0,
          ms: Math.round(performance.now() - t0),
          id,
          createdAt,
          status: timedOut ? 'timeout' : 'error',
          error: err instanceof Error ? err.message : String(err),
        };
      }
      // The sidecar is the record (Spillway sessions); imported read-only sessions have none, so
      // their runs go to app data. Either way the index can be rebuilt without losing a run.
      // A bucket is never written to (S3 roots are read-only): runs on its payloads go to app data too.
      const metaPath = detail.meta && detail.path && !detail.readOnly && !isS3Path(detail.path) ? metaPathOf(detail) : undefined;
      if (metaPath) {
        try {
          guard.resolve(metaPath, { what: 'meta path' });
          await appendSummaryRun(metaPath, run);
        } catch (err) {
          warn(`could not append the run to ${metaPath}: ${(err as Error).message}`);
        }
      } else {
        await keepImportedRun(r.payloadId, run).catch((err: unknown) =>
          warn(`could not keep the run for ${r.payloadId}: ${(err as Error).message}`),
        );
      }
      index.addSummaryRun(r.payloadId, run);
      emitter.emit('onDidSummarize', { payloadId: r.payloadId, run });
      return run;
    },

    async listProviders(req) {
      validateRequest('listProviders', req);
      return listSummaryProviders(env);
    },

    async listTemplates(req) {
      validateRequest('listTemplates', req);
      await idx();
      return listTemplateFiles(paths.templates);
    },

    async saveTemplate(req) {
      const { name, body } = validateRequest('saveTemplate', req);
      await idx();
      try {
        return saveTemplateFile(paths.templates, name, body);
      } catch (err) {
        throw toServiceError(err);
      }
    },

    async deleteTemplate(req) {
      const { name } = validateRequest('deleteTemplate', req);
      await idx();
      try {
        deleteTemplateFile(paths.templates, name);
      } catch (err) {
        throw toServiceError(err);
      }
      return { ok: true as const };
    },

    async limitTuner(req) {
      const r = validateRequest('limitTuner', req);
      const index = await idx();
      return index.limitTunerData({ ...r, limitTokens: resolveLimit({ limitTokens: r.limitTokens, contextWindowTokens: r.contextWindowTokens }) });
    },

    async wasteReport(req) {
      const r = validateRequest('wasteReport', req);
      return (await idx()).wasteReport({ pricePerMTok: DEFAULT_PRICE_PER_MTOK, ...r });
    },
  };

  // Every method: errors leave as ServiceError, whatever threw them.
  const wrapped = {} as Methods;
  for (const name of Object.keys(methods) as MethodName[]) {
    const fn = methods[name] as (req: unknown, call?: CallOptions) => Promise<unknown>;
    (wrapped as Record<string, unknown>)[name] = async (req: unknown, call?: CallOptions) => {
      try {
        return await fn(req, call);
      } catch (err) {
        throw toServiceError(err);
      }
    };
  }

  const service: InspectorService = {
    ...wrapped,
    ready,
    dbPath,
    appDataDir: paths.root,
    on: (event, listener) => emitter.on(event, listener),
    async invoke(method, req, call) {
      if (!isMethodName(method)) throw new ServiceError('NOT_FOUND', `no such method: ${JSON.stringify(method)}`);
      return (wrapped[method] as (r: unknown, c?: CallOptions) => Promise<unknown>)(req, call);
    },
    async resolveAsset(req) {
      try {
        const r = validateRequest('readAsset', { payloadId: req?.payloadId, sha256: req?.sha256 });
        const a = await findAsset(r.payloadId, r.sha256);
        if (isS3Path(a.realPath)) {
          const p = a.realPath;
          return { path: p, mimeType: a.mimeType, bytes: await s3.size(p), sha256: a.sha256, open: (start: number, end: number) => s3.stream(p, start, end) };
        }
        const st = await fs.promises.stat(a.realPath);
        return { path: a.realPath, mimeType: a.mimeType, bytes: st.size, sha256: a.sha256 };
      } catch (err) {
        throw toServiceError(err);
      }
    },
    allowDroppedFile(p: string) {
      checkPathText(p);
      guard.allowFile(p, 'dropped file');
    },
    get computeBusy() {
      return compute.busy;
    },
    async close() {
      if (closed) return;
      closed = true;
      emitter.clear();
      await compute.close();
      // Even when start failed half-way (a root that does not exist), close what was opened.
      await ready.catch(() => undefined);
      await state?.stopWatch?.().catch(() => undefined);
      await state?.index.close();
    },
  };
  return service;
}

/** The sidecar of a Spillway payload, derived from the payload's own file name (never from the sidecar's content). */
function metaPathOf(d: PayloadDetail): string | undefined {
  if (!d.meta) return undefined;
  try {
    return metaPathFor(d.path);
  } catch {
    return undefined;
  }
}
