/**
 * A local stand-in for the Gemini API (generativelanguage v1beta), for driving the real Gemini
 * CLI with `GOOGLE_GEMINI_BASE_URL` and an API key.
 *
 * `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` answers with `data: <chunk>` events,
 * each a GenerateContentResponse (`candidates[0].content.parts` with `text` or `functionCall`,
 * `finishReason`, `usageMetadata`); `:generateContent` answers the same chunk as one JSON body (the
 * CLI's model router and helpers use it); `:countTokens` answers `{totalTokens}`. Anything else is
 * a 404 in the API's error shape, and is recorded.
 *
 * The main loop is a request that declares tools; its reply is picked by the number of model
 * turns already in `contents`.
 */
import { pieces, startLoopback, type LoopbackServer, type RecordedRequest } from './http.js';

export interface GeminiStep {
  text?: string;
  call?: { name: string; args: Record<string, unknown> };
}

export interface GeminiUsage {
  promptTokenCount: number;
  cachedContentTokenCount: number;
}

export interface GeminiDoubleOptions {
  steps: GeminiStep[];
  /** Usage per request (default: chars/4 of `contents`, nothing cached). */
  usage?: (body: any) => GeminiUsage;
}

export interface GeminiDouble extends LoopbackServer {
  mainTurns(): RecordedRequest[];
}

export const geminiTurnOf = (body: any) => (Array.isArray(body?.contents) ? body.contents.filter((c: any) => c?.role === 'model').length : 0);
const isMain = (body: any) => Array.isArray(body?.tools) && body.tools.length > 0;

export async function startGeminiDouble(opts: GeminiDoubleOptions): Promise<GeminiDouble> {
  const main: RecordedRequest[] = [];
  const server = await startLoopback((req, res) => {
    const [pathOnly] = req.url.split('?');
    const m = /^\/v1beta\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/.exec(pathOnly ?? '');
    if (req.method !== 'POST' || !m) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 404, message: `no route ${req.method} ${pathOnly}`, status: 'NOT_FOUND' } }));
      return;
    }
    const body = req.body;
    if (m[2] === 'countTokens') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ totalTokens: Math.ceil(JSON.stringify(body ?? '').length / 4) }));
      return;
    }
    let step: GeminiStep;
    if (isMain(body)) {
      main.push(req);
      step = opts.steps[geminiTurnOf(body)] ?? { text: 'done' };
    } else {
      // The CLI's router asks which model to use, as JSON.
      step = { text: JSON.stringify({ reasoning: 'a simple request', model_choice: 'flash' }) };
    }
    const u = opts.usage?.(body) ?? { promptTokenCount: Math.ceil(JSON.stringify(body?.contents ?? '').length / 4), cachedContentTokenCount: 0 };
    const parts = step.call ? [{ functionCall: { name: step.call.name, args: step.call.args } }] : [{ text: step.text ?? '' }];
    const output = Math.max(1, Math.ceil(JSON.stringify(parts).length / 4));
    const usageMetadata = { promptTokenCount: u.promptTokenCount, cachedContentTokenCount: u.cachedContentTokenCount, candidatesTokenCount: output, totalTokenCount: u.promptTokenCount + output };
    const chunk = (p: any[], last: boolean) => ({
      candidates: [{ content: { role: 'model', parts: p }, index: 0, ...(last ? { finishReason: 'STOP' } : {}) }],
      ...(last ? { usageMetadata } : {}),
      modelVersion: m[1],
      responseId: `resp-${main.length}-${Date.now().toString(36)}`,
    });
    if (m[2] === 'generateContent') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(chunk(parts, true)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    // Text streams in pieces, as the API does; a function call arrives whole in the last chunk.
    const texts = step.text ? pieces(step.text, 3) : [];
    const events = step.call ? [chunk(parts, true)] : texts.map((t, i) => chunk([{ text: t }], i === texts.length - 1));
    if (!events.length) events.push(chunk([{ text: '' }], true));
    for (const e of events) res.write(`data: ${JSON.stringify(e)}\r\n\r\n`);
    res.end();
  });
  return { ...server, mainTurns: () => main };
}
