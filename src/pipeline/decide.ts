import type { Estimate, PayloadMeta, Profile, StrategyName } from './types.js';
import { MAX_BYTES_PER_TOKEN_BOUND, SAMPLED_ESTIMATE_MIN_CHARS, SAMPLED_ESTIMATE_SAMPLE_CHARS, SAMPLED_ESTIMATE_SAMPLES } from './limits.js';
import {
  CHEAP_STRATEGIES,
  DEFAULT_STRATEGY,
  estimateBounded,
  estimateForDecision,
  estimateTokens,
  MAX_PLAUSIBLE_BYTES_PER_TOKEN,
} from './estimate/index.js';
import type { Subject } from './normalize.js';
import { errText } from './errors.js';
import { jsonBytesUpperBound, serializeValue } from './serialize.js';
import { safeCut } from './text.js';

/**
 * The guard's decision: pass a result, or spill it, and everything the later phases need to know
 * about how it was measured. The guard's only calls into the estimator are here.
 *
 * | call | for |
 * | --- | --- |
 * | {@link decide} | null (pass) or the {@link Spill} of one subject |
 * | {@link measure} | the estimate of a text the guard spills whatever it measures (handleLargeResponse) |
 * | {@link measureInline} | the estimate of the text left once the assets are cut out (inline it, or not) |
 * | {@link strategyCounts} | every cheap strategy's count for the sidecar, reusing what the decision measured |
 */

export interface DecideContext {
  limit: number;
  profile: Profile;
  strategy: StrategyName;
}

/** Cheap strategies' counts of a huge text, made from samples. */
export type SampledCounts = Record<(typeof CHEAP_STRATEGIES)[number], number>;

/** A result to spill, as measured. */
export interface Spill {
  /** The text measured: the string, the bytes decoded, or the JSON of a parsed value. Absent for binary bytes. */
  text?: string;
  /** UTF-8 bytes of `text`, when they were counted. */
  textBytes?: number;
  estimate: Estimate;
  /** Set when the estimate was made from samples: the counts of every cheap strategy. */
  sampled?: SampledCounts;
}

/**
 * Cheap strategies' counts for a huge text, at a bounded cost: craft-density from evenly spread samples,
 * scaled to the whole text; calibrated from its own stratified windows (estimate/sample.ts).
 */
function sampledCounts(text: string, profile: Profile): SampledCounts {
  const step = Math.floor(text.length / SAMPLED_ESTIMATE_SAMPLES);
  let sample = '';
  for (let k = 0; k < SAMPLED_ESTIMATE_SAMPLES; k++) {
    const a = safeCut(text, k * step);
    sample += text.slice(a, safeCut(text, Math.min(text.length, a + SAMPLED_ESTIMATE_SAMPLE_CHARS)));
  }
  const scale = text.length / Math.max(1, sample.length);
  return {
    chars4: Math.ceil(text.length / 4),
    'craft-density': Math.ceil(estimateTokens(sample, { profile, strategy: 'craft-density' }).tokens * scale),
    calibrated: estimateBounded(text, { profile }).tokens,
  };
}

/** What bytes would cost as base64 at base64's density (~1.5 chars/token). */
function binaryEstimate(byteLength: number, ctx: DecideContext): Estimate {
  return { tokens: Math.ceil((Math.ceil(byteLength / 3) * 4) / 1.5), strategy: ctx.strategy, profile: ctx.profile, exact: false };
}

