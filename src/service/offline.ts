/**
 * What the CLI verbs do without a running inspector, composed here from the same layers the
 * service uses, so `src/cli` imports the service (and the pipeline), never index, compress or
 * summarize directly (the layering in docs/architecture.md).
 *
 * | verb                | call                                                        |
 * | ------------------- | ----------------------------------------------------------- |
 * | `spillway index`    | `indexFolders`                                              |
 * | `spillway summarize`| `summarizeText`, `listSummaryProviders`, `listSummaryTemplates` |
 * | `spillway project`  | `suggestProjectionFor`, `applyProjection`, `projectionSpecFor` |
 * | `spillway handle`   | `withHandles`                                               |
 * | `spillway context`  | `contextTimeline`                                           |
 * | `spillway evidence` | `indexFolders` for the folders given, then `sessionEvidence` |
 * | `spillway prune`    | `checkOwnAppData` first, then `forgetPruned` (the pruning itself is the pipeline's) |
 * | `spillway sync`     | `checkOwnAppData` before it reads the pending-sync queue    |
 * | `spillway experiment` | `experimentDataset`, `experimentRun`, `experimentList`, `experimentShow`, `experimentCompare` (experiments.ts) |
 */
import fs from 'node:fs';
import path from 'node:path';
import { appPaths, estimateTokens, MAX_SUMMARY_OUTPUT_TOKENS } from '../pipeline/index.js';
import { pendingDir } from '../pipeline/store/s3/index.js';
import type { SummaryOutput } from '../pipeline/types.js';
import { calibrateClaude, isS3Path, openIndex, type Calibration } from '../index/index.js';
import { openIndexWithTimelines } from '../timeline/index.js';
import {
  findProjectionSpec,
  HandleStore,
  loadProjectionSpecs,
  projectWithStats,
  saveProjectionSpec,
  suggestProjection,
  validateSpec,
  type HandleQuery,
  type ProjectionSpec,
  type ProjectionStats,
  type ProjectionSuggestion,
} from '../compress/index.js';
import { createSummarizer, isProviderName, listProvidersProbed, listTemplates, mcpContentValue, PROVIDER_NAMES } from '../summarize/index.js';
import type { CompareSessionsRequest, CompareSessionsResponse, IndexProgressEvent, IndexStats, ProviderInfo, ReadBack, TemplateInfo, TimelineData, TimelineRequest, ToolEvidenceResponse } from './contract.js';
import { checkPrivate, checkPrivateDb, ensurePrivateDirSync, preparePrivateDbFile, PRIVATE_FILE_MODE } from './private-files.js';
import { checkRoot, rootConsents } from './roots-policy.js';

export type { HandleQuery, HandleStore, ProjectionSpec, ProjectionStats };
export { PROVIDER_NAMES };

// ------------------------------------------------------------------------------------ prune

/**
 * `spillway prune`: the index drops the units that were pruned (by key, without a listing), so
 * the inspector stops listing them at once. A database that does not exist is not created.
 */
export async function forgetPruned(units: string[], o: { dbPath?: string; env: NodeJS.ProcessEnv }): Promise<{ removed: number; dbPath: string | null }> {
  const dbPath = o.dbPath ?? appPaths(o.env).db;
  // A database another account owns or can write is refused, not edited (private-files.ts).
  const exists = checkPrivateDb(dbPath);
  if (!units.length || !exists) return { removed: 0, dbPath: exists ? dbPath : null };
  const index = openIndex({ dbPath });
  try {
    return { removed: await index.forgetUnits(units), dbPath };
  } finally {
    await index.close();
  }
}

/**
 * Before `prune` deletes anything, or `sync` reads its queue: the app-data folder, its pending-sync
 * queue and the index database, where they exist, must be the caller's alone (private-files.ts).
 * A queue record another account planted would name what to upload and where; a database it owns
 * is not ours to edit. Creates nothing; throws a NotPrivateError that says how to fix it.
 */
export function checkOwnAppData(o: { dbPath?: string; env: NodeJS.ProcessEnv }): void {
  const paths = appPaths(o.env);
  checkPrivate(paths.root, 'app-data folder');
  checkPrivate(pendingDir(o.env), 'pending-sync folder');
  checkPrivateDb(path.resolve(o.dbPath ?? paths.db));
}

