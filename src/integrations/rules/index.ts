import { DEFAULT_LIMIT_TOKENS } from '../../pipeline/limits.js';
import type { RuleOrigin, SpillRule, SummarizeHook } from '../../pipeline/types.js';
import { createSummarizer, DEFAULT_MODELS, defaultProviderName, DEFAULT_TEMPLATE, isProviderName } from '../../summarize/index.js';
import type { Rule, RulesFileState } from './config.js';
import { ANY_TOOL, matchOrder, readRulesFile, RULE_KEYS, ruleKeyTarget, rulesPaths, toolTarget, type RuleKey, type RulesScope, type ToolTarget } from './match.js';

/**
 * Guard rules per tool: one order for the hook, the proxy and `spillway guard`. Per setting, the
 * first of: the flag, the project's file (`<project>/.spillway.json`), the user's
 * (`<app data>/config.json`), the default. Inside a file the most specific key that sets it wins:
 * the tool's exact name, `server/tool`, `server/*`, then `*`. A setting no rule gives falls through
 * to the next source, so a project rule that sets only a template keeps the user's limit.
 *
 * | call | for |
 * | --- | --- |
 * | {@link loadRules} | both files; zod loads only when one exists; a bad file is an error line and left out |
 * | {@link withRulesText} | the same with one file's text replaced (a planned change) |
 * | {@link resolveRule} | one call's settings, each with its origin |
 * | {@link GuardRules} | per call: the limit, the summarizer, the focus argument and the sidecar's record |
 *
 * docs/config.md is the user's description; keep the two together.
 */

export interface LoadedRules {
  /** The project's file, then the user's. */
  files: RulesFileState[];
  /** One line per file left out, naming the file and the field. */
  errors: string[];
  env: NodeJS.ProcessEnv;
}

/** No rules files: flags and defaults only. */
export const noRules = (env: NodeJS.ProcessEnv): LoadedRules => ({ files: [], errors: [], env });

/**
 * Both rules files of a project folder. Never throws: a file that cannot be read or is not valid is
 * an error line and left out (the flags, the other file and the defaults still apply). The schema
 * (zod) is loaded only when a file exists: the hook's entry runs on every large result.
 */
export async function loadRules(cwd: string | undefined, env: NodeJS.ProcessEnv): Promise<LoadedRules> {
  try {
    // No project folder (the inspector's preview of the user's file alone): the user's file only.
    const paths = rulesPaths(cwd ?? '.', env);
    const scopes = cwd === undefined ? (['user'] as const) : (['project', 'user'] as const);
    const read = scopes.map((scope) => ({ scope, path: paths[scope], text: readRulesFile(paths[scope]) }));
    const files: RulesFileState[] = [];
    const parse = read.some((r) => r.text.state === 'read') ? (await import('./config.js')).parseRulesText : undefined;
    for (const r of read) {
      if (r.text.state === 'missing') files.push({ scope: r.scope, path: r.path, state: 'missing' });
      else if (r.text.state === 'error') files.push({ scope: r.scope, path: r.path, state: 'error', error: r.text.error.slice(0, 600) });
      else files.push(parse!(r.text.text, r.path, r.scope));
    }
    const errors = files.flatMap((f) => (f.state === 'error' ? [`${f.scope} rules left out: ${f.error}`] : []));
    return { files, errors, env };
  } catch (err) {
    return { ...noRules(env), errors: [`rules left out: ${(err as Error).message}`] };
  }
}

/**
 * The same rules with one file's text replaced (what a change would make of it): the inspector's
 * preview resolves a tool's rule before and after with the one resolver. Throws when the text is
 * not valid (a planned change never is: planRuleChange checks it).
 */
export async function withRulesText(loaded: LoadedRules, scope: RulesScope, file: string, text: string): Promise<LoadedRules> {
  const { parseRulesText } = await import('./config.js');
  const next = parseRulesText(text, file, scope);
  if (next.state === 'error') throw new Error(next.error);
  const files = loaded.files.some((f) => f.scope === scope) ? loaded.files.map((f) => (f.scope === scope ? next : f)) : [...loaded.files, next];
  return { ...loaded, files, errors: files.flatMap((f) => (f.state === 'error' ? [`${f.scope} rules left out: ${f.error}`] : [])) };
}

