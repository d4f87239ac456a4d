import { isUtf8 } from 'node:buffer';
import type { Estimate, PayloadMeta, Profile, StrategyName } from './types.js';
import { MAX_BYTES_PER_TOKEN_BOUND, MAX_PLAUSIBLE_BYTES_PER_TOKEN, MIN_INLINE_ASSET_BYTES, MIN_INLINE_ASSET_RUN_CHARS, SAMPLED_ESTIMATE_MIN_CHARS } from './limits.js';
import { describeTokens, estimateForDecision, estimateTokens, type TokenReport } from './estimate/index.js';
import { CHEAP_STRATEGIES, DEFAULT_STRATEGY } from './estimate/options.js';
import type { Subject } from './normalize.js';
import { errText } from './errors.js';
import { jsonShape, serializeValue } from './serialize.js';
import { extractAssets, type ExtractResult, type FoundAsset } from './extract.js';
import { hasBase64Run, hasBase64RunBytes } from './base64.js';
import { mayHoldBinaryString } from './detect.js';

/**
 * The guard's decision: pass a result, or spill it, and everything the later phases need to know
 * about how it was measured. The guard's only calls into the estimator are here.
 *
 * | call | for |
 * | --- | --- |
 * | {@link passesAtOnce} | the common case without a promise: fits by size and holds no base64-like run |
 * | {@link decide} | null (pass) or the {@link Spill} of one subject: too large, binary, or fitting but carrying base64 |
 * | {@link inlineCuts} | which assets are cut out of a result that fits the limit |
 * | {@link mayCarryInlineAssets} | a caller's fast path (the MCP proxy, the hook): may raw text or bytes under the limit still hold base64 to cut? |
 * | {@link measure} | the estimate of one text: from samples when huge and decisively over, never below what its bytes make plausible |
 * | {@link measureInline} | the estimate of the text left once the assets are cut out (inline it, or not) |
 * | {@link strategyCounts} | every cheap strategy's count for the sidecar, reusing what the decision measured |
 *
 * What a measurement had to say (a fallback estimator, a floor applied) travels in the Spill's
 * `notes`: the phases hand values on, none of them writes into another's.
 */

export interface DecideContext {
  limit: number;
  profile: Profile;
  strategy: StrategyName;
  /** Factor on the claude profile's counts (GuardOptions.claudeCorrection); 1 when absent. */
  claudeCorrection?: number;
  /** Cut MCP image/audio blocks out of results that fit, too (GuardOptions.cutMediaBlocks). */
  cutMediaBlocks?: boolean;
  /** For a JSON value, the text the client shows the model of it (GuardOptions.shown): the size decision is made on it. */
  shown?: string;
  /** Spill whatever it measures (GuardOptions.knownLarge). */
  knownLarge?: boolean;
}

/** Cheap strategies' counts of a huge text, made from samples. */
export type SampledCounts = Record<(typeof CHEAP_STRATEGIES)[number], number>;

/** Why a result is spilled: too many tokens, binary (any size), or it fits but carries assets to cut out. */
export type SpillReason = 'too-large' | 'binary' | 'inline-assets';

/** A result to spill, as measured. */
export interface Spill {
  reason: SpillReason;
  /** The text measured: the string, the bytes decoded, or the JSON of a parsed value. Absent for binary bytes. */
  text?: string;
  /** UTF-8 bytes of `text`, when they were counted. */
  textBytes?: number;
  estimate: Estimate;
  /** Set when the estimate was made from samples: the counts of every cheap strategy. */
  sampled?: SampledCounts;
  /** For `inline-assets`: the assets found, and whether the text was walked as JSON. */
  found?: ExtractResult;
  /** What the measurement had to say, for the sidecar's errors. */
  notes: readonly string[];
}

/** The cheap strategies' counts of a report, as the sidecar stores them. */
function cheapCountsOf(report: TokenReport): SampledCounts {
  return Object.fromEntries(report.estimates.filter((e) => (CHEAP_STRATEGIES as readonly string[]).includes(e.strategy)).map((e) => [e.strategy, e.tokens])) as SampledCounts;
}

