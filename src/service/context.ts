/**
 * What every group of service methods shares: the app-data paths, the index (once open), the path
 * guard, the compute worker, the event emitter, and the confined ways to open a payload's
 * content and assets. Built once by createInspectorService (service.ts), which also starts it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UntrustedFileError, appPaths, isInside } from '../pipeline/index.js';
import { S3StoreError } from '../pipeline/store/s3/index.js';
import { IndexError, RoutedSource, agentHomeRoots, isS3Path, s3PollMs, s3ReconcileMs, type SpillIndex } from '../index/index.js';
import { TemplateError } from '../summarize/index.js';
import { openIndexWithTimelines, type Timelines } from '../timeline/index.js';
import { ServiceError, type AppInfo, type MethodName, type MethodRequest, type MethodResponse, type RootInfo } from './contract.js';
import { createComputePool, type ComputePool } from './compute.js';
import { InspectorEmitter } from './events.js';
import { createImportedRuns } from './imported-runs.js';
import { PathGuard } from './paths.js';
import { createPayloadFiles } from './payload-files.js';
import { ensurePrivateDir, NotPrivateError, preparePrivateDbFile } from './private-files.js';
import { PayloadReader } from './reader.js';
import { createRootAreas } from './root-areas.js';
import { S3Reads } from './s3-read.js';
import { checkRoot, rootConsents, rootNeedsConsent, type ConsentHow, type RootPolicyContext } from './roots-policy.js';
import { errMessage } from '../pipeline/values.js';

/** Scratch analyses (dropped files) older than this are deleted when the service starts. */
export const SCRATCH_MAX_AGE_DAYS = 30;
const SCRATCH_NAME_RE = /^(\d{8}T\d{9}Z)_[A-Za-z0-9._-]*_[0-9a-f]{6}$/;

export type Transport = AppInfo['transport'];

/** Set (to anything but empty, 0, false or no) to not open the agents' own session folders by default. */
export const NO_DEFAULT_ROOTS_ENV = 'SPILLWAY_NO_DEFAULT_ROOTS';

/**
 * Whether to open the agents' session folders in $HOME (see CreateServiceOptions.defaultRoots):
 * off when the flag or the env var says so (and the ones opened before are dropped), on when no
 * --root is given, left as they are otherwise.
 */
export function defaultRootsChoice(flag: boolean, roots: string[], env: NodeJS.ProcessEnv): boolean | undefined {
  const envOff = /^(?!(0|false|no)$).+/i.test((env[NO_DEFAULT_ROOTS_ENV] ?? '').trim());
  if (!flag || envOff) return false;
  return roots.length === 0 ? true : undefined;
}

