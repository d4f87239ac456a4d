import path from 'node:path';
import type { AssetRef, ContentKind, DrillDownToolNames, Estimate, Profile, ReadMoreTools, SummaryRun } from './types.js';
import { MAX_MESSAGE_CHARS } from './limits.js';
import { fmtBytes, fmtInt, safeCut, toWellFormed } from './text.js';

/**
 * The message the model gets instead of an oversized result: what happened and how big it
 * was, where it is (relative and absolute), how to read more, then a summary or a preview.
 * Hard-capped at MAX_MESSAGE_CHARS whatever the parts are.
 */

/** Assets listed one per line before "… N more". */
const MESSAGE_MAX_ASSETS = 8;

export interface MessageParts {
  action: 'spill' | 'inline-assets' | 'failed';
  toolName?: string;
  estimate: Estimate;
  /** The estimate was scaled up from samples of a very large text. */
  estimateSampled?: boolean;
  limitTokens: number;
  kind: ContentKind;
  bytes: number;
  /**
   * Bytes of what the client shows the model, when that is not the whole result (GuardOptions.shown:
   * Claude Code and Codex show an MCP result's structuredContent, not its text blocks too).
   */
  shownBytes?: number;
  sessionPath: string;
  payloadPath?: string;
  assets: AssetRef[];
  summary?: SummaryRun;
  preview?: string;
  /** For inline-assets: the text with assets replaced, shown in full. */
  inlineText?: string;
  inlineTokens?: number;
  /** Why saving failed, for action `failed`. */
  failure?: string;
  /** The tools the model reads the payload with (default `generic`). */
  readMore?: ReadMoreTools;
  /** With `drill-down`: the tools' names as registered (default the canonical ones). */
  drillDownNames?: DrillDownToolNames;
  /** What the saved payload lacks, when the guard did not get the whole tool output. */
  incomplete?: string;
  /** A local copy of the payload, for an agent that reads files; `payloadPath` is then the durable copy (a bucket URL). */
  localPath?: string;
  /** Where the result went when it is not where the caller asked (a fallback store), and why. */
  storeNote?: string;
  /** Why a spill happened when it is not the size: the result is binary, or it fits but its assets had to go and the rest is too long to show here. */
  reason?: 'binary' | 'assets';
  /** The client had already decoded the bytes as UTF-8, lossily: what was saved is what was received. */
  lossy?: boolean;
}

/** What the message says of binary the client decoded lossily before the guard got it. */
export const LOSSY_MESSAGE =
  'The client had already decoded these bytes as UTF-8, lossily (U+FFFD where bytes were not UTF-8), so the original bytes are lost: what was saved is the text as received.';

/** The drill-down tools' own names (the MCP proxy's `spillway_read`, `spillway_grep`, `spillway_query`). */
export const CANONICAL_DRILL_DOWN_NAMES: Readonly<DrillDownToolNames> = Object.freeze({ read: 'spillway_read', grep: 'spillway_grep', query: 'spillway_query' });

/**
 * How the model can read more of a spilled payload, naming only tools it has: a message that sends
 * a model to a tool it lacks wastes a turn (Codex has no Read or Grep; behind the proxy the way in
 * is the drill-down tools). Claude Code 2.1.328 (native build) offers Read and Bash in every setup
 * seen, but Grep only when `--allowedTools`/`--tools` names it, and its hook input does not say
 * which tools the session has: so the advice leads with Read and `grep` in Bash, which hold either
 * way, and names Grep only as "if you have it".
 */
export function readMoreAdvice(tools: ReadMoreTools = 'generic', names: DrillDownToolNames = CANONICAL_DRILL_DOWN_NAMES): string {
  switch (tools) {
    case 'claude-code':
      return (
        'Read more: open the absolute path with Read (offset/limit for a range of lines); to search it, run ' +
        '`grep -n "<pattern>" <path>` with Bash (or use the Grep tool, if you have it).'
      );
    case 'drill-down':
      // The names as registered: behind a server that lists its own spillway_read, ours is another.
      return (
        `Read more with your ${names.read} (a range of lines), ${names.grep} (matching lines with context) and ` +
        `${names.query} (rows: filter, sort, group) tools: give them the absolute path.`
      );
    case 'files':
      return 'Read more: open the absolute path with a file-reading tool, a range at a time, or search it.';
    default:
      return (
        'Read more: open the absolute path with a file-reading tool, a range at a time, or search it; ' +
        'with the Spillway MCP proxy connected, spillway_read, spillway_grep and spillway_query work on it.'
      );
  }
}

/** The size the model would have read; the saved size too when the client shows only part of the result. */
function sizeNote(p: MessageParts): string {
  if (p.shownBytes === undefined || p.shownBytes === p.bytes) return fmtBytes(p.bytes);
  return `${fmtBytes(p.shownBytes)} as the client shows it; the whole result saved is ${fmtBytes(p.bytes)}`;
}

function strategyNote(e: Estimate, sampled?: boolean): string {
  return `${e.strategy}${e.exact ? ', exact' : sampled ? ' estimate from samples' : ' estimate'}, ${e.profile}`;
}

/** The profile a guard's message says it counted with (strategyNote's last word), for a reader that has only the message. */
export function profileOfMessage(message: string): Profile | undefined {
  const m = /tokens \([a-z0-9-]+(?:, exact| estimate from samples| estimate), (o200k|cl100k|claude)\)/.exec(message.slice(0, 2_000));
  return m ? (m[1] as Profile) : undefined;
}

