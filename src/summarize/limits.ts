/**
 * Limits of the summarize layer, with their unit in the name. The guard-wide ones
 * (SUMMARY_TIMEOUT_MS, MAX_SUMMARY_INPUT_TOKENS, MAX_SUMMARY_OUTPUT_TOKENS) live in src/pipeline/limits.ts.
 */

/** Chars of a structural summary per output token: conservative, so the token budget holds for dense text. */
export const STRUCTURAL_CHARS_PER_TOKEN = 3;
/** Distinct values tracked per JSON path / CSV column before we only say "at least N". */
export const MAX_DISTINCT_TRACKED = 1_000;
/** Longest value (chars) tracked for distinct counts; longer strings only count towards length stats. */
export const MAX_DISTINCT_VALUE_CHARS = 200;
/** JSON paths tracked; further paths are folded into "other". */
export const MAX_SCHEMA_PATHS = 2_000;
/** Focus terms used (the rest of a long question is ignored). */
export const MAX_FOCUS_TERMS = 8;
/** A focus term that matches at least this share of the lines (or values) is too common to rank by, and is left out. */
export const WEAK_TERM_SHARE = 0.9;
/** Fewer lines (or values) than this are too few to call a focus term too common. */
export const MIN_ITEMS_TO_JUDGE_TERMS = 20;
/** Lines kept per focus-term combination while streaming through a payload. */
export const FOCUS_LINES_PER_BUCKET = 40;
/** Longest single line (chars) quoted verbatim; longer ones are cut around the interesting part. */
export const MAX_QUOTED_LINE_CHARS = 400;
/** Error/warning message templates tracked in a log. */
export const MAX_LOG_TEMPLATES = 5_000;
/** Sentences ranked for prose; beyond this only the focus and the opening are considered. */
export const MAX_RANKED_SENTENCES = 200_000;

/** Retries after the first attempt (429, 5xx, connection errors). */
export const PROVIDER_MAX_RETRIES = 2;
/** First backoff step; doubles each retry, with jitter. */
export const PROVIDER_BACKOFF_BASE_MS = 500;
/** Longest single backoff, whatever `retry-after` says (a longer one gives up instead). */
export const PROVIDER_MAX_BACKOFF_MS = 20_000;
/** Bytes read from a provider's HTTP reply before it is cut: a runaway server cannot flood memory. */
export const MAX_PROVIDER_RESPONSE_BYTES = 2 * 1024 * 1024;
/** Chunks summarized when a payload is larger than the model's window (map-reduce); the rest are skipped and said so. */
export const MAX_SUMMARY_CHUNKS = 8;
/** Chunks summarized at the same time. */
export const SUMMARY_CHUNK_CONCURRENCY = 2;
/** Longest template body (chars). */
export const MAX_TEMPLATE_CHARS = 64 * 1024;
