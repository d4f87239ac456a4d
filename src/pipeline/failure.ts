import type { ContentKind, Estimate, GuardOptions, GuardResult, Profile, StrategyName } from './types.js';
import { PREVIEW_CHARS } from './limits.js';
import { inputHash, sanitizeToolName } from './layout.js';
import type { Payload, Subject } from './normalize.js';
import type { Spill } from './decide.js';
import { nameCandidates, prepareSessionDirs, publishNew, type StemParts } from './store.js';
import { buildPreview } from './preview.js';
import { buildMessage, capMessage } from './message.js';
import { errText } from './errors.js';
import { fmtInt } from './text.js';

/**
 * What the guard answers when it cannot do its work: never the payload, always a bounded message
 * that says what happened, and what was saved (if anything).
 *
 * | call | for |
 * | --- | --- |
 * | {@link failed} | saving the spill failed: the message says so, with a preview |
 * | {@link emergency} | an internal error: the raw payload saved if at all possible, a short message |
 */

/** What the failure paths need of the call. */
export interface FailureContext {
  options: GuardOptions;
  limit: number;
  profile: Profile;
  strategy: StrategyName;
}

/** Saving failed: a bounded message that says so (with a preview), never the payload. */
export function failed(err: unknown, payload: Payload, text: string | undefined, kind: ContentKind, estimate: Estimate, ctx: FailureContext): GuardResult {
  const why = errText(err);
  const errors = [...payload.notes, `saving failed: ${why}`];
  let preview: string | undefined;
  try {
    preview = text !== undefined ? buildPreview(text, kind, PREVIEW_CHARS) : undefined;
  } catch {
    preview = undefined;
  }
  const o = ctx.options;
  const message = buildMessage({ action: 'failed', toolName: o.toolName, estimate, limitTokens: ctx.limit, kind, bytes: payload.byteLength, sessionPath: o.sessionPath, assets: [], preview, failure: why });
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
  try {
    if (raw) {
      const paths = await prepareSessionDirs(o.sessionPath);
      const parts: StemParts = { time: new Date(), tool: sanitizeToolName(o?.toolName), inputHash: inputHash(o?.toolInput) };
      saved = (await publishNew(paths.longResponses, nameCandidates(parts, raw.binary ? '.bin' : '.txt'), raw.data)).path;
    }
  } catch (e2) {
    errors.push(`emergency save failed: ${errText(e2)}`);
  }
  const message = capMessage(
    `[spillway] The tool result${o?.toolName ? ` of \`${o.toolName}\`` : ''} was withheld because the guard hit an internal error (${why}).` +
      (bytes !== undefined ? ` It was ${fmtInt(bytes)} bytes.` : '') +
      (saved ? ` The raw result was saved to ${saved} (read it with Read/Grep).` : ' It could not be saved.'),
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
