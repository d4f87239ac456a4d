import crypto from 'node:crypto';
import type { ContentKind, Estimate, GuardOptions, GuardResult, PayloadMeta, Profile, StrategyName } from './types.js';
import { PREVIEW_CHARS } from './limits.js';
import { inputHash, sanitizeToolName } from './layout.js';
import type { Payload, Subject } from './normalize.js';
import type { Spill } from './decide.js';
import { commitSpill, nameCandidates, type StemParts } from './store/publish.js';
import type { NameCandidate } from './store/seam.js';
import { isStoreError, type SpillStore } from './store/seam.js';
import { buildPreview } from './preview.js';
import { buildMessage, capMessage, readMoreAdvice } from './message.js';
import { errText } from './errors.js';
import { jsonSafe } from './serialize.js';
import { callFields } from './record.js';
import { estimateTokens } from './estimate/index.js';
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

/** The raw form of a subject for a last-resort save, and its size in bytes (measured once: it may be large). */
interface Raw {
  data: string | Buffer;
  binary: boolean;
  bytes: number;
}

/** The raw form of a subject for a last-resort save: the string, the bytes, or the JSON already made. */
function rawOf(subject: Subject | null, spill: Spill | null): Raw | undefined {
  if (!subject) return undefined;
  if (subject.origin === 'bytes') return { data: subject.bytes, binary: subject.binary, bytes: subject.bytes.byteLength };
  const text = subject.origin === 'string' ? subject.text : spill?.text;
  return text === undefined ? undefined : { data: text, binary: false, bytes: Buffer.byteLength(text) };
}

/**
 * What a last-resort result is worth in tokens: the decision's estimate when it got that far, else a
 * cheap bounded estimate of the text, else its byte count (a tokenizer never makes more tokens than
 * bytes), so neither the result nor the sidecar claims more than the payload holds.
 */
function emergencyEstimate(raw: Raw | undefined, spill: Spill | null, ctx: FailureContext): Estimate {
  const bytes = raw?.bytes ?? 0;
  const byBytes: Estimate = { tokens: bytes, strategy: ctx.strategy, profile: ctx.profile, exact: false };
  if (spill?.estimate) return spill.estimate;
  if (!raw || typeof raw.data !== 'string') return byBytes;
  try {
    const e = estimateTokens(raw.data, { profile: ctx.profile, bounded: true });
    return e.tokens <= bytes ? e : byBytes;
  } catch {
    return byBytes;
  }
}

/** The message for a last-resort save, given where it went (if anywhere). */
function emergencyMessage(o: GuardOptions, why: string, bytes: number | undefined, saved: string | undefined): string {
  return capMessage(
    `[spillway] The tool result${o?.toolName ? ` of \`${o.toolName}\`` : ''} was withheld because the guard hit an internal error (${why}).` +
      (bytes !== undefined ? ` It was ${fmtInt(bytes)} bytes.` : '') +
      (saved ? ` The raw result was saved to ${saved}. ${readMoreAdvice(o?.readMore)}` : ' It could not be saved.'),
  );
}

/**
 * A sidecar for a last-resort save, so the index lists it (with the error) instead of calling it an
 * unfinished spill, and `spillway restore` can check its sha256. The other strategies' estimates
 * are left to the index.
 */
function emergencySidecar(
  c: NameCandidate,
  raw: Raw,
  subject: Subject,
  estimate: Estimate,
  parts: StemParts,
  message: string,
  errors: string[],
  ctx: FailureContext,
): string {
  // the options may be what broke (a throwing getter): what cannot be read is left out
  const read = <T>(f: () => T): T | undefined => {
    try {
      return f();
    } catch {
      return undefined;
    }
  };
  const o = ctx.options;
  const tool = read(() => o?.toolName);
  const intent = read(() => o?.intent);
  const toolInput = read(() => (o?.toolInput !== undefined ? jsonSafe(o.toolInput) : undefined));
  const call = read(() => callFields(o?.call)) ?? {};
  const bytes = raw.bytes;
  const meta: PayloadMeta = {
    version: 1, id: c.stem, createdAt: parts.time.toISOString(), tool: typeof tool === 'string' ? tool : parts.tool,
    ...(toolInput !== undefined ? { toolInput } : {}),
    ...(typeof intent === 'string' && intent ? { intent } : {}),
    action: 'spill', payloadFile: c.key.slice(c.key.lastIndexOf('/') + 1), payloadIsOriginal: true,
    kind: raw.binary ? 'binary' : 'text', bytes, chars: typeof raw.data === 'string' ? raw.data.length : bytes,
    sha256: crypto.createHash('sha256').update(raw.data).digest('hex'),
    estimate, estimates: {}, limitTokens: ctx.limit, assets: [], message, summaryRuns: [], errors,
    ...(subject.origin === 'bytes' || subject.origin === 'string' || subject.origin === 'json-value' ? { origin: subject.origin } : {}),
    ...call,
  };
  return JSON.stringify(meta, null, 2) + '\n';
}

/** Last resort after an internal error: save the raw payload if at all possible, say so briefly. */
export async function emergency(err: unknown, subject: Subject | null, spill: Spill | null, ctx: FailureContext): Promise<GuardResult> {
  const o = ctx.options;
  const why = errText(err);
  const errors = [`internal error: ${why}`];
  const raw = rawOf(subject, spill);
  const bytes = raw?.bytes;
  const estimate = emergencyEstimate(raw, spill, ctx);
  let saved: string | undefined;
  let metaPath: string | undefined;
  if (raw && subject) {
    const parts: StemParts = { time: new Date(), tool: sanitizeToolName(o?.toolName), inputHash: inputHash(o?.toolInput) };
    const suffix = raw.binary ? '.bin' : '.txt';
    let stores: SpillStore[] = [];
    try {
      stores = ctx.stores();
    } catch (e2) {
      errors.push(`emergency save failed: ${errText(e2)}`);
    }
    for (const store of stores) {
      try {
        const put = await store.putPayload(nameCandidates(parts, suffix), () => raw.data);
        saved = store.describe(put.key); // saved now, whatever becomes of the sidecar
        // the sidecar is best effort: the payload is saved either way, and the message says where
        const sidecarErrors = [...errors];
        const c = await commitSpill(store, put, nameCandidates(parts, suffix), (n) => {
          const message = emergencyMessage(o, why, bytes, store.describe(n.key));
          return { message, json: emergencySidecar(n, raw, subject, estimate, parts, message, sidecarErrors, ctx) };
        });
        saved = store.describe(c.payload.key);
        if (c.metaKey) metaPath = store.describe(c.metaKey);
        else errors.push(`the sidecar of the emergency save could not be written: ${errText(c.error)}`);
        break;
      } catch (e2) {
        errors.push(`emergency save to ${store.location} failed: ${errText(e2)}`);
        if (!isStoreError(e2, 'UNAVAILABLE')) break;
      }
    }
  }
  return {
    action: 'spill',
    message: emergencyMessage(o, why, bytes, saved),
    estimate,
    limitTokens: ctx.limit,
    ...(saved ? { payloadPath: saved } : {}),
    ...(metaPath ? { metaPath } : {}),
    assets: [],
    errors,
  };
}
