import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { isUtf8 } from 'node:buffer';
import type {
  AssetRef,
  ContentKind,
  Estimate,
  GuardAction,
  GuardOptions,
  GuardResult,
  PayloadLink,
  PayloadMeta,
  PayloadOrigin,
  Profile,
  StrategyName,
  SummaryRun,
  ToolResult,
} from './types.js';
import {
  DEFAULT_LIMIT_TOKENS,
  MAX_BYTES_PER_TOKEN_BOUND,
  MAX_MESSAGE_CHARS,
  MAX_SIDECAR_ATTEMPTS,
  PREVIEW_CHARS,
  SAMPLED_ESTIMATE_MIN_CHARS,
  SAMPLED_ESTIMATE_SAMPLE_CHARS,
  SAMPLED_ESTIMATE_SAMPLES,
  TEXT_SLICE_CHARS,
  limitForContextWindow,
} from './limits.js';
import { errText } from './errors.js';
import { jsonBytesUpperBound, jsonSafe, serializeValue } from './serialize.js';
import { LINKED_SUFFIX, META_SUFFIX, inputHash, isInside, sanitizeToolName, sessionPaths } from './layout.js';
import {
  DEFAULT_PROFILE,
  DEFAULT_STRATEGY,
  estimateBounded,
  estimateForDecision,
  estimateTokens,
  MAX_PLAUSIBLE_BYTES_PER_TOKEN,
} from './estimate/index.js';
import { KIND_INFO, detectTextFormat, isBinaryBytes, isBinaryString } from './detect.js';
import { extractAssets, linkAssets, linkBinary, type AssetSink, type LinkedPayload } from './extract.js';
import { buildPreview } from './preview.js';
import { buildMessage, capMessage } from './message.js';
import { runSummary } from './summary.js';
import { StagedFile, claimName, linkExisting, nameCandidates, saveAsset, sha256Hex, type StemParts, type WriteData } from './store.js';
import { fmtInt, isWellFormed, safeCut, toWellFormed } from './text.js';

/**
 * The guard: pass a tool result through, or spill it to the session and hand back a short
 * message. Never throws on a tool result, and never lets an oversized one through because of
 * an internal error.
 */

export interface HandleLargeResponseArgs {
  text: string;
  sessionPath: string;
  context?: Pick<
    GuardOptions,
    'toolName' | 'toolInput' | 'intent' | 'limitTokens' | 'contextWindowTokens' | 'profile' | 'strategy'
  >;
  summarize?: GuardOptions['summarize'];
  summaryTimeoutMs?: number;
  signal?: AbortSignal;
  now?: () => Date;
}

/** Slices of a string for encoding piecewise, never cutting a surrogate pair. */
export function* textSlices(text: string, size = TEXT_SLICE_CHARS): Generator<string> {
  for (let i = 0; i < text.length; ) {
    const j = i + size >= text.length ? text.length : safeCut(text, i + size);
    yield text.slice(i, j > i ? j : i + size);
    i = j > i ? j : i + size;
  }
}

function hashData(data: string | Buffer): string {
  if (typeof data !== 'string') return sha256Hex(data);
  const h = crypto.createHash('sha256');
  for (const part of textSlices(data)) h.update(part, 'utf8');
  return h.digest('hex');
}

/**
 * Cheap strategies' counts for a huge text, at a bounded cost: craft-density from evenly spread samples,
 * scaled to the whole text; calibrated from its own stratified windows (estimate/sample.ts).
 */
