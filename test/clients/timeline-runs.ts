/**
 * Scripted sessions of the real clients for the context timeline: several turns of Read, Bash
 * and MCP results, with usage the doubles count from the request they got (Anthropic's public
 * tokenizer over each message, the system prompt and the tools, and each image by its pixels under
 * the provider's documented rule), split into cache reads (the
 * prefix the previous request already sent) and cache writes (the rest), the way a cached API
 * reports it. `inflatePerToolResult` adds that many input tokens per tool_result in the request:
 * enough of them drive the client over its window so that it compacts by itself.
 */
import fs from 'node:fs';
import path from 'node:path';
import { countTokens } from '@anthropic-ai/tokenizer';
import { anthropicInputTokens, startAnthropicDouble, type AnthropicDouble, type AnthropicStep } from './doubles/anthropic.js';
import { openaiInputTokens, startResponsesDouble, type ResponsesDouble, type ResponsesStep } from './doubles/openai-responses.js';
import { runClaudeCode, type ClaudeRun } from './claude.js';
import { codexConfig, runCodex, tomlString, type CodexRun } from './codex.js';
import { ROOT, tmpDir } from './harness.js';

export const FILESYSTEM = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

const memo = new Map<string, number>();
/** Tokens of one piece of a request, memoised (each request resends the whole conversation). */
export function tokensOf(v: unknown): number {
  const s = typeof v === 'string' ? v : JSON.stringify(v ?? '');
  let n = memo.get(s);
  if (n === undefined) {
    n = countTokens(s);
    memo.set(s, n);
  }
  return n;
}

/** The compaction prompt Claude Code 2.1.328 sends (observed): its last user text says this. */
export const CLAUDE_SUMMARY_ASK = 'Your task is to create a detailed summary of the conversation so far';

function lastUserText(body: any): string {
  const msgs = Array.isArray(body?.messages) ? body.messages : [];
  const last = msgs[msgs.length - 1];
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return Array.isArray(last.content) ? last.content.map((b: any) => (b?.type === 'text' ? b.text : '')).join('\n') : '';
}

export const isClaudeSummaryRequest = (body: any) => lastUserText(body).includes(CLAUDE_SUMMARY_ASK);

function toolResultsIn(messages: any[]): number {
  let n = 0;
  for (const m of messages) if (Array.isArray(m?.content)) for (const b of m.content) if (b?.type === 'tool_result') n++;
  return n;
}

export interface UsageLog {
  /** Per main-loop request: the context the double reported (input + cache write + cache read). */
  main: number[];
  /** Per sub-agent request (a request whose first user message says SUBAGENT:), the same. */
  sub: number[];
  summaries: number;
  /** Every request answered, in order: where the summarisation requests fell among the main ones. */
  order: Array<'main' | 'sub' | 'summary'>;
}

export const newUsageLog = (): UsageLog => ({ main: [], sub: [], summaries: 0, order: [] });

/** The marker a script puts in a sub-agent's prompt, so the double can tell its requests apart. */
export const SUBAGENT_MARK = 'SUBAGENT:';
export const isSubagentRequest = (body: any) => JSON.stringify(body?.messages?.[0]?.content ?? '').includes(SUBAGENT_MARK);

const partMemo = new Map<string, number>();
/**
 * Tokens of one request part (a message, the system prompt, the tools; JSON text) as the provider
 * counts it: the text by the tokenizer, each image by its pixels under that provider's rule.
 */
export function partTokens(provider: 'anthropic' | 'openai', part: string): number {
  const key = `${provider}\0${part}`;
  let n = partMemo.get(key);
  if (n === undefined) {
    const hasImage = part.includes('"image"') || part.includes('"input_image"');
    n = !hasImage ? tokensOf(part) : provider === 'anthropic' ? anthropicInputTokens(JSON.parse(part), tokensOf) : openaiInputTokens(JSON.parse(part), tokensOf);
    partMemo.set(key, n);
  }
  return n;
}

