import { InvalidArgumentError, type Command } from 'commander';
import { ALL_STRATEGIES, guardLargeResult, PROFILES, type GuardOptions, type GuardResult, type Profile, type StrategyName, type SummarizeHook, type ToolResult } from '../pipeline/index.js';
import { createSummarizer, defaultProviderName, isProviderName, PROVIDER_NAMES, type ProviderName } from '../summarize/index.js';

/** Options shared by `spillway mcp` and `spillway hook`. */
export interface GuardCliOptions {
  session?: string;
  limit?: number;
  contextWindow?: number;
  summarizer?: string;
  provider?: string;
  model?: string;
  template?: string;
  focusArg?: string;
  profile?: Profile;
  strategy?: StrategyName;
  store?: string;
  cutMedia?: boolean;
}

/**
 * A commander parser for whole numbers > 0. It throws commander's InvalidArgumentError, so a bad
 * value is a usage error (message, exit 2) in every verb.
 */
export function positiveInt(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError(`${flag} must be a positive whole number, got ${JSON.stringify(v)}.`);
    return n;
  };
}

/** A commander parser that accepts only `allowed` values (a usage error otherwise). */
export function oneOf<T extends string>(flag: string, allowed: readonly T[]) {
  return (v: string): T => {
    if (!(allowed as readonly string[]).includes(v)) throw new InvalidArgumentError(`${flag} must be one of ${allowed.join(', ')}.`);
    return v as T;
  };
}

/**
 * The options every guarding verb (`guard`, `mcp`, `hook`) takes: the limit, how it is measured, and
 * what writes the summary. `defaultProfile` is the verb's (the hook for Claude Code measures with
 * Claude's tokenizer; the others do not know their client's model).
 */
export function addLimitOptions(cmd: Command, defaultProfile: Profile = 'o200k'): Command {
  return cmd
    .option('--store <url>', 'where spills go: s3://bucket/prefix (default $SPILLWAY_STORE, else the session folder); falls back to the session folder when the bucket is down')
    .option('--limit <tokens>', 'token limit above which a result is spilled (default 12000)', positiveInt('--limit'))
    .option('--context-window <tokens>', "the model's context window; the limit becomes 10% of it, between 2000 and 12000", positiveInt('--context-window'))
    .option('--profile <profile>', `tokenizer family the limit is measured with: ${PROFILES.join(', ')} (default ${defaultProfile})`, oneOf('--profile', PROFILES))
    .option('--strategy <name>', `estimation strategy: ${ALL_STRATEGIES.join(', ')} (default calibrated, counted exactly near the limit)`, oneOf('--strategy', ALL_STRATEGIES))
    .option('--summarizer <provider>', 'summarize spilled results with: structural, anthropic, openai, or none (a preview); default $SPILLWAY_SUMMARIZER or structural')
    .option('--provider <provider>', 'same as --summarizer')
    .option('--model <model>', "the summarizer's model")
    .option('--template <name>', 'summary prompt template name');
}

/** {@link addLimitOptions} for the verbs that guard an agent's stream of results (`mcp`, `hook`). */
export function addGuardOptions(cmd: Command, defaultProfile: Profile = 'o200k'): Command {
  return addLimitOptions(cmd.option('--session <dir>', 'session folder for spilled payloads'), defaultProfile)
    .option('--focus-arg <name>', "a tool argument that carries the caller's focus (intent)");
}

/** The guard with the verb's `--profile` (else `defaultProfile`), `--strategy`, `--store` and `--cut-media` applied to every call. */
export function guardWith(o: Pick<GuardCliOptions, 'profile' | 'strategy' | 'store' | 'cutMedia'>, defaultProfile: Profile = 'o200k') {
  const profile = o.profile ?? defaultProfile;
  return (result: ToolResult, options: GuardOptions): Promise<GuardResult | null> =>
    guardLargeResult(result, {
      env: process.env,
      ...options,
      profile,
      ...(o.strategy ? { strategy: o.strategy } : {}),
      ...(o.store ? { store: o.store } : {}),
      ...(o.cutMedia ? { cutMediaBlocks: true } : {}),
    });
}

/** The default provider: SPILLWAY_SUMMARIZER, else the offline structural one (the library's too: src/summarize/default.ts). */
export function defaultProvider(env: NodeJS.ProcessEnv = process.env): ProviderName {
  return defaultProviderName(env);
}

/**
 * The summarizer the flags ask for (`--summarizer`/`--provider`, `--model`, `--template`), shared by
 * `guard`, `mcp` and `hook`. Default: `defaultProvider()`; `none` gives the guard's preview instead.
 */
export function loadSummarizer(o: Pick<GuardCliOptions, 'summarizer' | 'provider' | 'model' | 'template'>): SummarizeHook | undefined {
  const name = o.summarizer ?? o.provider ?? defaultProvider();
  if (name === 'none' || name === 'off') return undefined;
  if (!isProviderName(name)) throw new Error(`unknown summarizer ${JSON.stringify(name)}: use ${PROVIDER_NAMES.join(', ')} or none`);
  return createSummarizer({ provider: name, model: o.model, template: o.template, env: process.env });
}
