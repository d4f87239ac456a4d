/**
 * Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), read-only. Every call's
 * output becomes a payload linked to its call by `call_id`, named as the model saw the tool
 * (an MCP call's `namespace` kept: `mcp__fs` + `read_text_file` is `mcp__fs__read_text_file`).
 *
 * Codex cuts what it keeps: the `function_call_output` the model saw holds about 12 K tokens with
 * "…N tokens truncated…" in the middle, and the `item_completed` event (0.17x; `exec_command_end`
 * before) keeps up to 64 KB more. So the text indexed is the fullest of those, and the size is
 * the one Codex itself states, turned back into bytes: Codex counts 4 bytes a token when it cuts
 * (APPROX_BYTES_PER_TOKEN in codex-rs/core/src/truncate.rs), so "Original token count: N" in an
 * exec header is about 4N bytes, and "…N tokens truncated…" is 4N bytes gone. The estimates of
 * what is visible then scale by the bytes (an estimate, marked by nothing but its size).
 *
 * Records of types this importer does not know are skipped: the format changes often.
 */
import type { Unit } from './discover.js';
import { type Call, MAX_FACT_LINES, factsComplete, importedPayloadId, isoOr, parseMaybeJson, str, titleOf } from './import-common.js';
import { type ImportContext, spilledOrImported } from './import-link.js';
import { decodeForReaders, jsonOf, mergedWarning } from './huge-line.js';
import { forEachLine } from './lines.js';
import type { PayloadRecord, SessionFacts, SourceLocation, UnitResult } from './record.js';
import { CodexTurns } from './turns-codex.js';
import { isObj } from '../pipeline/values.js';

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    const texts = output.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : null));
    if (texts.every((t) => t !== null)) return texts.join('\n');
  }
  if (isObj(output) && typeof output.content === 'string') return output.content;
  // Blocks a huge line merged into runs are written back as the rollout had them (huge-line.ts).
  return output === undefined ? '' : jsonOf(output);
}

/** The response item of a rollout line: wrapped (`{type:'response_item', payload}`) since 2025, bare before. */
function codexItem(o: Record<string, unknown>): Record<string, unknown> | null {
  if (o.type === 'response_item') return isObj(o.payload) ? o.payload : null;
  return o;
}

/**
 * A fuller copy of a call's output from an event line: `item_completed` (a CommandExecution's
 * `aggregated_output`) or, before 0.17, `exec_command_end`. An McpToolCall's stored result is
 * Codex's re-encoding of the whole result, cut: not text a person can read, so not used.
 */
function eventOutput(o: Record<string, unknown>): { callId: string; text: string } | null {
  if (o.type !== 'event_msg' || !isObj(o.payload)) return null;
  const p = o.payload;
  if (p.type === 'exec_command_end' && typeof p.call_id === 'string' && typeof p.aggregated_output === 'string') {
    return { callId: p.call_id, text: p.aggregated_output };
  }
  const item = p.type === 'item_completed' && isObj(p.item) ? p.item : null;
  if (item?.type === 'CommandExecution' && typeof item.id === 'string' && typeof item.aggregated_output === 'string') {
    return { callId: item.id, text: item.aggregated_output };
  }
  return null;
}

/** Bytes a token stands for when Codex cuts an output (codex-rs: APPROX_BYTES_PER_TOKEN). */
export const CODEX_BYTES_PER_TOKEN = 4;

/** What Codex says the output was before it cut it, in bytes (null when it did not cut). */
export function codexOriginalBytes(output: string): number | null {
  const original = /^Original token count: (\d+)$/m.exec(output.slice(0, 1024));
  if (original) return Number(original[1]) * CODEX_BYTES_PER_TOKEN;
  let bytes = Buffer.byteLength(output);
  let cut = false;
  for (const m of output.matchAll(/…(\d+) (tokens|chars) truncated…/g)) {
    cut = true;
    bytes += Number(m[1]) * (m[2] === 'tokens' ? CODEX_BYTES_PER_TOKEN : 1) - Buffer.byteLength(m[0]);
  }
  return cut ? bytes : null;
}

/** Codex's model-facing header on a call's output (`Chunk ID`/`Wall time`/`Output:`), before the body. */
const CODEX_HEADER_RE = /^(?:Chunk ID: [^\n]*\n)?Wall time: [^\n]*\n(?:(?!Output:)[^\n]*\n){0,4}Output:\n/;

/**
 * An MCP result Codex shows as `JSON.stringify(structuredContent)` is JSON even when Codex cut it
 * (a cut JSON does not parse, so the content sniffer alone would call it code or text).
 */
function codexKind(call: Call | undefined, text: string): PayloadRecord['kind'] | undefined {
  if (!call?.name.startsWith('mcp__')) return undefined;
  const body = text.replace(CODEX_HEADER_RE, '').trimStart();
  return body.startsWith('{') || body.startsWith('[') ? 'json' : undefined;
}

interface Output {
  callId: string;
  text: string;
  createdAt: string;
  at: { line: number; offset: number; length: number };
}

function callOf(item: Record<string, unknown>): Call | null {
  switch (item.type) {
    case 'function_call': {
      const name = str(item.name) ?? 'function';
      const ns = str(item.namespace);
      return { name: ns ? `${ns}__${name}` : name, input: parseMaybeJson(item.arguments) };
    }
    case 'custom_tool_call':
      return { name: str(item.name) ?? 'custom_tool', input: item.input };
    case 'local_shell_call':
      return { name: 'local_shell', input: item.action };
    default:
      return null;
  }
}

