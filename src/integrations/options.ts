import { InvalidArgumentError, type Command } from 'commander';
import type { SummarizeHook } from '../pipeline/index.js';
import { createSummarizer, isProviderName, PROVIDER_NAMES, type ProviderName } from '../summarize/index.js';

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

export function addGuardOptions(cmd: Command): Command {
  return cmd
    .option('--session <dir>', 'session folder for spilled payloads')
    .option('--limit <tokens>', 'token limit above which a result is spilled (default 12000)', positiveInt('--limit'))
    .option('--context-window <tokens>', "the model's context window; the limit becomes 10% of it, between 2000 and 12000", positiveInt('--context-window'))
    .option('--summarizer <provider>', 'summarize spilled payloads with: structural (offline, the default), anthropic, openai, or none')
    .option('--provider <provider>', 'same as --summarizer')
    .option('--model <model>', "the summarizer's model")
    .option('--template <name>', 'summary prompt template name')
    .option('--focus-arg <name>', 'a tool argument that carries the caller\'s focus (intent)');
}

/** The default provider: SPILLWAY_SUMMARIZER, else the offline structural one. */
export function defaultProvider(env: NodeJS.ProcessEnv = process.env): ProviderName {
  const p = env.SPILLWAY_SUMMARIZER;
  return isProviderName(p) ? p : 'structural';
}

/**
 * The summarizer the flags ask for (`--summarizer`/`--provider`, `--model`, `--template`), shared by
 * `guard`, `mcp` and `hook`. Default: `defaultProvider()`; `none` gives the guard's preview instead.
 */
export function loadSummarizer(o: Pick<GuardCliOptions, 'summarizer' | 'provider' | 'model' | 'template'>): SummarizeHook | undefined {
  const name = o.summarizer ?? o.provider ?? defaultProvider();
  if (name === 'none' || name === 'off') return undefined;
  if (!isProviderName(name)) throw new Error(`unknown summarizer ${JSON.stringify(name)}: use ${PROVIDER_NAMES.join(', ')} or none`);
  return createSummarizer({ provider: name, model: o.model, template: o.template });
}
