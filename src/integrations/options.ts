import type { Command } from 'commander';
import type { SummarizeHook } from '../pipeline/index.js';
import { createSummarizer, type ProviderName } from '../summarize/index.js';

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

function positiveInt(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive whole number of tokens, got ${JSON.stringify(v)}`);
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

/**
 * The summarizer the options ask for. Default: the offline structural summarizer (no network, no key);
 * `none` gives the guard's preview instead.
 */
export function loadSummarizer(o: GuardCliOptions): SummarizeHook | undefined {
  const provider = o.summarizer ?? o.provider ?? 'structural';
  if (provider === 'none' || provider === 'off') return undefined;
  return createSummarizer({ provider: provider as ProviderName, model: o.model, template: o.template });
}
