/**
 * What every group of service methods shares: the app-data paths, the index (once open), the path
 * guard, the compute worker, the event emitter, and the confined ways to open a payload's
 * content and assets. Built once by createInspectorService (service.ts), which also starts it.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  appPaths,
  ASSETS_DIR,
  LINKED_SUFFIX,
  LONG_RESPONSES_DIR,
  META_SUFFIX,
  classifyLongResponseFile,
  isInside,
} from '../pipeline/index.js';
import type { AssetRef, SummaryRun } from '../pipeline/types.js';
import { IndexError, openIndex, type SpillIndex } from '../index/index.js';
import { claudeToolResultsDir } from '../index/discover.js';
import { TemplateError } from '../summarize/index.js';
import { ServiceError, type AppInfo, type MethodName, type MethodRequest, type MethodResponse, type PayloadDetail, type RootInfo } from './contract.js';
import { findListedAsset, openVerifiedAsset, type OpenedAsset } from './assets.js';
import { createComputePool, type ComputePool } from './compute.js';
import { InspectorEmitter } from './events.js';
import { MAX_WHOLE_READ_BYTES, utf8PrefixLength } from './heavy.js';
import { PathGuard } from './paths.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE, preparePrivateDbFile } from './private-files.js';
import { PayloadReader, bufferSource, fileSource, type ByteSource } from './reader.js';
import { checkRoot, hardRootRefusal, type RootPolicyContext } from './roots-policy.js';

/** Payloads whose linked path and assets are kept in memory between reads. */
const PAYLOAD_FILE_CACHE_ENTRIES = 256;
/** Scratch analyses (dropped files) older than this are deleted when the service starts. */
export const SCRATCH_MAX_AGE_DAYS = 30;
const SCRATCH_NAME_RE = /^(\d{8}T\d{9}Z)_[A-Za-z0-9._-]*_[0-9a-f]{6}$/;

export type Transport = AppInfo['transport'];

export interface CreateServiceOptions {
  /** SQLite index file; default `appPaths().db` (app-data `index.sqlite`). */
  dbPath?: string;
  /**
   * Roots to register (persisted in the index): the CLI's and the config's, so trusted (see
   * roots-policy.ts). With none given and none registered, the app-data sessions root.
   */
  roots?: string[];
  /** App-data folder; default `appPaths(env).root` ($SPILLWAY_HOME or the OS default). */
  appDataDir?: string;
  env?: NodeJS.ProcessEnv;
  transport: Transport;
  /** Watch the roots live (default true). */
  watch?: boolean;
  /** Scan every root once at start, in the background (default true). */
  scanOnStart?: boolean;
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

export function toServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  if (err instanceof IndexError) return new ServiceError(err.code, err.message);
  if (err instanceof TemplateError) return new ServiceError(err.code === 'NOT_FOUND' ? 'NOT_FOUND' : 'BAD_REQUEST', err.message);
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT') return new ServiceError('NOT_FOUND', e.message);
  if (e?.code === 'EACCES' || e?.code === 'EPERM') return new ServiceError('FORBIDDEN_PATH', e.message);
  return new ServiceError('INTERNAL', err instanceof Error ? err.message : String(err));
}

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

export type ServiceContext = ReturnType<typeof createContext>;