function sampledCounts(text: string, profile: Profile): Record<'chars4' | 'craft-density' | 'calibrated', number> {
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

/** The limit a call decides with: explicit, else default, narrowed by the context window. */
export function resolveLimit(o: { limitTokens?: number; contextWindowTokens?: number }): number {
  const base = o.limitTokens !== undefined && Number.isFinite(o.limitTokens) && o.limitTokens > 0 ? Math.floor(o.limitTokens) : DEFAULT_LIMIT_TOKENS;
  return limitForContextWindow(o.contextWindowTokens, base);
}

function asBuffer(v: Uint8Array | ArrayBuffer): Buffer {
  if (v instanceof ArrayBuffer) return Buffer.from(v);
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** What the guard works on after normalizing a tool result. */
interface Subject {
  origin: PayloadOrigin;
  /** Text form; absent for binary. */
  text?: string;
  /** Bytes as received (bytes input, or latin1-carried binary). */
  bytes?: Buffer;
  binary: boolean;
  notes: string[];
}

/** UTF-8 length of the last big string measured: several steps ask for it and it costs a full scan. */
let lastLen: { s: string; n: number } | undefined;
function utf8Length(s: string): number {
  if (lastLen && lastLen.s === s) return lastLen.n;
  const n = Buffer.byteLength(s, 'utf8');
  lastLen = { s, n };
  return n;
}

function binaryEstimate(byteLength: number, profile: Profile, strategy: StrategyName): Estimate {
  // What the bytes would cost as base64 at base64's density (~1.5 chars/token).
  return { tokens: Math.ceil((Math.ceil(byteLength / 3) * 4) / 1.5), strategy, profile, exact: false };
}

/** Estimates made from samples, so the message and meta can say so. */
const sampledEstimates = new WeakMap<Estimate, ReturnType<typeof sampledCounts>>();

async function decide(text: string, limit: number, profile: Profile, strategy: StrategyName, notes: string[]): Promise<Estimate> {
  if (text.length >= SAMPLED_ESTIMATE_MIN_CHARS && utf8Length(text) > limit * MAX_BYTES_PER_TOKEN_BOUND) {
    // Decisively over the limit: a full pass would only refine a number nobody decides with.
    const counts = sampledCounts(text, profile);
    const est: Estimate = { tokens: counts.calibrated, strategy: 'calibrated', profile, exact: false };
    sampledEstimates.set(est, counts);
    return est;
  }
  let est: Estimate;
  try {
    // Exact counts near the limit stay linear even for an unbroken 200 KB run (counted in pieces),
    // and content the fit never saw widens the band that is counted (estimate/risk.ts).
    est = await estimateForDecision(text, limit, { profile, strategy, utf8Bytes: utf8Length(text), notes });
  } catch (err) {
    notes.push(`estimate with ${strategy} failed (${errText(err)}); used ${DEFAULT_STRATEGY}`);
    est = estimateTokens(text, { profile, strategy: DEFAULT_STRATEGY });
  }
  // Defence in depth: a faulty estimator must not wave an oversized result through.
  const floor = Math.ceil(utf8Length(text) / MAX_PLAUSIBLE_BYTES_PER_TOKEN);
  if (!est.exact && !(est.tokens >= floor)) {
    notes.push(`the ${est.strategy} estimate (${est.tokens}) was below the plausible minimum; ${floor} tokens used`);
    est = { ...est, tokens: floor };
  }
  return est;
}

/**
 * Guard one tool result. `null`: pass it to the model unchanged. Otherwise the message to show
 * instead, with where everything was saved.
 */
export async function guardLargeResult(result: ToolResult, options: GuardOptions): Promise<GuardResult | null> {
  let limit = DEFAULT_LIMIT_TOKENS;
  const profile = options?.profile ?? DEFAULT_PROFILE;
  const strategy = options?.strategy ?? DEFAULT_STRATEGY;
  let subject: Subject | undefined;
  try {
    limit = resolveLimit(options ?? {});
    if (result === null || result === undefined || typeof result === 'number' || typeof result === 'boolean') return null;
    const notes: string[] = [];
    if (typeof result === 'string') {
      // Tokens never exceed UTF-8 bytes (byte-level BPE), and bytes ≤ 3 × UTF-16 units.
      if (result.length * 3 <= limit || utf8Length(result) <= limit) return null;
      const est = await decide(result, limit, profile, strategy, notes);
      if (est.tokens <= limit) return null;
      subject = { origin: 'string', text: result, binary: false, notes };
      return await spill(subject, est, limit, options);
    }
    if (result instanceof Uint8Array || result instanceof ArrayBuffer) {
      const buf = asBuffer(result);
      if (buf.byteLength <= limit) return null;
      if (isBinaryBytes(buf)) {
        subject = { origin: 'bytes', bytes: buf, binary: true, notes };
        return await spill(subject, binaryEstimate(buf.byteLength, profile, strategy), limit, options);
      }
      const text = buf.toString('utf8');
      const est = await decide(text, limit, profile, strategy, notes);
      if (est.tokens <= limit) return null;
      subject = { origin: 'bytes', text, bytes: buf, binary: false, notes };
      return await spill(subject, est, limit, options);
    }
    if (ArrayBuffer.isView(result)) {
      const v = result as ArrayBufferView;
      return await guardLargeResult(Buffer.from(v.buffer, v.byteOffset, v.byteLength), options);
    }
    try {
      if (jsonBytesUpperBound(result, limit) <= limit) return null;
    } catch {
      /* a getter threw: serialize below decides */
    }
    const { text, note } = serializeValue(result);
    if (note) notes.push(note);
    if (text.length * 3 <= limit || utf8Length(text) <= limit) return null;
    const est = await decide(text, limit, profile, strategy, notes);
    if (est.tokens <= limit) return null;
    subject = { origin: 'json-value', text, binary: false, notes };
    return await spill(subject, est, limit, options);
  } catch (err) {
    return emergency(err, subject, limit, options, profile, strategy);
  } finally {
    lastLen = undefined; // never keep a big result alive after the call
  }
}

/** Lower level: spill a text already known to be large. Never throws. */
export async function handleLargeResponse(args: HandleLargeResponseArgs): Promise<GuardResult> {
  const ctx = args.context ?? {};
  const options: GuardOptions = {
    sessionPath: args.sessionPath,
    toolName: ctx.toolName,
    toolInput: ctx.toolInput,
    intent: ctx.intent,
    limitTokens: ctx.limitTokens,
    contextWindowTokens: ctx.contextWindowTokens,
    profile: ctx.profile,
    strategy: ctx.strategy,
    summarize: args.summarize,
    summaryTimeoutMs: args.summaryTimeoutMs,
    signal: args.signal,
    now: args.now,
  };
  const profile = ctx.profile ?? DEFAULT_PROFILE;
  const strategy = ctx.strategy ?? DEFAULT_STRATEGY;
  let limit = DEFAULT_LIMIT_TOKENS;
  let subject: Subject | undefined;
  try {
    limit = resolveLimit(options);
    const text = typeof args.text === 'string' ? args.text : String(args.text);
    const notes: string[] = [];
    subject = { origin: 'string', text, binary: false, notes };
    const est = await decide(text, limit, profile, strategy, notes);
    return await spill(subject, est, limit, options);
  } catch (err) {
    return emergency(err, subject, limit, options, profile, strategy);
  } finally {
    lastLen = undefined; // never keep a big result alive after the call
  }
}

async function prepareDirs(sessionPath: string) {
  const paths = sessionPaths(sessionPath);
  await fs.mkdir(paths.assets, { recursive: true });
  // A long_responses/ or assets/ that is a symlink out of the session would let writes escape it.
  const [realSession, realLong, realAssets] = await Promise.all([
    fs.realpath(paths.session),
    fs.realpath(paths.longResponses),
    fs.realpath(paths.assets),
  ]);
  if (!isInside(realSession, realLong) || !isInside(realLong, realAssets)) {
    throw new Error(`refusing to write: ${paths.longResponses} leads outside the session folder`);
  }
  return paths;
}

async function spill(subject: Subject, estimate: Estimate, limit: number, options: GuardOptions): Promise<GuardResult> {
  const errors = subject.notes;
  const now = options.now?.() ?? new Date();
  const tool = sanitizeToolName(options.toolName);
  const profile = estimate.profile;

  // 1. What exactly are the original bytes?
  let text = subject.text;
  let origin = subject.origin;
  let binaryBytes: Buffer | undefined = subject.binary ? subject.bytes : undefined;
  if (text !== undefined && !subject.bytes && isBinaryString(text)) {
    binaryBytes = Buffer.from(text, 'latin1');
    origin = 'latin1-string';
    text = undefined;
  }
  // Pure ASCII (UTF-8 length = length) cannot hold a lone surrogate: skip the scan.
  if (text !== undefined && !subject.bytes && utf8Length(text) !== text.length && !isWellFormed(text)) {
    text = toWellFormed(text);
    errors.push('the text had lone surrogates; they were saved as U+FFFD (UTF-8 cannot hold them)');
  }
  const originalBytes: Buffer | string = binaryBytes ?? subject.bytes ?? text ?? '';
  const byteLength = typeof originalBytes === 'string' ? utf8Length(originalBytes) : originalBytes.byteLength;
  const sha256 = hashData(originalBytes);
  const textIsExact = text !== undefined && (!subject.bytes || isUtf8(subject.bytes));

  // 2. Kind and estimates (for the inspector).
  const format = binaryBytes ? { kind: 'binary' as const, wrappers: [] } : detectTextFormat(text ?? '');
  let kind: ContentKind = format.kind;
  // Read's numbered lines around a .json file are not JSON: the payload file is named as text.
  let wrapped = format.wrappers.length > 0;
  const estimates: PayloadMeta['estimates'] = {};
  const sampledCounts_ = sampledEstimates.get(estimate);
  const sampled = sampledCounts_ !== undefined;
  if (text !== undefined && sampledCounts_) Object.assign(estimates, sampledCounts_);
  else if (text !== undefined) {
    for (const s of ['chars4', 'craft-density', 'calibrated'] as const) {
      try {
        estimates[s] = s === estimate.strategy ? estimate.tokens : estimateTokens(text, { strategy: s, profile }).tokens;
      } catch {
        /* optional */
      }
    }
  }
  if (estimate.exact || !(estimate.strategy in estimates)) estimates[estimate.strategy] = estimate.tokens;

  // 3. Folders. From here on a failure means "could not save".
  let paths: ReturnType<typeof sessionPaths>;
  try {
    paths = await prepareDirs(options.sessionPath);
  } catch (err) {
    return failed(err, { subject, text, kind, estimate, limit, options, byteLength });
  }

  // 4. Assets.
  const assets: AssetRef[] = [];
  let links: PayloadLink[] = [];
  let linkedPieces: string[] | undefined;
  let linkedText: string | undefined;
  const sink: AssetSink = {
    save: async (bytes, ext, sha) => {
      const saved = await saveAsset(paths.assets, bytes, ext, sha);
      return { path: saved.path, relPath: path.relative(paths.session, saved.path).split(path.sep).join('/') };
    },
  };
  try {
    let linked: LinkedPayload | undefined;
    if (binaryBytes) {
      linked = await linkBinary(binaryBytes, sink);
      kind = 'binary';
    } else if (text !== undefined && textIsExact) {
      const { assets: found, json } = extractAssets(text);
      if (json) {
        kind = 'json';
        wrapped = false;
      }
      if (found.length) linked = await linkAssets(text, found, sink);
    } else if (text !== undefined) {
      errors.push('the bytes are not valid UTF-8: saved as received, without extracting assets');
    }
    if (linked) {
      assets.push(...linked.assets);
      links = linked.links;
      linkedPieces = linked.pieces;
      linkedText = linked.text;
    }
  } catch (err) {
    errors.push(`asset extraction failed (${errText(err)}); the payload is saved whole instead`);
    assets.length = 0;
    links.length = 0;
    linkedPieces = undefined;
    linkedText = undefined;
  }

  // 5. Inline the rest when it fits.
  let action: Exclude<GuardAction, 'pass'> = 'spill';
  let linkedEstimate: Estimate | undefined;
  if (linkedText !== undefined && !binaryBytes && linkedText.length < MAX_MESSAGE_CHARS) {
    try {
      linkedEstimate = await estimateForDecision(linkedText, limit, { profile, strategy: estimate.strategy });
    } catch {
      linkedEstimate = estimateTokens(linkedText, { profile });
    }
    if (linkedEstimate.tokens <= limit) action = 'inline-assets';
  }

  // 6. Payload file: the linked form when assets were cut out, else the original bytes.
  const fileKind: ContentKind = wrapped ? 'text' : kind;
  const ext = binaryBytes || fileKind === 'json' ? '.json' : KIND_INFO[fileKind].ext;
  const payloadIsOriginal = linkedPieces === undefined;
  const suffix = payloadIsOriginal ? KIND_INFO[fileKind].ext : fileKind === 'json' || binaryBytes ? LINKED_SUFFIX : ext;
  const data: WriteData = linkedPieces ?? subject.bytes ?? binaryBytes ?? textSlices(text ?? '');
  const stemParts: StemParts = { time: now, tool, inputHash: inputHash(options.toolInput) };
  let staged: StagedFile | undefined;
  let stem = '';
  let payloadPath = '';
  try {
    staged = await StagedFile.write(paths.longResponses, data);
    const st = staged;
    ({ stem, path: payloadPath } = await claimName((p) => st.tryPublish(p), paths.longResponses, nameCandidates(stemParts, suffix)));
  } catch (err) {
    await staged?.discard();
    return failed(err, { subject, text: linkedText ?? text, kind, estimate, limit, options, byteLength, assets });
  }
  await staged.discard();

  // 7. Summary (only when the model will not see the content itself).
  let summary: SummaryRun | undefined;
  const previewSource = binaryBytes ? undefined : (linkedText ?? text);
  if (action === 'spill' && options.summarize && previewSource !== undefined) {
    summary = await runSummary(options.summarize, {
      text: previewSource,
      toolName: options.toolName,
      toolInput: options.toolInput,
      focus: options.intent,
      timeoutMs: options.summaryTimeoutMs,
      signal: options.signal,
    });
    if (summary.status !== 'ok') errors.push(`summary ${summary.status}: ${summary.error ?? ''}`.trim());
  }
  const preview =
    action === 'inline-assets' || summary?.status === 'ok'
      ? undefined
      : previewSource !== undefined
        ? buildPreview(previewSource, kind, PREVIEW_CHARS)
        : `(binary: ${assets[0]?.mimeType ?? 'application/octet-stream'}, ${fmtInt(byteLength)} bytes)`;
  const previewForMeta = preview;

  // 8. Message + sidecar. The sidecar name is the final claim on the stem.
  const makeMessage = (pp: string) =>
    buildMessage({
      action,
      toolName: options.toolName,
      estimate,
      estimateSampled: sampled,
      limitTokens: limit,
      kind,
      bytes: byteLength,
      sessionPath: paths.session,
      payloadPath: pp,
      assets,
      summary,
      preview: previewForMeta,
      inlineText: action === 'inline-assets' ? linkedText : undefined,
      inlineTokens: linkedEstimate?.tokens,
    });
  let message = makeMessage(payloadPath);
  const metaFor = (id: string, file: string, msg: string): PayloadMeta => ({
    version: 1,
    id,
    createdAt: now.toISOString(),
    tool: options.toolName ?? tool,
    ...(options.toolInput !== undefined ? { toolInput: jsonSafe(options.toolInput) } : {}),
    ...(options.intent ? { intent: options.intent } : {}),
    action,
    payloadFile: file,
    payloadIsOriginal,
    ...(payloadIsOriginal ? {} : { linkedFile: file }),
    kind,
    bytes: byteLength,
    chars: text?.length ?? byteLength,
    sha256,
    estimate,
    estimates,
    limitTokens: limit,
    assets,
    message: msg,
    summaryRuns: summary ? [summary] : [],
    ...(errors.length ? { errors: [...errors] } : {}),
    origin,
    ...(links.length ? { links } : {}),
  });
  let metaPath = '';
  try {
    for (let attempt = 0; ; attempt++) {
      const meta = metaFor(stem, path.basename(payloadPath), message);
      const candidate = path.join(paths.longResponses, stem + META_SUFFIX);
      const stagedMeta = await StagedFile.write(paths.longResponses, JSON.stringify(meta, null, 2) + '\n');
      const ok = await stagedMeta.tryPublish(candidate).finally(() => stagedMeta.discard());
      if (ok) {
        metaPath = candidate;
        break;
      }
      if (attempt > MAX_SIDECAR_ATTEMPTS) throw new Error('could not find a free name for the sidecar');
      // Another writer took this stem with a different extension: move our payload to a fresh stem.
      const from = payloadPath;
      const moved = await claimName((p) => linkExisting(from, p), paths.longResponses, nameCandidates(stemParts, suffix));
      await fs.unlink(payloadPath).catch(() => undefined);
      ({ stem, path: payloadPath } = moved);
      message = makeMessage(payloadPath);
    }
  } catch (err) {
    errors.push(`the sidecar (.meta.json) could not be written: ${errText(err)}`);
  }

  return {
    action,
    message,
    estimate,
    limitTokens: limit,
    payloadPath,
    ...(payloadIsOriginal ? {} : { linkedPath: payloadPath }),
    ...(metaPath ? { metaPath } : {}),
    assets,
    ...(summary ? { summary } : {}),
    errors,
  };
}

interface FailCtx {
  subject?: Subject;
  text?: string;
  kind: ContentKind;
  estimate: Estimate;
  limit: number;
  options: GuardOptions;
  byteLength: number;
  assets?: AssetRef[];
}

function failed(err: unknown, c: FailCtx): GuardResult {
  const why = errText(err);
  const errors = [...(c.subject?.notes ?? []), `saving failed: ${why}`];
  let preview: string | undefined;
  try {
    preview = c.text !== undefined ? buildPreview(c.text, c.kind, PREVIEW_CHARS) : undefined;
  } catch {
    preview = undefined;
  }
  const message = buildMessage({
    action: 'failed',
    toolName: c.options.toolName,
    estimate: c.estimate,
    limitTokens: c.limit,
    kind: c.kind,
    bytes: c.byteLength,
    sessionPath: c.options.sessionPath,
    assets: [],
    preview,
    failure: why,
  });
  return { action: 'spill', message, estimate: c.estimate, limitTokens: c.limit, assets: [], errors };
}

/** Last resort after an internal error: save the raw payload if at all possible, say so briefly. */
async function emergency(
  err: unknown,
  subject: Subject | undefined,
  limit: number,
  options: GuardOptions,
  profile: Profile,
  strategy: StrategyName,
): Promise<GuardResult> {
  const why = errText(err);
  const errors = [`internal error: ${why}`];
  let bytes: number | undefined;
  let saved: string | undefined;
  try {
    const data = subject?.bytes ?? subject?.text;
    if (data !== undefined) {
      bytes = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
      const paths = sessionPaths(options.sessionPath);
      await fs.mkdir(paths.longResponses, { recursive: true });
      const parts: StemParts = { time: new Date(), tool: sanitizeToolName(options?.toolName), inputHash: inputHash(options?.toolInput) };
      const staged = await StagedFile.write(paths.longResponses, data);
      try {
        const suffix = subject?.binary ? '.bin' : '.txt';
        saved = (await claimName((p) => staged.tryPublish(p), paths.longResponses, nameCandidates(parts, suffix))).path;
      } finally {
        await staged.discard();
      }
    }
  } catch (e2) {
    errors.push(`emergency save failed: ${errText(e2)}`);
  }
  const message = capMessage(
    `[spillway] The tool result${options?.toolName ? ` of \`${options.toolName}\`` : ''} was withheld because the guard hit an internal error (${why}).` +
      (bytes !== undefined ? ` It was ${fmtInt(bytes)} bytes.` : '') +
      (saved ? ` The raw result was saved to ${saved} (read it with Read/Grep).` : ' It could not be saved.'),
  );
  return {
    action: 'spill',
    message,
    estimate: { tokens: bytes ?? 0, strategy, profile, exact: false },
    limitTokens: limit,
    ...(saved ? { payloadPath: saved } : {}),
    assets: [],
    errors,
  };
}