/** Cheap strategies' counts for a huge text, at a bounded cost (describeTokens reads at most ~1 M chars of it). */
async function sampledCounts(text: string, profile: Profile, claudeCorrection: number | undefined): Promise<SampledCounts> {
  return cheapCountsOf(await describeTokens(text, { profile, claudeCorrection, bounded: true, check: false }));
}

/** Chars per token of base64 text (tokenizers split it into short pieces). */
const BASE64_CHARS_PER_TOKEN = 1.5;

/** What bytes would cost as base64 at base64's density. */
function binaryEstimate(byteLength: number, ctx: DecideContext): Estimate {
  return { tokens: Math.ceil((Math.ceil(byteLength / 3) * 4) / BASE64_CHARS_PER_TOKEN), strategy: ctx.strategy, profile: ctx.profile, exact: false };
}

/** The estimate of a text, never below what its bytes make plausible. `textBytes` is counted when not given. */
export async function measure(text: string, ctx: DecideContext, textBytes = Buffer.byteLength(text, 'utf8')): Promise<Spill> {
  const { limit, profile, strategy, claudeCorrection } = ctx;
  if (text.length >= SAMPLED_ESTIMATE_MIN_CHARS && textBytes > limit * MAX_BYTES_PER_TOKEN_BOUND) {
    // Decisively over the limit: a full pass would only refine a number nobody decides with.
    const counts = await sampledCounts(text, profile, claudeCorrection);
    return { reason: 'too-large', text, textBytes, estimate: { tokens: counts.calibrated, strategy: 'calibrated', profile, exact: false }, sampled: counts, notes: [] };
  }
  // The estimator says what it did into an array it is given: this one, handed on as the Spill's notes.
  const notes: string[] = [];
  let est: Estimate;
  try {
    // Exact counts near the limit stay linear even for an unbroken 200 KB run (counted in pieces),
    // and content the fit never saw widens the band that is counted (estimate/risk.ts).
    est = await estimateForDecision(text, limit, { profile, strategy, claudeCorrection, utf8Bytes: textBytes, notes });
  } catch (err) {
    notes.push(`estimate with ${strategy} failed (${errText(err)}); used ${DEFAULT_STRATEGY}`);
    est = estimateTokens(text, { profile, strategy: DEFAULT_STRATEGY, claudeCorrection });
  }
  // Defence in depth: a faulty estimator must not wave an oversized result through.
  const floor = Math.ceil(textBytes / MAX_PLAUSIBLE_BYTES_PER_TOKEN);
  if (!est.exact && !(est.tokens >= floor)) {
    notes.push(`the ${est.strategy} estimate (${est.tokens}) was below the plausible minimum; ${floor} tokens used`);
    est = { ...est, tokens: floor };
  }
  return { reason: 'too-large', text, textBytes, estimate: est, notes };
}

/** The estimate of a linked text (assets cut out), with the decision's strategy; never throws. */
export async function measureInline(text: string, ctx: DecideContext, strategy: StrategyName): Promise<Estimate> {
  try {
    return await estimateForDecision(text, ctx.limit, { profile: ctx.profile, strategy, claudeCorrection: ctx.claudeCorrection });
  } catch {
    return estimateTokens(text, { profile: ctx.profile, claudeCorrection: ctx.claudeCorrection });
  }
}

/** Tokens never exceed UTF-8 bytes (byte-level BPE), and bytes ≤ 3 × UTF-16 units: a text this small fits. */
function fitsByLength(text: string, limit: number): { fits: boolean; textBytes?: number } {
  if (text.length * 3 <= limit) return { fits: true };
  const textBytes = Buffer.byteLength(text, 'utf8');
  return { fits: textBytes <= limit, textBytes };
}

export { mayCarryInlineAssets } from './quick.js';

const isMedia = (a: FoundAsset) => a.source === 'mcp-image' || a.source === 'mcp-audio';
/** A JSON string that is binary read as text: cut at any size past the extractor's minimum (the model cannot read it). */
const isBinaryString = (a: FoundAsset) => a.source === 'binary-string';

/** May a text that fits hold an asset to cut: a long base64-alphabet run, or the marks of a binary string. */
const mayHoldAssets = (text: string) => hasBase64Run(text, MIN_INLINE_ASSET_RUN_CHARS) || mayHoldBinaryString(text);