const OUTPUT_TYPES = new Set(['function_call_output', 'custom_tool_call_output', 'local_shell_call_output']);

function noteFacts(o: Record<string, unknown>, facts: SessionFacts): void {
  const p = isObj(o.payload) ? o.payload : undefined;
  if (o.type === 'session_meta' && p) {
    facts.project ??= str(p.cwd);
    const v = str(p.cli_version);
    if (v && facts.client === undefined) facts.client = `Codex ${v}${str(p.originator) ? ` (${str(p.originator)})` : ''}`;
  }
  if (facts.title !== undefined || !p) return;
  if (o.type === 'event_msg' && p.type === 'user_message') facts.title = titleOf(str(p.message) ?? '');
  else if (o.type === 'response_item' && p.type === 'message' && p.role === 'user' && Array.isArray(p.content)) {
    const text = p.content.map((c) => (isObj(c) ? str(c.text) ?? '' : '')).join(' ');
    // Codex's own context blocks (`<environment_context>`, `<user_instructions>`…) are not what the user asked.
    if (!/^\s*(<[a-z_]+>|# AGENTS\.md)/.test(text)) facts.title = titleOf(text);
  }
}

class Rollout {
  readonly calls = new Map<string, Call>();
  readonly outputs = new Map<string, Output>();
  readonly fuller = new Map<string, { text: string; at: Output['at'] }>();
  readonly facts: SessionFacts = {};
  badLines = 0;
  /** Lines whose content blocks were merged into runs (huge-line.ts), and how many blocks. */
  mergedLines = 0;
  mergedBlocks = 0;

  constructor(private readonly fallbackTime: string) {}

  /** Whether a line is to be decoded for the calls and outputs, or the session's facts. */
  wants(buf: Buffer, index: number): boolean {
    const relevant = buf.includes('"call_id"') || buf.includes('"item_completed"');
    return relevant || (index < MAX_FACT_LINES && !factsComplete(this.facts));
  }

  take(o: unknown, index: number, offset: number, buf: Buffer): void {
    if (!isObj(o)) return;
    noteFacts(o, this.facts);
    const at = { line: index, offset, length: buf.length };
    const ev = eventOutput(o);
    if (ev) {
      if (ev.text.length > (this.fuller.get(ev.callId)?.text.length ?? -1)) this.fuller.set(ev.callId, { text: ev.text, at });
      return;
    }
    const item = codexItem(o);
    const callId = item ? str(item.call_id) : undefined;
    if (!item || !callId) return;
    const call = callOf(item);
    if (call) this.calls.set(callId, call);
    else if (OUTPUT_TYPES.has(String(item.type))) {
      this.outputs.set(callId, { callId, text: outputText(item.output), createdAt: isoOr(o.timestamp, this.fallbackTime), at });
    }
  }
}

async function outputRecord(ctx: ImportContext, transcript: string, r: Rollout, out: Output): Promise<PayloadRecord> {
  const call = r.calls.get(out.callId);
  const full = r.fuller.get(out.callId);
  const useEvent = full !== undefined && full.text.length > out.text.length;
  const at = useEvent ? full.at : out.at;
  const source: SourceLocation = { transcript, line: at.line, offset: at.offset, length: at.length, toolUseId: out.callId, field: useEvent ? 'event' : 'output' };
  const rec = await spilledOrImported(ctx, {
    callId: out.callId,
    id: importedPayloadId(transcript, out.callId),
    tool: call?.name ?? 'unknown',
    input: call?.input,
    text: useEvent ? full.text : out.text,
    seen: out.text,
    createdAt: out.createdAt,
    action: 'pass',
    path: transcript,
    source,
    originalBytes: codexOriginalBytes(out.text) ?? undefined,
  });
  const kind = rec.action === 'pass' ? codexKind(call, out.text) : undefined;
  if (kind) rec.kind = kind;
  return rec;
}

export async function importCodex(ctx: ImportContext, unit: Unit): Promise<UnitResult> {
  const transcript = unit.key;
  const r = new Rollout(new Date(unit.files[0]?.mtimeMs ?? 0).toISOString());
  const turns = new CodexTurns();
  const scan = await forEachLine(ctx.source, transcript, ctx.yielder, async (buf, index, offset) => {
    // The outputs and the turns read the same lines: each line is decoded once, for both; a long
    // one in slices, its blocks past a budget merged (huge-line.ts), so one line of millions of
    // blocks neither stalls the process nor builds an object per block.
    turns.seen(index);
    const forTurns = turns.wants(buf);
    const forCalls = r.wants(buf, index);
    if (!forTurns && !forCalls) return;
    const d = await decodeForReaders(buf, index, ctx.yielder, { turns: forTurns, calls: forCalls }, r, turns);
    if (!d) return;
    const o = d.value;
    if (forTurns) turns.take(o, index);
    if (forCalls) r.take(o, index, offset, buf);
  });
  const payloads: PayloadRecord[] = [];
  for (const out of r.outputs.values()) payloads.push(await outputRecord(ctx, transcript, r, out));
  const warnings = [...(r.badLines ? [`${transcript}: ${r.badLines} unparsable line(s) skipped`] : []), ...mergedWarning(transcript, r)];
  return { payloads, hash: scan.hash, warnings, session: r.facts, turns: turns.result() };
}

/** Re-read one output from its line: a `function_call_output` or a fuller event copy. */
export function rereadCodex(loc: SourceLocation, o: Record<string, unknown>): string | null {
  if (loc.field === 'event') return eventOutput(o)?.text ?? null;
  const item = codexItem(o);
  return item ? outputText(item.output) : null;
}
