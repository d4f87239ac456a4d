/**
 * Read-only importers for other agents' own session files: Claude Code (`~/.claude/projects`),
 * Codex CLI rollouts and Gemini CLI chats. Every tool result becomes a payload linked to the
 * call that asked for it (name and input). Unknown record types and unparsable lines are
 * skipped, never fatal: these formats change every few weeks.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { detectTextKind } from '../pipeline/index.js';
import type { GuardAction } from '../pipeline/types.js';
import type { Unit } from './discover.js';
import { forEachLine, readRange } from './lines.js';
import type { PayloadRecord, SourceLocation, UnitResult } from './record.js';
import {
  MAX_MESSAGE_CHARS_INDEXED,
  checkedEstimates,
  clip,
  countLinesIn,
  ftsWindow,
  scanBase64,
  stableId,
} from './text.js';
import type { Yielder } from './yielder.js';

/** Largest Claude spill file or Gemini chat read whole. */
export const MAX_IMPORT_FILE_BYTES = 256 * 1024 * 1024;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function importedPayloadId(transcript: string, key: string): string {
  return stableId('p', `${path.resolve(transcript)}#${key}`);
}

function isoOr(v: unknown, fallback: string): string {
  const s = str(v);
  if (s && !Number.isNaN(Date.parse(s))) return new Date(s).toISOString();
  return fallback;
}

interface Call {
  name: string;
  input: unknown;
}

async function record(o: {
  id: string;
  tool: string;
  input: unknown;
  text: string;
  seen: string;
  createdAt: string;
  action: GuardAction;
  path: string;
  source: SourceLocation;
}): Promise<PayloadRecord> {
  const { estimates, tokens } = await checkedEstimates(o.text);
  return {
    id: o.id,
    tool: o.tool,
    createdAt: o.createdAt,
    bytes: Buffer.byteLength(o.text),
    action: o.action,
    kind: detectTextKind(o.text),
    assets: [],
    input: o.input,
    estimates,
    tokens,
    path: o.path,
    message: clip(o.seen, MAX_MESSAGE_CHARS_INDEXED),
    binary: false,
    lines: countLinesIn(o.text),
    source: o.source,
    ftsBody: ftsWindow(o.text),
    b64: scanBase64(o.text),
    summaryRuns: [],
  };
}

// ---------------------------------------------------------------- Claude Code

function blocksText(blocks: unknown[]): string {
  const allText = blocks.every((b) => isObj(b) && b.type === 'text' && typeof b.text === 'string');
  if (allText) return blocks.map((b) => (b as { text: string }).text).join('\n');
  // Images and other blocks: keep the structure as the transcript has it (base64 and all).
  return JSON.stringify(blocks);
}

/** Text fields of a line's `toolUseResult` that may hold the full output (Bash stdout, Grep content, Read file, ...). */
function toolUseResultTexts(tur: unknown): string[] {
  if (typeof tur === 'string') return [tur];
  if (!isObj(tur)) return [];
  const out: string[] = [];
  if (typeof tur.stdout === 'string') out.push(tur.stderr && typeof tur.stderr === 'string' ? `${tur.stdout}\n${tur.stderr}` : tur.stdout);
  if (typeof tur.content === 'string') out.push(tur.content);
  else if (Array.isArray(tur.content)) out.push(blocksText(tur.content));
  if (isObj(tur.file) && typeof tur.file.content === 'string') out.push(tur.file.content);
  for (const k of ['result', 'output', 'text']) if (typeof tur[k] === 'string') out.push(tur[k] as string);
  return out;
}

const PERSISTED_RE = /^<persisted-output>[\s\S]*?saved to:\s*(\S[^\n]*)/;

export interface ClaudeExtract {
  text: string;
  seen: string;
  field: SourceLocation['field'];
  persistedPath?: string;
  action: GuardAction;
}

/**
 * The fullest text of one tool_result: its `content` (what the model saw), the spill file a
 * `<persisted-output>` stub points to, or the line's `toolUseResult` (which often keeps the
 * whole output even when `content` is a stub). The longest wins.
 */
