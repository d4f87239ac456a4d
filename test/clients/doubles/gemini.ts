/**
 * A local stand-in for the Gemini API (generativelanguage v1beta), for driving the real Gemini
 * CLI. `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` answers with `data: <chunk>`
 * events, each a GenerateContentResponse (candidates[0].content.parts: text or functionCall,
 * finishReason on the last, usageMetadata); `:generateContent` answers one JSON response;
 * `:countTokens` answers `{totalTokens}`. Requests that ask for JSON (the CLI's routing and
 * next-speaker helpers) get a small JSON answer. Turns are counted from the model turns with a
 * functionCall already in `contents`.
 */
import type http from 'node:http';
import { startLoopback, type LoopbackServer, type RecordedRequest } from './http.js';

export interface GeminiStep {
  text?: string;
  call?: { name: string; args: Record<string, unknown> };
}

export interface GeminiDouble extends LoopbackServer {
  mainTurns(): RecordedRequest[];
  /** Every functionResponse part the CLI sent back, in order. */
  functionResponses(): any[];
}

export function geminiTurnOf(body: any): number {
  const contents = Array.isArray(body?.contents) ? body.contents : [];
  return contents.filter((c: any) => c?.role === 'model' && (c.parts ?? []).some((p: any) => p?.functionCall)).length;
}

function chunk(parts: any[], finish: boolean, body: any): any {
  return {
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(finish ? { finishReason: 'STOP' } : {}) }],
    usageMetadata: { promptTokenCount: Math.ceil(JSON.stringify(body?.contents ?? '').length / 4), candidatesTokenCount: 5, totalTokenCount: 10 },
    modelVersion: 'gemini-2.5-pro',
    responseId: `resp-${Date.now()}`,
  };
}

function write(res: http.ServerResponse, stream: boolean, parts: any[], body: any) {
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(chunk(parts, true, body)));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(`data: ${JSON.stringify(chunk(parts, true, body))}\r\n\r\n`);
  res.end();
}

export async function startGeminiDouble(opts: { steps: Array<GeminiStep | ((body: any) => GeminiStep)> }): Promise<GeminiDouble> {
  const main: RecordedRequest[] = [];
  const server = await startLoopback((req, res) => {
    const m = /^\/v1(?:beta|alpha)?\/models\/([^:/]+):(streamGenerateContent|generateContent|countTokens)/.exec(req.url.split('?')[0]!);
    if (req.method !== 'POST' || !m) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 404, message: `no route ${req.method} ${req.url}`, status: 'NOT_FOUND' } }));
      return;
    }
    const body = req.body;
    if (m[2] === 'countTokens') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ totalTokens: Math.ceil(JSON.stringify(body ?? '').length / 4) }));
      return;
    }
    const stream = m[2] === 'streamGenerateContent';
    const cfg = body?.generationConfig ?? body?.config ?? {};
    if (cfg.responseMimeType === 'application/json' || cfg.responseJsonSchema || cfg.responseSchema) {
      write(res, stream, [{ text: JSON.stringify({ reasoning: 'scripted', next_speaker: 'user', model_choice: 'flash', complexity_reasoning: 'scripted', complexity_score: 10 }) }], body);
      return;
    }
    const hasTools = Array.isArray(body?.tools) && body.tools.some((t: any) => Array.isArray(t?.functionDeclarations) && t.functionDeclarations.length);
    if (!hasTools) {
      write(res, stream, [{ text: 'ok' }], body);
      return;
    }
    main.push(req);
    const s = opts.steps[geminiTurnOf(body)] ?? { text: 'done' };
    const step = typeof s === 'function' ? s(body) : s;
    const parts: any[] = [];
    if (step.text) parts.push({ text: step.text });
    if (step.call) parts.push({ functionCall: { name: step.call.name, args: step.call.args } });
    write(res, stream, parts, body);
  });
  return {
    ...server,
    mainTurns: () => main,
    functionResponses: () => {
      const last = main.at(-1)?.body?.contents ?? [];
      return last.flatMap((c: any) => (c.parts ?? []).filter((p: any) => p?.functionResponse).map((p: any) => p.functionResponse));
    },
  };
}