/**
 * The Anthropic usage of a request, counted from it, with cache reads for the prefix the last
 * request of the same loop (main or sub-agent) sent.
 */
export function anthropicUsage(inflatePerToolResult: number, log: UsageLog) {
  const prevOf = new Map<string, { parts: string[]; tokens: number }>();
  return (body: any) => {
    const lane = isClaudeSummaryRequest(body) ? 'summary' : isSubagentRequest(body) ? 'sub' : Array.isArray(body?.tools) && body.tools.length ? 'main' : 'helper';
    const prev = prevOf.get(lane === 'summary' ? 'main' : lane) ?? { parts: [], tokens: 0 };
    const parts: string[] = [JSON.stringify(body?.system ?? ''), JSON.stringify(body?.tools ?? [])];
    for (const m of body?.messages ?? []) parts.push(JSON.stringify(m));
    let common = 0;
    while (common < parts.length && common < prev.parts.length && parts[common] === prev.parts[common]) common++;
    let total = 0;
    let cached = 0;
    parts.forEach((p, i) => {
      const t = partTokens('anthropic', p);
      total += t;
      if (i < common) cached += t;
    });
    const extra = inflatePerToolResult * toolResultsIn(body?.messages ?? []);
    total += extra;
    // The inflation rides along in the cache like the text it stands for.
    const cacheRead = Math.min(cached + (common > 2 ? Math.min(extra, prev.tokens) : 0), total);
    if (lane !== 'summary') prevOf.set(lane, { parts, tokens: total });
    const input = Math.min(3, total - cacheRead);
    const u = { input_tokens: input, cache_creation_input_tokens: total - cacheRead - input, cache_read_input_tokens: cacheRead };
    if (lane === 'summary') log.summaries++;
    else if (lane === 'main') log.main.push(total);
    else if (lane === 'sub') log.sub.push(total);
    if (lane !== 'helper') log.order.push(lane);
    return u;
  };
}

/** Number of main requests before each summarisation request: the turn each compaction lands before. */
export function compactionTurns(log: UsageLog): number[] {
  const out: number[] = [];
  let main = 0;
  for (const o of log.order) {
    if (o === 'main') main++;
    else if (o === 'summary') out.push(main);
  }
  return out;
}

export function textFile(dir: string, name: string, bytes: number, word: string): string {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `${word} line ${i}: the quick brown fox jumps over the lazy dog ${i * 7}\n`;
  const p = path.join(dir, name);
  fs.writeFileSync(p, s);
  return p;
}

export interface ClaudeSession {
  run: ClaudeRun;
  double: AnthropicDouble;
  usage: UsageLog;
  /** Tool calls scripted, in order. */
  script: AnthropicStep[];
  cwd: string;
}

/**
 * A Claude Code session that answers by a script it walks one step per main request (not by the
 * request's turn count: a compaction rewrites the conversation).
 */
export async function claudeSession(o: {
  script: (data: string) => AnthropicStep[];
  inflatePerToolResult?: number;
  env?: Record<string, string>;
  args?: string[];
  mcp?: boolean;
  /** A HOME prepared beforehand (e.g. by `spillway setup claude-code`). */
  home?: string;
  /** Answers a sub-agent's requests (see SUBAGENT_MARK). */
  subagent?: (body: any) => AnthropicStep;
  timeoutMs?: number;
}): Promise<ClaudeSession> {
  const cwd = tmpDir('spillway-tl-cc-cwd-');
  const data = path.join(cwd, 'data');
  fs.mkdirSync(data);
  const script = o.script(data);
  const usage = newUsageLog();
  let step = 0;
  const double = await startAnthropicDouble({
    steps: [],
    usage: anthropicUsage(o.inflatePerToolResult ?? 0, usage),
    side: (body) => {
      if (isClaudeSummaryRequest(body)) {
        return { text: '<analysis>The user asked to look at the data files; they were read.</analysis>\n<summary>1. Primary Request: read the data files.\n2. Files read so far: several data files.\n3. Next: keep reading.</summary>' };
      }
      if (o.subagent && isSubagentRequest(body)) return o.subagent(body);
      if (!(Array.isArray(body?.tools) && body.tools.length)) return undefined;
      return script[step++] ?? { text: 'done' };
    },
  });
  const run = await runClaudeCode({
    home: o.home,
    baseUrl: double.origin,
    prompt: 'read the data files one by one',
    cwd,
    addDirs: [data],
    mcpServers: o.mcp ? { fs: { command: process.execPath, args: [FILESYSTEM, data] } } : undefined,
    env: o.env,
    args: o.args,
    timeoutMs: o.timeoutMs ?? 240_000,
  });
  return { run, double, usage, script, cwd };
}

