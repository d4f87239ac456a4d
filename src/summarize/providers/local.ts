import { ProviderError } from './http.js';

/** Ollama's address; llama.cpp's server, LM Studio and vLLM take SPILLWAY_LOCAL_BASE_URL (each serves /v1). */
export const LOCAL_DEFAULT_BASE_URL = 'http://127.0.0.1:11434/v1';
/** A probe is a page load's worth of waiting at most: a local server answers /models in milliseconds. */
export const LOCAL_PROBE_TIMEOUT_MS = 1_500;

export interface LocalProbe {
  baseURL: string;
  ok: boolean;
  /** The ids the server lists at GET /models, in its order. */
  models: string[];
  /** Why not, in words a person can act on. */
  reason?: string;
}

type OpenAICtor = typeof import('openai').default;

/** Why a local server did not answer, without the SDK's stack: refused, timed out, or what it said. */
function why(err: unknown): string {
  const e = err as { cause?: unknown; code?: string; status?: number; message?: string; name?: string };
  // The SDK's "Connection error." wraps fetch's TypeError, which wraps the socket's error: the code is at the bottom.
  let code: string | undefined;
  for (let c: unknown = err, depth = 0; c && depth < 5 && !code; c = (c as { cause?: unknown }).cause, depth++) code = (c as { code?: string }).code;
  if (code === 'ECONNREFUSED') return 'connection refused: is the server running?';
  if (code === 'ENOTFOUND') return 'no such host';
  if (e.name === 'APIConnectionTimeoutError' || /timed? ?out/i.test(e.message ?? '')) return 'no answer in time';
  if (typeof e.status === 'number') return `it answered HTTP ${e.status} to GET /models`;
  return e.message ?? String(err);
}

/** Lists the models of an OpenAI-compatible server (GET {baseURL}/models, through the official SDK). Never throws. */
export async function probeLocal(baseURL: string, apiKey?: string, timeoutMs = LOCAL_PROBE_TIMEOUT_MS): Promise<LocalProbe> {
  try {
    const OpenAI: OpenAICtor = (await import('openai')).default;
    const client = new OpenAI({ apiKey: apiKey ?? 'none', baseURL, maxRetries: 0, timeout: timeoutMs });
    const models: string[] = [];
    for await (const m of client.models.list()) {
      models.push(m.id);
      if (models.length >= 200) break; // a listing, not an inventory
    }
    return models.length ? { baseURL, ok: true, models } : { baseURL, ok: false, models, reason: 'the server lists no models: pull or load one first' };
  } catch (err) {
    return { baseURL, ok: false, models: [], reason: why(err) };
  }
}

/** The error a summary run gives when the local server is down or has no model: where it looked, and what to do. */
export function localUnavailable(probe: LocalProbe): ProviderError {
  return new ProviderError(
    `no OpenAI-compatible server at ${probe.baseURL} (${probe.reason ?? 'unknown'}); start Ollama, llama.cpp's server, LM Studio or vLLM, or set SPILLWAY_LOCAL_BASE_URL`,
    'config',
  );
}
