import type { AssetRef, ContentKind, GuardAction, GuardOptions, GuardResult, PayloadMeta, Profile, StrategyName, SummaryRun, ToolResult } from './types.js';
import { DEFAULT_LIMIT_TOKENS, MAX_MESSAGE_CHARS, PREVIEW_CHARS, STORE_CALL_TIMEOUT_MS, limitForContextWindow } from './limits.js';
import { KIND_INFO, detectTextFormat } from './detect.js';
import { DEFAULT_PROFILE, DEFAULT_STRATEGY } from './estimate/index.js';
import { LINKED_SUFFIX, assetFileName, assetKey, inputHash, sanitizeToolName } from './layout.js';
import { normalize, preparePayload, textSlices, type Payload, type Subject } from './normalize.js';
import { decide, measure, measureInline, strategyCounts, type DecideContext, type Spill } from './decide.js';
import { extractAssets, linkAssets, linkBinary, type AssetSink, type LinkedPayload } from './extract.js';
import { SpillStoreError, isStoreError, type NameCandidate, type SpillBody, type SpillStore } from './spill-store.js';
import { LocalSpillStore } from './store-local.js';
import { configuredStores } from './store/s3/select.js';
import { commitSpill, nameCandidates, withDeadline, type Commit, type StemParts } from './store.js';
import { emergency, failed, fellBack } from './failure.js';
import { buildPreview } from './preview.js';
import { runSummary } from './summary.js';
import { buildMessage } from './message.js';
import { jsonSafe } from './serialize.js';
import { errText } from './errors.js';
import { fmtInt } from './text.js';

/**
 * The guard: pass a tool result through, or spill it to the session and hand back a short
 * message. Never throws on a tool result, and never lets an oversized one through because of
 * an internal error.
 *
 * | call | for |
 * | --- | --- |
 * | {@link guardLargeResult} | one tool result: null (pass it on) or the {@link GuardResult} to show instead |
 * | {@link handleLargeResponse} | a text the caller already knows is large: always spilled |
 * | {@link resolveLimit} | the limit a call decides with (explicit, default, narrowed by the context window) |
 *
 * A spill is a chain of phases, each returning what the next needs: normalize (normalize.ts) →
 * decide (decide.ts) → describe → link assets (extract.ts) → choose the action → publish the
 * payload (through a SpillStore, store.ts) → summary or preview → message → the sidecar, last.
 * When the store is UNAVAILABLE the chain from "link assets" runs again on the fallback store.
 */

export interface HandleLargeResponseArgs {
  text: string;
  sessionPath: string;
  context?: Pick<GuardOptions, 'toolName' | 'toolInput' | 'intent' | 'limitTokens' | 'contextWindowTokens' | 'profile' | 'strategy'>;
  summarize?: GuardOptions['summarize'];
  summaryTimeoutMs?: number;
  signal?: AbortSignal;
  now?: () => Date;
}

/** The limit a call decides with: explicit, else default, narrowed by the context window. */
export function resolveLimit(o: { limitTokens?: number; contextWindowTokens?: number }): number {
  const base = o.limitTokens !== undefined && Number.isFinite(o.limitTokens) && o.limitTokens > 0 ? Math.floor(o.limitTokens) : DEFAULT_LIMIT_TOKENS;
  return limitForContextWindow(o.contextWindowTokens, base);
}

interface GuardContext extends DecideContext {
  options: GuardOptions;
  /** The primary store, then the fallback (if any), each bounded by the store deadline. */
  stores: () => SpillStore[];
}

