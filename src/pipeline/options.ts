import path from 'node:path';
import type { DrillDownToolNames, GuardOptions, PayloadMeta, Profile, ReadMoreTools, RuleOrigin, SpillRule, StrategyName, SummarizeHook } from './types.js';
import { DEFAULT_LIMIT_TOKENS, STORE_CALL_TIMEOUT_MS } from './limits.js';
import { claudeCorrectionFromEnv, DEFAULT_PROFILE, DEFAULT_STRATEGY, parseClaudeCorrection } from './estimate/options.js';
import type { SpillStore } from './store/seam.js';
import { LocalSpillStore } from './store/local.js';
import { localCopyDir, withLocalCopy } from './local-copy.js';
import { configuredStores } from './store/s3/select.js';
import { withDeadline } from './store/publish.js';
import { resolveLimit } from './quick.js';

/**
 * The guard's options, normalised once where a call enters (as execa's `normalizeOptions`): every
 * default applied and every field of the caller's object read once, here. The phases read only
 * this, so an option given to any entry (the library, the CLI's `guard`, the MCP proxy, the hook)
 * means the same everywhere, and a caller that must decide before the guard (the hook's pre-checks)
 * reads the very limit the guard will use.
 *
 * The caller's object may be hostile (a getter that throws): a field that cannot be read is left
 * at its default, because the guard never throws on a tool result.
 */

const NORMALIZED: unique symbol = Symbol('spillway.normalizedGuardOptions');

/** The tool call's fields a sidecar keeps (see {@link callFields}). */
export type CallFields = Partial<Pick<PayloadMeta, 'toolCallId' | 'client' | 'clientSessionId' | 'transcriptPath' | 'cwd'>>;

export interface NormalizedGuardOptions {
  readonly [NORMALIZED]: true;
  readonly sessionPath: string;
  /** The limit decided with: explicit, default, narrowed by the context window. */
  readonly limit: number;
  readonly profile: Profile;
  readonly strategy: StrategyName;
  /** GuardOptions.claudeCorrection, else the `env`'s SPILLWAY_CLAUDE_CORRECTION; absent means 1. */
  readonly claudeCorrection?: number;
  readonly cutMediaBlocks: boolean;
  /** Spill whatever it measures: the caller (a client that already cut or saved it) knows it is too large. */
  readonly knownLarge: boolean;
  readonly shown?: string;
  readonly toolName?: string;
  readonly toolInput?: unknown;
  readonly intent?: string;
  /** The call's ids and paths, as strings of bounded length. */
  readonly call: CallFields;
  /** The rule that set this call's settings, checked (see {@link ruleFields}). */
  readonly rule?: SpillRule;
  readonly summarize?: SummarizeHook;
  readonly summaryTimeoutMs?: number;
  readonly signal?: AbortSignal;
  readonly now: () => Date;
  readonly readMore?: ReadMoreTools;
  /** Checked plain tool names, or undefined (the canonical ones). */
  readonly drillDownNames?: DrillDownToolNames;
  readonly incomplete?: string;
  /** The primary store, then the fallback (if any), each bounded by the store deadline; made on first use. */
  readonly stores: () => SpillStore[];
}

/** Either form a guard call takes. */
export type GuardOptionsInput = GuardOptions | NormalizedGuardOptions;

const CALL_FIELDS = ['toolCallId', 'client', 'clientSessionId', 'transcriptPath', 'cwd'] as const;
/** Longest call field kept in a sidecar (ids and paths; anything longer is not one). */
const MAX_CALL_FIELD_CHARS = 4096;

/** The tool call's fields for the sidecar: strings only, each bounded; anything else left out. */
export function callFields(call: unknown): CallFields {
  const out: CallFields = {};
  if (typeof call !== 'object' || call === null) return out;
  for (const k of CALL_FIELDS) {
    const v = (call as Record<string, unknown>)[k];
    if (typeof v === 'string' && v && v.length <= MAX_CALL_FIELD_CHARS) out[k] = v;
  }
  return out;
}

const RULE_SOURCES: ReadonlySet<string> = new Set<RuleOrigin['source']>(['flag', 'project', 'user', 'default']);
const RULE_SETTINGS = ['limit', 'template', 'provider', 'model', 'focusArg'] as const;

function originOf(v: unknown): RuleOrigin | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.source !== 'string' || !RULE_SOURCES.has(o.source)) return undefined;
  const s = (x: unknown) => (typeof x === 'string' && x && x.length <= MAX_CALL_FIELD_CHARS ? x : undefined);
  const match = s(o.match);
  const file = s(o.file);
  return { source: o.source as RuleOrigin['source'], ...(match ? { match } : {}), ...(file ? { file } : {}) };
}

/** The rule for the sidecar: known sources and bounded strings only; anything else left out. */
export function ruleFields(rule: unknown): SpillRule | undefined {
  const top = originOf(rule);
  if (!top) return undefined;
  const given = (rule as Record<string, unknown>).settings;
  const settings: SpillRule['settings'] = {};
  if (typeof given === 'object' && given !== null) {
    for (const k of RULE_SETTINGS) {
      const o = originOf((given as Record<string, unknown>)[k]);
      if (o) settings[k] = o;
    }
  }
  return { ...top, settings };
}

