/**
 * The estimator's internals in one place, for its tests, benches and calibration scripts only.
 * Nothing outside src/pipeline/estimate, test/, bench/ and scripts/ imports this (the public face is
 * index.ts), and the package root never re-exports it.
 */
export * from './index.js';
export { chars4, craftDensity } from './baselines.js';
export { calibrated, calibratedAll, priceFeatures } from './calibrated.js';
export { cheapCount } from './cheap.js';
export { EXACT_MARGIN, MEASURED_ERROR } from './constants.js';
export { headroomTokens, isNearLimit, QUICK_CHECK_MIN_CHARS, DECIDE_CHUNK_CHARS, RATIO_MIN_RISK } from './decision.js';
export { HEADROOM, HEADROOM_FIT } from './headroom.js';
export { countExact, countExactDetailed, EXACT_CHUNK_CHARS, hasLongRun, isTokenizerLoaded, loadTokenizer, nextCut, PATHOLOGICAL_RUN_CHARS, PIECE_CHARS } from './exact.js';
export { FEATURE_COUNT, FEATURE_NAMES, scanFeatures, addRangeFeatures } from './features.js';
export { claudeCorrectionFor, isProfile } from './options.js';
export { CHECK_EXACT_MAX_CHARS, countsOf } from './report.js';
export { riskBreakdown, riskTokens } from './risk.js';
export { BOUNDED_SAMPLE_MAX_CHARS, boundedSample, quickSample, SAMPLE_MIN_CHARS, sampleFeatures } from './sample.js';
export { PROFILES, type Profile } from '../types.js';
