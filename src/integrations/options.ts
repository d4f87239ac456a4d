import { InvalidArgumentError, type Command } from 'commander';
import { ALL_STRATEGIES, guardLargeResult, PROFILES, type GuardOptions, type GuardResult, type Profile, type ToolResult } from '../pipeline/index.js';
import type { GuardSettings } from './settings.js';

export { defaultProvider, guardSettingsOf, loadSummarizer, type GuardCliOptions, type GuardSettings } from './settings.js';

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
    .option('--summarizer <provider>', 'summarize spilled results with: structural, anthropic, openai, local (an OpenAI-compatible server at $SPILLWAY_LOCAL_BASE_URL, by default Ollama at 127.0.0.1:11434), or none (a preview); default $SPILLWAY_SUMMARIZER or structural')
    .option('--provider <provider>', 'same as --summarizer')
    .option('--model <model>', "the summarizer's model")
    .option('--template <name>', 'summary prompt template name')
    .option('--cut-media', 'also cut MCP image/audio blocks out of results that fit the limit (for clients that show the model media as text)');
}

/** {@link addLimitOptions} for the verbs that guard an agent's stream of results (`mcp`, `hook`). */
export function addGuardOptions(cmd: Command, defaultProfile: Profile = 'o200k'): Command {
  return addLimitOptions(cmd.option('--session <dir>', 'session folder for spilled payloads'), defaultProfile)
    .option('--focus-arg <name>', "a tool argument that carries the caller's focus (intent)");
}

/** The guard with `settings` applied to every call (for the MCP proxy, whose calls add session, tool and input). */
export function guardWith(settings: GuardSettings) {
  return (result: ToolResult, options: GuardOptions): Promise<GuardResult | null> => guardLargeResult(result, { ...options, ...settings });
}