/** The shared state and helpers; `ready` opens the index and registers the roots. */
export function createContext(opts: CreateServiceOptions) {
  const env = opts.env ?? process.env;
  const baseEnv: NodeJS.ProcessEnv = opts.appDataDir ? { ...env, SPILLWAY_HOME: path.resolve(opts.appDataDir) } : env;
  const paths = appPaths(baseEnv);
  const dbPath = path.resolve(opts.dbPath ?? paths.db);
  const warn = opts.onWarning ?? (() => undefined);
  const compute: ComputePool = createComputePool({ inlineMaxBytes: opts.computeInlineMaxBytes, onWarning: warn });
  const emitter = new InspectorEmitter((err) => warn(`event listener failed: ${err instanceof Error ? err.message : String(err)}`));
  const guard = new PathGuard();
  const reader = new PayloadReader();
  const rootPolicy: RootPolicyContext = { appData: paths, home: env.HOME ?? os.homedir(), env };
  /**
   * The linked path and assets of recently opened payloads: the viewer reads many windows and
   * the gallery many assets of one payload, and each would otherwise re-read its detail.
   * Cleared whenever the index reports a change.
   */
  const fileCache = new Map<string, { path: string; linkedPath?: string; assets: AssetRef[] }>();
  emitter.on('onDidIndex', () => fileCache.clear());
  let closed = false;
  let index: SpillIndex | undefined;
  let stopWatch: (() => Promise<void>) | undefined;

  /** Payload ids are opaque, URL-safe hashes; anything else never becomes a file name. */
  const runsFileFor = (payloadId: string) => {
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(payloadId)) throw new ServiceError('BAD_REQUEST', `bad payload id ${JSON.stringify(payloadId)}`);
    return path.join(paths.summaryRuns, `${payloadId}.jsonl`);
  };

  /** Roots already granted in the guard (a root refused by policy is listed but never readable). */
  const granted = new Set<string>();
  /**
   * What a root lets us read. A folder: everything under it. A single file: the file, plus what
   * belongs to it: a spilled payload's sidecar, linked form and assets folder; a Claude Code
   * transcript's persisted tool-results folder.
   */
  const allowRootArea = (root: RootInfo): void => {
    if (granted.has(root.path)) return;
    // A root that an older version (or a hand-edited database) holds but policy now refuses stays unread.
    const refusal = hardRootRefusal(root.path, rootPolicy);
    if (refusal) {
      warn(`root ${root.path} is not read: ${refusal}`);
      return;
    }
    granted.add(root.path);
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
  const forgetRootArea = (root: RootInfo): void => {
    granted.delete(root.path);
    guard.forget(root.path);
  };
  /** Roots another process (`spillway index DIR`) added to the same database become readable here too. */
  const syncRootAreas = (ix: SpillIndex): RootInfo[] => {
    const roots = ix.listRoots();
    for (const r of roots) allowRootArea(r);
    return roots;
  };

  const ready: Promise<void> = (async () => {
    // App data first, private: everything below it is then out of other accounts' reach.
    for (const d of [paths.root, paths.sessions, paths.scratch, paths.templates]) await ensurePrivateDir(d);
    const pruned = await pruneScratch(paths.scratch).catch(() => []);
    if (pruned.length) warn(`removed ${pruned.length} scratch analyses older than ${SCRATCH_MAX_AGE_DAYS} days`);
    preparePrivateDbFile(dbPath);
    const ix = openIndex({ dbPath, onEvent: (e) => emitter.emit(e.event, e.payload as never) });
    index = ix;
    for (const w of ix.warnings) warn(w);
    for (const r of opts.roots ?? []) {
      const abs = path.resolve(r);
      try {
        ix.addRoot(checkRoot(abs, 'trusted', rootPolicy));
      } catch (err) {
        throw new ServiceError('BAD_REQUEST', `cannot add root ${abs}: ${toServiceError(err).message}`);
      }
    }
    const userRoots = () => ix.listRoots().filter((r) => !isInside(paths.scratch, r.path));
    if (userRoots().length === 0) ix.addRoot(paths.sessions);
    // Scratch sessions (dropped files) live in their own root, so the viewer can open them.
    if (!ix.listRoots().some((r) => isInside(r.path, paths.scratch))) ix.addRoot(paths.scratch);
    syncRootAreas(ix);
    if (opts.watch ?? true) stopWatch = await ix.watch();
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
    return index!;
  };

  const remember = (id: string, d: PayloadDetail) => {
    if (fileCache.size >= PAYLOAD_FILE_CACHE_ENTRIES) fileCache.delete(fileCache.keys().next().value!);
    fileCache.set(id, { path: d.path, linkedPath: d.linkedPath, assets: d.assets });
  };

  /** Payload detail from the index (callers confine every path in it before opening one). */
  const detailOf = async (id: string): Promise<PayloadDetail> => {
    const d = await (await idx()).getPayload(id);
    remember(id, d);
    return d;
  };

  const filesOf = async (id: string) => fileCache.get(id) ?? (await detailOf(id));

  /** Open the content of a payload as a ByteSource factory, confined. */
  const contentOpener = async (id: string, variant: 'raw' | 'linked' | undefined) => {
    const ix = await idx();
    if (variant === 'linked') {
      const d = await filesOf(id);
      if (!d.linkedPath) throw new ServiceError('NOT_FOUND', `payload ${id} has no linked form`);
      const real = guard.resolve(d.linkedPath, { what: 'linked payload path' });
      return { open: () => fileSource(real), binary: false as boolean | undefined };
    }
    const c = await ix.payloadContent(id);
    if (c.type === 'file') {
      const real = guard.resolve(c.path, { what: 'payload path' });
      return { open: () => fileSource(real), binary: undefined, file: real };
    }
    const buf = Buffer.from(c.text, 'utf8');
    const key = `${id}\0${crypto.createHash('sha1').update(buf).digest('hex')}`;
    return { open: async () => bufferSource(key, buf), binary: undefined };
  };

  /** One asset of one payload, opened after the checks of assets.ts. */
  const openAsset = async (payloadId: string, sha256: string): Promise<OpenedAsset> => {
    const d = await filesOf(payloadId);
    const a = findListedAsset(d.assets, payloadId, sha256);
    let payloadReal: string;
    try {
      payloadReal = guard.resolve(d.path, { what: 'payload path' });
    } catch (err) {
      if (err instanceof ServiceError) throw new ServiceError(err.code, `payload ${payloadId} is not readable, nor its assets`);
      throw err;
    }
    return openVerifiedAsset(payloadId, payloadReal, a);
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

  /** One JSON line per run; a single O_APPEND write of a line is atomic and never rewrites earlier runs. */
  const keepImportedRun = async (payloadId: string, run: SummaryRun) => {
    const file = runsFileFor(payloadId);
    await ensurePrivateDir(paths.summaryRuns);
    await fs.promises.appendFile(file, JSON.stringify(run) + '\n', { flag: 'a', mode: PRIVATE_FILE_MODE });
  };

  /** After a scan (a rebuilt database included), put kept runs back into the index. */
  const restoreImportedRuns = async (ix: SpillIndex) => {
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
      const known = new Set(ix.summaryRuns(payloadId).map((run) => run.id));
      for (const line of text.split('\n')) {
        if (!line.trim()) continue;
        try {
          const run = JSON.parse(line) as SummaryRun;
          if (!known.has(run.id)) ix.addSummaryRun(payloadId, run);
        } catch (err) {
          // The payload is gone (its transcript was deleted): keep the file, it may come back.
          if (err instanceof IndexError && err.code === 'NOT_FOUND') break;
          warn(`skipped a damaged summary run in ${f}: ${(err as Error).message}`);
        }
      }
    }
  };

  // The first scan starts once the index is open; it never delays `ready`.
  if (opts.scanOnStart ?? true) {
    void ready
      .then(async () => {
        await index!.scan();
        await restoreImportedRuns(index!);
      })
      .catch((err: unknown) => warn(`initial scan failed: ${(err as Error).message}`));
  }

  return {
    env,
    paths,
    dbPath,
    transport: opts.transport,
    warn,
    compute,
    emitter,
    guard,
    reader,
    rootPolicy,
    ready,
    idx,
    isClosed: () => closed,
    isScratch: (p: string) => isInside(paths.scratch, p),
    allowRootArea,
    forgetRootArea,
    syncRootAreas,
    detailOf,
    contentOpener,
    openAsset,
    readWholeBytes,
    readWholeText,
    keepImportedRun,
    restoreImportedRuns,
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      emitter.clear();
      await compute.close();
      // Even when start failed half-way (a root that does not exist), close what was opened.
      await ready.catch(() => undefined);
      await stopWatch?.().catch(() => undefined);
      await index?.close();
    },
  };
}

/** One contract method as the service implements it: the request arrives already validated. */
export type Handler<M extends MethodName> = (req: MethodRequest<M>, call?: CallOptions) => Promise<MethodResponse<M>>;
/** A group of methods (one concern); service.ts puts the groups together. */
export type Handlers<K extends MethodName> = { [M in K]: Handler<M> };
