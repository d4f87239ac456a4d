import type { AssetRef, ContentKind, GuardAction, GuardOptions, GuardResult, PayloadMeta, SummaryRun } from './types.js';
import { INLINE_HEADER_ROOM_CHARS, MAX_MESSAGE_CHARS, PREVIEW_CHARS } from './limits.js';
import type { Payload } from './normalize.js';
import { type DecideContext, type Spill } from './decide.js';
import type { LinkedPayload } from './extract.js';
import type { NameCandidate, SpillStore } from './store/seam.js';
import type { Commit, StemParts } from './store/publish.js';
import { describeBinary } from './media.js';
import { buildPreview } from './preview.js';
import { runSummary } from './summary.js';
import { buildMessage } from './message.js';
import { isLocalCopying, localCopyOf } from './local-copy.js';
import { jsonSafe } from './serialize.js';
import { fmtInt } from './text.js';

/**
 * What a spill tells: to the model (a summary or a preview, in the message) and to the session
 * (the sidecar), and the GuardResult handed back to the caller.
 *
 * | call | for |
 * | --- | --- |
 * | {@link summaryOrPreview} | a summary when the model will not see the content; else a preview (long when the result fit the limit) |
 * | {@link recordOf} | for a payload name, the message and the sidecar JSON that records it |
 * | {@link resultOf} | the GuardResult of a committed (or half-committed) spill |
 */

/** What the record needs of the call. */
export interface RecordContext extends DecideContext {
  options: GuardOptions;
}

/** What a summary or preview showed. */
export interface Shown {
  summary?: SummaryRun;
  preview?: string;
}

/** A spill's payload, linked and published in one store. */
export interface Placed {
  store: SpillStore;
  linked?: LinkedPayload;
  kind: ContentKind;
  action: Exclude<GuardAction, 'pass'>;
  /** Why a spill is not about size: the result is binary, or it fit but its rest is too long for a message. */
  shownAs?: 'binary' | 'assets';
  inlineTokens?: number;
  published: NameCandidate;
  /** More names of the same stem base, if the sidecar's name turns out taken. */
  fresh: Iterable<NameCandidate>;
}

/** A summary when the model will not see the content itself; else (or when it fails) a preview. */
export async function summaryOrPreview(placed: Placed, payload: Payload, ctx: RecordContext): Promise<Shown> {
  const o = ctx.options;
  const source = payload.binary ? undefined : (placed.linked?.text ?? payload.text);
  let summary: SummaryRun | undefined;
  // A result that fit the limit is shown at length instead: it is small enough to need no summary.
  if (placed.action === 'spill' && !placed.shownAs && o.summarize && source !== undefined) {
    summary = await runSummary(o.summarize, { text: source, toolName: o.toolName, toolInput: o.toolInput, focus: o.intent, timeoutMs: o.summaryTimeoutMs, signal: o.signal });
    if (summary.status !== 'ok') payload.notes.push(`summary ${summary.status}: ${summary.error ?? ''}`.trim());
  }
  if (placed.action === 'inline-assets' || summary?.status === 'ok') return { summary };
  if (source === undefined) return { summary, preview: binaryPreview(placed.linked?.assets[0], payload) };
  return { summary, preview: buildPreview(source, placed.kind, placed.shownAs === 'assets' ? MAX_MESSAGE_CHARS - INLINE_HEADER_ROOM_CHARS : PREVIEW_CHARS) };
}

/** What a binary result is, in one line: its type and size, and what its header says. */
function binaryPreview(asset: AssetRef | undefined, payload: Payload): string {
  const what = payload.binary ? describeBinary(payload.binary) : undefined;
  return `(binary: ${asset?.mimeType ?? 'application/octet-stream'}, ${fmtInt(payload.byteLength)} bytes${what ? `; ${what}` : ''})`;
}

/** The message for the payload's final name, and the sidecar that records it. */
export function recordOf(
  placed: Placed,
  payload: Payload,
  spill: Spill,
  shown: Shown,
  storeNote: string | undefined,
  parts: StemParts,
  estimates: PayloadMeta['estimates'],
  ctx: RecordContext,
) {
  const o = ctx.options;
  const { store, linked, kind, action } = placed;
  const assets = linked?.assets ?? [];
  return (c: NameCandidate) => {
    const fileName = c.key.slice(c.key.lastIndexOf('/') + 1);
    const local = localCopyOf(store, c.key);
    const copyNote = isLocalCopying(store) && !local ? `No local copy could be kept (${store.copyError(c.key) ?? 'unknown error'}): the bucket's is the only one.` : undefined;
    const message = buildMessage({
      action, toolName: o.toolName, estimate: spill.estimate, estimateSampled: spill.sampled !== undefined, limitTokens: ctx.limit, kind,
      bytes: payload.byteLength, ...(ctx.shown !== undefined ? { shownBytes: Buffer.byteLength(ctx.shown) } : {}), sessionPath: store.location, payloadPath: store.describe(c.key), assets, summary: shown.summary,
      preview: shown.preview, inlineText: action === 'inline-assets' ? linked?.text : undefined, inlineTokens: placed.inlineTokens, storeNote,
      reason: placed.shownAs, readMore: o.readMore, incomplete: o.incomplete,
      ...(local ? { localPath: local } : {}), ...(copyNote ? { storeNote: [storeNote, copyNote].filter(Boolean).join('\n') } : {}),
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
      ...callFields(o.call),
    };
    return { message, json: JSON.stringify(meta, null, 2) + '\n' };
  };
}

const CALL_FIELDS = ['toolCallId', 'client', 'clientSessionId', 'transcriptPath', 'cwd'] as const;
/** Longest call field kept in a sidecar (ids and paths; anything longer is not one). */
const MAX_CALL_FIELD_CHARS = 4096;

/** The tool call's fields for the sidecar: strings only, each bounded; anything else left out. */
export function callFields(call: unknown): Partial<Pick<PayloadMeta, (typeof CALL_FIELDS)[number]>> {
  const out: Partial<Record<(typeof CALL_FIELDS)[number], string>> = {};
  if (typeof call !== 'object' || call === null) return out;
  for (const k of CALL_FIELDS) {
    const v = (call as Record<string, unknown>)[k];
    if (typeof v === 'string' && v && v.length <= MAX_CALL_FIELD_CHARS) out[k] = v;
  }
  return out;
}

export function resultOf(placed: Placed, payload: Payload, spill: Spill, summary: SummaryRun | undefined, c: Commit, ctx: RecordContext): GuardResult {
  const payloadPath = placed.store.describe(c.payload.key);
  return {
    action: placed.action, message: c.message, estimate: spill.estimate, limitTokens: ctx.limit, payloadPath,
    ...(localCopyOf(placed.store, c.payload.key) ? { localPath: localCopyOf(placed.store, c.payload.key) } : {}),
    ...(placed.linked ? { linkedPath: payloadPath } : {}),
    ...(c.metaKey ? { metaPath: placed.store.describe(c.metaKey) } : {}),
    assets: placed.linked?.assets ?? [],
    ...(summary ? { summary } : {}),
    errors: payload.notes,
  };
}
