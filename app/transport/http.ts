/**
 * The contract over `spillway serve`: `POST /api/<method>` with a JSON body answers `{ result }` or
 * `{ error: { code, message } }`; events arrive over SSE at `GET /api/events`.
 *
 * Auth: serve opens the browser at `/?token=…`. The first load keeps the token (sessionStorage),
 * removes it from the address bar, and sends it as `Authorization: Bearer`; serve also sets a
 * cookie, which is what EventSource (no custom headers) relies on.
 */
import {
  EVENT_NAMES,
  METHOD_NAMES,
  type EventName,
  type InspectorApi,
  type InspectorEvents,
  type MethodName,
} from '../../src/service/contract.js';
import { ApiError } from './errors.js';

const TOKEN_KEY = 'spillway.token';

export function takeTokenFromUrl(loc: Location = window.location, hist: History = window.history): string | undefined {
  const url = new URL(loc.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    try {
      sessionStorage.setItem(TOKEN_KEY, fromUrl);
    } catch {
      /* storage may be disabled: the cookie still works */
    }
    url.searchParams.delete('token');
    hist.replaceState(hist.state, '', url.pathname + url.search + url.hash);
    return fromUrl;
  }
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

export interface HttpTransportOptions {
  /** Origin + path prefix of the API, default `<page origin>/api`. */
  baseUrl?: string;
  token?: string;
  fetch?: typeof fetch;
  EventSource?: typeof EventSource;
}

export function createHttpApi(opts: HttpTransportOptions = {}): InspectorApi {
  const base = (opts.baseUrl ?? new URL('api', new URL('./', window.location.href)).href).replace(/\/$/, '');
  const doFetch = opts.fetch ?? window.fetch.bind(window);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;

  const call = async (method: MethodName, req: unknown): Promise<unknown> => {
    let res: Response;
    try {
      res = await doFetch(`${base}/${method}`, {
        method: 'POST',
        headers,
        credentials: 'same-origin',
        body: JSON.stringify(req ?? {}),
      });
    } catch (err) {
      throw new ApiError('UNAVAILABLE', `Cannot reach the Spillway server (${err instanceof Error ? err.message : String(err)})`);
    }
    let body: { result?: unknown; error?: { code?: string; message?: string } } | undefined;
    try {
      body = (await res.json()) as typeof body;
    } catch {
      throw new ApiError(res.ok ? 'INTERNAL' : statusCode(res.status), `${method}: HTTP ${res.status} with a body that is not JSON`);
    }
    if (body?.error) throw new ApiError(body.error.code ?? statusCode(res.status), body.error.message ?? `${method} failed`);
    if (!res.ok) throw new ApiError(statusCode(res.status), `${method}: HTTP ${res.status}`);
    return body?.result;
  };

  // One EventSource shared by every listener, opened on first subscription.
  const listeners = new Map<EventName, Set<(p: unknown) => void>>();
  let source: EventSource | undefined;
  const ES = opts.EventSource ?? (typeof EventSource === 'undefined' ? undefined : EventSource);
  const dispatch = (event: string, data: string) => {
    let payload: unknown;
    try {
      payload = JSON.parse(data);
    } catch {
      return;
    }
    // Accept both named SSE events and `{ event, payload }` messages on the default channel.
    if (event === 'message' && payload && typeof payload === 'object' && 'event' in payload) {
      const p = payload as { event: string; payload?: unknown; data?: unknown };
      event = p.event;
      payload = p.payload ?? p.data;
    }
    for (const l of listeners.get(event as EventName) ?? []) l(payload);
  };
  const ensureSource = () => {
    if (source || !ES) return;
    const url = new URL(`${base}/events`, window.location.href);
    if (opts.token) url.searchParams.set('token', opts.token);
    source = new ES(url.href, { withCredentials: true });
    source.addEventListener('message', (e) => dispatch('message', (e as MessageEvent<string>).data));
    for (const name of EVENT_NAMES) source.addEventListener(name, (e) => dispatch(name, (e as MessageEvent<string>).data));
  };

  const api = {
    on<E extends EventName>(event: E, listener: (payload: InspectorEvents[E]) => void) {
      if (!(EVENT_NAMES as readonly string[]).includes(event)) throw new ApiError('BAD_REQUEST', `unknown event ${event}`);
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      const l = listener as (p: unknown) => void;
      set.add(l);
      ensureSource();
      return () => {
        set.delete(l);
      };
    },
  } as Record<string, unknown>;
  for (const m of METHOD_NAMES) api[m] = (req: unknown) => call(m, req);
  return api as unknown as InspectorApi;
}

function statusCode(status: number): string {
  if (status === 401 || status === 403) return 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 400 || status === 422) return 'BAD_REQUEST';
  if (status === 503) return 'UNAVAILABLE';
  return 'INTERNAL';
}