function isNormalized(o: unknown): o is NormalizedGuardOptions {
  return typeof o === 'object' && o !== null && (o as Partial<NormalizedGuardOptions>)[NORMALIZED] === true;
}

/** One field of a caller's object, or undefined when reading it throws. */
function read<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const positive = (v: unknown): number | undefined => (typeof v === 'number' && v > 0 ? v : undefined);

/** Where a spill goes, in order: the primary store (with a local copy when asked), then the fallback; each call bounded by `ms`. */
function storesOf(s: { store: GuardOptions['store']; fallbackStore?: SpillStore; sessionPath: string; ms: number; localCopy: boolean; env: GuardOptions['env'] }): SpillStore[] {
  const list = (
    configuredStores(s, s.env) ?? [s.store && typeof s.store === 'object' ? s.store : new LocalSpillStore(s.sessionPath), ...(s.fallbackStore ? [s.fallbackStore] : [])]
  ).map((store) => withDeadline(store, s.ms));
  // An agent that reads files cannot open s3://…: keep a local copy beside the bucket's.
  if (s.localCopy && list[0] && !path.isAbsolute(list[0].location)) {
    list[0] = withLocalCopy(list[0], withDeadline(new LocalSpillStore(localCopyDir(s.sessionPath)), s.ms));
  }
  return list;
}

/** A correction given as an option (checked: nonsense is dropped, since the guard never throws), else the env's. */
function correctionOf(given: unknown, env: GuardOptions['env']): number | undefined {
  if (typeof given === 'number') {
    try {
      return parseClaudeCorrection(given);
    } catch {
      /* the env's, else none */
    }
  }
  return claudeCorrectionFromEnv(env);
}

/** An MCP tool name as the spec allows it: it goes into the model's message as it is. */
const TOOL_NAME_RE = /^[A-Za-z0-9_.-]{1,128}$/;

/** Drill-down names given as an option: all three plain tool names, else none (the canonical ones are named). */
function drillDownNamesOf(given: unknown): DrillDownToolNames | undefined {
  if (typeof given !== 'object' || given === null) return undefined;
  const n = given as Record<string, unknown>;
  const names = { read: read(() => n.read), grep: read(() => n.grep), query: read(() => n.query) };
  const ok = (v: unknown): v is string => typeof v === 'string' && TOOL_NAME_RE.test(v);
  return ok(names.read) && ok(names.grep) && ok(names.query) ? { read: names.read, grep: names.grep, query: names.query } : undefined;
}

/** The options every phase of the guard reads. Given options already normalised, returns them as they are. */
export function normalizeGuardOptions(options: GuardOptionsInput | undefined): NormalizedGuardOptions {
  if (isNormalized(options)) return options;
  const o: Partial<GuardOptions> = typeof options === 'object' && options !== null ? options : {};
  // Every field is read once, here: nothing after this touches the caller's object.
  const sessionPath = str(read(() => o.sessionPath)) ?? '.';
  const limitTokens = read(() => o.limitTokens);
  const contextWindowTokens = read(() => o.contextWindowTokens);
  const where = {
    store: read(() => o.store),
    fallbackStore: read(() => o.fallbackStore),
    sessionPath,
    ms: positive(read(() => o.storeTimeoutMs)) ?? STORE_CALL_TIMEOUT_MS,
    localCopy: read(() => o.localCopy) === true,
    env: read(() => o.env),
  };
  const now = read(() => o.now);
  const summarize = read(() => o.summarize);
  const fields = {
    profile: read(() => o.profile) ?? DEFAULT_PROFILE,
    strategy: read(() => o.strategy) ?? DEFAULT_STRATEGY,
    claudeCorrection: correctionOf(read(() => o.claudeCorrection), where.env),
    cutMediaBlocks: read(() => o.cutMediaBlocks) === true,
    knownLarge: read(() => o.knownLarge) === true,
    shown: str(read(() => o.shown)),
    toolName: str(read(() => o.toolName)),
    toolInput: read(() => o.toolInput),
    intent: str(read(() => o.intent)),
    call: read(() => callFields(o.call)) ?? {},
    rule: read(() => ruleFields(o.rule)),
    summarize: summarize ? summarize : undefined,
    summaryTimeoutMs: read(() => o.summaryTimeoutMs),
    signal: read(() => o.signal),
    now: typeof now === 'function' ? now : () => new Date(),
    readMore: read(() => o.readMore),
    drillDownNames: drillDownNamesOf(read(() => o.drillDownNames)),
    incomplete: str(read(() => o.incomplete)) || undefined,
  };
  let limit = DEFAULT_LIMIT_TOKENS;
  try {
    limit = resolveLimit({ limitTokens, contextWindowTokens });
  } catch {
    /* a limit that is not a number: the default */
  }
  let stores: SpillStore[] | undefined;
  return { [NORMALIZED]: true, sessionPath, limit, ...fields, stores: () => (stores ??= storesOf(where)) };
}
