export * from './types.js';
export * from './limits.js';
export * from './layout.js';
export * from './config.js';
export {
  estimateTokens,
  estimateForDecision,
  countTokens,
  describeTokens,
  ALL_STRATEGIES,
  DEFAULT_PROFILE,
  DEFAULT_STRATEGY,
  type CheapOptions,
  type DecisionOptions,
  type CountOptions,
  type DescribeOptions,
  type TokenReport,
  type EstimateOptions,
} from './estimate/index.js';
export { guardLargeResult, handleLargeResponse, resolveLimit, type HandleLargeResponseArgs } from './guard.js';
export { safeStringify, jsonBytesUpperBound } from './serialize.js';
export { mayCarryInlineAssets } from './decide.js';
export { describeBinary } from './media.js';
export { restorePayload, restoreToFile, restoreFromStore, readMeta, appendSummaryRun, metaPathFor, RestoreError } from './restore.js';
export { buildPreview, maskBase64 } from './preview.js';
export {
  detectContent,
  detectTextKind,
  detectTextFormat,
  unwrapText,
  isBinaryBytes,
  isBinaryString,
  sniffBinary,
  splitCsvLine,
  detectDelimiter,
  TIMESTAMP_RE,
  LEVEL_RE,
  KIND_INFO,
  type BinaryCheckOptions,
  type ContentDetection,
  type TextFormat,
  type TextWrapper,
} from './detect.js';
export { extractAssets, type FoundAsset, type ExtractOptions, type ExtractResult } from './extract.js';
export { parseBase64, encodeBase64, encodeSpan } from './base64.js';
export { writeFileAtomic, saveAsset, LocalSpillStore, type WriteOptions } from './store/local.js';
export {
  SpillStoreError,
  isStoreError,
  type SpillStore,
  type SpillReader,
  type SpillKey,
  type SpillBody,
  type StoreCallOptions,
  type NameCandidate,
  type SpillStoreErrorCode,
} from './store/seam.js';
export { nameCandidates, commitSpill, withDeadline, type StemParts, type Commit } from './store/publish.js';
export { buildSummaryPrompt, fenceFor, DEFAULT_SUMMARY_INSTRUCTIONS, type SummaryPromptParts } from './prompt.js';
export { runSummary, fitSummaryInput, isSummarizer, type SummaryJob } from './summary.js';
export { buildMessage, type MessageParts } from './message.js';
export { truncate, safeCut, fmtBytes } from './text.js';
export { pruneLocalSession, parseDuration, type PruneReport, type PruneOptions } from './prune.js';