export interface CreateServiceOptions {
  /** SQLite index file; default `appPaths().db` (app-data `index.sqlite`). */
  dbPath?: string;
  /**
   * Roots to register (persisted in the index): the CLI's and the config's, so trusted (see
   * roots-policy.ts). With none given and none registered, the app-data sessions root.
   */
  roots?: string[];
  /**
   * The agents' own session folders in $HOME (`~/.claude/projects`, `~/.codex/sessions`,
   * `~/.gemini/tmp`, where they exist): true opens them read-only, marked auto; false drops the ones
   * opened so before; unset leaves them as they are. From the CLI or config, never the HTTP API.
   */
  defaultRoots?: boolean;
  /** App-data folder; default `appPaths(env).root` ($SPILLWAY_HOME or the OS default). */
  appDataDir?: string;
  /**
   * The variables the service reads (SPILLWAY_HOME, SPILLWAY_S3_POLL_MS, SPILLWAY_S3_RECONCILE_MS,
   * SPILLWAY_CLAUDE_CORRECTION, summarizer keys), as a value: serve and Electron pass the process's.
   * Required, so no layer below the edges reads the process's environment by default.
   */
  env: NodeJS.ProcessEnv;
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
  // A bucket's answer: the object is gone or changed, or the store cannot be reached or refuses our credentials.
  if (err instanceof S3StoreError) return new ServiceError(err.code === 'NOT_FOUND' ? 'NOT_FOUND' : err.code === 'EXISTS' ? 'BAD_REQUEST' : 'UNAVAILABLE', err.message);
  // A FIFO, device, link or hard link where a payload's file should be (safe-open.ts).
  if (err instanceof UntrustedFileError) return new ServiceError(err.code === 'NOT_FOUND' ? 'NOT_FOUND' : 'FORBIDDEN_PATH', err.message);
  if (err instanceof TemplateError) return new ServiceError(err.code === 'NOT_FOUND' ? 'NOT_FOUND' : 'BAD_REQUEST', err.message);
  // App data, the database or the consent record belongs to another account or is writable by others (private-files.ts).
  if (err instanceof NotPrivateError) return new ServiceError('FORBIDDEN_PATH', err.message);
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT') return new ServiceError('NOT_FOUND', e.message);
  if (e?.code === 'EACCES' || e?.code === 'EPERM') return new ServiceError('FORBIDDEN_PATH', e.message);
  return new ServiceError('INTERNAL', errMessage(err));
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
  const env = opts.env;
  const baseEnv: NodeJS.ProcessEnv = opts.appDataDir ? { ...env, SPILLWAY_HOME: path.resolve(opts.appDataDir) } : env;
  const paths = appPaths(baseEnv);
  const dbPath = path.resolve(opts.dbPath ?? paths.db);
  const warn = opts.onWarning ?? (() => undefined);
  const compute: ComputePool = createComputePool({ inlineMaxBytes: opts.computeInlineMaxBytes, onWarning: warn });
  const emitter = new InspectorEmitter((err) => warn(`event listener failed: ${errMessage(err)}`));
  const guard = new PathGuard();
  // Sessions in buckets (s3:// roots): read by Range GET through the index's source, confined to the registered roots.
  const source = new RoutedSource(undefined, { reconcileMs: s3ReconcileMs(env) });
  const s3 = new S3Reads(source);
  /** A path the index gave, confined: to a registered S3 root for an s3:// URL, else by the path guard. */
  const confined = (p: string, o: { what: string; mustExist?: boolean }): string => (isS3Path(p) ? s3.confine(p, o.what) : guard.resolve(p, o));
  const rootPolicy: RootPolicyContext = { appData: paths, home: env.HOME ?? os.homedir(), env };
  /** The folders the user gave as roots, recorded across runs and processes (roots-policy.ts). */
  const consents = rootConsents(paths.root);
  const areas = createRootAreas(guard, s3, rootPolicy, warn, consents);
  const runs = createImportedRuns(paths.summaryRuns, warn);
  /** Real paths of folders the user dropped or picked in the desktop app (roots-policy.ts: the window's consent). */
  const consentedFolders = new Set<string>();
  let closed = false;
  let index: SpillIndex | undefined;
  let timelines: Timelines | undefined;
  let stopWatch: (() => Promise<void>) | undefined;

