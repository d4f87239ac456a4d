/** Types of the summarize layer. `ProviderInfo` / `TemplateInfo` are shared with the contract through src/pipeline/types.ts. */
import type { ProviderInfo, TemplateInfo } from '../pipeline/types.js';

export type { ProviderInfo, TemplateInfo };

// The provider names are shared words (pipeline/vocab.ts): the hook's light entry checks `--summarizer` against them.
import type { ProviderName } from '../pipeline/vocab.js';
export { PROVIDER_NAMES, type ProviderName } from '../pipeline/vocab.js';



/** Dollars per million tokens. */
export interface Pricing {
  inputPerMTok: number;
  outputPerMTok: number;
  /** A higher rate for a request whose prompt is over `overTokens` (Claude Haiku 5.5 bills those at 5×). Per request, not per run. */
  longPrompt?: { overTokens: number; inputPerMTok: number; outputPerMTok: number };
}

export interface SummarizerOptions {
  provider: ProviderName;
  /** Model id; default per provider (see DEFAULT_MODELS) or SPILLWAY_ANTHROPIC_MODEL / SPILLWAY_OPENAI_MODEL. */
  model?: string;
  /** Template name used when the request names none (default `default`). */
  template?: string;
  /** Folder of user templates (`<name>.md`); default appPaths().templates. */
  templatesDir?: string;
  baseURL?: string;
  apiKey?: string;
  /** Whole summary, every retry and chunk included (default SUMMARY_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Retries after the first attempt (default PROVIDER_MAX_RETRIES). */
  maxRetries?: number;
  /** Cap on the summary (default MAX_SUMMARY_OUTPUT_TOKENS); a request's own cap wins when smaller. */
  maxOutputTokens?: number;
  /** The model's input window for one call; larger payloads are chunked (default MAX_SUMMARY_INPUT_TOKENS). */
  maxInputTokens?: number;
  /** Dollars per million tokens; default from the built-in table when the model is known. */
  pricing?: Pricing;
  /** Stream the reply (default true): a runaway reply is cut as soon as it passes the cap. */
  stream?: boolean;
  /** Where keys, base URLs and the deadline come from, passed down by the edge that read them (default: none). */
  env?: NodeJS.ProcessEnv;
}