export function extractClaudeResult(line: Record<string, unknown>, block: Record<string, unknown>, spillFiles: Map<string, string>): ClaudeExtract {
  const c = block.content;
  const seen = typeof c === 'string' ? c : Array.isArray(c) ? blocksText(c) : c === undefined ? '' : JSON.stringify(c);
  let best: ClaudeExtract = { text: seen, seen, field: 'content', action: 'pass' };
  const stub = PERSISTED_RE.exec(seen);
  if (stub) {
    best.action = 'spill'; // Claude Code spilled it itself; the model saw the stub.
    const name = path.basename(stub[1]!.trim().replace(/\\/g, '/'));
    const local = spillFiles.get(name);
    if (local) {
      try {
        if (fs.statSync(local).size <= MAX_IMPORT_FILE_BYTES) {
          const t = fs.readFileSync(local, 'utf8');
          if (t.length > best.text.length) best = { ...best, text: t, field: 'persisted', persistedPath: local };
        }
      } catch {
        /* spill file vanished: keep what the transcript has */
      }
    }
  }
  for (const t of toolUseResultTexts(line.toolUseResult)) {
    if (t.length > best.text.length) best = { ...best, text: t, field: 'toolUseResult', persistedPath: undefined };
  }
  return best;
}

function spillFilesOf(unit: Unit): Map<string, string> {
  const m = new Map<string, string>();
  for (const f of unit.files) if (f.path !== unit.key) m.set(path.basename(f.path), f.path);
  return m;
}

export async function importClaude(unit: Unit, yielder: Yielder): Promise<UnitResult> {
  const transcript = unit.key;
  const spill = spillFilesOf(unit);
  const calls = new Map<string, Call>();
  const out = new Map<string, PayloadRecord>();
  const warnings: string[] = [];
  let badLines = 0;
  const fallbackTime = new Date(unit.files[0]?.mtimeMs ?? 0).toISOString();
  const scan = await forEachLine(transcript, yielder, async (buf, index, offset) => {
    // Most lines (chat text, snapshots, a pasted 500 KB image) hold no tool traffic: skip them undecoded.
    const hasUse = buf.includes('"tool_use"');
    const hasResult = buf.includes('"tool_result"');
    if (!hasUse && !hasResult) return;
    let o: unknown;
    try {
      o = JSON.parse(buf.toString('utf8'));
    } catch {
      badLines++;
      return;
    }
    if (!isObj(o) || !isObj(o.message) || !Array.isArray(o.message.content)) return;
    const content = o.message.content as unknown[];
    if (o.type === 'assistant') {
      for (const b of content) {
        if (isObj(b) && b.type === 'tool_use' && typeof b.id === 'string') calls.set(b.id, { name: str(b.name) ?? 'tool', input: b.input });
      }
      return;
    }
    if (o.type !== 'user') return;
    for (const b of content) {
      if (!isObj(b) || b.type !== 'tool_result') continue;
      const toolUseId = str(b.tool_use_id);
      const call = toolUseId ? calls.get(toolUseId) : undefined;
      const x = extractClaudeResult(o, b, spill);
      const id = importedPayloadId(transcript, toolUseId ?? `line${index}`);
      const rec = await record({
        id,
        tool: call?.name ?? 'unknown',
        input: call?.input,
        text: x.text,
        seen: x.seen,
        createdAt: isoOr(o.timestamp, fallbackTime),
        action: x.action,
        path: x.persistedPath ?? transcript,
        source: { transcript, line: index, offset, length: buf.length, toolUseId, field: x.field, persistedPath: x.persistedPath },
      });
      const prev = out.get(id);
      if (!prev || prev.bytes < rec.bytes) out.set(id, rec);
    }
  });
  if (badLines) warnings.push(`${transcript}: ${badLines} unparsable line(s) skipped`);
  if (scan.skippedLongLines) warnings.push(`${transcript}: ${scan.skippedLongLines} over-long line(s) skipped`);
  let hash = scan.hash;
  for (const f of unit.files) if (f.path !== transcript) hash += `|${path.basename(f.path)}:${f.size}`;
  return { payloads: [...out.values()], hash, warnings };
}

