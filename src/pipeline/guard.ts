import path from 'node:path';
import type { ContentKind, GuardOptions, GuardResult, Profile, StrategyName, ToolResult } from './types.js';
import { DEFAULT_LIMIT_TOKENS, INLINE_HEADER_ROOM_CHARS, MAX_MESSAGE_CHARS, STORE_CALL_TIMEOUT_MS } from './limits.js';
import { KIND_INFO, detectTextFormat } from './detect.js';
import { DEFAULT_PROFILE, DEFAULT_STRATEGY } from './estimate/options.js';
import { LINKED_SUFFIX, assetFileName, assetKey, inputHash, sanitizeToolName } from './layout.js';
import { normalize, preparePayload, textSlices, type Payload, type Subject } from './normalize.js';
import { decide, inlineCuts, measureInline, passesAtOnce, strategyCounts, type DecideContext, type Spill } from './decide.js';
import { extractAssets, linkAssets, linkBinary, type AssetSink, type FoundAsset, type LinkedPayload } from './extract.js';
import { SpillStoreError, isStoreError, type SpillBody, type SpillStore } from './store/seam.js';
import { LocalSpillStore } from './store/local.js';
import { localCopyDir, withLocalCopy } from './local-copy.js';
import { configuredStores } from './store/s3/select.js';
import { commitSpill, nameCandidates, withDeadline, type StemParts } from './store/publish.js';
import { recordOf, resultOf, summaryOrPreview, type Placed, type Shown } from './record.js';
import { emergency, failed, fellBack } from './failure.js';
import { errText } from './errors.js';
import { resolveLimit } from './quick.js';

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
  context?: Pick<GuardOptions, 'call' | 'toolName' | 'toolInput' | 'intent' | 'limitTokens' | 'contextWindowTokens' | 'profile' | 'strategy' | 'readMore' | 'incomplete' | 'localCopy'>;
  summarize?: GuardOptions['summarize'];
  summaryTimeoutMs?: number;
  signal?: AbortSignal;
  now?: () => Date;
  /** As in GuardOptions: where it is written, where it goes when that store is unavailable, the deadline per call. */
  store?: GuardOptions['store'];
  /** As in GuardOptions: the variables the store settings come from. */
  env?: GuardOptions['env'];
  fallbackStore?: GuardOptions['fallbackStore'];
  storeTimeoutMs?: number;
}

export { resolveLimit };

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
    const list = (
      configuredStores(options ?? {}, options?.env) ?? [
        options?.store && typeof options.store === 'object' ? options.store : new LocalSpillStore(options?.sessionPath),
        ...(options?.fallbackStore ? [options.fallbackStore] : []),
      ]
    ).map((s) => withDeadline(s, ms));
    // An agent that reads files cannot open s3://…: keep a local copy beside the bucket's.
    if (options?.localCopy === true && list[0] && !path.isAbsolute(list[0].location)) {
      list[0] = withLocalCopy(list[0], withDeadline(new LocalSpillStore(localCopyDir(options.sessionPath ?? '.')), ms));
    }
    return list;
  };
  const shown = typeof options?.shown === 'string' ? options.shown : undefined;
  return { options, limit, profile, strategy, cutMediaBlocks: options?.cutMediaBlocks === true, shown, stores: () => (stores ??= storesOf()) };
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
    if (!subject || passesAtOnce(subject, ctx)) return null;
    spill = await decide(subject, ctx);
    return spill ? await spillPayload(subject, spill, ctx) : null;
  } catch (err) {
    return emergency(err, subject, spill, ctx);
  }
}

