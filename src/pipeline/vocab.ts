/**
 * The words every layer and the renderer share, one list each. The types derive from the lists, so a
 * new strategy or kind is written here once: the validator, the importer, the CLI's fast path and the
 * inspector's menus take the list, and the compiler names each exhaustive switch that misses it.
 * A leaf that imports nothing, so the renderer and the hook's fast path may take its values.
 */

/** Named estimation strategies. `o200k`, `cl100k`, `claude` are exact tokenizer counts. */
export const STRATEGY_NAMES = ['chars4', 'craft-density', 'calibrated', 'o200k', 'cl100k', 'claude'] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

/** Tokenizer families a limit is measured with (the guard's `profile`). */
export const PROFILES = ['o200k', 'cl100k', 'claude'] as const;
export type Profile = (typeof PROFILES)[number];

/** Summary providers (`--summarizer`, `--provider`, a rule's `provider`): the summarize layer's list, here so the hook's light entry can check a flag without loading it. */
export const PROVIDER_NAMES = ['structural', 'anthropic', 'openai', 'local'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** What a payload's content is, as detected (the inspector filters on it). */
export const CONTENT_KINDS = ['json', 'ndjson', 'csv', 'log', 'html', 'xml', 'markdown', 'code', 'text', 'binary'] as const;
export type ContentKind = (typeof CONTENT_KINDS)[number];