/** The estimate of a text, never below what its bytes make plausible. `textBytes` is counted when not given. */
export async function measure(text: string, ctx: DecideContext, notes: string[], textBytes = Buffer.byteLength(text, 'utf8')): Promise<Spill> {
  const { limit, profile, strategy } = ctx;
  if (text.length >= SAMPLED_ESTIMATE_MIN_CHARS && textBytes > limit * MAX_BYTES_PER_TOKEN_BOUND) {
    // Decisively over the limit: a full pass would only refine a number nobody decides with.
    const counts = sampledCounts(text, profile);
    return { text, textBytes, estimate: { tokens: counts.calibrated, strategy: 'calibrated', profile, exact: false }, sampled: counts };
  }
  let est: Estimate;
  try {
    // Exact counts near the limit stay linear even for an unbroken 200 KB run (counted in pieces),
    // and content the fit never saw widens the band that is counted (estimate/risk.ts).
    est = await estimateForDecision(text, limit, { profile, strategy, utf8Bytes: textBytes, notes });
  } catch (err) {
    notes.push(`estimate with ${strategy} failed (${errText(err)}); used ${DEFAULT_STRATEGY}`);
    est = estimateTokens(text, { profile, strategy: DEFAULT_STRATEGY });
  }
  // Defence in depth: a faulty estimator must not wave an oversized result through.
  const floor = Math.ceil(textBytes / MAX_PLAUSIBLE_BYTES_PER_TOKEN);
  if (!est.exact && !(est.tokens >= floor)) {
    notes.push(`the ${est.strategy} estimate (${est.tokens}) was below the plausible minimum; ${floor} tokens used`);
    est = { ...est, tokens: floor };
  }
  return { text, textBytes, estimate: est };
}

/** The estimate of a linked text (assets cut out), with the decision's strategy; never throws. */
export async function measureInline(text: string, ctx: DecideContext, strategy: StrategyName): Promise<Estimate> {
  try {
    return await estimateForDecision(text, ctx.limit, { profile: ctx.profile, strategy });
  } catch {
    return estimateTokens(text, { profile: ctx.profile });
  }
}

/** Tokens never exceed UTF-8 bytes (byte-level BPE), and bytes ≤ 3 × UTF-16 units: a text this small fits. */
function fitsByLength(text: string, limit: number): { fits: boolean; textBytes?: number } {
  if (text.length * 3 <= limit) return { fits: true };
  const textBytes = Buffer.byteLength(text, 'utf8');
  return { fits: textBytes <= limit, textBytes };
}

async function decideText(text: string, ctx: DecideContext, notes: string[]): Promise<Spill | null> {
  const quick = fitsByLength(text, ctx.limit);
  if (quick.fits) return null;
  const spill = await measure(text, ctx, notes, quick.textBytes);
  return spill.estimate.tokens > ctx.limit ? spill : null;
}

/** Pass (null) or spill one subject. */
export async function decide(subject: Subject, ctx: DecideContext): Promise<Spill | null> {
  switch (subject.origin) {
    case 'string':
      return decideText(subject.text, ctx, subject.notes);
    case 'bytes': {
      const b = subject.bytes;
      if (b.byteLength <= ctx.limit) return null;
      if (subject.binary) return { estimate: binaryEstimate(b.byteLength, ctx) };
      const text = b.toString('utf8');
      const spill = await measure(text, ctx, subject.notes);
      return spill.estimate.tokens > ctx.limit ? spill : null;
    }
    case 'json-value': {
      try {
        if (jsonBytesUpperBound(subject.value, ctx.limit) <= ctx.limit) return null;
      } catch {
        /* a getter threw: serializing decides */
      }
      const { text, note } = serializeValue(subject.value);
      if (note) subject.notes.push(note);
      return decideText(text, ctx, subject.notes);
    }
  }
}

/** Every cheap strategy's count of a spilled text, for the inspector; the decision's own number reused. */
export function strategyCounts(text: string | undefined, spill: Spill, profile: Profile): PayloadMeta['estimates'] {
  const { estimate } = spill;
  const counts: PayloadMeta['estimates'] = {};
  if (text !== undefined && spill.sampled) Object.assign(counts, spill.sampled);
  else if (text !== undefined) {
    for (const s of CHEAP_STRATEGIES) {
      try {
        counts[s] = s === estimate.strategy ? estimate.tokens : estimateTokens(text, { strategy: s, profile }).tokens;
      } catch {
        /* optional */
      }
    }
  }
  if (estimate.exact || !(estimate.strategy in counts)) counts[estimate.strategy] = estimate.tokens;
  return counts;
}