// ------------------------------------------------------------------------------------ index

export interface IndexFoldersOptions {
  dirs: string[];
  /** Default: the app-data `index.sqlite`. */
  dbPath?: string;
  /** The caller's variables (SPILLWAY_HOME…): the CLI passes the process's. */
  env: NodeJS.ProcessEnv;
  /** Each progress event of a root's scan (both phases: `list`, then `fulltext`). */
  onProgress?: (root: { path: string }, progress: IndexProgressEvent) => void;
  /** A root's scan finished (the CLI ends its progress line). */
  onRootDone?: (root: { path: string }) => void;
  onWarning?: (message: string) => void;
}

/**
 * Register each folder (or `s3://bucket/prefix`) as a root (the CLI is a trusted place: hard limits only, roots-policy.ts),
 * unless a root already covers it, and bring the index up to date. The database is created 0600.
 */
export async function indexFolders(o: IndexFoldersOptions): Promise<IndexStats & { dbPath: string }> {
  const paths = appPaths(o.env);
  const dbPath = path.resolve(o.dbPath ?? paths.db);
  const warn = o.onWarning ?? (() => undefined);
  // The consent record goes into app data: it must be the caller's before anything is written (private-files.ts).
  ensurePrivateDirSync(paths.root);
  preparePrivateDbFile(dbPath);
  // With the timeline attached, so this scan writes the ledgers as serve's would (measured, not estimated).
  const { index } = openIndexWithTimelines({ dbPath });
  try {
    for (const w of index.warnings) warn(w);
    const rootIds: string[] = [];
    for (const dir of o.dirs) {
      // A bucket prefix (s3://bucket/prefix) is a read-only root, listed through the index's routed source.
      const abs = isS3Path(dir) ? dir : path.resolve(dir);
      const real = checkRoot(abs, 'trusted', { appData: paths, env: o.env });
      const root = index.rootFor(real) ?? index.addRoot(real);
      // `spillway index DIR` is the user's word for DIR (not for a root above it): serve and the desktop app keep it (roots-policy.ts).
      rootConsents(paths.root).record(real, 'cli');
      if (!rootIds.includes(root.id)) rootIds.push(root.id);
    }
    const t0 = performance.now();
    const total: IndexStats = { sessions: 0, payloads: 0, assets: 0, bytes: 0, seconds: 0 };
    for (const rootId of rootIds) {
      const root = index.listRoots().find((r) => r.id === rootId)!;
      // On demand: a bucket is listed whole (the reconciling listing), not just its journal.
      const res = await index.scan({ rootId, full: true, onProgress: (p) => o.onProgress?.(root, p) });
      o.onRootDone?.(root);
      for (const w of res.warnings) warn(w);
      total.sessions += res.sessions;
      total.payloads += res.payloads;
      total.assets += res.assets;
      total.bytes += res.bytes;
    }
    total.seconds = Math.round((performance.now() - t0) / 10) / 100;
    return { ...total, dbPath };
  } finally {
    await index.close();
  }
}

// -------------------------------------------------------------------------------- summaries

export interface SummarizeTextOptions {
  text: string;
  /** Where keys and the deadline come from (the CLI passes the process's); none: no variable applies. */
  env?: NodeJS.ProcessEnv;
  provider: string;
  focus?: string;
  model?: string;
  template?: string;
  templatesDir?: string;
  timeoutMs?: number;
  maxOutputTokens?: number;
  signal: AbortSignal;
}

/** One summary of `text` (what `spillway summarize FILE` prints). Throws for an unknown provider or template. */
export async function summarizeText(o: SummarizeTextOptions): Promise<SummaryOutput> {
  if (!isProviderName(o.provider)) throw new Error(`unknown provider ${JSON.stringify(o.provider)}: use ${PROVIDER_NAMES.join(', ')}`);
  const summarizer = createSummarizer({
    provider: o.provider,
    model: o.model,
    template: o.template,
    templatesDir: o.templatesDir,
    timeoutMs: o.timeoutMs,
    maxOutputTokens: o.maxOutputTokens,
    env: o.env,
  });
  return summarizer.summarize(
    { text: o.text, focus: o.focus, template: o.template, model: o.model, maxOutputTokens: o.maxOutputTokens ?? MAX_SUMMARY_OUTPUT_TOKENS },
    { signal: o.signal },
  );
}

