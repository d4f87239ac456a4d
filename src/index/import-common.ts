/**
 * What the three importers (Claude Code, Codex CLI, Gemini CLI) share: turning one tool result's
 * text into a payload record, ids that survive a rebuild, and the session facts people know a
 * session by (project, first prompt, client).
 */
import path from 'node:path';
import { imagesInText } from '../agents/index.js';
import { detectTextKind } from '../pipeline/index.js';
import type { GuardAction } from '../pipeline/types.js';
import type { PayloadRecord, SessionFacts, SourceLocation } from './record.js';
import { MAX_MESSAGE_CHARS_INDEXED, base64TokensForChars, checkedEstimates, clip, countLinesIn, scanBase64, stableId } from './text.js';

/** Largest spill file or Gemini chat read whole. */
export const MAX_IMPORT_FILE_BYTES = 256 * 1024 * 1024;
/** Lines without tool traffic are parsed for the session's facts only this far into a transcript. */
export const MAX_FACT_LINES = 500;
/** Longest session title kept (the first prompt, on one line). */
export const MAX_TITLE_CHARS = 200;

export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function importedPayloadId(transcript: string, key: string): string {
  return stableId('p', `${path.resolve(transcript)}#${key}`);
}

export function isoOr(v: unknown, fallback: string): string {
  const s = str(v);
  if (s && !Number.isNaN(Date.parse(s))) return new Date(s).toISOString();
  return fallback;
}

export function parseMaybeJson(s: unknown): unknown {
  if (typeof s !== 'string') return s;
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

export interface Call {
  name: string;
  input: unknown;
}

export interface ResultFields {
  id: string;
  tool: string;
  input: unknown;
  /** The fullest text of the result found. */
  text: string;
  /** What the model was shown (a stub, a cut output), kept as the payload's message. */
  seen: string;
  createdAt: string;
  action: GuardAction;
  /** Readable file: a spill file, or the transcript. */
  path: string;
  source: SourceLocation;
  /** The result's size in bytes before the client cut it, when it says (Codex does): estimates scale up to it. */
  originalBytes?: number;
}

/** One imported tool result as a payload record: size, kind, checked token count, base64 runs, lines. */
export async function importedRecord(o: ResultFields): Promise<PayloadRecord> {
  const checked = await checkedEstimates(o.text);
  const visibleBytes = Buffer.byteLength(o.text);
  // A cut result: its original size as the client states it, and the estimates of what is visible in proportion.
  const scale = o.originalBytes !== undefined && o.originalBytes > visibleBytes ? o.originalBytes / Math.max(1, visibleBytes) : 1;
  const estimates = scale === 1 ? checked.estimates : Object.fromEntries(Object.entries(checked.estimates).map(([k, v]) => [k, Math.ceil((v ?? 0) * scale)]));
  // Images in the result (a Read of a PNG, an MCP image block, a data URL): the ledger prices them by pixels, not as their base64.
  const images = imagesInText(o.text);
  let imageChars = 0;
  for (const i of images) imageChars += i.end - i.start;
  return {
    ...(images.length ? { images: images.map(({ size, bytes, mime }) => ({ size, bytes, mime })), imageChars, imageTextTokens: Math.min(checked.tokens, base64TokensForChars(imageChars)) } : {}),
    chars: Math.round(o.text.length * scale),
    id: o.id,
    tool: o.tool,
    createdAt: o.createdAt,
    bytes: scale === 1 ? visibleBytes : o.originalBytes!,
    action: o.action,
    kind: detectTextKind(o.text),
    assets: [],
    input: o.input,
    estimates,
    tokens: Math.ceil(checked.tokens * scale),
    path: o.path,
    message: clip(o.seen, MAX_MESSAGE_CHARS_INDEXED),
    binary: false,
    lines: countLinesIn(o.text),
    source: o.source,
    b64: scanBase64(o.text),
    summaryRuns: [],
  };
}

/** A prompt as a one-line title: whitespace folded, clipped at MAX_TITLE_CHARS. */
export function titleOf(prompt: string): string | undefined {
  const t = prompt.replace(/\s+/g, ' ').trim();
  if (!t) return undefined;
  return t.length > MAX_TITLE_CHARS ? `${t.slice(0, MAX_TITLE_CHARS - 1)}…` : t;
}

/** Facts still missing: the importers stop parsing lines for them once all are known. */
export function factsComplete(f: SessionFacts): boolean {
  return f.project !== undefined && f.title !== undefined && f.client !== undefined;
}
