/**
 * The estimator's internals in one place, for its tests, benches and calibration scripts only: the
 * layering test (test/architecture.test.ts, ROOMS) lets test/, bench/ and scripts/ import this and
 * nothing else past the two doors, index.ts (the verbs) and options.ts (the words). No module in
 * src/ outside this folder imports it, and the package root never re-exports it.
 */
export {
  estimateTokens,
  estimateForDecision,
  countTokens,
  countTokensAnthropicApi,
  describeTokens,
  type CheapOptions,
  type DecisionOptions,
  type CountOptions,
  type DescribeOptions,
  type TokenReport,
  type EstimateOptions,
} from './index.js';
export {
  ALL_STRATEGIES,
  CHEAP_STRATEGIES,
  CLAUDE_CORRECTION_ENV,
  DEFAULT_PROFILE,
  DEFAULT_STRATEGY,
  EXACT_STRATEGIES,
  claudeCorrectionFor,
  claudeCorrectionFromEnv,
  isProfile,
  parseClaudeCorrection,
  type CheapStrategy,
} from './options.js';
export { MAX_PLAUSIBLE_BYTES_PER_TOKEN } from '../limits.js';
export { chars4, craftDensity } from './baselines.js';
export { calibrated, calibratedAll, priceFeatures } from './calibrated.js';
export { cheapCount } from './cheap.js';
export { COMMON_HAN, EXACT_MARGIN, KNOWN_WORDS, MEASURED_ERROR, RARE_BIGRAMS, WEIGHTS } from './constants.js';
export { headroomTokens, isNearLimit, QUICK_CHECK_MIN_CHARS, DECIDE_CHUNK_CHARS, RATIO_MIN_RISK } from './decision.js';
export { HEADROOM, HEADROOM_FIT } from './headroom.js';
export { countExact, countExactDetailed, EXACT_CHUNK_CHARS, hasLongRun, isTokenizerLoaded, loadTokenizer, nextCut, PATHOLOGICAL_RUN_CHARS, PIECE_CHARS } from './exact.js';
export {
  FEATURE_COUNT,
  FEATURE_NAMES,
  HAN_FIRST,
  HAN_LAST,
  KNOWN_WORDS_BITS,
  WORD_HASH_SEED,
  addRangeFeatures,
  countPieceCuts,
  holdUnits,
  knownWordProbes,
  releaseUnits,
  scanFeatures,
  setCommonHan,
  setKnownWords,
  setRareBigrams,
  wordHashStep,
} from './features.js';
export { CHECK_EXACT_MAX_CHARS, countsOf } from './report.js';
export { riskBreakdown, riskTokens, type RiskPart } from './risk.js';
export { BOUNDED_SAMPLE_MAX_CHARS, boundedSample, quickSample, SAMPLE_MIN_CHARS, sampleFeatures, windowIn } from './sample.js';
export { PROFILES, type Profile } from '../types.js';
