/**
 * The guarding verbs' flags as guard options, without commander: the CLI's verbs (options.ts adds
 * the flags to a command) and the hook's light entry (src/cli/hook-entry.ts, which must not
 * load the CLI) both build their settings here, so the two cannot drift.
 */
import type { GuardOptions, Profile, SummarizeHook } from '../pipeline/index.js';
import { createSummarizer, defaultProviderName, isProviderName, PROVIDER_NAMES, type ProviderName } from '../summarize/index.js';
import { NO_SUMMARIZER_NAMES, type GuardCliOptions } from './verb-input.js';

export type { GuardCliOptions } from './verb-input.js';

/** The guard options a verb's flags set, the same for every call it guards (the call adds its own: session, tool, input). */
export type GuardSettings = Pick<GuardOptions, 'limitTokens' | 'contextWindowTokens' | 'profile' | 'strategy' | 'store' | 'cutMediaBlocks' | 'summarize' | 'env'>;

/**
 * The verb's flags as guard options, built once: `--limit`, `--context-window`, `--profile` (else
 * `defaultProfile`), `--strategy`, `--store`, `--cut-media` and the summarizer. Every guarding verb
 * hands exactly this to the guard, so a flag cannot reach one path and miss another.
 */
export function guardSettingsOf(o: GuardCliOptions, defaultProfile: Profile = 'o200k'): GuardSettings {
  return {
    limitTokens: o.limit,
    contextWindowTokens: o.contextWindow,
    profile: o.profile ?? defaultProfile,
    ...(o.strategy ? { strategy: o.strategy } : {}),
    ...(o.store ? { store: o.store } : {}),
    ...(o.cutMedia ? { cutMediaBlocks: true } : {}),
    summarize: loadSummarizer(o),
    // The verbs run at the edge: their environment (SPILLWAY_STORE, the S3 settings) goes down as a value.
    env: process.env,
  };
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
  if ((NO_SUMMARIZER_NAMES as readonly string[]).includes(name)) return undefined;
  if (!isProviderName(name)) throw new Error(`unknown summarizer ${JSON.stringify(name)}: use ${PROVIDER_NAMES.join(', ')} or none`);
  return createSummarizer({ provider: name, model: o.model, template: o.template, env: process.env });
}
