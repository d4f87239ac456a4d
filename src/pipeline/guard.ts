import type { ContentKind, GuardOptions, GuardResult, ToolResult } from './types.js';
import { INLINE_HEADER_ROOM_CHARS, MAX_MESSAGE_CHARS } from './limits.js';
import { KIND_INFO, detectTextFormat } from './detect.js';
import { LINKED_SUFFIX, assetFileName, assetKey, inputHash, sanitizeToolName } from './layout.js';
import { normalize, preparePayload, textSlices, type Payload, type Subject } from './normalize.js';
import { decide, measureInline, passesAtOnce, strategyCounts, type Spill } from './decide.js';
import { extractAssetsAsync, linkAssets, linkBinary, type AssetSink, type LinkedPayload } from './extract.js';
import { SpillStoreError, isStoreError, type SpillBody, type SpillStore } from './store/seam.js';
import { commitSpill, nameCandidates, type StemParts } from './store/publish.js';
import { normalizeGuardOptions, type GuardOptionsInput, type NormalizedGuardOptions } from './options.js';
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
 * | {@link handleLargeResponse} | a text the caller already knows is large: `guardLargeResult` with `knownLarge` |
 * | {@link resolveLimit} | the limit a call decides with (explicit, default, narrowed by the context window) |
 *
 * The options are normalised once, on the way in (options.ts); no phase reads the caller's object.
 * A spill is a chain of phases, each returning what the next needs, its notes included: normalize (normalize.ts) →
 * decide (decide.ts) → describe → link assets (extract.ts) → choose the action → publish the
 * payload (through a SpillStore, store.ts) → summary or preview → message → the sidecar, last.
 * When the store is UNAVAILABLE the chain from "link assets" runs again on the fallback store.
 */

export interface HandleLargeResponseArgs {
  text: string;
  sessionPath: string;
  context?: Pick<GuardOptions, 'call' | 'toolName' | 'toolInput' | 'intent' | 'limitTokens' | 'contextWindowTokens' | 'profile' | 'strategy' | 'claudeCorrection' | 'readMore' | 'drillDownNames' | 'incomplete' | 'localCopy' | 'cutMediaBlocks'>;
  summarize?: GuardOptions['summarize'];
  summaryTimeoutMs?: number;
  signal?: AbortSignal;
  now?: () => Date;
  /** As in GuardOptions: where it is written, where it goes when that store is unavailable, the deadline per call. */
  store?: GuardOptions['store'];
  fallbackStore?: GuardOptions['fallbackStore'];
  storeTimeoutMs?: number;
  /** As in GuardOptions: the caller's environment (SPILLWAY_STORE and the S3 settings); none, none apply. */
  env?: GuardOptions['env'];
}

export { resolveLimit };

/**
 * Guard one tool result. `null`: pass it to the model unchanged. Otherwise the message to show
 * instead, with where everything was saved. The options are normalised here, once (options.ts);
 * options already normalised by the caller are taken as they are.
 */
export async function guardLargeResult(result: ToolResult, options: GuardOptionsInput): Promise<GuardResult | null> {
  const o = normalizeGuardOptions(options);
  let subject: Subject | null = null;
  let spill: Spill | null = null;
  try {
    subject = normalize(result);
    if (!subject || (!o.knownLarge && passesAtOnce(subject, o))) return null;
    spill = await decide(subject, o);
    return spill ? await spillPayload(subject, spill, o) : null;
  } catch (err) {
    return emergency(err, subject, spill, o);
  }
}

