/**
 * Gemini CLI chats (`~/.gemini/tmp/<project>/chats/session-*.json`), read-only: one JSON object
 * per chat, with `messages[]`; tool calls sit on `gemini` messages as `toolCalls[]`.
 *
 * Gemini CLI 0.61.0 writes `session-*.jsonl` instead (test/index/fixtures/timeline/gemini): a
 * header line (`sessionId`, `projectHash`, `startTime`, `kind`), `{"$set": {…}}` lines that set
 * top-level fields (the first sets `messages`), and one line per message written or rewritten: a
 * `gemini` message is written once when its reply ends and again, same `id`, with its `toolCalls`
 * once they ran. The chat is that log replayed, a rewrite replacing the message in place, so a
 * call is never counted twice.
 */
import crypto from 'node:crypto';
import type { Unit } from './discover.js';
import { MAX_IMPORT_FILE_BYTES, importedPayloadId, isoOr, str, titleOf } from './import-common.js';
import { type ImportContext, spilledOrImported } from './import-link.js';
import type { PayloadRecord, SessionFacts, SourceLocation, UnitResult } from './record.js';
import type { SessionSource } from './source.js';
import { geminiTurns } from './turns-gemini.js';
import { isObj } from '../pipeline/values.js';

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

/** A `session-*.jsonl` chat log replayed into the object a `.json` chat holds; a line that does not parse (a torn last line) is skipped. */
export function chatFromJsonl(text: string): Record<string, unknown> {
  const chat: Record<string, unknown> = {};
  let messages: unknown[] = [];
  const at = new Map<string, number>();
  const reindex = () => {
    at.clear();
    messages.forEach((m, i) => isObj(m) && typeof m.id === 'string' && at.set(m.id, i));
  };
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let o: unknown;
    try {
      o = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isObj(o)) continue;
    if (isObj(o.$set)) {
      for (const [k, v] of Object.entries(o.$set)) {
        if (k === 'messages') {
          messages = Array.isArray(v) ? [...v] : [];
          reindex();
        } else chat[k] = v;
      }
    } else if (typeof o.type === 'string' && typeof o.id === 'string') {
      const i = at.get(o.id);
      if (i === undefined) {
        at.set(o.id, messages.length);
        messages.push(o);
      } else messages[i] = o;
    } else if (Object.keys(chat).length === 0 || typeof o.sessionId === 'string') Object.assign(chat, o);
  }
  chat.messages = messages;
  return chat;
}

/** A chat file, parsed; null when it is over MAX_IMPORT_FILE_BYTES. */
async function readChat(source: SessionSource, file: string): Promise<{ raw: Buffer; chat: unknown } | null> {
  const r = await source.readRange(file, 0, MAX_IMPORT_FILE_BYTES + 1);
  if (r.size > MAX_IMPORT_FILE_BYTES) return null;
  const text = r.bytes.toString('utf8');
  return { raw: r.bytes, chat: file.endsWith('.jsonl') ? chatFromJsonl(text) : (JSON.parse(text) as unknown) };
}

function factsOf(messages: unknown[]): SessionFacts {
  const facts: SessionFacts = { client: 'Gemini CLI' };
  for (const m of messages) {
    if (!isObj(m) || m.type !== 'user') continue;
    const c = m.content;
    const text = typeof c === 'string' ? c : Array.isArray(c) ? c.map((p) => (isObj(p) ? str(p.text) ?? '' : '')).join(' ') : '';
    facts.title = titleOf(text);
    if (facts.title) break;
  }
  return facts;
}

export async function importGemini(ctx: ImportContext, unit: Unit): Promise<UnitResult> {
  const transcript = unit.key;
  let read: Awaited<ReturnType<typeof readChat>>;
  try {
    read = await readChat(ctx.source, transcript);
  } catch (err) {
    return { payloads: [], hash: '', warnings: [`${transcript}: ${(err as Error).message}`] };
  }
  if (!read) return { payloads: [], hash: '', warnings: [`${transcript}: over ${MAX_IMPORT_FILE_BYTES} bytes, not read`] };
  const hash = crypto.createHash('sha256').update(read.raw).digest('hex');
  const chat = read.chat;
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
      const id = importedPayloadId(transcript, str(c.id) ?? `m${i}c${j}`);
      const source: SourceLocation = { transcript, line: i, call: j, toolUseId: str(c.id), field: 'result' };
      const createdAt = isoOr(c.timestamp ?? m.timestamp, fallbackTime);
      out.set(id, await spilledOrImported(ctx, { id, tool: str(c.name) ?? 'tool', input: c.args, text, seen: text, createdAt, action: 'pass', path: transcript, source }));
    }
    await ctx.yielder.maybe();
  }
  return { payloads: [...out.values()], hash, warnings: [], session: factsOf(messages), turns: geminiTurns(messages) };
}

/** Re-read one call's result from its chat. */
export async function rereadGemini(source: SessionSource, loc: SourceLocation): Promise<string | null> {
  const read = await readChat(source, loc.transcript).catch(() => null);
  const chat = read?.chat;
  const msgs = isObj(chat) && Array.isArray(chat.messages) ? (chat.messages as unknown[]) : [];
  const m = msgs[loc.line];
  const c = isObj(m) && Array.isArray(m.toolCalls) ? (m.toolCalls as unknown[])[loc.call ?? -1] : undefined;
  return isObj(c) ? extractGeminiResult(c) : null;
}