/** Lower level: spill a text already known to be large. Never throws. */
export async function handleLargeResponse(args: HandleLargeResponseArgs): Promise<GuardResult> {
  const c = args.context ?? {};
  const { summarize, summaryTimeoutMs, signal, now, store, fallbackStore, storeTimeoutMs, env } = args;
  const ctx = contextOf({ sessionPath: args.sessionPath, ...c, summarize, summaryTimeoutMs, signal, now, store, fallbackStore, storeTimeoutMs, env });
  let subject: Subject | null = null;
  let spill: Spill | null = null;
  try {
    subject = normalize(typeof args.text === 'string' ? args.text : String(args.text))!;
    spill = (await decide(subject, ctx, true))!;
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

/** The assets to cut: all that are found in a result over the limit; in one that fits, those the decision chose. */
function assetsToCut(text: string, spill: Spill, ctx: GuardContext): { assets: FoundAsset[]; json: boolean } {
  if (spill.found) return { assets: [...spill.found.assets], json: spill.found.json };
  const found = extractAssets(text);
  return spill.reason === 'inline-assets' ? { assets: inlineCuts(found.assets, ctx.cutMediaBlocks), json: found.json } : found;
}

/**
 * Cut the assets out of a payload. A content problem only means the payload is saved whole (and
 * noted); a store problem is thrown, so the spill can move to the fallback store.
 */
async function linkPhase(payload: Payload, spill: Spill, sink: AssetSink, ctx: GuardContext): Promise<{ linked?: LinkedPayload; json: boolean }> {
  try {
    if (payload.binary) return { linked: await linkBinary(payload.binary, sink), json: false };
    if (payload.text === undefined) return { json: false };
    if (!payload.textIsExact) {
      payload.notes.push('the bytes are not valid UTF-8: saved as received, without extracting assets');
      return { json: false };
    }
    const { assets, json } = assetsToCut(payload.text, spill, ctx);
    return { linked: assets.length ? await linkAssets(payload.text, assets, sink) : undefined, json };
  } catch (err) {
    if (err instanceof SpillStoreError) throw err;
    payload.notes.push(`asset extraction failed (${errText(err)}); the payload is saved whole instead`);
    return { json: false };
  }
}

/**
 * Inline the rest when the assets were what made it a spill: the text left fits the limit and,
 * whole, the message. A result that fit from the start but whose rest is too long for a message
 * is spilled with a long preview (`shownAs: 'assets'`).
 */
async function chooseAction(payload: Payload, linked: LinkedPayload | undefined, spill: Spill, ctx: GuardContext) {
  if (payload.binary) return { action: 'spill' as const, shownAs: 'binary' as const };
  const fitsMessage = linked !== undefined && linked.text.length <= MAX_MESSAGE_CHARS - INLINE_HEADER_ROOM_CHARS;
  // A big linked text is not measured: it cannot be inlined, and counting 40 MB would be slow.
  if (!linked || (!fitsMessage && spill.reason !== 'inline-assets')) return { action: 'spill' as const };
  const inline = await measureInline(linked.text, ctx, spill.estimate.strategy);
  if (fitsMessage && inline.tokens <= ctx.limit) return { action: 'inline-assets' as const, inlineTokens: inline.tokens };
  return spill.reason === 'inline-assets' ? { action: 'spill' as const, shownAs: 'assets' as const, inlineTokens: inline.tokens } : { action: 'spill' as const };
}

/** The payload file: the linked form when assets were cut out (sidecar `links` rebuild the original), else the original bytes. */
function payloadFile(payload: Payload, fileKind: ContentKind, linked?: LinkedPayload): { suffix: string; body: () => SpillBody } {
  const original = payload.original;
  if (!linked) return { suffix: KIND_INFO[fileKind].ext, body: () => (typeof original === 'string' ? textSlices(original) : original) };
  return { suffix: payload.binary || fileKind === 'json' ? LINKED_SUFFIX : KIND_INFO[fileKind].ext, body: () => linked.pieces };
}

/** Link assets, choose the action, publish the payload: the phases that write to a store. */
async function place(payload: Payload, spill: Spill, store: SpillStore, parts: StemParts, ctx: GuardContext): Promise<Placed> {
  const { linked, json } = await linkPhase(payload, spill, storeSink(store), ctx);
  const { kind, fileKind } = describeFormat(payload, json);
  const choice = await chooseAction(payload, linked, spill, ctx);
  const file = payloadFile(payload, fileKind, linked);
  const fresh = nameCandidates(parts, file.suffix);
  const published = await store.putPayload(fresh, file.body);
  return { store, linked, kind, ...choice, published, fresh };
}

/**
 * Publish through the first store that takes it: a store that is UNAVAILABLE hands the spill to
 * the next (the fallback), and the message says where it went. The summary is made once.
 */
async function spillPayload(subject: Subject, spill: Spill, ctx: GuardContext): Promise<GuardResult> {
  const o = ctx.options;
  const payload = preparePayload(subject, spill.text, spill.textBytes);
  // The caller did not get the whole tool output (Bash cut by Claude Code): the sidecar says what is missing.
  if (o.incomplete) payload.notes.push(`incomplete: ${o.incomplete}`);
  const estimates = await strategyCounts(payload.text, spill, ctx.profile);
  const parts: StemParts = { time: o.now?.() ?? new Date(), tool: sanitizeToolName(o.toolName), inputHash: inputHash(o.toolInput) };
  const stores = ctx.stores();
  let shown: Shown | undefined;
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
    const told = (shown ??= await summaryOrPreview(placed, payload, ctx));
    const c = await commitSpill(store, placed.published, placed.fresh, recordOf(placed, payload, spill, told, storeNote, parts, estimates, ctx));
    if (c.error !== undefined && next && isStoreError(c.error, 'UNAVAILABLE')) {
      storeNote = fellBack(store, next, c.error, payload.notes);
      continue;
    }
    if (c.error !== undefined) payload.notes.push(`the sidecar (.meta.json) could not be written: ${errText(c.error)}`);
    return resultOf(placed, payload, spill, told.summary, c, ctx);
  }
  return failed(new Error('no store to write to'), payload, describeFormat(payload, false).kind, spill.estimate, ctx);
}