function contextOf(options: GuardOptions): GuardContext {
  const profile: Profile = options?.profile ?? DEFAULT_PROFILE;
  const strategy: StrategyName = options?.strategy ?? DEFAULT_STRATEGY;
  let limit = DEFAULT_LIMIT_TOKENS;
  try {
    limit = resolveLimit(options ?? {});
  } catch {
    /* a hostile options object: the default limit */
  }
  let stores: SpillStore[] | undefined;
  const storesOf = () => {
    const ms = options?.storeTimeoutMs && options.storeTimeoutMs > 0 ? options.storeTimeoutMs : STORE_CALL_TIMEOUT_MS;
    const list = configuredStores(options ?? {}) ?? [
      options?.store && typeof options.store === 'object' ? options.store : new LocalSpillStore(options?.sessionPath),
      ...(options?.fallbackStore ? [options.fallbackStore] : []),
    ];
    return list.map((s) => withDeadline(s, ms));
  };
  return { options, limit, profile, strategy, stores: () => (stores ??= storesOf()) };
}

/**
 * Guard one tool result. `null`: pass it to the model unchanged. Otherwise the message to show
 * instead, with where everything was saved.
 */
export async function guardLargeResult(result: ToolResult, options: GuardOptions): Promise<GuardResult | null> {
  const ctx = contextOf(options);
  let subject: Subject | null = null;
  let spill: Spill | null = null;
  try {
    subject = normalize(result);
    if (!subject) return null;
    spill = await decide(subject, ctx);
    return spill ? await spillPayload(subject, spill, ctx) : null;
  } catch (err) {
    return emergency(err, subject, spill, ctx);
  }
}

/** Lower level: spill a text already known to be large. Never throws. */
export async function handleLargeResponse(args: HandleLargeResponseArgs): Promise<GuardResult> {
  const c = args.context ?? {};
  const { summarize, summaryTimeoutMs, signal, now } = args;
  const ctx = contextOf({ sessionPath: args.sessionPath, ...c, summarize, summaryTimeoutMs, signal, now });
  let subject: Subject | null = null;
  let spill: Spill | null = null;
  try {
    subject = { origin: 'string', text: typeof args.text === 'string' ? args.text : String(args.text), notes: [] };
    spill = await measure(subject.text, ctx, subject.notes);
    return await spillPayload(subject, spill, ctx);
  } catch (err) {
    return emergency(err, subject, spill, ctx);
  }
}

/** Content kind of a payload, and whether a tool's wrapper (Read's line numbers) makes its file plain text. */
function describeFormat(payload: Payload, walkedAsJson: boolean): { kind: ContentKind; fileKind: ContentKind } {
  if (payload.binary) return { kind: 'binary', fileKind: 'binary' };
  if (walkedAsJson) return { kind: 'json', fileKind: 'json' };
  const format = detectTextFormat(payload.text ?? '');
  return { kind: format.kind, fileKind: format.wrappers.length ? 'text' : format.kind };
}

/** Assets saved content-addressed through the store; the reference names the key. */
function storeSink(store: SpillStore): AssetSink {
  return {
    save: async (bytes, ext, sha) => {
      const key = assetKey(assetFileName(sha, ext));
      await store.putAsset(key, bytes, sha);
      return { path: store.describe(key), relPath: key };
    },
  };
}

/**
 * Cut the assets out of a payload. A content problem only means the payload is saved whole (and
 * noted); a store problem is thrown, so the spill can move to the fallback store.
 */
async function linkPhase(payload: Payload, sink: AssetSink): Promise<{ linked?: LinkedPayload; json: boolean }> {
  try {
    if (payload.binary) return { linked: await linkBinary(payload.binary, sink), json: false };
    if (payload.text === undefined) return { json: false };
    if (!payload.textIsExact) {
      payload.notes.push('the bytes are not valid UTF-8: saved as received, without extracting assets');
      return { json: false };
    }
    const { assets, json } = extractAssets(payload.text);
    return { linked: assets.length ? await linkAssets(payload.text, assets, sink) : undefined, json };
  } catch (err) {
    if (err instanceof SpillStoreError) throw err;
    payload.notes.push(`asset extraction failed (${errText(err)}); the payload is saved whole instead`);
    return { json: false };
  }
}

