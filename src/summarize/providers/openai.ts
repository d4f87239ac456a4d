import { ProviderError, cappedFetch } from './http.js';
import type { Completion, CompletionRequest } from './types.js';

/** gpt-5-mini, not gpt-5.1-mini: OpenAI publishes no API price for the latter, and a default must have a cost. */
export const OPENAI_DEFAULT_MODEL = 'gpt-5-mini';
export const OPENAI_MODELS = ['gpt-5-mini', 'gpt-5-nano', 'gpt-4.1-mini', 'gpt-4o-mini'];

type OpenAICtor = typeof import('openai').default;
let ctor: OpenAICtor | undefined;
async function sdk(): Promise<OpenAICtor> {
  ctor ??= (await import('openai')).default;
  return ctor;
}

/** api.openai.com wants `max_completion_tokens` (reasoning models reject `max_tokens`); local servers know `max_tokens`. */
function isOpenAIProper(baseURL: string | undefined): boolean {
  if (!baseURL) return true;
  try {
    return new URL(baseURL).hostname.endsWith('openai.com');
  } catch {
    return false;
  }
}

/**
 * One chat-completions call against any OpenAI-compatible endpoint (OpenAI, Ollama, llama.cpp,
 * vLLM, LM Studio), streaming by default and cut as soon as the reply passes `maxChars`.
 */
export async function openaiComplete(req: CompletionRequest): Promise<Completion> {
  if (!req.apiKey && !req.baseURL) {
    throw new ProviderError('OPENAI_API_KEY is not set (or set OPENAI_BASE_URL for a local server such as Ollama)', 'config');
  }
  const OpenAI = await sdk();
  const client = new OpenAI({
    apiKey: req.apiKey ?? 'none', // local servers ignore it; the SDK insists on one
    baseURL: req.baseURL ?? undefined,
    maxRetries: 0,
    timeout: Math.max(1, req.timeoutMs),
    fetch: cappedFetch(req.maxResponseBytes),
  });
  const cap = isOpenAIProper(req.baseURL) ? { max_completion_tokens: req.maxTokens } : { max_tokens: req.maxTokens };
  const messages = [
    { role: 'system' as const, content: req.system },
    { role: 'user' as const, content: req.user },
  ];
  if (!req.stream) {
    const res = await client.chat.completions.create({ model: req.model, messages, ...cap, stream: false }, { signal: req.signal });
    const choice = res.choices?.[0];
    if (!choice) throw new ProviderError('provider reply has no choices', 'bad-reply');
    const text = choice.message?.content ?? '';
    const cut = text.length > req.maxChars;
    return {
      text: cut ? text.slice(0, req.maxChars) : text,
      truncated: cut || choice.finish_reason === 'length',
      inputTokens: res.usage?.prompt_tokens,
      outputTokens: res.usage?.completion_tokens,
      model: res.model || req.model,
    };
  }
  const stream = await client.chat.completions.create(
    { model: req.model, messages, ...cap, stream: true, stream_options: { include_usage: true } },
    { signal: req.signal },
  );
  let text = '';
  let truncated = false;
  let inputTokens: number | undefined;
  let outputTokens: number | undefined;
  let model = req.model;
  for await (const chunk of stream) {
    if (chunk.model) model = chunk.model;
    if (chunk.usage) {
      inputTokens = chunk.usage.prompt_tokens;
      outputTokens = chunk.usage.completion_tokens;
    }
    const c = chunk.choices?.[0];
    if (c?.delta?.content) {
      text += c.delta.content;
      if (text.length > req.maxChars) {
        text = text.slice(0, req.maxChars);
        truncated = true;
        stream.controller.abort();
        break;
      }
    }
    if (c?.finish_reason === 'length') truncated = true;
  }
  // An aborted stream can end quietly; a cut reply must not pass for a whole one.
  if (req.signal.aborted && !truncated) throw req.signal.reason ?? new Error('aborted');
  return { text, truncated, inputTokens, outputTokens, model };
}
