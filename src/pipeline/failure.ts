import crypto from 'node:crypto';
import type { ContentKind, Estimate, GuardResult, PayloadMeta } from './types.js';
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
import type { NormalizedGuardOptions } from './options.js';
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

/** The note (for the message and the sidecar) when a store was unavailable and the next one takes the spill. */
export function fellBack(from: SpillStore, to: SpillStore, err: unknown): string {
  return `The store ${from.location} was unavailable (${errText(err)}); the result was saved to the fallback ${to.location} instead.`;
}

/** What a failed save is told with: the error, the payload, the notes so far and how it was measured. */
export interface Failure {
  err: unknown;
  payload: Payload;
  notes: readonly string[];
  kind: ContentKind;
  estimate: Estimate;
  options: NormalizedGuardOptions;
}

/** Saving failed: a bounded message that says so (with a preview), never the payload. */
export function failed({ err, payload, notes, kind, estimate, options: o }: Failure): GuardResult {
  const why = errText(err);
  const errors = [...notes, `saving failed: ${why}`];
  let preview: string | undefined;
  try {
    preview = payload.text !== undefined ? buildPreview(payload.text, kind, PREVIEW_CHARS) : undefined;
  } catch {
    preview = undefined;
  }
  const where = o.stores()[0]?.location ?? o.sessionPath;
  const message = buildMessage({ action: 'failed', toolName: o.toolName, estimate, limitTokens: o.limit, kind, bytes: payload.byteLength, sessionPath: where, assets: [], preview, failure: why });
  return { action: 'spill', message, estimate, limitTokens: o.limit, assets: [], errors };
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
  if (subject.origin === 'bytes' || subject.origin === 'decoded-string') return { data: subject.bytes, binary: subject.binary, bytes: subject.bytes.byteLength };
  const text = subject.origin === 'string' ? subject.text : spill?.text;
  return text === undefined ? undefined : { data: text, binary: false, bytes: Buffer.byteLength(text) };
}

/**
 * What a last-resort result is worth in tokens: the decision's estimate when it got that far, else a
 * cheap bounded estimate of the text, else its byte count (a tokenizer never makes more tokens than
 * bytes), so neither the result nor the sidecar claims more than the payload holds.
 */
function emergencyEstimate(raw: Raw | undefined, spill: Spill | null, o: NormalizedGuardOptions): Estimate {
  const bytes = raw?.bytes ?? 0;
  const byBytes: Estimate = { tokens: bytes, strategy: o.strategy, profile: o.profile, exact: false };
  if (spill?.estimate) return spill.estimate;
  if (!raw || typeof raw.data !== 'string') return byBytes;
  try {
    const e = estimateTokens(raw.data, { profile: o.profile, claudeCorrection: o.claudeCorrection, bounded: true });
    return e.tokens <= bytes ? e : byBytes;
  } catch {
    return byBytes;
  }
}

/** The message for a last-resort save, given where it went (if anywhere). */
function emergencyMessage(o: NormalizedGuardOptions, why: string, bytes: number | undefined, saved: string | undefined): string {
  return capMessage(
    `[spillway] The tool result${o.toolName ? ` of \`${o.toolName}\`` : ''} was withheld because the guard hit an internal error (${why}).` +
      (bytes !== undefined ? ` It was ${fmtInt(bytes)} bytes.` : '') +
      (saved ? ` The raw result was saved to ${saved}. ${readMoreAdvice(o.readMore, o.drillDownNames)}` : ' It could not be saved.'),
  );
}

/**
 * A sidecar for a last-resort save, so the index lists it (with the error) instead of calling it an
 * unfinished spill, and `spillway restore` can check its sha256. The other strategies' estimates
 * are left to the index.
 */
function emergencySidecar(s: { c: NameCandidate; raw: Raw; subject: Subject; estimate: Estimate; parts: StemParts; message: string; errors: readonly string[]; options: NormalizedGuardOptions }): string {
  const { c, raw, subject, estimate, parts, message, errors, options: o } = s;
  let toolInput: unknown;
  try {
    toolInput = o.toolInput !== undefined ? jsonSafe(o.toolInput) : undefined;
  } catch {
    toolInput = undefined; // the input may be what broke (a throwing getter): left out
  }
  const bytes = raw.bytes;
  const meta: PayloadMeta = {
    version: 1, id: c.stem, createdAt: parts.time.toISOString(), tool: o.toolName ?? parts.tool,
    ...(toolInput !== undefined ? { toolInput } : {}),
    ...(o.intent ? { intent: o.intent } : {}),
    action: 'spill', payloadFile: c.key.slice(c.key.lastIndexOf('/') + 1), payloadIsOriginal: true,
    kind: raw.binary ? 'binary' : 'text', bytes, chars: typeof raw.data === 'string' ? raw.data.length : bytes,
    sha256: crypto.createHash('sha256').update(raw.data).digest('hex'),
    estimate, estimates: {}, limitTokens: o.limit, assets: [], message, summaryRuns: [], errors: [...errors],
    ...(subject.origin === 'bytes' || subject.origin === 'string' || subject.origin === 'json-value' ? { origin: subject.origin } : subject.origin === 'decoded-string' ? { origin: 'string' as const } : {}),
    ...o.call,
  };
  return JSON.stringify(meta, null, 2) + '\n';
}

/** Last resort after an internal error: save the raw payload if at all possible, say so briefly. */
export async function emergency(err: unknown, subject: Subject | null, spill: Spill | null, o: NormalizedGuardOptions): Promise<GuardResult> {
  const why = errText(err);
  const errors = [`internal error: ${why}`];
  const raw = rawOf(subject, spill);
  const bytes = raw?.bytes;
  const estimate = emergencyEstimate(raw, spill, o);
  let saved: string | undefined;
  let metaPath: string | undefined;
  if (raw && subject) {
    const parts: StemParts = { time: new Date(), tool: sanitizeToolName(o.toolName), inputHash: inputHash(o.toolInput) };
    const suffix = raw.binary ? '.bin' : '.txt';
    let stores: SpillStore[] = [];
    try {
      stores = o.stores();
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
          return { message, json: emergencySidecar({ c: n, raw, subject, estimate, parts, message, errors: sidecarErrors, options: o }) };
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
    limitTokens: o.limit,
    ...(saved ? { payloadPath: saved } : {}),
    ...(metaPath ? { metaPath } : {}),
    assets: [],
    errors,
  };
}
