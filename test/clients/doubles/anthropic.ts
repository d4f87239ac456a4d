/**
 * A local stand-in for the Anthropic Messages API, for driving the real Claude Code binary.
 *
 * Speaks the wire format the hosted API does: `POST /v1/messages` answers a streaming request with
 * the SSE sequence message_start, content_block_start / content_block_delta (text_delta,
 * input_json_delta for tool_use) / content_block_stop, message_delta (stop_reason tool_use or
 * end_turn, usage), message_stop; a non-streaming request gets the same message as one JSON
 * body. `POST /v1/messages/count_tokens` answers `{input_tokens}`. Anything else is a 404 in the
 * API's error shape, and is recorded, so a test can see a call it did not expect.
 *
 * The conversation is scripted turn by turn: the reply to a main-loop request is picked by how many
 * assistant turns the request already carries, so turn N's request holds the tool_result the
 * client produced for turn N-1's tool_use. That tool_result is what the model "received".
 */
import type http from 'node:http';
import { pieces, startLoopback, sse, streamId, type LoopbackServer, type RecordedRequest } from './http.js';
import { countTokens as claudeTokens } from '@anthropic-ai/tokenizer';
import { anthropicImageTokens, splitImages } from './images.js';

export interface ToolUse {
  name: string;
  input: Record<string, unknown>;
  id?: string;
}

export interface AnthropicStep {
  text?: string;
  toolUses?: ToolUse[];
  /** Blocks sent as they are, before the text (e.g. server_tool_use + web_search_tool_result). */
  blocks?: any[];
}

export interface AnthropicDoubleOptions {
  /**
   * Replies for the main loop, by turn (a function reads the request, e.g. to use a path from the
   * last tool_result); past the end, a text-only "done".
   */
  steps: Array<AnthropicStep | ((body: any) => AnthropicStep)>;
  /**
   * Which requests are the agent's main loop (the rest, e.g. title or topic helpers, get a short
   * text reply). Default: a request that declares tools.
   */
  isMain?: (body: any) => boolean;
  /**
   * Answers a request before the script does (a sub-agent's loop, WebFetch's or WebSearch's helper
   * request): return a step to send it, or undefined to go on as usual.
   */
  side?: (body: any) => AnthropicStep | undefined;
  /**
   * The usage reported for a request (default: `anthropicInputTokens` of the messages, no cache).
   * Reported in message_start, and again in message_delta with the output count, as the hosted API does.
   */
  usage?: (body: any) => DoubleUsage;
  /** The answer to `/v1/messages/count_tokens` (default: `anthropicInputTokens` of the body, text by Anthropic's public tokenizer). */
  countTokens?: (body: any) => number;
}

export interface DoubleUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface AnthropicDouble extends LoopbackServer {
  /** Requests to /v1/messages that were main-loop turns, in order. */
  mainTurns(): RecordedRequest[];
  /** Every tool_result block the client sent, in order, with the turn it arrived on. */
  toolResults(): Array<{ turn: number; block: any }>;
}

const defaultIsMain = (body: any) => Array.isArray(body?.tools) && body.tools.length > 0;

/** Number of assistant turns already in a request: the index of the step to answer with. */
export function turnOf(body: any): number {
  return Array.isArray(body?.messages) ? body.messages.filter((m: any) => m?.role === 'assistant').length : 0;
}

const id = streamId;

function blocksOf(step: AnthropicStep): any[] {
  const blocks: any[] = [...(step.blocks ?? [])];
  if (step.text) blocks.push({ type: 'text', text: step.text });
  for (const t of step.toolUses ?? []) blocks.push({ type: 'tool_use', id: t.id ?? id('toolu'), name: t.name, input: t.input });
  return blocks;
}

function roughTokens(body: unknown): number {
  return Math.max(1, Math.ceil((JSON.stringify(body ?? '') ?? '').length / 4));
}

/**
 * Input tokens of a request part as the hosted API would count them: its text (by `textTokens`,
 * default chars/4) with every image taken out, plus each image by its pixels (Anthropic's
 * documented rule), never its base64 as text.
 */
export function anthropicInputTokens(part: unknown, textTokens: (v: unknown) => number = roughTokens): number {
  const { rest, images } = splitImages(part);
  return textTokens(rest) + images.reduce((n, i) => n + anthropicImageTokens(i.width, i.height), 0);
}

/**
 * What `/v1/messages/count_tokens` answers by default: the text of the messages (a string content,
 * text blocks, tool_result contents) by Anthropic's public tokenizer, each image by its pixels,
 * other blocks, the system prompt and the tools as their JSON. Text is counted as text, not as its
 * JSON-escaped form (a newline is one character to the model, two in JSON).
 */