export const listSummaryProviders = (env: NodeJS.ProcessEnv): Promise<ProviderInfo[]> => listProvidersProbed(env);
export const listSummaryTemplates = (dir: string): TemplateInfo[] => listTemplates(dir);

// ------------------------------------------------------------------------------- projection

/** Save a spec for a tool; in the folder the caller names (the CLI: the app data's), privately (docs/security.md). */
function saveSpec(dir: string | undefined, tool: string, spec: ProjectionSpec): string {
  if (dir === undefined) throw new Error('saving a projection spec needs the folder (dir)');
  const target = dir;
  ensurePrivateDirSync(target);
  const saved = saveProjectionSpec(target, tool, spec);
  try {
    fs.chmodSync(saved, PRIVATE_FILE_MODE);
  } catch {
    /* a file system without modes */
  }
  return saved;
}

/** A spec given on the command line (parsed JSON), checked. */
export const checkProjectionSpec = (v: unknown, what: string): ProjectionSpec => validateSpec(v, what);

/** The spec saved for `tool`, if any. */
export function projectionSpecFor(tool: string, dir?: string): ProjectionSpec | undefined {
  return dir === undefined ? undefined : findProjectionSpec(loadProjectionSpecs(dir), tool);
}

/** Fields of a JSON payload ranked by what they cost, and a proposed spec (saved for `save` when given). */
export function suggestProjectionFor(text: string, value: unknown, o: { save?: string; dir?: string } = {}): ProjectionSuggestion & { saved?: string } {
  // An MCP result is projected by the JSON it carries, as the guard's --projection does.
  const s = suggestProjection(mcpContentValue(value));
  // Report against the file as it is (pretty-printed or not), like applyProjection does.
  s.tokensBefore = estimateTokens(text).tokens;
  const saved = o.save ? saveSpec(o.dir, o.save, s.spec) : undefined;
  return { ...s, ...(saved ? { saved } : {}) };
}

/** Apply `spec` to a JSON payload; token counts before (as given) and after (compact). */
export function applyProjection(
  text: string,
  value: unknown,
  spec: ProjectionSpec,
  o: { save?: string; dir?: string } = {},
): { value: unknown; stats: ProjectionStats; tokensBefore: number; tokensAfter: number; saved?: string } {
  const { value: out, stats } = projectWithStats(mcpContentValue(value), spec);
  const tokensBefore = estimateTokens(text).tokens;
  const tokensAfter = estimateTokens(JSON.stringify(out) ?? 'null').tokens;
  const saved = o.save ? saveSpec(o.dir, o.save, spec) : undefined;
  return { value: out, stats, tokensBefore, tokensAfter, ...(saved ? { saved } : {}) };
}

// ---------------------------------------------------------------------------------- handles

/** Open `<session>/handles.sqlite`, run `f`, close it whatever happens. */
export function withHandles<T>(sessionDir: string, f: (s: HandleStore) => T | Promise<T>): Promise<T> {
  const s = HandleStore.open(path.resolve(sessionDir));
  return Promise.resolve()
    .then(() => f(s))
    .finally(() => s.close());
}

// -------------------------------------------------------------------------------- context

export interface ContextTimelineOptions {
  /** A session id or name (as `spillway index` listed it), or a transcript file / session folder. */
  target: string;
  /** Default: the app-data `index.sqlite`. */
  dbPath?: string;
  /** The caller's variables (SPILLWAY_HOME…): the CLI passes the process's. */
  env: NodeJS.ProcessEnv;
  request?: Omit<TimelineRequest, 'sessionId'>;
}

/**
 * The context timeline of one session (`spillway context`). A path is indexed first (registered as
 * a root, like `spillway index`, so the next call reads it from the index); anything else is looked
 * up among the indexed sessions by id, then by name.
 */
export type { Calibration };

