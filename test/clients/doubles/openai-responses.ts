/**
 * A local stand-in for the OpenAI Responses API, for driving the real Codex binary
 * (`wire_api = "responses"`).
 *
 * `POST /v1/responses` with `stream: true` answers with the SSE events the hosted API sends, each
 * with its `sequence_number`: response.created, response.in_progress, then per output item
 * response.output_item.added, (for a message) response.content_part.added /
 * response.output_text.delta / response.output_text.done / response.content_part.done, (for a
 * function call) response.function_call_arguments.delta / .done, response.output_item.done, and
 * finally response.completed with usage. Codex reads output_item.done and response.completed
 * (codex-rs/codex-api/src/sse/responses.rs); the rest is there because the real API sends it.
 * `GET /v1/models` answers an empty list. Anything else is a 404, recorded.
 *
 * Turns are counted from the request's `input`: the number of function_call items and assistant
 * messages already in it, so turn N's request carries the function_call_output for turn N-1's
 * call.
 */
import type http from 'node:http';
import { pieces, startLoopback, sse, streamId, type LoopbackServer, type RecordedRequest } from './http.js';
import { openaiImageTokens, splitImages } from './images.js';

export interface FunctionCall {
  name: string;
  /** Codex groups MCP tools per server: `mcp__<server>`; sent on the item as `namespace`. */
  namespace?: string;
  arguments: Record<string, unknown>;
  callId?: string;
}

export interface ResponsesStep {
  text?: string;
  call?: FunctionCall;
}

export interface ResponsesDoubleOptions {
  /** Replies by turn (a function reads the request, e.g. a path from the last tool output); past the end, "done". */
  steps: Array<ResponsesStep | ((body: any) => ResponsesStep)>;
  /** Which requests are the agent's main loop (the rest get a short text). Default: those that declare tools. */
  isMain?: (body: any) => boolean;
  /** The usage reported for a request (default: `openaiInputTokens` of the input, nothing cached). */
  usage?: (body: any) => { input_tokens: number; cached_tokens: number };
  /** Answers a request before the script does (e.g. a compaction request): a step, or undefined. */
  side?: (body: any) => ResponsesStep | undefined;
}

export interface ResponsesDouble extends LoopbackServer {
  mainTurns(): RecordedRequest[];
  /** Every function_call_output item Codex sent back, in order, with the turn it arrived on. */
  toolOutputs(): Array<{ turn: number; item: any }>;
}

/**
 * Input tokens of a request part as the hosted API would count them: its text (by `textTokens`,
 * default chars/4) with every input_image taken out, plus each image by OpenAI's tile rule.
 */
export function openaiInputTokens(part: unknown, textTokens: (v: unknown) => number = (v) => Math.max(1, Math.ceil(JSON.stringify(v ?? '').length / 4))): number {
  const { rest, images } = splitImages(part);
  return textTokens(rest) + images.reduce((n, i) => n + openaiImageTokens(i.width, i.height, i.detail), 0);
}

export function responsesTurnOf(body: any): number {
  const input = Array.isArray(body?.input) ? body.input : [];
  return input.filter((i: any) => i?.type === 'function_call' || (i?.type === 'message' && i?.role === 'assistant')).length;
}

const id = streamId;

function writeResponse(res: http.ServerResponse, reqBody: any, step: ResponsesStep, usageOf?: (body: any) => { input_tokens: number; cached_tokens: number }): void {
  const model = typeof reqBody?.model === 'string' ? reqBody.model : 'gpt-5-codex';
  const respId = id('resp');
  const created = Math.floor(Date.now() / 1000);
  let n = 0;
  const ev = (type: string, data: Record<string, unknown>) => sse(res, type, { type, sequence_number: n++, ...data });
  const base = { id: respId, object: 'response', created_at: created, model, status: 'in_progress', output: [] as any[], usage: null };
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-request-id': id('req') });
  ev('response.created', { response: base });
  ev('response.in_progress', { response: base });
  const output: any[] = [];
  let index = 0;
  if (step.text !== undefined) {
    const itemId = id('msg');
    ev('response.output_item.added', { output_index: index, item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
    ev('response.content_part.added', { item_id: itemId, output_index: index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    for (const p of pieces(step.text, 3)) ev('response.output_text.delta', { item_id: itemId, output_index: index, content_index: 0, delta: p });
    ev('response.output_text.done', { item_id: itemId, output_index: index, content_index: 0, text: step.text });
    const part = { type: 'output_text', text: step.text, annotations: [] };
    ev('response.content_part.done', { item_id: itemId, output_index: index, content_index: 0, part });
    const item = { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [part] };
    ev('response.output_item.done', { output_index: index, item });
    output.push(item);
    index++;
  }
  if (step.call) {
    const itemId = id('fc');
    const callId = step.call.callId ?? id('call');
    const args = JSON.stringify(step.call.arguments);
    const ns = step.call.namespace ? { namespace: step.call.namespace } : {};
    ev('response.output_item.added', {
      output_index: index,
      item: { id: itemId, type: 'function_call', status: 'in_progress', call_id: callId, name: step.call.name, ...ns, arguments: '' },
    });
    for (const p of pieces(args, 3)) ev('response.function_call_arguments.delta', { item_id: itemId, output_index: index, delta: p });
    ev('response.function_call_arguments.done', { item_id: itemId, output_index: index, arguments: args });
    const item = { id: itemId, type: 'function_call', status: 'completed', call_id: callId, name: step.call.name, ...ns, arguments: args };
    ev('response.output_item.done', { output_index: index, item });
    output.push(item);
  }
  const u = usageOf?.(reqBody);
  const inputTokens = u?.input_tokens ?? openaiInputTokens(reqBody?.input ?? '');
  const outputTokens = Math.max(1, Math.ceil(JSON.stringify(output).length / 4));
  ev('response.completed', {
    response: {
      ...base,
      status: 'completed',
      output,
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { cached_tokens: u?.cached_tokens ?? 0 },
        output_tokens: outputTokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: inputTokens + outputTokens,
      },
    },
  });
  res.end();
}

export async function startResponsesDouble(opts: ResponsesDoubleOptions): Promise<ResponsesDouble> {
  const isMain = opts.isMain ?? ((b: any) => Array.isArray(b?.tools) && b.tools.length > 0);
  const main: RecordedRequest[] = [];
  const server = await startLoopback((req, res) => {
    const pathOnly = req.url.split('?')[0];
    if (req.method === 'GET' && pathOnly === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [], models: [] }));
      return;
    }
    if (req.method === 'POST' && pathOnly === '/v1/responses') {
      const side = opts.side?.(req.body);
      if (side) {
        writeResponse(res, req.body, side, opts.usage);
        return;
      }
      if (!isMain(req.body)) {
        writeResponse(res, req.body, { text: 'ok' }, opts.usage);
        return;
      }
      main.push(req);
      const s = opts.steps[responsesTurnOf(req.body)] ?? { text: 'done' };
      const step = typeof s === 'function' ? s(req.body) : s;
      writeResponse(res, req.body, step, opts.usage);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `no route ${req.method} ${pathOnly}`, type: 'invalid_request_error', code: 'not_found' } }));
  });
  return {
    ...server,
    mainTurns: () => main,
    toolOutputs: () => {
      const out: Array<{ turn: number; item: any }> = [];
      const seen = new Set<string>();
      for (const r of main) {
        for (const i of r.body.input ?? []) {
          if (i?.type !== 'function_call_output' || seen.has(i.call_id)) continue;
          seen.add(i.call_id);
          out.push({ turn: responsesTurnOf(r.body), item: i });
        }
      }
      return out;
    },
  };
}
