/**
 * A local stand-in for an OpenAI-compatible Chat Completions API, for driving the real OpenCode
 * binary through its bundled `@ai-sdk/openai-compatible` provider.
 *
 * `POST /v1/chat/completions` with `stream: true` answers as the hosted API does: `data:` lines of
 * `chat.completion.chunk` objects (the role, then text deltas or `tool_calls` deltas with the
 * arguments in pieces), a last chunk with `finish_reason`, then (the client asks for
 * `stream_options.include_usage`) one chunk with empty `choices` and `usage`, and `data: [DONE]`.
 * Anything else is a 404, recorded.
 *
 * The agent's main loop is the requests that declare tools (OpenCode's title request declares none
 * and gets a short text). Turn N is counted from the assistant messages already in `messages`, so
 * turn N's request carries the `role: "tool"` result of turn N-1's call.
 */
import type http from 'node:http';
import { pieces, startLoopback, streamId, type LoopbackServer, type RecordedRequest } from './http.js';
import { openaiInputTokens } from './openai-responses.js';

export interface ChatCall {
  name: string;
  arguments: Record<string, unknown>;
  callId?: string;
}

export interface ChatStep {
  text?: string;
  call?: ChatCall;
}

export interface ChatUsage {
  prompt_tokens: number;
  cached_tokens: number;
  completion_tokens?: number;
}

export interface ChatDoubleOptions {
  /** Replies by turn (a function reads the request); past the end, "done". */
  steps: Array<ChatStep | ((body: any) => ChatStep)>;
  /** The usage reported for a request (default: `openaiInputTokens` of the messages, nothing cached). */
  usage?: (body: any) => ChatUsage;
}

export interface ChatDouble extends LoopbackServer {
  mainTurns(): RecordedRequest[];
  /** Every `role: "tool"` message sent back, in order, with the turn it arrived on. */
  toolMessages(): Array<{ turn: number; message: any }>;
  /** The usage this double reported, per request answered, in order (main and side requests alike). */
  reported: Array<{ main: boolean; usage: { prompt_tokens: number; completion_tokens: number; cached_tokens: number } }>;
}

export function chatTurnOf(body: any): number {
  const msgs = Array.isArray(body?.messages) ? body.messages : [];
  return msgs.filter((m: any) => m?.role === 'assistant').length;
}

/** Input tokens of a request as the API would count them: text by chars/4, each image by OpenAI's tile rule. */
export function chatInputTokens(body: any): number {
  return openaiInputTokens(body?.messages ?? '');
}

function writeChat(res: http.ServerResponse, reqBody: any, step: ChatStep, u: ChatUsage): { prompt_tokens: number; completion_tokens: number; cached_tokens: number } {
  const model = typeof reqBody?.model === 'string' ? reqBody.model : 'm';
  const id = streamId('chatcmpl');
  const created = Math.floor(Date.now() / 1000);
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: null, choices, ...extra })}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  let out = '';
  if (step.text !== undefined) {
    for (const p of pieces(step.text, 3)) chunk([{ index: 0, delta: { content: p }, finish_reason: null }]);
    out += step.text;
  }
  if (step.call) {
    const args = JSON.stringify(step.call.arguments);
    const callId = step.call.callId ?? streamId('call');
    chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: step.call.name, arguments: '' } }] }, finish_reason: null }]);
    for (const p of pieces(args, 3)) chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: p } }] }, finish_reason: null }]);
    out += step.call.name + args;
  }
  chunk([{ index: 0, delta: {}, finish_reason: step.call ? 'tool_calls' : 'stop' }]);
  const completion = u.completion_tokens ?? Math.max(1, Math.ceil(out.length / 4));
  const usage = { prompt_tokens: u.prompt_tokens, completion_tokens: completion, cached_tokens: u.cached_tokens };
  if (reqBody?.stream_options?.include_usage) {
    chunk([], {
      usage: {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: completion,
        total_tokens: u.prompt_tokens + completion,
        prompt_tokens_details: { cached_tokens: u.cached_tokens },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    });
  }
  res.write('data: [DONE]\n\n');
  res.end();
  return usage;
}

export async function startChatDouble(opts: ChatDoubleOptions): Promise<ChatDouble> {
  const main: RecordedRequest[] = [];
  const reported: ChatDouble['reported'] = [];
  const usageOf = opts.usage ?? ((b: any) => ({ prompt_tokens: chatInputTokens(b), cached_tokens: 0 }));
  const server = await startLoopback((req, res) => {
    const pathOnly = req.url.split('?')[0];
    if (req.method === 'POST' && pathOnly === '/v1/chat/completions') {
      const isMain = Array.isArray(req.body?.tools) && req.body.tools.length > 0;
      let step: ChatStep = { text: 'ok' };
      if (isMain) {
        main.push(req);
        const s = opts.steps[chatTurnOf(req.body)] ?? { text: 'done' };
        step = typeof s === 'function' ? s(req.body) : s;
      }
      reported.push({ main: isMain, usage: writeChat(res, req.body, step, usageOf(req.body)) });
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: `no route ${req.method} ${pathOnly}`, type: 'invalid_request_error', code: 'not_found' } }));
  });
  return {
    ...server,
    reported,
    mainTurns: () => main,
    toolMessages: () => {
      const out: Array<{ turn: number; message: any }> = [];
      const seen = new Set<string>();
      for (const r of main) {
        for (const m of r.body.messages ?? []) {
          if (m?.role !== 'tool' || seen.has(m.tool_call_id)) continue;
          seen.add(m.tool_call_id);
          out.push({ turn: chatTurnOf(r.body), message: m });
        }
      }
      return out;
    },
  };
}