/** The flags of the guarding verbs that a rule may also set. */
export interface RuleFlags {
  limit?: number;
  /** `--summarizer` / `--provider`. */
  provider?: string;
  model?: string;
  template?: string;
  focusArg?: string;
}

/** The rule flags among a guarding verb's options (`--summarizer` before `--provider`, as loadSummarizer reads them). */
export function ruleFlagsOf(o: { limit?: number; summarizer?: string; provider?: string; model?: string; template?: string; focusArg?: string }): RuleFlags {
  const flags: RuleFlags = {};
  if (o.limit !== undefined) flags.limit = o.limit;
  const provider = o.summarizer ?? o.provider;
  if (provider !== undefined) flags.provider = provider === 'off' ? 'none' : provider;
  if (o.model !== undefined) flags.model = o.model;
  if (o.template !== undefined) flags.template = o.template;
  if (o.focusArg !== undefined) flags.focusArg = o.focusArg;
  return flags;
}

export interface ResolvedRule {
  values: { limit: number; provider: string; model?: string; template: string; focusArg?: string };
  origins: Record<RuleKey, RuleOrigin>;
}

/**
 * One call's settings: per setting, the first of the flag, the project's most specific matching
 * rule that sets it, the user's, the default. The default model is the resolved provider's.
 */
export function resolveRule(loaded: LoadedRules, target: ToolTarget, flags: RuleFlags = {}): ResolvedRule {
  const keys = matchOrder(target);
  const values: Rule = {};
  const origins = {} as Record<RuleKey, RuleOrigin>;
  for (const key of RULE_KEYS) {
    const flag = flags[key];
    if (flag !== undefined) {
      (values as Record<string, unknown>)[key] = flag;
      origins[key] = { source: 'flag' };
      continue;
    }
    found: for (const f of loaded.files) {
      if (f.state !== 'ok') continue;
      for (const match of keys) {
        const v = f.rules.get(match)?.[key];
        if (v === undefined) continue;
        (values as Record<string, unknown>)[key] = v;
        origins[key] = { source: f.scope, match, file: f.path };
        break found;
      }
    }
    origins[key] ??= { source: 'default' };
  }
  const provider = values.provider ?? defaultProviderName(loaded.env);
  const model = values.model ?? defaultModelOf(provider, loaded.env);
  return {
    values: {
      limit: values.limit ?? DEFAULT_LIMIT_TOKENS,
      provider,
      ...(model ? { model } : {}),
      template: values.template ?? DEFAULT_TEMPLATE,
      ...(values.focusArg !== undefined ? { focusArg: values.focusArg } : {}),
    },
    origins,
  };
}

/** The model a provider uses when no flag or rule names one: its variable (`SPILLWAY_ANTHROPIC_MODEL`…), else its default. */
function defaultModelOf(provider: string, env: NodeJS.ProcessEnv): string | undefined {
  const given = (v: string | undefined) => (v && v.trim() ? v : undefined);
  if (provider === 'anthropic') return given(env.SPILLWAY_ANTHROPIC_MODEL) ?? DEFAULT_MODELS.anthropic;
  if (provider === 'openai') return given(env.SPILLWAY_OPENAI_MODEL) ?? DEFAULT_MODELS.openai;
  // local: the server's first listed model unless named.
  if (provider === 'local') return given(env.SPILLWAY_LOCAL_MODEL);
  return isProviderName(provider) ? DEFAULT_MODELS[provider] || undefined : undefined;
}

/** What a spill's sidecar records: the origin of the limit that decided it, and of every setting. */
export function spillRuleOf(r: ResolvedRule): SpillRule {
  return { ...r.origins.limit, settings: { ...r.origins } };
}