/** A text already known to be large: {@link guardLargeResult} with `knownLarge`, so always spilled. Never throws. */
export async function handleLargeResponse(args: HandleLargeResponseArgs): Promise<GuardResult> {
  const { summarize, summaryTimeoutMs, signal, now, store, fallbackStore, storeTimeoutMs, env } = args;
  const text = typeof args.text === 'string' ? args.text : String(args.text);
  const options: GuardOptions = { sessionPath: args.sessionPath, ...args.context, summarize, summaryTimeoutMs, signal, now, store, fallbackStore, storeTimeoutMs, env, knownLarge: true };
  // A string always has a subject, and a known-large subject always spills: never null.
  return (await guardLargeResult(text, options))!;
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
async function linkPhase(payload: Payload, spill: Spill, sink: AssetSink): Promise<{ linked?: LinkedPayload; json: boolean; notes: string[] }> {
  try {
    if (payload.binary) return { linked: await linkBinary(payload.binary, sink), json: false, notes: [] };
    if (payload.text === undefined) return { json: false, notes: [] };
    if (!payload.textIsExact) return { json: false, notes: ['the bytes are not valid UTF-8: saved as received, without extracting assets'] };
    // Over the limit: every asset found, in an array linkAssets empties as it saves, so each decoded
    // asset can be collected once saved (a copy of it held all 45 MB of a big spill's images to the
    // end). A result that fit: those the decision chose, copied, as a fallback store links them again.
    const { assets, json } = spill.found ? { ...spill.found, assets: [...spill.found.assets] } : await extractAssetsAsync(payload.text);
    return { linked: assets.length ? await linkAssets(payload.text, assets, sink) : undefined, json, notes: [] };
  } catch (err) {
    if (err instanceof SpillStoreError) throw err;
    return { json: false, notes: [`asset extraction failed (${errText(err)}); the payload is saved whole instead`] };
  }
}

/**
 * Inline the rest when the assets were what made it a spill: the text left fits the limit and,
 * whole, the message. A result that fit from the start but whose rest is too long for a message
 * is spilled with a long preview (`shownAs: 'assets'`).
 */
async function chooseAction(payload: Payload, linked: LinkedPayload | undefined, spill: Spill, o: NormalizedGuardOptions) {
  if (payload.binary) return { action: 'spill' as const, shownAs: 'binary' as const };
  const fitsMessage = linked !== undefined && linked.chars <= MAX_MESSAGE_CHARS - INLINE_HEADER_ROOM_CHARS;
  // A big linked text is not measured: it cannot be inlined, and counting 40 MB would be slow.
  if (!linked || (!fitsMessage && spill.reason !== 'inline-assets')) return { action: 'spill' as const };
  const inline = await measureInline(linked.text, o, spill.estimate.strategy);
  if (fitsMessage && inline.tokens <= o.limit) return { action: 'inline-assets' as const, inlineTokens: inline.tokens };
  return spill.reason === 'inline-assets' ? { action: 'spill' as const, shownAs: 'assets' as const, inlineTokens: inline.tokens } : { action: 'spill' as const };
}

/** The payload file: the linked form when assets were cut out (sidecar `links` rebuild the original), else the original bytes. */
function payloadFile(payload: Payload, fileKind: ContentKind, linked?: LinkedPayload): { suffix: string; body: () => SpillBody } {
  const original = payload.original;
  if (!linked) return { suffix: KIND_INFO[fileKind].ext, body: () => (typeof original === 'string' ? textSlices(original) : original) };
  return { suffix: payload.binary || fileKind === 'json' ? LINKED_SUFFIX : KIND_INFO[fileKind].ext, body: () => linked.pieces };
}

/** Link assets, choose the action, publish the payload: the phases that write to a store. */
async function place(payload: Payload, spill: Spill, store: SpillStore, parts: StemParts, o: NormalizedGuardOptions): Promise<Placed> {
  const { linked, json, notes } = await linkPhase(payload, spill, storeSink(store));
  const { kind, fileKind } = describeFormat(payload, json);
  const choice = await chooseAction(payload, linked, spill, o);
  const file = payloadFile(payload, fileKind, linked);
  const fresh = nameCandidates(parts, file.suffix);
  const published = await store.putPayload(fresh, file.body);
  return { store, linked, kind, ...choice, published, fresh, notes };
}

/**
 * Publish through the first store that takes it: a store that is UNAVAILABLE hands the spill to
 * the next (the fallback), and the message says where it went. The summary is made once. The
 * sidecar's errors are the phases' notes, in the order they happened.
 */
async function spillPayload(subject: Subject, spill: Spill, o: NormalizedGuardOptions): Promise<GuardResult> {
  const payload = preparePayload(subject, spill.text, spill.textBytes);
  // The caller did not get the whole tool output (Bash cut by Claude Code): the sidecar says what is missing.
  const notes = [...spill.notes, ...payload.notes, ...(o.incomplete ? [`incomplete: ${o.incomplete}`] : [])];
  const estimates = await strategyCounts(payload.text, spill, o);
  const parts: StemParts = { time: o.now(), tool: sanitizeToolName(o.toolName), inputHash: inputHash(o.toolInput) };
  const stores = o.stores();
  let shown: Shown | undefined;
  let storeNote: string | undefined;
  for (let i = 0; i < stores.length; i++) {
    const store = stores[i]!;
    const next = stores[i + 1];
    let placed: Placed;
    try {
      placed = await place(payload, spill, store, parts, o);
    } catch (err) {
      if (next && isStoreError(err, 'UNAVAILABLE')) {
        storeNote = fellBack(store, next, err);
        notes.push(storeNote);
        continue;
      }
      return failed({ err, payload, notes, kind: describeFormat(payload, false).kind, estimate: spill.estimate, options: o });
    }
    const told = (shown ??= await summaryOrPreview(placed, payload, o, spill.estimate));
    const recorded = [...notes, ...placed.notes, ...told.notes];
    const c = await commitSpill(store, placed.published, placed.fresh, recordOf({ placed, payload, spill, shown: told, storeNote, parts, estimates, notes: recorded, options: o }));
    if (c.error !== undefined && next && isStoreError(c.error, 'UNAVAILABLE')) {
      storeNote = fellBack(store, next, c.error);
      notes.push(storeNote);
      continue;
    }
    const errors = c.error === undefined ? recorded : [...recorded, `the sidecar (.meta.json) could not be written: ${errText(c.error)}`];
    return resultOf({ placed, spill, summary: told.summary, commit: c, errors, options: o });
  }
  return failed({ err: new Error('no store to write to'), payload, notes, kind: describeFormat(payload, false).kind, estimate: spill.estimate, options: o });
}
