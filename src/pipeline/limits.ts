/**
 * Every limit the guard enforces, in one place, with its unit in the name.
 * Breaking one gives a {@link LimitError} so callers can tell "too big" from "broken".
 */

/** Default token limit above which a result is spilled. */
export const DEFAULT_LIMIT_TOKENS = 12_000;
/** Dollars per million input tokens when nobody names a price (a mid-range frontier model's input price): what "tokens kept out" is worth. */
export const DEFAULT_PRICE_PER_MTOK_USD = 3;
/** Lower bound of the limit derived from a context window. */
export const MIN_LIMIT_TOKENS = 2_000;
/** Share of the context window a single tool result may take. */
export const CONTEXT_WINDOW_SHARE = 0.1;

/** Summary call timeout. */
export const SUMMARY_TIMEOUT_MS = 60_000;
/** Largest payload slice handed to a summarizer in one prompt. */
export const MAX_SUMMARY_INPUT_TOKENS = 100_000;
/** Longest summary kept; longer answers are cut. */
export const MAX_SUMMARY_OUTPUT_TOKENS = 1_500;
/** Chars of preview shown to the model when there is no summary. */
export const PREVIEW_CHARS = 2_000;

/** Smallest base64 run (chars) that may be extracted as an asset. */
export const MIN_BASE64_ASSET_CHARS = 256;
/**
 * Shortest JSON string value (chars, decoded) that is cut out when it is binary (NULs, control
 * characters, U+FFFD runs: bytes decoded as text). Shorter ones are a field's own value (a NUL
 * separator, a control character named in a config) more often than a file.
 */
export const MIN_BINARY_STRING_CHARS = 32;
/**
 * Smallest asset (decoded bytes) cut out of a result that fits the limit: below it, base64 costs
 * about as many tokens as the reference that would replace it (~40). Above the limit every
 * asset the extractor finds is cut.
 */
export const MIN_INLINE_ASSET_BYTES = 256;
/** Chars of base64 that {@link MIN_INLINE_ASSET_BYTES} take (unpadded): the run a fitting result is scanned for. */
export const MIN_INLINE_ASSET_RUN_CHARS = Math.ceil((MIN_INLINE_ASSET_BYTES * 4) / 3);
/** Room kept in a message for its header and asset list when a text is shown in full after it (inline-assets). */
export const INLINE_HEADER_ROOM_CHARS = 3_000;

/** Hard cap on the message the model receives, whatever else happens. */
export const MAX_MESSAGE_CHARS = 16_000;

export class LimitError extends Error {
  constructor(
    readonly limitName: string,
    readonly limit: number,
    readonly actual: number,
  ) {
    super(`${limitName} exceeded: ${actual} > ${limit}`);
    this.name = 'LimitError';
  }
}

/** max(2,000, min(12,000, 10% of the window)); without a window, the default. */
export function limitForContextWindow(contextWindowTokens?: number, baseLimitTokens = DEFAULT_LIMIT_TOKENS): number {
  if (!contextWindowTokens || !Number.isFinite(contextWindowTokens) || contextWindowTokens <= 0) return baseLimitTokens;
  return Math.max(MIN_LIMIT_TOKENS, Math.min(baseLimitTokens, Math.floor(contextWindowTokens * CONTEXT_WINDOW_SHARE)));
}

/** Smallest base64 run (chars) extracted where the context declares binary (MCP block, data URL, MIME key). */
export const MIN_DECLARED_BASE64_ASSET_CHARS = 64;

/** Longest error text kept per entry in a message or a sidecar. */
export const MAX_ERROR_CHARS = 300;

/**
 * No tokenizer we know has a token longer than this many UTF-8 bytes, so a text of more than
 * limit × this bytes is over the limit whatever it holds (and if one did, the error would only
 * spill a result that fits: never the reverse).
 */
export const MAX_BYTES_PER_TOKEN_BOUND = 256;

/**
 * UTF-8 bytes per token beyond which an estimate is implausible (only long runs of one repeated
 * character get there). A text over this many times the limit in bytes is never counted exactly: it
 * is over the limit whatever the fit says, and counting it would cost more than a tool call should.
 */
export const MAX_PLAUSIBLE_BYTES_PER_TOKEN = 16;

/** Texts this long that are decisively over the limit are estimated from spread samples. */
export const SAMPLED_ESTIMATE_MIN_CHARS = 4 * 1024 * 1024;
/** Strings are hashed and written in slices of this many chars (no whole-payload UTF-8 copy). */
export const TEXT_SLICE_CHARS = 4 * 1024 * 1024;

/** Sequence numbers tried for one payload name before giving up (names are per millisecond, tool and input). */
export const MAX_NAME_ATTEMPTS = 1_000_000;
/** Fresh stems tried for a sidecar whose stem another writer took with another extension. */
export const MAX_SIDECAR_ATTEMPTS = 1_000;
/**
 * Deadline of one store call (writing a payload, an asset, a sidecar). Past it the call counts as
 * UNAVAILABLE and the guard turns to its fallback store, or says the result could not be saved.
 */
export const STORE_CALL_TIMEOUT_MS = 60_000;
/** Stem bases (one per millisecond, tool and input) whose next sequence number this process remembers. */
export const MAX_REMEMBERED_STEM_BASES = 4_096;

/** How long a sidecar update waits for another process's lock before giving up with an error. */
export const META_LOCK_TIMEOUT_MS = 15_000;
/** A sidecar lock older than this is from a crashed process and is broken. Updates take milliseconds. */
export const META_LOCK_STALE_MS = 30_000;
