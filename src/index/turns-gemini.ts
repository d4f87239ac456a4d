/**
 * Turns of a Gemini CLI chat: each `gemini` message carries `tokens` {input, output, cached,
 * thoughts, tool, total} for the call that wrote it; `input` is the request's whole
 * promptTokenCount, cached part included (as Gemini CLI 0.61.0 wrote it against a double:
 * test/index/fixtures/timeline/gemini). Tool calls sit on the same message as `toolCalls[]`; their
 * results enter the next call. A 0.61.0 `.jsonl` chat is replayed into messages first
 * (import-gemini.ts), so a message rewritten under the same id is one call.
 */
import { str } from './import-common.js';
import { Notes, type PartName, type TurnRecord, type TurnTool, type TurnsResult, addPart, estimateText, numOr } from './turns.js';
import { isObj } from '../pipeline/values.js';

export function geminiTurns(messages: unknown[]): TurnsResult {
  const turns: TurnRecord[] = [];
  const notes = new Notes();
  let parts: Partial<Record<PartName, number>> = {};
  let tools: TurnTool[] = [];
  messages.forEach((m, i) => {
    if (!isObj(m)) return;
    const text = typeof m.content === 'string' ? m.content : Array.isArray(m.content) ? m.content.map((p) => (isObj(p) ? str(p.text) ?? '' : '')).join(' ') : '';
    if (m.type === 'user') {
      addPart(parts, 'user', estimateText(text, 'o200k'));
      return;
    }
    if (m.type !== 'gemini') return;
    const tk = isObj(m.tokens) ? m.tokens : undefined;
    if (!tk) notes.add('gemini message without tokens');
    const input = numOr(tk?.input);
    turns.push({
      seq: turns.length,
      at: str(m.timestamp) ?? '',
      model: str(m.model),
      context: input && input > 0 ? input : null,
      input: input !== null && numOr(tk?.cached) !== null ? Math.max(0, input - numOr(tk?.cached)!) : input,
      cacheWrite: null,
      cacheRead: numOr(tk?.cached),
      output: numOr(tk?.output),
      kind: 'main',
      parts,
      tools,
      line: i,
    });
    parts = {};
    tools = [];
    addPart(parts, 'assistant', estimateText(text, 'o200k'));
    addPart(parts, 'thinking', numOr(tk?.thoughts) ?? 0);
    for (const c of Array.isArray(m.toolCalls) ? m.toolCalls : []) {
      if (!isObj(c)) continue;
      const result = JSON.stringify(c.result ?? c.resultDisplay ?? '');
      tools.push({ id: str(c.id) ?? `m${i}`, name: str(c.name) ?? 'tool', tokens: estimateText(result, 'o200k') });
    }
  });
  const list = notes.list();
  if (!turns.length) list.push('no call with tokens in this chat');
  return { turns, compactions: [], notes: list };
}