/** Inline the rest when only the assets made the result too big: it fits the limit and the message. */
async function chooseAction(payload: Payload, linked: LinkedPayload | undefined, spill: Spill, ctx: GuardContext) {
  if (!linked || payload.binary || linked.text.length >= MAX_MESSAGE_CHARS) return { action: 'spill' as const };
  const inline = await measureInline(linked.text, ctx, spill.estimate.strategy);
  return inline.tokens <= ctx.limit ? { action: 'inline-assets' as const, inlineTokens: inline.tokens } : { action: 'spill' as const };
}

/** The payload file: the linked form when assets were cut out (sidecar `links` rebuild the original), else the original bytes. */
function payloadFile(payload: Payload, fileKind: ContentKind, linked?: LinkedPayload): { suffix: string; body: () => SpillBody } {
  const original = payload.original;
  if (!linked) return { suffix: KIND_INFO[fileKind].ext, body: () => (typeof original === 'string' ? textSlices(original) : original) };
  return { suffix: payload.binary || fileKind === 'json' ? LINKED_SUFFIX : KIND_INFO[fileKind].ext, body: () => linked.pieces };
}

/** A spill's payload, linked and published in one store. */
interface Placed {
  store: SpillStore;
  linked?: LinkedPayload;
  kind: ContentKind;
  action: Exclude<GuardAction, 'pass'>;
  inlineTokens?: number;
  published: NameCandidate;
  /** More names of the same stem base, if the sidecar's name turns out taken. */
  fresh: Iterable<NameCandidate>;
}

/** Link assets, choose the action, publish the payload: the phases that write to a store. */
async function place(payload: Payload, spill: Spill, store: SpillStore, parts: StemParts, ctx: GuardContext): Promise<Placed> {
  const { linked, json } = await linkPhase(payload, storeSink(store));
  const { kind, fileKind } = describeFormat(payload, json);
  const choice = await chooseAction(payload, linked, spill, ctx);
  const file = payloadFile(payload, fileKind, linked);
  const fresh = nameCandidates(parts, file.suffix);
  const published = await store.putPayload(fresh, file.body);
  return { store, linked, kind, ...choice, published, fresh };
}

/** A summary when the model will not see the content itself; else (or when it fails) a preview. */
async function summaryOrPreview(placed: Placed, payload: Payload, ctx: GuardContext): Promise<{ summary?: SummaryRun; preview?: string }> {
  const o = ctx.options;
  const source = payload.binary ? undefined : (placed.linked?.text ?? payload.text);
  let summary: SummaryRun | undefined;
  if (placed.action === 'spill' && o.summarize && source !== undefined) {
    summary = await runSummary(o.summarize, { text: source, toolName: o.toolName, toolInput: o.toolInput, focus: o.intent, timeoutMs: o.summaryTimeoutMs, signal: o.signal });
    if (summary.status !== 'ok') payload.notes.push(`summary ${summary.status}: ${summary.error ?? ''}`.trim());
  }
  if (placed.action === 'inline-assets' || summary?.status === 'ok') return { summary };
  const assets: AssetRef[] = placed.linked?.assets ?? [];
  const preview = source !== undefined ? buildPreview(source, placed.kind, PREVIEW_CHARS) : `(binary: ${assets[0]?.mimeType ?? 'application/octet-stream'}, ${fmtInt(payload.byteLength)} bytes)`;
  return { summary, preview };
}