/** `spillway estimate --calibrate-from`: the claude correction fitted on the API's usage in the transcripts there. */
export function calibrateClaudeCorrection(target: string, o: { current?: number } = {}): Promise<Calibration> {
  return calibrateClaude(target, o);
}

/** The guard's messages of a big session take seconds to build; a command should not give up on them sooner. */
const CLI_GUARD_BUDGET_MS = 120_000;

/** A session's timeline, and the read-backs read in it or of its spills (src/index/readback.ts): what `spillway context --json` prints. */
export type ContextTimeline = TimelineData & { readBacks: ReadBack[] };

export async function contextTimeline(o: ContextTimelineOptions): Promise<ContextTimeline> {
  const paths = appPaths(o.env);
  const dbPath = path.resolve(o.dbPath ?? paths.db);
  ensurePrivateDirSync(paths.root);
  preparePrivateDbFile(dbPath);
  // One session's timeline: its request estimates what it needs; the rest stays for serve's background phase.
  const { index, timelines } = openIndexWithTimelines({ dbPath, backgroundEstimates: false });
  try {
    let sessionId: string | undefined;
    const abs = path.resolve(o.target);
    if (fs.existsSync(abs)) {
      const real = checkRoot(abs, 'trusted', { appData: paths, env: o.env });
      const root = index.rootFor(real) ?? index.addRoot(real);
      rootConsents(paths.root).record(real, 'cli');
      await index.scan({ rootId: root.id });
      const sessions = index.listSessions({ rootId: root.id });
      sessionId = (sessions.find((s) => s.path === abs) ?? sessions.find((s) => !s.parentSessionId) ?? sessions[0])?.id;
    } else {
      const sessions = index.listSessions();
      sessionId = (sessions.find((s) => s.id === o.target) ?? sessions.find((s) => s.name === o.target) ?? sessions.find((s) => s.name.startsWith(o.target)))?.id;
    }
    if (!sessionId) throw new Error(`no session ${JSON.stringify(o.target)}: give a transcript path, or an id or name from the inspector`);
    // A command waits for every guard message (the view asks again for those still pending instead).
    const t = await timelines.timeline({ ...o.request, sessionId }, { guardBudgetMs: CLI_GUARD_BUDGET_MS });
    if (!t) throw new Error(`no session ${JSON.stringify(o.target)}`);
    return { ...t, readBacks: index.readBacks([sessionId]) };
  } finally {
    await index.close();
  }
}

// -------------------------------------------------------------------------------- evidence

export interface SessionEvidenceOptions {
  /** Default: the app-data `index.sqlite`. */
  dbPath?: string;
  env: NodeJS.ProcessEnv;
  /** Also compare sessions (by rule or by date). */
  compare?: CompareSessionsRequest;
}

/**
 * `spillway evidence`: per tool, over every indexed session, the spills, read-backs and their cost,
 * the settings used and the suggestions; with `compare`, the before/after groups. Reads the index as
 * it stands (the CLI indexes the folders it is given first, with `indexFolders`).
 */
export async function sessionEvidence(o: SessionEvidenceOptions): Promise<{ evidence: ToolEvidenceResponse; compare?: CompareSessionsResponse }> {
  const paths = appPaths(o.env);
  const dbPath = path.resolve(o.dbPath ?? paths.db);
  ensurePrivateDirSync(paths.root);
  preparePrivateDbFile(dbPath);
  const index = openIndex({ dbPath, backgroundEstimates: false });
  try {
    const evidence = index.toolEvidence();
    return { evidence, ...(o.compare ? { compare: index.compareSessions(o.compare) } : {}) };
  } finally {
    await index.close();
  }
}
// ------------------------------------------------------------------------------------ experiment

export {
  experimentCompare,
  experimentDataset,
  experimentList,
  experimentRun,
  experimentShow,
  experimentScorer,
  payloadItemSource,
  ExperimentError,
  type Budget,
  type Comparison,
  type DatasetInfo,
  type DatasetSpec,
  type ExperimentCliOptions,
  type ExperimentRunOptions,
  type RunProgress,
  type RunReport,
  type StoredResult,
  type StoredRun,
  type Variant,
} from './experiments.js';
