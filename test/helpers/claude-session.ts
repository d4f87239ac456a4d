import fs from 'node:fs';
import path from 'node:path';

/** One tool call of a written session: its id, tool name, input and the text it returned. */
export type ToolCall = [id: string, name: string, input: unknown, output: string];

/**
 * A Claude Code transcript as the real client lays it out, `<home>/projects/-work/<sid>.jsonl` with
 * `home` as its cwd: the user's prompt at 09:59, then each call and its result, a second apart from
 * 10:01 (2026-12-01, UTC). Returns the transcript's path.
 */
export function writeClaudeSession(home: string, sid: string, prompt: string, calls: ToolCall[]): string {
  const lines: unknown[] = [{ type: 'user', sessionId: sid, cwd: home, timestamp: '2026-12-01T09:59:00.000Z', message: { role: 'user', content: prompt } }];
  calls.forEach(([id, name, input, out], i) => {
    const at = new Date(Date.parse('2026-12-01T10:01:00.000Z') + i * 1000).toISOString();
    lines.push({ type: 'assistant', sessionId: sid, cwd: home, timestamp: at, message: { role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'tool_use', id, name, input }] } });
    lines.push({ type: 'user', sessionId: sid, cwd: home, timestamp: at, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: out }] } });
  });
  const proj = path.join(home, 'projects', '-work');
  fs.mkdirSync(proj, { recursive: true });
  const file = path.join(proj, `${sid}.jsonl`);
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return file;
}
