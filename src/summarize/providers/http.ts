import { setTimeout as sleep } from 'node:timers/promises';
import { PROVIDER_BACKOFF_BASE_MS, PROVIDER_MAX_BACKOFF_MS } from '../limits.js';

export type ProviderErrorKind = 'timeout' | 'rate-limit' | 'http' | 'network' | 'too-large' | 'config' | 'aborted' | 'bad-reply';

/** Every provider failure, typed, so the guard can say why it fell back. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly kind: ProviderErrorKind,
    readonly status?: number,
    readonly attempts = 1,
  ) {
    super(message);
    this.name = 'ProviderError';
  }
}

/**
 * A fetch for the SDKs that stops reading a reply after `maxBytes`: a server that returns
 * megabytes (or never stops) cannot flood memory, streaming or not.
 */
export function cappedFetch(maxBytes: number): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    if (!res.body) return res;
    let seen = 0;
    const reader = res.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        seen += value.byteLength;
        if (seen > maxBytes) {
          void reader.cancel().catch(() => {});
          controller.error(new ProviderError(`provider reply larger than ${maxBytes} bytes: cut`, 'too-large'));
          return;
        }
        controller.enqueue(value);
      },
      cancel(reason) {
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

interface HttpishError {
  status?: number;
  headers?: Headers | Record<string, string> | null;
  name?: string;
  message?: string;
  cause?: unknown;
}

function header(h: HttpishError['headers'], name: string): string | undefined {
  if (!h) return undefined;
  if (typeof (h as Headers).get === 'function') return (h as Headers).get(name) ?? undefined;
  const rec = h as Record<string, string>;
  return rec[name] ?? rec[name.toLowerCase()];
}

/** `retry-after-ms`, else `retry-after` (seconds or an HTTP date), in ms; undefined when absent or unreadable. */
export function retryAfterMs(h: HttpishError['headers'], now = Date.now()): number | undefined {
  const ms = header(h, 'retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = header(h, 'retry-after');
  if (!ra) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Math.max(0, Number(ra) * 1000);
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function isAbort(err: unknown): boolean {
  const e = err as HttpishError;
  return e?.name === 'AbortError' || e?.name === 'APIUserAbortError' || /abort/i.test(e?.name ?? '');
}

/** Map an SDK / fetch error to a ProviderError, looking through `cause` chains for our own. */
export function toProviderError(err: unknown, attempts: number, timedOut: boolean): ProviderError {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as HttpishError).cause, i++) {
    if (e instanceof ProviderError) return new ProviderError(e.message, e.kind, e.status, attempts);
  }
  const e = err as HttpishError;
  if (timedOut) return new ProviderError(`provider did not answer in time (${attempts} attempt${attempts > 1 ? 's' : ''})`, 'timeout', undefined, attempts);
  if (isAbort(err)) return new ProviderError('summary cancelled', 'aborted', undefined, attempts);
  const msg = (e?.message ?? String(err)).slice(0, 500);
  if (typeof e?.status === 'number') {
    return new ProviderError(`provider HTTP ${e.status}: ${msg}`, e.status === 429 ? 'rate-limit' : 'http', e.status, attempts);
  }
  if (/too large|larger than/i.test(msg)) return new ProviderError(msg, 'too-large', undefined, attempts);
  return new ProviderError(`provider unreachable: ${msg}`, 'network', undefined, attempts);
}

export function isRetryable(err: unknown): boolean {
  const e = err as HttpishError;
  for (let c: unknown = err, i = 0; c && i < 5; c = (c as HttpishError).cause, i++) {
    if (c instanceof ProviderError) return false;
  }
  if (isAbort(err)) return false;
  if (typeof e?.status === 'number') return e.status === 408 || e.status === 409 || e.status === 429 || e.status >= 500;
  return true; // connection reset, refused, DNS: worth another try within the deadline
}

export interface RetryOptions {
  maxRetries: number;
  /** Epoch ms by which everything must be done. */
  deadline: number;
  signal: AbortSignal;
  /** Tests: observe the waits. */
  onRetry?: (info: { attempt: number; waitMs: number; status?: number }) => void;
}

/**
 * Run `fn` with retries: exponential backoff with jitter, or exactly what `retry-after` asks
 * on 429/503, never past the deadline (a wait that would overrun it gives up at once).
 */
export async function withRetries<T>(fn: (attempt: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  let attempt = 0;
  for (;;) {
    attempt++;
    try {
      return await fn(attempt);
    } catch (err) {
      if (opts.signal.aborted) {
        if (isCallerAbort(opts.signal)) throw new ProviderError('summary cancelled', 'aborted', undefined, attempt);
        throw toProviderError(err, attempt, true);
      }
      const timedOut = Date.now() >= opts.deadline - 5;
      if (timedOut || attempt > opts.maxRetries || !isRetryable(err)) throw toProviderError(err, attempt, timedOut);
      const e = err as HttpishError;
      const asked = retryAfterMs(e?.headers);
      const backoff = Math.min(PROVIDER_MAX_BACKOFF_MS, PROVIDER_BACKOFF_BASE_MS * 2 ** (attempt - 1) * (0.75 + Math.random() / 2));
      const waitMs = asked !== undefined ? asked : backoff;
      if (waitMs > PROVIDER_MAX_BACKOFF_MS || Date.now() + waitMs >= opts.deadline) {
        const pe = toProviderError(err, attempt, false);
        throw new ProviderError(`${pe.message} (retry-after ${Math.round(waitMs)} ms is past the deadline: gave up)`, pe.kind, pe.status, attempt);
      }
      opts.onRetry?.({ attempt, waitMs, status: e?.status });
      try {
        await sleep(waitMs, undefined, { signal: opts.signal });
      } catch {
        if (isCallerAbort(opts.signal)) throw new ProviderError('summary cancelled', 'aborted', undefined, attempt);
        throw toProviderError(err, attempt, true);
      }
    }
  }
}

/** Our deadline aborts with a TimeoutError reason; a caller abort has any other reason. */
function isCallerAbort(signal: AbortSignal): boolean {
  return signal.aborted && (signal.reason as Error | undefined)?.name !== 'TimeoutError';
}