export interface CodexSession {
  run: CodexRun;
  double: ResponsesDouble;
  /** Per main request, the input tokens the double reported. */
  main: number[];
  compactRequests: number;
  /** Main and compaction requests in the order they came. */
  order: Array<'main' | 'summary'>;
}

/** Codex's local compaction prompt (codex-rs templates/compact/prompt.md, as 0.171.0 sent it here). */
export const isCodexCompactRequest = (body: any) => JSON.stringify(body?.input ?? '').includes('CONTEXT CHECKPOINT COMPACTION');

export async function codexSession(o: { script: (data: string) => ResponsesStep[]; inflatePerToolOutput?: number; topToml?: string }): Promise<CodexSession> {
  const cwd = tmpDir('spillway-tl-cx-cwd-');
  const data = path.join(cwd, 'data');
  fs.mkdirSync(data);
  const script = o.script(data);
  const main: number[] = [];
  const order: Array<'main' | 'summary'> = [];
  let compactRequests = 0;
  let step = 0;
  let prevInput: string[] = [];
  const double = await startResponsesDouble({
    steps: [],
    usage: (body) => {
      const parts = [JSON.stringify(body?.instructions ?? ''), JSON.stringify(body?.tools ?? []), ...(body?.input ?? []).map((i: any) => JSON.stringify(i))];
      let common = 0;
      while (common < parts.length && common < prevInput.length && parts[common] === prevInput[common]) common++;
      prevInput = parts;
      let total = 0;
      let cached = 0;
      parts.forEach((p, i) => {
        const t = partTokens('openai', p);
        total += t;
        if (i < common) cached += t;
      });
      const outputs = (body?.input ?? []).filter((i: any) => i?.type === 'function_call_output').length;
      total += (o.inflatePerToolOutput ?? 0) * outputs;
      if (isCodexCompactRequest(body)) order.push('summary');
      else if (Array.isArray(body?.tools) && body.tools.length) {
        main.push(total);
        order.push('main');
      }
      return { input_tokens: total, cached_tokens: cached };
    },
    side: (body) => {
      if (isCodexCompactRequest(body)) {
        compactRequests++;
        return { text: 'Summary: the data files were read one by one; continue with the next one.' };
      }
      if (!(Array.isArray(body?.tools) && body.tools.length)) return undefined;
      return script[step++] ?? { text: 'done' };
    },
  });
  // Top-level keys (model_auto_compact_token_limit) must come before the provider's table.
  const home = tmpDir('spillway-tl-cx-home-');
  fs.mkdirSync(path.join(home, '.codex'), { recursive: true });
  const mcp = ['[mcp_servers.fs]', `command = ${tomlString(process.execPath)}`, `args = [${[FILESYSTEM, data].map(tomlString).join(', ')}]`, 'required = true'].join('\n');
  fs.writeFileSync(path.join(home, '.codex', 'config.toml'), `${o.topToml ?? ''}\n${codexConfig(double.origin)}\n${mcp}\n`);
  const run = await runCodex({ baseUrl: double.origin, prompt: 'read the data files one by one', cwd, home, keepConfig: true, timeoutMs: 240_000 });
  return { run, double, main, compactRequests, order };
}
