import type { ContentKind, Estimate, GuardOptions, GuardResult, Profile, StrategyName } from './types.js';
import { PREVIEW_CHARS } from './limits.js';
import { inputHash, sanitizeToolName } from './layout.js';
import type { Payload, Subject } from './normalize.js';
import type { Spill } from './decide.js';
import { nameCandidates, type StemParts } from './store.js';
import { isStoreError, type SpillStore } from './spill-store.js';
import { buildPreview } from './preview.js';
import { buildMessage, capMessage, readMoreAdvice } from './message.js';
import { errText } from './errors.js';
import { fmtInt } from './text.js';

/**
 * What the guard answers when it cannot do its work: never the payload, always a bounded message
 * that says what happened, and what was saved (if anything).
 *
 * | call | for |
 * | --- | --- |
 * | {@link failed} | saving the spill failed: the message says so, with a preview |
 * | {@link emergency} | an internal error: the raw payload saved if at all possible (primary store, then fallback), a short message |
 * | {@link fellBack} | the note saying a store was unavailable and where the spill went instead |
 */

/** What the failure paths need of the call. */
export interface FailureContext {
  options: GuardOptions;
  limit: number;
  profile: Profile;
  strategy: StrategyName;
  /** The primary store, then the fallback. */
  stores: () => SpillStore[];
}

/** The note (for the message and the sidecar) when a store was unavailable and the next one takes the spill. */
export function fellBack(from: SpillStore, to: SpillStore, err: unknown, notes: string[]): string {
  const note = `The store ${from.location} was unavailable (${errText(err)}); the result was saved to the fallback ${to.location} instead.`;
  notes.push(note);
  return note;
}

/** Saving failed: a bounded message that says so (with a preview), never the payload. */
export function failed(err: unknown, payload: Payload, kind: ContentKind, estimate: Estimate, ctx: FailureContext): GuardResult {
  const why = errText(err);
  const errors = [...payload.notes, `saving failed: ${why}`];
  let preview: string | undefined;
  try {
    preview = payload.text !== undefined ? buildPreview(payload.text, kind, PREVIEW_CHARS) : undefined;
  } catch {
    preview = undefined;
  }
  const o = ctx.options;
  const where = ctx.stores()[0]?.location ?? o.sessionPath;
  const message = buildMessage({ action: 'failed', toolName: o.toolName, estimate, limitTokens: ctx.limit, kind, bytes: payload.byteLength, sessionPath: where, assets: [], preview, failure: why });
  return { action: 'spill', message, estimate, limitTokens: ctx.limit, assets: [], errors };
}

/** The raw form of a subject for a last-resort save: the string, the bytes, or the JSON already made. */
function rawOf(subject: Subject | null, spill: Spill | null): { data: string | Buffer; binary: boolean } | undefined {
  if (!subject) return undefined;
  if (subject.origin === 'bytes') return { data: subject.bytes, binary: subject.binary };
  const text = subject.origin === 'string' ? subject.text : spill?.text;
  return text === undefined ? undefined : { data: text, binary: false };
}

/** Last resort after an internal error: save the raw payload if at all possible, say so briefly. */
export async function emergency(err: unknown, subject: Subject | null, spill: Spill | null, ctx: FailureContext): Promise<GuardResult> {
  const o = ctx.options;
  const why = errText(err);
  const errors = [`internal error: ${why}`];
  const raw = rawOf(subject, spill);
  const bytes = raw ? (typeof raw.data === 'string' ? Buffer.byteLength(raw.data) : raw.data.byteLength) : undefined;
  let saved: string | undefined;
  if (raw) {
    const parts: StemParts = { time: new Date(), tool: sanitizeToolName(o?.toolName), inputHash: inputHash(o?.toolInput) };
    let stores: SpillStore[] = [];
    try {
      stores = ctx.stores();
    } catch (e2) {
      errors.push(`emergency save failed: ${errText(e2)}`);
    }
    for (const store of stores) {
      try {
        saved = store.describe((await store.putPayload(nameCandidates(parts, raw.binary ? '.bin' : '.txt'), () => raw.data)).key);
        break;
      } catch (e2) {
        errors.push(`emergency save to ${store.location} failed: ${errText(e2)}`);
        if (!isStoreError(e2, 'UNAVAILABLE')) break;
      }
    }
  }
  const message = capMessage(
    `[spillway] The tool result${o?.toolName ? ` of \`${o.toolName}\`` : ''} was withheld because the guard hit an internal error (${why}).` +
      (bytes !== undefined ? ` It was ${fmtInt(bytes)} bytes.` : '') +
      (saved ? ` The raw result was saved to ${saved}. ${readMoreAdvice(o?.readMore)}` : ' It could not be saved.'),
  );
  return {
    action: 'spill',
    message,
    estimate: { tokens: bytes ?? 0, strategy: ctx.strategy, profile: ctx.profile, exact: false },
    limitTokens: ctx.limit,
    ...(saved ? { payloadPath: saved } : {}),
    assets: [],
    errors,
  };
}
