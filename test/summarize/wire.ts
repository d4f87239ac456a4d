/**
 * Local HTTP servers that speak the real wire formats of the Anthropic Messages API and the
 * OpenAI chat-completions API (JSON and SSE), with scripted faults. The SDKs talk to them
 * exactly as they would to the hosted APIs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  at: number;
}

export type Behaviour =
  | { kind: 'ok'; text: string; inputTokens?: number; outputTokens?: number; model?: string; delayMs?: number }
  | { kind: 'error'; status: number; headers?: Record<string, string>; errorType?: string; message?: string }
  | { kind: 'hang' }
  | { kind: 'slow'; everyMs: number; piece: string }
  | { kind: 'giant'; bytes: number }
  | { kind: 'stream-error'; after: string; errorType: string }
  | { kind: 'echo' }
  /** Decided per request from its body and its number (0-based) at this server: the experiment tests fail some items and not others. */
  | { kind: 'fn'; f: (body: any, n: number) => Exclude<Behaviour, { kind: 'fn' }> };

export interface FakeServer {
  url: string;
  requests: Recorded[];
  /** Behaviours consumed in order; the last one repeats. */
  script(...b: Behaviour[]): void;
  /** Connections closed by the client before the reply ended. */
  clientAborts: number;
  close(): Promise<void>;
}

/**
 * `models`: an Ollama-style OpenAI-compatible server also answers GET /v1/models with these ids
 * (Ollama's shape: object "list", each `{ id, object: "model", created, owned_by: "library" }`).
 */
export async function startFake(api: 'anthropic' | 'openai', opts: { models?: string[] } = {}): Promise<FakeServer> {
  const requests: Recorded[] = [];
  let queue: Behaviour[] = [{ kind: 'ok', text: 'ok' }];
  const sockets = new Set<import('node:net').Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const state = { clientAborts: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: any = null;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = Buffer.concat(chunks).toString('utf8');
      }
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, at: Date.now() });
      if (opts.models && req.method === 'GET' && req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: opts.models.map((id) => ({ id, object: 'model', created: 1_730_000_000, owned_by: 'library' })) }));
        return;
      }
      const next = queue.length > 1 ? queue.shift()! : queue[0]!;
      const b = next.kind === 'fn' ? next.f(body, requests.length - 1) : next;
      res.on('close', () => {
        if (!res.writableFinished) state.clientAborts++;
      });
      const delay = b.kind === 'ok' ? b.delayMs : undefined;
      if (!delay) respond(api, b, body, res, timers);
      else {
        const t = setTimeout(() => {
          timers.delete(t);
          if (!res.destroyed) respond(api, b, body, res, timers);
        }, delay);
        timers.add(t);
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: api === 'anthropic' ? `http://127.0.0.1:${port}` : `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...b) => {
      queue = b;
    },
    get clientAborts() {
      return state.clientAborts;
    },
    close: async () => {
      for (const t of timers) clearInterval(t); // clearInterval clears a timeout too
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function userText(api: string, body: any): string {
  const msgs = body?.messages ?? [];
  const last = msgs[msgs.length - 1];
  return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
}

function respond(api: 'anthropic' | 'openai', b: Exclude<Behaviour, { kind: 'fn' }>, body: any, res: http.ServerResponse, timers: Set<NodeJS.Timeout>): void {
  const stream = body?.stream === true;
  const model = (b as { model?: string }).model ?? body?.model ?? 'unknown';
  if (b.kind === 'hang') return; // never answer
  if (b.kind === 'error') {
    const headers = { 'content-type': 'application/json', ...(b.headers ?? {}) };
    res.writeHead(b.status, headers);
    const payload =
      api === 'anthropic'
        ? { type: 'error', error: { type: b.errorType ?? (b.status === 429 ? 'rate_limit_error' : 'api_error'), message: b.message ?? `status ${b.status}` } }
        : { error: { message: b.message ?? `status ${b.status}`, type: b.errorType ?? (b.status === 429 ? 'rate_limit_exceeded' : 'server_error'), param: null, code: null } };
    res.end(JSON.stringify(payload));
    return;
  }
  const text = b.kind === 'ok' ? b.text : b.kind === 'echo' ? `ECHO ${userText(api, body).length}` : '';
  const inTok = (b as { inputTokens?: number }).inputTokens ?? 100;
  const outTok = (b as { outputTokens?: number }).outputTokens ?? 10;
  if (!stream) {
    if (b.kind === 'giant') {
      res.writeHead(200, { 'content-type': 'application/json' });
      const big = 'x'.repeat(b.bytes);
      res.end(
        api === 'anthropic'
          ? JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: big }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: inTok, output_tokens: 999999 } })
          : JSON.stringify({ id: 'c1', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: big }, finish_reason: 'stop' }], usage: { prompt_tokens: inTok, completion_tokens: 999999, total_tokens: 0 } }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_1' });
    res.end(
      api === 'anthropic'
        ? JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model, content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: inTok, output_tokens: outTok } })
        : JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop', logprobs: null }], usage: { prompt_tokens: inTok, completion_tokens: outTok, total_tokens: inTok + outTok } }),
    );
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const ev = (name: string, data: unknown) => (api === 'anthropic' ? `event: ${name}\ndata: ${JSON.stringify(data)}\n\n` : `data: ${JSON.stringify(data)}\n\n`);
  const start = () =>
    api === 'anthropic'
      ? ev('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model, stop_reason: null, stop_sequence: null, usage: { input_tokens: inTok, output_tokens: 1 } } }) +
        ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
        ev('ping', { type: 'ping' })
      : ev('chunk', { id: 'c1', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
  const delta = (t: string) =>
    api === 'anthropic'
      ? ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } })
      : ev('chunk', { id: 'c1', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: { content: t }, finish_reason: null }] });
  const end = () =>
    api === 'anthropic'
      ? ev('content_block_stop', { type: 'content_block_stop', index: 0 }) +
        ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: outTok } }) +
        ev('message_stop', { type: 'message_stop' })
      : ev('chunk', { id: 'c1', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
        ev('chunk', { id: 'c1', object: 'chat.completion.chunk', created: 1, model, choices: [], usage: { prompt_tokens: inTok, completion_tokens: outTok, total_tokens: inTok + outTok } }) +
        'data: [DONE]\n\n';
  res.write(start());
  if (b.kind === 'ok' || b.kind === 'echo') {
    // several deltas, as real servers send
    for (let i = 0; i < text.length; i += 7) res.write(delta(text.slice(i, i + 7)));
    res.end(end());
  } else if (b.kind === 'slow') {
    const t = setInterval(() => {
      if (res.destroyed) return clearInterval(t);
      res.write(delta(b.piece));
    }, b.everyMs);
    timers.add(t);
  } else if (b.kind === 'giant') {
    const piece = 'y'.repeat(16 * 1024);
    let sent = 0;
    const pump = () => {
      while (sent < b.bytes && !res.destroyed) {
        sent += piece.length;
        if (!res.write(delta(piece))) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end(end());
    };
    pump();
  } else if (b.kind === 'stream-error') {
    res.write(delta(b.after));
    res.end(
      api === 'anthropic'
        ? ev('error', { type: 'error', error: { type: b.errorType, message: 'Overloaded' } })
        : `data: ${JSON.stringify({ error: { message: 'server overloaded', type: b.errorType } })}\n\n`,
    );
  }
}
