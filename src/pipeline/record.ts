import type { AssetRef, ContentKind, Estimate, GuardAction, GuardResult, PayloadMeta, SummaryRun } from './types.js';
import { INLINE_HEADER_ROOM_CHARS, MAX_MESSAGE_CHARS, PREVIEW_CHARS } from './limits.js';
import type { Payload } from './normalize.js';
import type { Spill } from './decide.js';
import type { NormalizedGuardOptions } from './options.js';
import type { LinkedPayload } from './extract.js';
import type { NameCandidate, SpillStore } from './store/seam.js';
import type { Commit, StemParts } from './store/publish.js';
import { describeBinary } from './media.js';
import { buildPreview, buildPreviewOfPieces } from './preview.js';
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

/** What a summary or preview showed, and what went wrong making it. */
export interface Shown {
  summary?: SummaryRun;
  preview?: string;
  notes: readonly string[];
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
  /** What linking had to say (not UTF-8, an extraction that failed). */
  notes: readonly string[];
}

/** A summary when the model will not see the content itself; else (or when it fails) a preview. */
export async function summaryOrPreview(placed: Placed, payload: Payload, o: NormalizedGuardOptions, estimate?: Estimate): Promise<Shown> {
  // The linked form, when there is one, is joined only if read (a summary, a preview that needs it whole).
  const linked = payload.binary ? undefined : placed.linked;
  const source = payload.binary ? undefined : linked ? () => linked.text : payload.text === undefined ? undefined : () => payload.text!;
  let summary: SummaryRun | undefined;
  // A result that fit the limit is shown at length instead: it is small enough to need no summary.
  if (placed.action === 'spill' && !placed.shownAs && o.summarize && source !== undefined) {
    // The guard's figure is of the payload's text: handed on only when that is the text summarized, so
    // the message states one figure (issue 29: the spill said ~114,517 claude, its summary ~109,572 o200k).
    const same = !linked && estimate !== undefined && o.shown === undefined;
    summary = await runSummary(o.summarize, { text: source(), toolName: o.toolName, toolInput: o.toolInput, focus: o.intent, timeoutMs: o.summaryTimeoutMs, signal: o.signal, ...(same ? { estimate } : {}) });
  }
  const notes = summary && summary.status !== 'ok' ? [`summary ${summary.status}: ${summary.error ?? ''}`.trim()] : [];
  if (placed.action === 'inline-assets' || summary?.status === 'ok') return { summary, notes };
  if (source === undefined) return { summary, preview: binaryPreview(placed.linked?.assets[0], payload), notes };
  const max = placed.shownAs === 'assets' ? MAX_MESSAGE_CHARS - INLINE_HEADER_ROOM_CHARS : PREVIEW_CHARS;
  return { summary, preview: linked ? buildPreviewOfPieces(linked.pieces, linked.chars, source, placed.kind, max) : buildPreview(source(), placed.kind, max), notes };
}

/** What a binary result is, in one line: its type and size, and what its header says. */
function binaryPreview(asset: AssetRef | undefined, payload: Payload): string {
  const what = payload.binary ? describeBinary(payload.binary) : undefined;
  return `(binary: ${asset?.mimeType ?? 'application/octet-stream'}, ${fmtInt(payload.byteLength)} bytes${what ? `; ${what}` : ''})`;
}

/** What a spill's record is made of. */
export interface RecordParts {
  placed: Placed;
  payload: Payload;
  spill: Spill;
  shown: Shown;
  /** Where the spill went instead of the store asked for, and why. */
  storeNote?: string;
  parts: StemParts;
  estimates: PayloadMeta['estimates'];
  /** Every phase's notes, in order: the sidecar's `errors`. */
  notes: readonly string[];
  options: NormalizedGuardOptions;
}

/** The message for the payload's final name, and the sidecar that records it. */
export function recordOf({ placed, payload, spill, shown, storeNote, parts, estimates, notes, options: o }: RecordParts) {
  const { store, linked, kind, action } = placed;
  const assets = linked?.assets ?? [];
  return (c: NameCandidate) => {
    const fileName = c.key.slice(c.key.lastIndexOf('/') + 1);
    const local = localCopyOf(store, c.key);
    const copyNote = isLocalCopying(store) && !local ? `No local copy could be kept (${store.copyError(c.key) ?? 'unknown error'}): the bucket's is the only one.` : undefined;
    const message = buildMessage({
      action, toolName: o.toolName, estimate: spill.estimate, estimateSampled: spill.sampled !== undefined, limitTokens: o.limit, kind,
      bytes: payload.byteLength, ...(o.shown !== undefined ? { shownBytes: Buffer.byteLength(o.shown) } : {}), sessionPath: store.location, payloadPath: store.describe(c.key), assets, summary: shown.summary,
      preview: shown.preview, inlineText: action === 'inline-assets' ? linked?.text : undefined, inlineTokens: placed.inlineTokens, storeNote,
      reason: placed.shownAs, readMore: o.readMore, drillDownNames: o.drillDownNames, incomplete: o.incomplete, ...(payload.lossy ? { lossy: true } : {}),
      ...(local ? { localPath: local } : {}), ...(copyNote ? { storeNote: [storeNote, copyNote].filter(Boolean).join('\n') } : {}),
    });
    const meta: PayloadMeta = {
      version: 1, id: c.stem, createdAt: parts.time.toISOString(), tool: o.toolName ?? parts.tool,
      ...(o.toolInput !== undefined ? { toolInput: jsonSafe(o.toolInput) } : {}),
      ...(o.intent ? { intent: o.intent } : {}),
      action, payloadFile: fileName, payloadIsOriginal: !linked, ...(linked ? { linkedFile: fileName } : {}),
      kind, bytes: payload.byteLength, chars: payload.text?.length ?? payload.byteLength, sha256: payload.sha256,
      estimate: spill.estimate, estimates, limitTokens: o.limit, assets, message,
      summaryRuns: shown.summary ? [shown.summary] : [],
      ...(notes.length ? { errors: [...notes] } : {}),
      origin: payload.origin,
      ...(linked?.links.length ? { links: linked.links } : {}),
      ...o.call,
      ...(o.rule ? { rule: o.rule } : {}),
    };
    return { message, json: JSON.stringify(meta, null, 2) + '\n' };
  };
}

/** The GuardResult of a committed (or half-committed) spill; `errors` are the sidecar's, and what the commit could not do. */
export function resultOf(r: { placed: Placed; spill: Spill; summary?: SummaryRun; commit: Commit; errors: readonly string[]; options: NormalizedGuardOptions }): GuardResult {
  const { placed, spill, summary, commit: c } = r;
  const payloadPath = placed.store.describe(c.payload.key);
  return {
    action: placed.action, message: c.message, estimate: spill.estimate, limitTokens: r.options.limit, payloadPath,
    ...(localCopyOf(placed.store, c.payload.key) ? { localPath: localCopyOf(placed.store, c.payload.key) } : {}),
    ...(placed.linked ? { linkedPath: payloadPath } : {}),
    ...(c.metaKey ? { metaPath: placed.store.describe(c.metaKey) } : {}),
    assets: placed.linked?.assets ?? [],
    ...(summary ? { summary } : {}),
    errors: [...r.errors],
  };
}