export function countedTokens(body: any): number {
  const text = (s: string) => (s ? claudeTokens(s) : 0);
  const block = (b: any): number => {
    if (typeof b === 'string') return text(b);
    if (b?.type === 'text' && typeof b.text === 'string') return text(b.text);
    if (b?.type === 'tool_result') return Array.isArray(b.content) ? b.content.reduce((n: number, x: any) => n + block(x), 0) : text(String(b.content ?? ''));
    return anthropicInputTokens(b, (v) => text(JSON.stringify(v ?? '')));
  };
  let n = 0;
  for (const m of body?.messages ?? []) n += Array.isArray(m?.content) ? m.content.reduce((k: number, b: any) => k + block(b), 0) : block(m?.content ?? '');
  if (body?.system) n += typeof body.system === 'string' ? text(body.system) : Array.isArray(body.system) ? body.system.reduce((k: number, b: any) => k + block(b), 0) : 0;
  if (Array.isArray(body?.tools) && body.tools.length) n += text(JSON.stringify(body.tools));
  return Math.max(1, n);
}

function writeMessage(res: http.ServerResponse, reqBody: any, blocks: any[], usageOf?: (body: any) => DoubleUsage): void {
  const stop = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const model = typeof reqBody?.model === 'string' ? reqBody.model : 'claude-sonnet-4-5';
  const u = usageOf?.(reqBody) ?? { input_tokens: anthropicInputTokens(reqBody?.messages), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const outputTokens = roughTokens(blocks);
  const msgId = id('msg');
  if (reqBody?.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': id('req') });
    res.end(
      JSON.stringify({
        id: msgId,
        type: 'message',
        role: 'assistant',
        model,
        content: blocks,
        stop_reason: stop,
        stop_sequence: null,
        usage: { ...u, output_tokens: outputTokens },
      }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'request-id': id('req') });
  sse(res, 'message_start', {
    type: 'message_start',
    message: {
      id: msgId,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...u, output_tokens: 1 },
    },
  });
  sse(res, 'ping', { type: 'ping' });
  blocks.forEach((b, index) => {
    if (b.type === 'text') {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const p of pieces(b.text, 3)) sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: p } });
    } else if (b.type !== 'tool_use' && b.type !== 'server_tool_use') {
      // Result blocks (web_search_tool_result, …) arrive whole in their content_block_start.
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: b });
    } else {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: b.type, id: b.id, name: b.name, input: {} } });
      for (const p of pieces(JSON.stringify(b.input), 3)) {
        sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: p } });
      }
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index });
  });
  sse(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: usageOf ? { ...u, output_tokens: outputTokens } : { output_tokens: outputTokens } });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}

export async function startAnthropicDouble(opts: AnthropicDoubleOptions): Promise<AnthropicDouble> {
  const isMain = opts.isMain ?? defaultIsMain;
  const main: RecordedRequest[] = [];
  const server = await startLoopback((req, res) => {
    const pathOnly = req.url.split('?')[0];
    if (req.method === 'POST' && pathOnly === '/v1/messages/count_tokens') {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Claude Code asks this for a Read or an MCP result near its token cap: images count by pixels here too.
      res.end(JSON.stringify({ input_tokens: (opts.countTokens ?? countedTokens)(req.body) }));
      return;
    }
    if (req.method === 'POST' && pathOnly === '/v1/messages') {
      const side = opts.side?.(req.body);
      if (side) {
        writeMessage(res, req.body, blocksOf(side), opts.usage);
        return;
      }
      if (!isMain(req.body)) {
        writeMessage(res, req.body, [{ type: 'text', text: 'ok' }]);
        return;
      }
      main.push(req);
      const turn = turnOf(req.body);
      const s = opts.steps[turn] ?? { text: 'done' };
      const step = typeof s === 'function' ? s(req.body) : s;
      writeMessage(res, req.body, blocksOf(step), opts.usage);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `no route ${req.method} ${pathOnly}` } }));
  });
  return {
    ...server,
    mainTurns: () => main,
    toolResults: () => {
      const out: Array<{ turn: number; block: any }> = [];
      const seen = new Set<string>();
      for (const r of main) {
        for (const m of r.body.messages ?? []) {
          if (m.role !== 'user' || !Array.isArray(m.content)) continue;
          for (const b of m.content) {
            if (b?.type !== 'tool_result' || seen.has(b.tool_use_id)) continue;
            seen.add(b.tool_use_id);
            out.push({ turn: turnOf(r.body), block: b });
          }
        }
      }
      return out;
    },
  };
}
