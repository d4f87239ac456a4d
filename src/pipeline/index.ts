/**
 * The pipeline's door for the layers above it (the CLI, the integrations, the service, the index,
 * summarize, compress) and for the tests: every name is listed, so what the guard exposes is a
 * choice, and a module renamed inside src/pipeline changes this file, not its users. It is not the
 * npm package's API: src/index.ts picks that (a smaller list, held by test/api-report.test.ts).
 * Add a name here when another layer needs it; a name nobody outside src/pipeline imports stays inside.
 */
export {
  PROFILES,
  type AssetRef,
  type DrillDownToolNames,
  type Estimate,
  type GuardOptions,
  type GuardResult,
  type PayloadMeta,
  type Profile,
  type ReadMoreTools,
  type StrategyName,
  type SummarizeHook,
  type Summarizer,
  type SummaryRun,
  type ToolCallRef,
  type ToolResult,
} from './types.js';
export {
  DEFAULT_LIMIT_TOKENS,
  DEFAULT_PRICE_PER_MTOK_USD,
  MAX_MESSAGE_CHARS,
  MAX_SUMMARY_OUTPUT_TOKENS,
  MIN_BASE64_ASSET_CHARS,
  MIN_INLINE_ASSET_BYTES,
  MIN_INLINE_ASSET_RUN_CHARS,
  PREVIEW_CHARS,
  limitForContextWindow,
} from './limits.js';
export {
  ASSETS_DIR,
  LINKED_SUFFIX,
  LONG_RESPONSES_DIR,
  META_SUFFIX,
  PathEscapeError,
  UntrustedFileError,
  classifyLongResponseFile,
  confine,
  isInside,
  makeStem,
  openUntrusted,
  openUntrustedSync,
  parseStem,
  readUntrusted,
  sanitizeToolName,
  sessionPaths,
  stemTime,
  type OpenedUntrusted,
  type UntrustedFileErrorCode,
} from './layout.js';
export { appPaths } from './config.js';
export {
  estimateTokens,
  estimateForDecision,
  countTokens,
  describeTokens,
  type TokenReport,
} from './estimate/index.js';
export { ALL_STRATEGIES, DEFAULT_PROFILE, DEFAULT_STRATEGY, claudeCorrectionFromEnv } from './estimate/options.js';
export { guardLargeResult, handleLargeResponse, resolveLimit, type HandleLargeResponseArgs } from './guard.js';
export { normalizeGuardOptions, type NormalizedGuardOptions, type GuardOptionsInput } from './options.js';
export { safeStringify, jsonBytesUpperBound } from './serialize.js';
export { mayCarryInlineAssets } from './decide.js';
export { restorePayload, restoreToFile, restoreFromStore, readMeta, appendSummaryRun, metaPathFor, RestoreError } from './restore.js';
export { buildPreview } from './preview.js';
export { CANONICAL_DRILL_DOWN_NAMES, profileOfMessage, readMoreAdvice } from './message.js';
export { detectContent, detectTextKind, detectTextFormat, unwrapText, isBinaryBytes, isBinaryString, sniffBinary } from './detect.js';
export { extractAssets } from './extract.js';
export { parseBase64, encodeSpan } from './base64.js';
export { writeFileAtomic, saveAsset, LocalSpillStore } from './store/local.js';
export {
  SpillStoreError,
  type SpillStore,
  type SpillReader,
  type SpillKey,
  type SpillBody,
  type StoreCallOptions,
  type NameCandidate,
} from './store/seam.js';
export { nameCandidates } from './store/publish.js';
export { spillStream, type StreamedSpill, type StreamedSpillAbout, type StreamedSpillResult } from './store/stream.js';
export { buildSummaryPrompt, fenceFor } from './prompt.js';
export { fitSummaryInput } from './summary.js';
export { truncate, safeCut, fmtBytes } from './text.js';
export { pruneLocalSession, parseDuration, type PruneReport } from './prune.js';