/**
 * The assets to cut out of a result that fits the limit: every one of MIN_INLINE_ASSET_BYTES or
 * more, except MCP image and audio blocks, which multimodal clients show as media (unless
 * `cutMediaBlocks`). Once anything is cut the answer is text, where a media block would be
 * base64 again, so the media blocks go too. Empty: nothing to cut, pass the result.
 */
export function inlineCuts(assets: FoundAsset[], cutMediaBlocks = false): FoundAsset[] {
  const worthIt = (a: FoundAsset) => isBinaryString(a) || (a.bytes.byteLength >= MIN_INLINE_ASSET_BYTES && (cutMediaBlocks || !isMedia(a)));
  if (!assets.some(worthIt)) return [];
  return assets.filter((a) => isMedia(a) || isBinaryString(a) || a.bytes.byteLength >= MIN_INLINE_ASSET_BYTES);
}

/**
 * A result that fits the limit still spills when base64 the model could only read as text is in
 * it. A cheap scan for a long base64-alphabet run comes first; only then the strict extraction.
 * `measured` is its estimate when the decision already made one.
 */
async function inlineCheck(text: string, ctx: DecideContext, measured?: Spill, textBytes?: number): Promise<Spill | null> {
  if (!mayHoldAssets(text)) return null;
  let found: ExtractResult;
  let cut: FoundAsset[];
  try {
    found = extractAssets(text);
    cut = inlineCuts(found.assets, ctx.cutMediaBlocks);
  } catch {
    return null; // it fits: an extraction bug must not withhold it
  }
  if (!cut.length) return null;
  const m = measured ?? (await measure(text, ctx, textBytes));
  return { ...m, reason: 'inline-assets', found: { assets: cut, json: found.json } };
}

async function decideText(text: string, ctx: DecideContext, textBytes?: number): Promise<Spill | null> {
  const force = ctx.knownLarge === true;
  const quick = textBytes !== undefined ? { fits: textBytes <= ctx.limit, textBytes } : fitsByLength(text, ctx.limit);
  if (quick.fits && !force) return inlineCheck(text, ctx, undefined, quick.textBytes);
  const spill = await measure(text, ctx, quick.textBytes);
  if (force || spill.estimate.tokens > ctx.limit) return spill;
  return inlineCheck(text, ctx, spill);
}

async function decideBytes(subject: Extract<Subject, { bytes: Buffer }>, ctx: DecideContext): Promise<Spill | null> {
  const force = ctx.knownLarge === true;
  const b = subject.bytes;
  // The model cannot read bytes as text at any size: they are always saved and described.
  if (subject.binary) return { reason: 'binary', estimate: binaryEstimate(b.byteLength, ctx), notes: [] };
  // Only valid UTF-8 can have spans cut out and rebuilt exactly.
  const exact = isUtf8(b);
  if (b.byteLength <= ctx.limit && !force) {
    return exact && (hasBase64RunBytes(b, MIN_INLINE_ASSET_RUN_CHARS) || mayHoldBinaryString(b)) ? inlineCheck(b.toString('utf8'), ctx) : null;
  }
  const spill = await measure(b.toString('utf8'), ctx);
  if (force || spill.estimate.tokens > ctx.limit) return spill;
  return exact ? inlineCheck(spill.text!, ctx, spill) : null;
}

/** The assets to cut out of a text that fits; undefined when extraction fails (linking then says why). */
function cutsIn(text: string, ctx: DecideContext): ExtractResult | undefined {
  try {
    const found = extractAssets(text);
    return { assets: inlineCuts(found.assets, ctx.cutMediaBlocks), json: found.json };
  } catch {
    return undefined;
  }
}

/** A spill of a serialized value: the serializer's note (a cycle, a BigInt) joins the measurement's. */
const withNote = (spill: Spill | null, note: string | undefined): Spill | null => (spill && note ? { ...spill, notes: [note, ...spill.notes] } : spill);

/**
 * A value whose part shown fits but reads as binary (a text block of a file's bytes, shown as is):
 * the binary strings of the whole value are cut out, or null when the whole has none.
 */
