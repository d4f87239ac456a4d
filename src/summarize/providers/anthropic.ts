import { ProviderError, cappedFetch } from './http.js';
import type { Completion, CompletionRequest } from './types.js';

/** The current Haiku: small, fast and cheap, which is what a summarizer wants. */
export const ANTHROPIC_DEFAULT_MODEL = 'claude-haiku-5-5';
export const ANTHROPIC_MODELS = ['claude-haiku-5-5', 'claude-sonnet-5-5', 'claude-haiku-4-5', 'claude-sonnet-4-6', 'claude-opus-5-5'];

type AnthropicCtor = typeof import('@anthropic-ai/sdk').default;
let ctor: AnthropicCtor | undefined;
async function sdk(): Promise<AnthropicCtor> {
  ctor ??= (await import('@anthropic-ai/sdk')).default;
  return ctor;
}

/** One Messages API call (streaming by default), cut as soon as the reply passes `maxChars`. */
export async function anthropicComplete(req: CompletionRequest): Promise<Completion> {
  if (!req.apiKey && !req.baseURL) {
    throw new ProviderError('ANTHROPIC_API_KEY is not set (or pass apiKey / set ANTHROPIC_BASE_URL for a proxy)', 'config');
  }
  const Anthropic = await sdk();
  const client = new Anthropic({
    apiKey: req.apiKey ?? 'none',
    baseURL: req.baseURL ?? null,
    maxRetries: 0, // we retry ourselves, within the summary's deadline
    timeout: Math.max(1, req.timeoutMs),
    fetch: cappedFetch(req.maxResponseBytes),
  });
  const params = {
    model: req.model,
    max_tokens: req.maxTokens,
    system: req.system,
    messages: [{ role: 'user' as const, content: req.user }],
  };
  if (!req.stream) {
    const msg = await client.messages.create({ ...params, stream: false }, { signal: req.signal });
    let text = '';
    for (const block of msg.content) if (block.type === 'text') text += block.text;
    const cut = text.length > req.maxChars;
    return {
      text: cut ? text.slice(0, req.maxChars) : text,
      truncated: cut || msg.stop_reason === 'max_tokens',
      inputTokens: msg.usage?.input_tokens,
      outputTokens: msg.usage?.output_tokens,
      model: msg.model || req.model,
    };
  }
  const stream = await client.messages.create({ ...params, stream: true }, { signal: req.signal });
  let text = '';
  let inputTokens: number | undefined;
  let outputTokens: number | undefined;
  let model = req.model;
  let truncated = false;
  for await (const ev of stream) {
    if (ev.type === 'message_start') {
      inputTokens = ev.message.usage?.input_tokens ?? inputTokens;
      model = ev.message.model || model;
    } else if (ev.type === 'content_block_delta' && ev.delta.type === 'text_delta') {
      text += ev.delta.text;
      if (text.length > req.maxChars) {
        text = text.slice(0, req.maxChars);
        truncated = true;
        stream.controller.abort();
        break;
      }
    } else if (ev.type === 'message_delta') {
      outputTokens = ev.usage?.output_tokens ?? outputTokens;
      if (ev.usage?.input_tokens) inputTokens = ev.usage.input_tokens;
      if (ev.delta.stop_reason === 'max_tokens') truncated = true;
    }
  }
  // An aborted stream can end quietly; a cut reply must not pass for a whole one.
  if (req.signal.aborted && !truncated) throw req.signal.reason ?? new Error('aborted');
  return { text, truncated, inputTokens, outputTokens, model };
}