function assetLines(assets: AssetRef[]): string[] {
  const lines: string[] = [];
  const unique = new Map<string, { a: AssetRef; n: number }>();
  for (const a of assets) {
    const u = unique.get(a.relPath);
    if (u) u.n++;
    else unique.set(a.relPath, { a, n: 1 });
  }
  const list = [...unique.values()];
  for (const { a, n } of list.slice(0, MESSAGE_MAX_ASSETS)) {
    lines.push(`- ${a.relPath}  ${a.mimeType}, ${fmtBytes(a.bytes)}${n > 1 ? `, ×${n}` : ''}  (${a.jsonPath})`);
  }
  if (list.length > MESSAGE_MAX_ASSETS) lines.push(`- … ${list.length - MESSAGE_MAX_ASSETS} more (listed in the .meta.json)`);
  return lines;
}

export function capMessage(s: string, max = MAX_MESSAGE_CHARS): string {
  const w = toWellFormed(s);
  if (w.length <= max) return w;
  const note = '\n… [message cut to fit]';
  return w.slice(0, safeCut(w, max - note.length)) + note;
}

export function buildMessage(p: MessageParts): string {
  const tool = p.toolName ? `\`${p.toolName}\`` : 'the tool';
  const size = `~${fmtInt(p.estimate.tokens)} tokens (${strategyNote(p.estimate, p.estimateSampled)})`;
  const rel = p.payloadPath ? path.relative(p.sessionPath, p.payloadPath).split(path.sep).join('/') : undefined;
  const out: string[] = [];
  if (p.action === 'failed') {
    out.push(
      `[spillway] The result of ${tool} is too large for the context: ${size}, limit ${fmtInt(p.limitTokens)} tokens, ${fmtBytes(p.bytes)}. ` +
        `It was withheld, and it could NOT be saved: ${p.failure ?? 'unknown error'}.`,
    );
    out.push('Re-run the tool with a narrower request (filters, pagination, a smaller range) to see its content.');
  } else if (p.action === 'inline-assets') {
    out.push(
      `[spillway] The result of ${tool} (${size}, limit ${fmtInt(p.limitTokens)}) carried ${p.assets.length} binary asset${p.assets.length === 1 ? '' : 's'}; ` +
        `they were saved as files and replaced by references. The rest (~${fmtInt(p.inlineTokens ?? 0)} tokens) follows in full.` +
        (p.incomplete ? ` What was saved is NOT the whole result: ${p.incomplete}` : ''),
    );
  } else if (p.reason === 'binary') {
    out.push(
      `[spillway] The result of ${tool} is binary data (${p.assets[0]?.mimeType ?? 'application/octet-stream'}, ${fmtBytes(p.bytes)}), which the model cannot read as text ` +
        `(as base64 it would be ~${fmtInt(p.estimate.tokens)} tokens; limit ${fmtInt(p.limitTokens)}). It was saved as a file instead.` +
        (p.lossy ? ` ${LOSSY_MESSAGE}` : ''),
    );
  } else if (p.reason === 'assets') {
    out.push(
      `[spillway] The result of ${tool} (${size}, within the limit ${fmtInt(p.limitTokens)}) carried ${p.assets.length} binary asset${p.assets.length === 1 ? '' : 's'}, ` +
        `saved as files; the rest (~${fmtInt(p.inlineTokens ?? 0)} tokens) is too long for this message, so it was saved in full, with references where the assets were.`,
    );
  } else {
    out.push(
      `[spillway] The result of ${tool} is too large for the context: ${size} > limit ${fmtInt(p.limitTokens)} tokens ` +
        `(${p.kind}, ${sizeNote(p)}). ` +
        (p.incomplete ? `It was saved instead, but NOT in full: ${p.incomplete}` : 'It was saved in full instead.'),
    );
  }
  if (p.payloadPath && rel && p.localPath) {
    out.push(`Saved: ${rel} (in session ${p.sessionPath}); durable copy: ${p.payloadPath}`);
    out.push(`Absolute path: ${p.localPath} (a local copy to read)`);
  } else if (p.payloadPath && rel) {
    out.push(`Saved: ${rel} (in session ${p.sessionPath})`);
    out.push(`Absolute path: ${p.payloadPath}`);
  }
  if (p.storeNote) out.push(p.storeNote);
  if (p.assets.length) {
    out.push(`Assets (${p.assets.length}):`);
    out.push(...assetLines(p.assets));
  }
  if (p.payloadPath && p.action !== 'failed') {
    out.push(readMoreAdvice(p.readMore, p.drillDownNames));
    out.push(
      `\`spillway restore ${p.payloadPath} -o <file>\` rebuilds ${p.incomplete ? 'exactly the bytes that were saved' : p.lossy ? 'exactly the text as received' : 'the exact original bytes'}.`,
    );
  }
  const head = out.join('\n');
  let body = '';
  if (p.action === 'inline-assets' && p.inlineText !== undefined) {
    body = `\n\n${p.inlineText}`;
  } else if (p.summary && p.summary.status === 'ok' && p.summary.summary) {
    const who = [p.summary.provider, p.summary.model !== 'unknown' ? p.summary.model : ''].filter(Boolean).join('/');
    body = `\n\nSummary (${who}${p.summary.focus ? `, focus: ${p.summary.focus}` : ''}):\n${p.summary.summary}`;
  } else if (p.preview !== undefined) {
    const why = p.summary ? ` (summary ${p.summary.status}: ${p.summary.error ?? 'no answer'})` : '';
    body = `\n\nPreview${why}:\n${p.preview}`;
  }
  return capMessage(head + body);
}
