import type { Profile } from '../types.js';
import { FEATURE_COUNT } from './features.js';
import { priceWith, sampleFeatures } from './sample.js';
import { WEIGHTS } from './constants.js';

// Reused by every call: the hot path allocates nothing per char and nothing per call.
const scratch = new Float64Array(FEATURE_COUNT);

/** Price a feature vector with a profile's fitted weights. */
export function priceFeatures(features: Float64Array, profile: Profile): number {
  const w = WEIGHTS[profile];
  if (!w) throw new TypeError(`unknown profile: ${String(profile)}`);
  return priceWith(features, w);
}

/** Round a priced estimate: never negative, never NaN, and at least 1 token for non-empty text. */
export function roundTokens(raw: number, textLength: number): number {
  if (textLength === 0) return 0;
  return raw > 1 ? Math.ceil(raw) : 1;
}

/**
 * Spillway's own estimate: one linear pass over the text (addRangeFeatures) priced with the weights
 * fitted per tokenizer family on the calibration corpus (scripts/calibrate.ts). Texts over
 * SAMPLE_MIN_CHARS are read through stratified windows until the sample is trustworthy (sample.ts).
 */
export function calibrated(text: string, profile: Profile): number {
  sampleFeatures(text, scratch, profile);
  return roundTokens(priceFeatures(scratch, profile), text.length);
}

/** Calibrated estimates for every profile from one pass. */
export function calibratedAll(text: string): Record<Profile, number> {
  sampleFeatures(text, scratch);
  return {
    o200k: roundTokens(priceFeatures(scratch, 'o200k'), text.length),
    cl100k: roundTokens(priceFeatures(scratch, 'cl100k'), text.length),
    claude: roundTokens(priceFeatures(scratch, 'claude'), text.length),
  };
}