  const ready: Promise<void> = (async () => {
    // App data first, private: everything below it is then out of other accounts' reach. What exists
    // already must be the caller's alone (private-files.ts), and keeps its mode.
    for (const d of [paths.root, paths.sessions, paths.scratch, paths.templates]) await ensurePrivateDir(d);
    const pruned = await pruneScratch(paths.scratch).catch(() => []);
    if (pruned.length) warn(`removed ${pruned.length} scratch analyses older than ${SCRATCH_MAX_AGE_DAYS} days`);
    preparePrivateDbFile(dbPath);
    // The timeline attached before the first scan: its background phase measures the ledgers with the timeline's figures.
    const opened = openIndexWithTimelines({ dbPath, source, s3PollMs: s3PollMs(env), onEvent: (e) => emitter.emit(e.event, e.payload as never) });
    const ix = opened.index;
    index = ix;
    timelines = opened.timelines;
    for (const w of ix.warnings) warn(w);
    // The roots given on the command line are the user's word: checked, and their consent recorded first.
    const given: string[] = [];
    for (const r of opts.roots ?? []) {
      // A bucket root stays a URL (roots-policy.ts checks and canonicalizes it).
      const abs = isS3Path(r) ? r : path.resolve(r);
      try {
        const real = checkRoot(abs, 'trusted', rootPolicy);
        consents.record(real, 'cli');
        given.push(real);
      } catch (err) {
        throw new ServiceError('BAD_REQUEST', `cannot add root ${abs}: ${toServiceError(err).message}`);
      }
    }
    // A root registered without the user's consent (a window under the old rule) is forgotten, not kept readable.
    for (const r of ix.listRoots()) {
      if (!rootNeedsConsent(r, rootPolicy) || consents.has(r.path)) continue;
      ix.removeRoot(r.id);
      warn(
        `forgot root ${r.path}: it was registered without a consent record (an older version let the window add it); ` +
          'its files are untouched. To read it again: File → Open Folder…, drop it on the window, or `spillway index DIR`',
      );
    }
    for (const real of given) {
      try {
        ix.addRoot(real);
      } catch (err) {
        throw new ServiceError('BAD_REQUEST', `cannot add root ${real}: ${toServiceError(err).message}`);
      }
    }
    // Default roots are not the user's choice of roots: with only those, the sessions folder is still opened.
    if (!ix.listRoots().some((r) => !r.auto && !isInside(paths.scratch, r.path))) ix.addRoot(paths.sessions);
    if (opts.defaultRoots !== undefined) ix.syncAutoRoots(opts.defaultRoots ? agentHomeRoots(env) : null);
    // Scratch sessions (dropped files) live in their own root, so the viewer can open them.
    if (!ix.listRoots().some((r) => isInside(r.path, paths.scratch))) ix.addRoot(paths.scratch);
    areas.sync(ix.listRoots());
    if (opts.watch ?? true) stopWatch = await ix.watch();
  })();
  // Callers see a failed start through every method; do not crash on an unobserved rejection.
  ready.catch(() => undefined);

  const idx = async (): Promise<SpillIndex> => {
    if (closed) throw new ServiceError('UNAVAILABLE', 'the service is closed');
    try {
      await ready;
    } catch (err) {
      throw new ServiceError('UNAVAILABLE', `the index could not be opened: ${errMessage(err)}`);
    }
    return index!;
  };
  /** The timeline layer over the index, once open. */
  const tl = async (): Promise<Timelines> => {
    await idx();
    return timelines!;
  };
  const files = createPayloadFiles(idx, confined, s3);
  emitter.on('onDidIndex', () => files.forget());

  // The first scan starts once the index is open; it never delays `ready`.
  if (opts.scanOnStart ?? true) {
    void ready
      .then(async () => {
        await index!.scan();
        await runs.restore(index!);
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
    confined,
    reader: new PayloadReader(),
    rootPolicy,
    ready,
    idx,
    timelines: tl,
    isClosed: () => closed,
    isScratch: (p: string) => isInside(paths.scratch, p),
    allowRootArea: areas.allow,
    consentToFolder: (realPath: string) => void consentedFolders.add(realPath),
    /** Record that the user gave this root (so a later start keeps it). */
    recordConsent: (realPath: string, how: ConsentHow) => consents.record(realPath, how),
    forgetConsent: (realPath: string) => consents.forget(realPath),
    hasConsent: (realPath: string) => [...consentedFolders].some((d) => isInside(d, realPath)),
    /** Whether the user gave this folder as a root (the record, roots-policy.ts): the inspector writes a project's rules only in a folder it knows. */
    hasRecordedConsent: (realPath: string) => consents.has(realPath),
    forgetRootArea: areas.forget,
    /** The index's roots, each granted in the guard (roots another process added become readable too). */
    syncRootAreas: (ix: SpillIndex): RootInfo[] => areas.sync(ix.listRoots()),
    detailOf: files.detailOf,
    contentOpener: files.contentOpener,
    openAsset: files.openAsset,
    readWholeBytes: files.readWholeBytes,
    readWholeText: files.readWholeText,
    keepImportedRun: runs.keep,
    restoreImportedRuns: runs.restore,
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
