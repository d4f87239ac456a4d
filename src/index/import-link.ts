/**
 * A tool result that is Spillway's own message (the MCP proxy or the Claude Code hook spilled the
 * result before the agent saw it) is linked to the payload Spillway saved: listed at that
 * payload's size, with its content, as a spill. The message names the payload's absolute path;
 * the scanner follows it only to a Spillway payload file inside a registered root, so a path
 * written in a transcript never leads the index anywhere else.
 */
import path from 'node:path';
import { LONG_RESPONSES_DIR, classifyLongResponseFile } from '../pipeline/index.js';
import { type ResultFields, importedRecord } from './import-common.js';
import type { PayloadRecord } from './record.js';
import type { SessionSource } from './source.js';
import { MAX_MESSAGE_CHARS_INDEXED, clip } from './text.js';
import type { Yielder } from './yielder.js';

/** What an importer gets from the scanner. */
export interface ImportContext {
  source: SessionSource;
  yielder: Yielder;
  /** The record of the Spillway payload at this absolute path, if it is one inside a registered root; else null. */
  resolveSpill(payloadPath: string): Promise<PayloadRecord | null>;
}

/** Spillway's message names the payload as `Absolute path: <path>` (as text, or JSON-escaped inside structured content). */
const ABSOLUTE_PATH_RE = /Absolute path: ((?:[A-Za-z]:)?[\\/][^\n"]*?)(?=\\n|\\"|\n|"|$)/;

/** `p` if it names a Spillway payload file (`…/long_responses/<stem>.<ext>`, absolute), else null. */
export function asSpillwayPayloadPath(p: string | undefined): string | null {
  if (!p || !path.isAbsolute(p)) return null;
  const c = classifyLongResponseFile(path.basename(p));
  return c && c.kind === 'payload' && path.basename(path.dirname(p)) === LONG_RESPONSES_DIR ? p : null;
}

/**
 * How a result that IS Spillway's message begins: the message's own first words, after at most one
 * of the wrappers the clients put around a tool's text (Codex's `Wall time: … Output:` lines, an
 * MCP result's JSON `{"content": "…` or `[{"type": "text", "text": "…`, Read's line number 1). A
 * result that merely quotes a message (a grep over a spill, a `cat` of a transcript) starts with
 * something else and is not a spill.
 */
const MESSAGE_START_RE =
  /^(?:(?:[^\n]{0,100}\n){1,5}Output:\n)?(?:\{\s*"content"\s*:\s*"|\[\s*\{\s*"type"\s*:\s*"text"\s*,\s*"text"\s*:\s*"| {0,6}1\t)?\[spillway\] The result of /;

/** Whether `text` is Spillway's message (not a text that quotes one). */
export function isSpillwayMessage(text: string): boolean {
  return MESSAGE_START_RE.test(text.trimStart());
}

/** The payload a Spillway message points to: its path, when `text` is such a message (its first words, not a quote of it). */
export function spillwayPayloadPath(text: string): string | null {
  if (!isSpillwayMessage(text)) return null;
  const m = ABSOLUTE_PATH_RE.exec(text);
  // Inside JSON a backslash is doubled: a Windows path comes out as C:\\Users\\…
  return m ? asSpillwayPayloadPath(m[1]!.trim().replace(/\\\\/g, '\\')) : null;
}

/** The payload record for one imported result: linked to Spillway's saved payload when the result is Spillway's message. */
export async function spilledOrImported(ctx: ImportContext, f: ResultFields & { spillwayPath?: string; callId?: string }): Promise<PayloadRecord> {
  const target = asSpillwayPayloadPath(f.spillwayPath) ?? spillwayPayloadPath(f.seen);
  const linked = target ? await ctx.resolveSpill(target) : null;
  if (!linked) {
    const own = await importedRecord(f);
    // The guard spilled this call somewhere the index was not given: what the transcript holds is the
    // message, so the record is that message (its size, its tokens), but never listed as a pass.
    const elsewhere = target ? { action: 'spill' as const, source: { ...f.source, spilledTo: target } } : {};
    return { ...own, ...elsewhere, ...(f.callId ? { callId: f.callId } : {}) };
  }
  return {
    ...linked,
    id: f.id,
    callId: f.callId,
    callClient: undefined,
    spillId: linked.id,
    tool: f.tool,
    input: f.input,
    createdAt: f.createdAt,
    action: 'spill',
    message: clip(f.seen, MAX_MESSAGE_CHARS_INDEXED),
    metaPath: undefined,
    linkedPath: undefined,
    source: { ...f.source, field: 'spillway', persistedPath: linked.path },
    summaryRuns: [],
  };
}