// ---------------------------------------------------------------- Codex CLI

function codexOutputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) {
    const texts = output.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : null));
    if (texts.every((t) => t !== null)) return texts.join('\n');
  }
  if (isObj(output) && typeof output.content === 'string') return output.content;
  return output === undefined ? '' : JSON.stringify(output);
}

function parseMaybeJson(s: unknown): unknown {
  if (typeof s !== 'string') return s;
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

/** The response item of a rollout line: wrapped (`{type:'response_item', payload}`) since 2025, bare before. */
function codexItem(o: Record<string, unknown>): Record<string, unknown> | null {
  if (o.type === 'response_item') return isObj(o.payload) ? o.payload : null;
  return o;
}

export function extractCodexOutput(item: Record<string, unknown>): string {
  return codexOutputText(item.output);
}

export async function importCodex(unit: Unit, yielder: Yielder): Promise<UnitResult> {
  const transcript = unit.key;
  const calls = new Map<string, Call>();
  const out = new Map<string, PayloadRecord>();
  let badLines = 0;
  const fallbackTime = new Date(unit.files[0]?.mtimeMs ?? 0).toISOString();
  const scan = await forEachLine(transcript, yielder, async (buf, index, offset) => {
    if (!buf.includes('"call_id"')) return;
    let o: unknown;
    try {
      o = JSON.parse(buf.toString('utf8'));
    } catch {
      badLines++;
      return;
    }
    if (!isObj(o)) return;
    const item = codexItem(o);
    if (!item) return;
    const callId = str(item.call_id);
    if (!callId) return;
    switch (item.type) {
      case 'function_call':
        calls.set(callId, { name: str(item.name) ?? 'function', input: parseMaybeJson(item.arguments) });
        return;
      case 'custom_tool_call':
        calls.set(callId, { name: str(item.name) ?? 'custom_tool', input: item.input });
        return;
      case 'local_shell_call':
        calls.set(callId, { name: 'local_shell', input: item.action });
        return;
      case 'function_call_output':
      case 'custom_tool_call_output':
      case 'local_shell_call_output': {
        const call = calls.get(callId);
        const text = extractCodexOutput(item);
        const id = importedPayloadId(transcript, callId);
        out.set(
          id,
          await record({
            id,
            tool: call?.name ?? 'unknown',
            input: call?.input,
            text,
            seen: text,
            createdAt: isoOr(o.timestamp, fallbackTime),
            action: 'pass',
            path: transcript,
            source: { transcript, line: index, offset, length: buf.length, toolUseId: callId, field: 'output' },
          }),
        );
        return;
      }
      default:
        return;
    }
  });
  const warnings = badLines ? [`${transcript}: ${badLines} unparsable line(s) skipped`] : [];
  return { payloads: [...out.values()], hash: scan.hash, warnings };
}

// ---------------------------------------------------------------- Gemini CLI

export function extractGeminiResult(call: Record<string, unknown>): string {
  const result = call.result;
  if (Array.isArray(result) && result.length) {
    const outputs = result.map((r) => {
      const fr = isObj(r) && isObj(r.functionResponse) ? r.functionResponse : null;
      const resp = fr && isObj(fr.response) ? fr.response : null;
      return resp && typeof resp.output === 'string' ? resp.output : null;
    });
    if (outputs.every((x) => x !== null)) return outputs.join('\n');
    return JSON.stringify(result);
  }
  if (typeof call.resultDisplay === 'string') return call.resultDisplay;
  return result === undefined ? '' : JSON.stringify(result);
}

export async function readGeminiChat(file: string): Promise<Record<string, unknown> | null> {
  const st = await fs.promises.stat(file);
  if (st.size > MAX_IMPORT_FILE_BYTES) return null;
  const v = JSON.parse(await fs.promises.readFile(file, 'utf8')) as unknown;
  return isObj(v) ? v : null;
}

export async function importGemini(unit: Unit, yielder: Yielder): Promise<UnitResult> {
  const transcript = unit.key;
  const warnings: string[] = [];
  let chat: Record<string, unknown> | null;
  let raw: Buffer;
  try {
    raw = await fs.promises.readFile(transcript);
    chat = raw.length > MAX_IMPORT_FILE_BYTES ? null : (JSON.parse(raw.toString('utf8')) as Record<string, unknown>);
  } catch (err) {
    return { payloads: [], hash: '', warnings: [`${transcript}: ${(err as Error).message}`] };
  }
  const hash = crypto.createHash('sha256').update(raw).digest('hex');
  if (!isObj(chat) || !Array.isArray(chat.messages)) return { payloads: [], hash, warnings: [`${transcript}: not a Gemini chat`] };
  const fallbackTime = isoOr(chat.startTime, new Date(unit.files[0]?.mtimeMs ?? 0).toISOString());
  const out = new Map<string, PayloadRecord>();
  const messages = chat.messages as unknown[];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObj(m) || !Array.isArray(m.toolCalls)) continue;
    const calls = m.toolCalls as unknown[];
    for (let j = 0; j < calls.length; j++) {
      const c = calls[j];
      if (!isObj(c)) continue;
      const text = extractGeminiResult(c);
      const key = str(c.id) ?? `m${i}c${j}`;
      const id = importedPayloadId(transcript, key);
      out.set(
        id,
        await record({
          id,
          tool: str(c.name) ?? 'tool',
          input: c.args,
          text,
          seen: text,
          createdAt: isoOr(c.timestamp ?? m.timestamp, fallbackTime),
          action: 'pass',
          path: transcript,
          source: { transcript, line: i, call: j, toolUseId: str(c.id), field: 'result' },
        }),
      );
    }
    await yielder.maybe();
  }
  return { payloads: [...out.values()], hash, warnings };
}