/** One call's guard settings from the rules. */
export interface CallRule {
  /** The limit (a flag's, a rule's or the default), before any `--context-window` narrows it. */
  limitTokens: number;
  /** The summarizer for the resolved provider, model and template; undefined: the guard's preview (`none`). */
  summarize?: SummarizeHook;
  focusArg?: string;
  /** For the sidecar. */
  rule: SpillRule;
  resolved: ResolvedRule;
  /** Why this call's settings fell back (a summarizer that could not be made). */
  error?: string;
}

/**
 * The rules of one guarding process (a hook event, the proxy, `spillway guard`): the files loaded
 * once, the flags, and one summarizer per (provider, model, template) made on first use.
 */
export class GuardRules {
  private readonly summarizers = new Map<string, SummarizeHook | undefined>();

  constructor(
    readonly loaded: LoadedRules,
    readonly flags: RuleFlags,
  ) {}

  get errors(): readonly string[] {
    return this.loaded.errors;
  }

  /** Whether any rule could apply (a file was loaded): without one, a caller may keep its flags-only fast checks. */
  get any(): boolean {
    return this.loaded.files.some((f) => f.state === 'ok' && f.rules.size > 0);
  }

  /** The settings of a call to `tool` (see {@link toolTarget} for `server` and `clientName`). Never throws. */
  forCall(tool: string, server?: string, clientName?: string): CallRule {
    let resolved: ResolvedRule;
    try {
      resolved = resolveRule(this.loaded, toolTarget(tool, server, clientName), this.flags);
    } catch {
      // Not expected (the files were validated); the flags and defaults still hold.
      resolved = resolveRule(noRules(this.loaded.env), { names: [] }, this.flags);
    }
    const { provider, model, template, focusArg, limit } = resolved.values;
    // A default model is the provider's own choice (its variable, its default): left to it, as the flags did.
    const made = this.summarizerFor(provider, resolved.origins.model.source === 'default' ? undefined : model, template);
    return {
      limitTokens: limit,
      ...(made.summarize ? { summarize: made.summarize } : {}),
      ...(focusArg ? { focusArg } : {}),
      rule: spillRuleOf(resolved),
      resolved,
      ...(made.error ? { error: made.error } : {}),
    };
  }

  private summarizerFor(provider: string, model: string | undefined, template: string): { summarize?: SummarizeHook; error?: string } {
    if (provider === 'none' || provider === 'off') return {};
    const key = `${provider}\u0000${model ?? ''}\u0000${template}`;
    if (this.summarizers.has(key)) return { summarize: this.summarizers.get(key) };
    try {
      if (!isProviderName(provider)) throw new Error(`unknown summarizer ${JSON.stringify(provider)}`);
      // The template given only when it is not the default: the provider's own default applies then.
      const s = createSummarizer({ provider, model, ...(template !== DEFAULT_TEMPLATE ? { template } : {}), env: this.loaded.env });
      this.summarizers.set(key, s);
      return { summarize: s };
    } catch (err) {
      // The guard never throws on a tool result: a summarizer that cannot be made leaves the offline one.
      const fallback = createSummarizer({ provider: 'structural', env: this.loaded.env });
      this.summarizers.set(key, fallback);
      return { summarize: fallback, error: `summarizer ${provider} could not be made (${(err as Error).message}); the structural one is used` };
    }
  }
}

/** Every rule key the loaded files hold, the `*` last: the rows of `config show`. */
export function ruleKeysIn(loaded: LoadedRules): string[] {
  const keys = new Set<string>();
  for (const f of loaded.files) if (f.state === 'ok') for (const k of f.rules.keys()) keys.add(k);
  return [...keys].sort((a, b) => (a === ANY_TOOL ? 1 : b === ANY_TOOL ? -1 : a.localeCompare(b)));
}

export { matchOrder, ruleKeyTarget, rulesPaths, toolTarget, RULE_KEYS, type RuleKey, type ToolTarget };
export { PROJECT_RULES_FILE, MAX_RULE_LIMIT_TOKENS, RULE_SOURCES, type RuleSource, type RulesScope } from './match.js';
export type { Rule, RulesFileState } from './config.js';