async function binaryInWhole(value: unknown, ctx: DecideContext): Promise<Spill | null> {
  const { text, note } = serializeValue(value);
  const found = cutsIn(text, ctx);
  if (!found?.assets.some(isBinaryString)) return null;
  const m = await measure(text, ctx);
  return { ...m, reason: 'inline-assets', found, notes: note ? [note, ...m.notes] : m.notes };
}

/**
 * The common case, decided without a promise: a subject that fits by size alone and holds no run
 * base64 could be made of passes. False: ask {@link decide}.
 */
export function passesAtOnce(subject: Subject, ctx: DecideContext): boolean {
  switch (subject.origin) {
    case 'string': {
      const quick = fitsByLength(subject.text, ctx.limit);
      // kept for decide: counting a 100 MB string's UTF-8 twice was ~10 ms
      subject.textBytes ??= quick.textBytes;
      return quick.fits && !mayHoldAssets(subject.text);
    }
    case 'bytes':
      return !subject.binary && subject.bytes.byteLength <= ctx.limit && !hasBase64RunBytes(subject.bytes, MIN_INLINE_ASSET_RUN_CHARS) && !mayHoldBinaryString(subject.bytes);
    case 'latin1-string':
    case 'decoded-string':
      return false;
    case 'json-value':
      // The part shown may be clean while the whole holds binary elsewhere: that is decided in the whole.
      if (ctx.shown !== undefined) return fitsByLength(ctx.shown, ctx.limit).fits && !mayHoldAssets(ctx.shown);
      try {
        const shape = jsonShape(subject.value, ctx.limit, MIN_INLINE_ASSET_RUN_CHARS);
        return shape.bytes <= ctx.limit && !shape.longRun;
      } catch {
        return false; // a getter threw: decide serializes it
      }
  }
}

/**
 * Pass (null) or spill one subject. `knownLarge` in the context: spill whatever it measures;
 * `cutMediaBlocks`: also cut MCP image/audio blocks out of results that fit.
 */
export async function decide(subject: Subject, ctx: DecideContext): Promise<Spill | null> {
  switch (subject.origin) {
    case 'string':
      return decideText(subject.text, ctx, subject.textBytes);
    case 'bytes':
    case 'latin1-string':
    case 'decoded-string':
      return decideBytes(subject, ctx);
    case 'json-value': {
      if (ctx.shown !== undefined) {
        // The client shows the model only part of the value: decide on that part, but save (and cut
        // assets out of) the whole value.
        const seen = await decideText(ctx.shown, ctx);
        if (!seen) return mayHoldBinaryString(ctx.shown) ? binaryInWhole(subject.value, ctx) : null;
        const { text, note } = serializeValue(subject.value);
        // The assets found in the part shown lie elsewhere in the whole: what to cut is chosen in the whole.
        const found = seen.reason === 'inline-assets' ? cutsIn(text, ctx) : undefined;
        return { ...seen, text, textBytes: undefined, found, notes: note ? [...seen.notes, note] : seen.notes };
      }
      if (ctx.knownLarge !== true) {
        try {
          const shape = jsonShape(subject.value, ctx.limit, MIN_INLINE_ASSET_RUN_CHARS);
          if (shape.bytes <= ctx.limit && !shape.longRun) return null;
        } catch {
          /* a getter threw: serializing decides */
        }
      }
      const { text, note } = serializeValue(subject.value);
      return withNote(await decideText(text, ctx), note);
    }
  }
}

/** Every cheap strategy's count of a spilled text, for the inspector (one describeTokens pass); the decision's own number reused. */
export async function strategyCounts(text: string | undefined, spill: Spill, tokens: Pick<DecideContext, 'profile' | 'claudeCorrection'>): Promise<PayloadMeta['estimates']> {
  const { estimate } = spill;
  const counts: PayloadMeta['estimates'] = {};
  if (text !== undefined && spill.sampled) Object.assign(counts, spill.sampled);
  else if (text !== undefined) {
    try {
      Object.assign(counts, cheapCountsOf(await describeTokens(text, { profile: tokens.profile, claudeCorrection: tokens.claudeCorrection, check: false })));
    } catch {
      /* optional */
    }
    if (estimate.strategy in counts) counts[estimate.strategy] = estimate.tokens;
  }
  if (estimate.exact || !(estimate.strategy in counts)) counts[estimate.strategy] = estimate.tokens;
  return counts;
}