// ---------------------------------------------------------------- re-reading one payload's text

/**
 * The full text of an imported payload, read again from its transcript (the index keeps only a
 * bounded window). Returns null when the transcript changed so the payload is no longer there.
 */
export async function readImportedText(source: SourceLocation, toolResultsDir?: string): Promise<string | null> {
  if (source.field === 'persisted' && source.persistedPath) {
    return fs.promises.readFile(source.persistedPath, 'utf8').catch(() => null);
  }
  if (source.offset !== undefined && source.length !== undefined) {
    const buf = await readRange(source.transcript, source.offset, source.length);
    let o: unknown;
    try {
      o = JSON.parse(buf.toString('utf8'));
    } catch {
      return null;
    }
    if (!isObj(o)) return null;
    if (source.field === 'output') {
      const item = codexItem(o);
      return item ? extractCodexOutput(item) : null;
    }
    const msg = isObj(o.message) ? o.message : null;
    const blocks = msg && Array.isArray(msg.content) ? (msg.content as unknown[]) : [];
    const block = blocks.find((b) => isObj(b) && b.type === 'tool_result' && (source.toolUseId === undefined || b.tool_use_id === source.toolUseId));
    if (!isObj(block)) return null;
    const spill = new Map<string, string>();
    if (toolResultsDir) {
      try {
        for (const n of await fs.promises.readdir(toolResultsDir)) spill.set(n, path.join(toolResultsDir, n));
      } catch {
        /* none */
      }
    }
    return extractClaudeResult(o, block, spill).text;
  }
  if (source.call !== undefined) {
    const chat = await readGeminiChat(source.transcript).catch(() => null);
    const msgs = chat && Array.isArray(chat.messages) ? (chat.messages as unknown[]) : [];
    const m = msgs[source.line];
    const c = isObj(m) && Array.isArray(m.toolCalls) ? (m.toolCalls as unknown[])[source.call] : undefined;
    return isObj(c) ? extractGeminiResult(c) : null;
  }
  return null;
}
