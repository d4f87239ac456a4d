/**
 * A small realistic Claude Code session for the ledger (written here, not by the real binary: the
 * lead wires the recorded real sessions in later). Five tool calls, as 2.1.328 writes them, with the
 * usage a model API that counts like Anthropic's would report (text by Spillway's claude estimate,
 * images by Anthropic's documented pixel rule):
 *
 * 1. Read of a 1200 × 900 PNG: an image block (its base64 in the transcript);
 * 2. Bash `base64 shot.png`, spilled by the hook through the real guard: the image cut out as an
 *    asset, the model got the guard's message (inline-assets);
 * 3. Bash printing 40,000 characters: Claude Code persisted it itself, the model got a preview stub;
 * 4. an MCP read (`mcp__fs__read_text_file`) of a small file: passed whole;
 * 5. a small Grep.
 */
import fs from 'node:fs';
import path from 'node:path';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { imageTokens } from '../../src/agents/index.js';
import { estimateText } from '../../src/index/turns.js';
import { makePng } from '../helpers/png.js';

export const SESSION_ID = '5b0a3c1e-7d2f-4e8a-9c61-0f2d3e4a5b6c';
export const MODEL = 'claude-sonnet-4-5';
export const BASELINE = 18_000;
export const HOOK_LIMIT = 12_000;

export interface LedgerSession {
  projects: string;
  spills: string;
  transcript: string;
  /** What entered with each call (tool result, as the API counted it), by tool_use id. */
  entered: Record<string, number>;
  /** The measured context of each call. */
  contexts: number[];
  imageTokens: number;
  bashBigChars: number;
}

export async function writeLedgerSession(dir: string): Promise<LedgerSession> {
  const projects = path.join(dir, 'projects');
  const spills = path.join(dir, 'spills');
  const proj = path.join(projects, '-home-dev-project');
  const toolResults = path.join(proj, SESSION_ID, 'tool-results');
  fs.mkdirSync(toolResults, { recursive: true });
  fs.mkdirSync(spills, { recursive: true });
  const transcript = path.join(proj, `${SESSION_ID}.jsonl`);
  const cwd = '/home/dev/project';
  const base = { sessionId: SESSION_ID, cwd, version: '2.1.328', userType: 'external', isSidechain: false };
  const lines: unknown[] = [];
  let t = Date.parse('2026-12-05T08:00:00.000Z');
  const at = () => new Date((t += 1_000)).toISOString();
  const contexts: number[] = [];
  const entered: Record<string, number> = {};
  let ctx = BASELINE + 20;
  let n = 0;
  const call = (content: unknown[]) => {
    n++;
    contexts.push(ctx);
    lines.push({ ...base, type: 'assistant', uuid: `a${n}`, timestamp: at(), requestId: `req_${n}`, message: { id: `msg_${n}`, type: 'message', role: 'assistant', model: MODEL, content, usage: { input_tokens: 3, cache_creation_input_tokens: ctx - 3 - (contexts.length > 1 ? contexts[contexts.length - 2]! : 0), cache_read_input_tokens: contexts.length > 1 ? contexts[contexts.length - 2]! : 0, output_tokens: 40 } } });
  };
  const toolUse = (id: string, name: string, input: unknown) => call([{ type: 'tool_use', id, name, input }]);
  /** A tool result, and the growth the API counts for it with the next call (its tokens and the call's own tool_use). */
  const result = (id: string, content: unknown, tokens: number, extra: Record<string, unknown> = {}) => {
    lines.push({ ...base, type: 'user', uuid: `u${id}`, timestamp: at(), message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content }] }, ...extra });
    entered[id] = tokens;
    ctx += tokens + 30;
  };
  lines.push({ ...base, type: 'user', uuid: 'u0', timestamp: at(), message: { role: 'user', content: 'look at the screenshot and the logs' } });

  // 1. Read of a PNG: an image block.
  const png = makePng(1200, 900);
  fs.writeFileSync(path.join(dir, 'shot.png'), png);
  const img = imageTokens('anthropic', { width: 1200, height: 900 });
  toolUse('toolu_read_png', 'Read', { file_path: `${cwd}/shot.png` });
  result('toolu_read_png', [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png.toString('base64') } }], img, {
    toolUseResult: { type: 'image', file: { base64: png.toString('base64'), type: 'image/png', originalSize: png.length } },
  });

  // 2. Bash base64 of the PNG, spilled by the hook (the real guard, at the hook's limit): its asset cut out.
  const b64 = png.toString('base64').replace(/(.{76})/g, '$1\n');
  const hookSession = path.join(spills, `claude-code_${SESSION_ID}`);
  const g = await guardLargeResult(b64, { sessionPath: hookSession, toolName: 'Bash', toolInput: { command: 'base64 shot.png' }, limitTokens: HOOK_LIMIT, profile: 'claude', call: { toolCallId: 'toolu_b64', client: 'claude-code', cwd } } as Parameters<typeof guardLargeResult>[1]);
  if (!g) throw new Error('the guard passed the base64 dump');
  toolUse('toolu_b64', 'Bash', { command: 'base64 shot.png' });
  result('toolu_b64', g.message, estimateText(g.message, 'claude'), { toolUseResult: { stdout: g.message, stderr: '', interrupted: false } });

  // 3. Bash printing 40,000 characters: Claude Code persisted it and showed a preview.
  const big = Array.from({ length: 800 }, (_, i) => `2026-12-05T08:00:${String(i % 60).padStart(2, '0')} INFO worker-${i % 7} processed batch ${i} in ${(i * 37) % 1000} ms`).join('\n');
  const bigFile = path.join(toolResults, 'bash-logs-1.txt');
  fs.writeFileSync(bigFile, big);
  const stub = `<persisted-output>\nOutput too large (${(big.length / 1024).toFixed(1)}KB). Full output saved to: ${bigFile}\n\nPreview (first 2KB):\n${big.slice(0, 2_000)}\n...\n</persisted-output>`;
  toolUse('toolu_logs', 'Bash', { command: 'cat logs/worker.log' });
  result('toolu_logs', stub, estimateText(stub, 'claude'), { toolUseResult: { stdout: big, stderr: '', interrupted: false, persistedOutputPath: bigFile } });

  // 4. An MCP read of a small file: passed whole.
  const small = JSON.stringify({ name: 'project', version: '1.4.2', scripts: { build: 'tsc -p .', test: 'vitest run' } }, null, 2);
  toolUse('toolu_mcp', 'mcp__fs__read_text_file', { path: `${cwd}/package.json` });
  result('toolu_mcp', [{ type: 'text', text: small }], estimateText(small, 'claude'));

  // 5. A small Grep.
  const grep = 'src/a.ts:12: TODO fix\nsrc/b.ts:40: TODO test';
  toolUse('toolu_grep', 'Grep', { pattern: 'TODO' });
  result('toolu_grep', grep, estimateText(grep, 'claude'));

  call([{ type: 'text', text: 'Done: the screenshot shows a red circle; the logs are fine.' }]);
  fs.writeFileSync(transcript, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return { projects, spills, transcript, entered, contexts, imageTokens: img, bashBigChars: big.length };
}