/** The message for the payload's final name, and the sidecar that records it. */
function recordOf(placed: Placed, payload: Payload, spill: Spill, shown: { summary?: SummaryRun; preview?: string }, storeNote: string | undefined, parts: StemParts, ctx: GuardContext) {
  const o = ctx.options;
  const { store, linked, kind, action } = placed;
  const assets = linked?.assets ?? [];
  const estimates = strategyCounts(payload.text, spill, ctx.profile);
  return (c: NameCandidate) => {
    const fileName = c.key.slice(c.key.lastIndexOf('/') + 1);
    const message = buildMessage({
      action, toolName: o.toolName, estimate: spill.estimate, estimateSampled: spill.sampled !== undefined, limitTokens: ctx.limit, kind,
      bytes: payload.byteLength, sessionPath: store.location, payloadPath: store.describe(c.key), assets, summary: shown.summary,
      preview: shown.preview, inlineText: action === 'inline-assets' ? linked?.text : undefined, inlineTokens: placed.inlineTokens, storeNote,
    });
    const meta: PayloadMeta = {
      version: 1, id: c.stem, createdAt: parts.time.toISOString(), tool: o.toolName ?? parts.tool,
      ...(o.toolInput !== undefined ? { toolInput: jsonSafe(o.toolInput) } : {}),
      ...(o.intent ? { intent: o.intent } : {}),
      action, payloadFile: fileName, payloadIsOriginal: !linked, ...(linked ? { linkedFile: fileName } : {}),
      kind, bytes: payload.byteLength, chars: payload.text?.length ?? payload.byteLength, sha256: payload.sha256,
      estimate: spill.estimate, estimates, limitTokens: ctx.limit, assets, message,
      summaryRuns: shown.summary ? [shown.summary] : [],
      ...(payload.notes.length ? { errors: [...payload.notes] } : {}),
      origin: payload.origin,
      ...(linked?.links.length ? { links: linked.links } : {}),
    };
    return { message, json: JSON.stringify(meta, null, 2) + '\n' };
  };
}

function resultOf(placed: Placed, payload: Payload, spill: Spill, summary: SummaryRun | undefined, c: Commit, ctx: GuardContext): GuardResult {
  const payloadPath = placed.store.describe(c.payload.key);
  return {
    action: placed.action, message: c.message, estimate: spill.estimate, limitTokens: ctx.limit, payloadPath,
    ...(placed.linked ? { linkedPath: payloadPath } : {}),
    ...(c.metaKey ? { metaPath: placed.store.describe(c.metaKey) } : {}),
    assets: placed.linked?.assets ?? [],
    ...(summary ? { summary } : {}),
    errors: payload.notes,
  };
}

/**
 * Publish through the first store that takes it: a store that is UNAVAILABLE hands the spill to
 * the next (the fallback), and the message says where it went. The summary is made once.
 */
async function spillPayload(subject: Subject, spill: Spill, ctx: GuardContext): Promise<GuardResult> {
  const o = ctx.options;
  const payload = preparePayload(subject, spill.text, spill.textBytes);
  const parts: StemParts = { time: o.now?.() ?? new Date(), tool: sanitizeToolName(o.toolName), inputHash: inputHash(o.toolInput) };
  const stores = ctx.stores();
  let shown: { summary?: SummaryRun; preview?: string } | undefined;
  let storeNote: string | undefined;
  for (let i = 0; i < stores.length; i++) {
    const store = stores[i]!;
    const next = stores[i + 1];
    let placed: Placed;
    try {
      placed = await place(payload, spill, store, parts, ctx);
    } catch (err) {
      if (next && isStoreError(err, 'UNAVAILABLE')) {
        storeNote = fellBack(store, next, err, payload.notes);
        continue;
      }
      return failed(err, payload, describeFormat(payload, false).kind, spill.estimate, ctx);
    }
    shown ??= await summaryOrPreview(placed, payload, ctx);
    const c = await commitSpill(store, placed.published, placed.fresh, recordOf(placed, payload, spill, shown, storeNote, parts, ctx));
    if (c.error !== undefined && next && isStoreError(c.error, 'UNAVAILABLE')) {
      storeNote = fellBack(store, next, c.error, payload.notes);
      continue;
    }
    if (c.error !== undefined) payload.notes.push(`the sidecar (.meta.json) could not be written: ${errText(c.error)}`);
    return resultOf(placed, payload, spill, shown.summary, c, ctx);
  }
  return failed(new Error('no store to write to'), payload, describeFormat(payload, false).kind, spill.estimate, ctx);
}
