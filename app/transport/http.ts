/**
 * The contract over `spillway serve`: `POST /api/<method>` with a JSON body answers `{ result }` or
 * `{ error: { code, message } }`; events arrive as Server-Sent Events from `GET /api/events`.
 *
 * Auth (src/server/auth.ts): serve opens the page at `/#launch=CODE`. The page takes the code out
 * of the address bar, trades it once for the token (`POST /api/auth/launch`), and keeps the token
 * in this module's memory only: no cookie (every server on 127.0.0.1 would receive it), no
 * storage, no URL. Calls and the event stream (read with fetch, so it can carry a header) send
 * `Authorization: Bearer`; `<img>` and PDF frames get per-asset tickets the page signs itself.
 * A reload forgets the token but not the tab's renewal secret (sessionStorage: this origin's, this
 * tab's, gone with the tab), which buys the token again once (`POST /api/auth/renew`) and the next
 * secret. The page rotates it every RENEWAL_ROTATE_MS while it runs, since each lives an hour.
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
import { errMessage } from '../../src/pipeline/values.js';

/** How long a signed asset URL stays the same (so the browser cache keeps working); it is valid for up to twice that. */
export const ASSET_TICKET_BUCKET_MS = 5 * 60_000;
/** Wait before reconnecting the event stream when the server did not say (`retry:`). */
const DEFAULT_RETRY_MS = 2_000;

/** sessionStorage key of the tab's renewal secret. */
export const RENEWAL_STORAGE_KEY = 'spillway.renew';
/** How often a running page trades its renewal secret for a fresh one (each lives RENEWAL_TTL_MS, an hour, on the server). */
export const RENEWAL_ROTATE_MS = 10 * 60_000;

/** Where the renewal secret is kept; absent (a sandboxed frame, storage disabled): reloads need a fresh link. */
function tabStorage(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    return undefined;
  }
}

/** Take the one-time launch code out of the address bar (it stays out of history from here on), if there is one. */
export function takeLaunchCode(loc: Location = window.location, hist: History = window.history): string | undefined {
  const hash = new URLSearchParams(loc.hash.replace(/^#/, ''));
  const code = hash.get('launch');
  if (!code) return undefined;
  hash.delete('launch');
  const rest = hash.toString();
  hist.replaceState(hist.state, '', loc.pathname + loc.search + (rest ? `#${rest}` : ''));
  return code;
}

interface AuthOptions {
  baseUrl?: string;
  fetch?: typeof fetch;
  /** Where the renewal secret goes; default this tab's sessionStorage. */
  storage?: Storage;
}

/** POST one secret to an auth route; keeps the renewal secret it answers with and returns the token. */
async function trade(route: 'launch' | 'renew', body: Record<string, string>, opts: AuthOptions): Promise<string | undefined> {
  const doFetch = opts.fetch ?? window.fetch.bind(window);
  const storage = opts.storage ?? tabStorage();
  let res: Response;
  try {
    res = await doFetch(`${apiBase(opts.baseUrl)}/auth/${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      credentials: 'omit',
      body: JSON.stringify(body),
    });
  } catch {
    return undefined;
  }
  try {
    // A refused secret is dead for good: forget it, so the next load does not present it again.
    if (!res.ok) {
      if (route === 'renew' && res.status === 401) storage?.removeItem(RENEWAL_STORAGE_KEY);
      return undefined;
    }
    const result = ((await res.json()) as { result?: { token?: unknown; renew?: unknown } }).result;
    if (typeof result?.renew === 'string') storage?.setItem(RENEWAL_STORAGE_KEY, result.renew);
    return typeof result?.token === 'string' ? result.token : undefined;
  } catch {
    return undefined;
  }
}

/** Trade a launch code for the token (keeping the renewal secret); undefined when the code was already used or expired. */
export function exchangeLaunchCode(code: string, opts: AuthOptions = {}): Promise<string | undefined> {
  return trade('launch', { code }, opts);
}

/** After a reload: trade the tab's renewal secret for the token and the next secret; undefined when there is none or it is dead. */
export function renewAccess(opts: AuthOptions = {}): Promise<string | undefined> {
  const secret = (opts.storage ?? tabStorage())?.getItem(RENEWAL_STORAGE_KEY);
  return secret ? trade('renew', { renew: secret }, opts) : Promise.resolve(undefined);
}

function apiBase(baseUrl?: string): string {
  return (baseUrl ?? new URL('api', new URL('./', window.location.href)).href).replace(/\/$/, '');
}

export interface HttpTransportOptions {
  /** Origin + path prefix of the API, default `<page origin>/api`. */
  baseUrl?: string;
  /** The token, or a promise of it (the launch exchange still running). */
  token?: string | Promise<string | undefined>;
  fetch?: typeof fetch;
}

async function hmacBase64Url(key: string, message: string): Promise<string> {
  const enc = new TextEncoder();
  const k = await crypto.subtle.importKey('raw', enc.encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', k, enc.encode(message)));
  let bin = '';
  for (const b of mac) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/**
 * Same-origin asset URLs the page can put in `<img src>` or a frame: each carries a ticket for that
 * one asset, signed here with the token (WebCrypto HMAC-SHA256, as src/server/auth.ts checks it).
 */
export function createAssetUrls(opts: Pick<HttpTransportOptions, 'baseUrl' | 'token'> = {}): (payloadId: string, sha256: string) => Promise<string> {
  const base = apiBase(opts.baseUrl);
  const token = Promise.resolve(opts.token);
  const urls = new Map<string, Promise<string>>();
  return (payloadId, sha256) => {
    // The same URL for a while, so the browser cache hits; valid until the bucket after next ends.
    const exp = (Math.floor(Date.now() / ASSET_TICKET_BUCKET_MS) + 2) * ASSET_TICKET_BUCKET_MS;
    const key = `${payloadId}\n${sha256}\n${exp}`;
    let url = urls.get(key);
    if (!url) {
      url = (async () => {
        const mac = await hmacBase64Url((await token) ?? '', `spillway-asset\n${payloadId}\n${sha256}\n${exp}`);
        return `${base}/asset/${encodeURIComponent(payloadId)}/${encodeURIComponent(sha256)}?ticket=${exp}.${mac}`;
      })();
      if (urls.size > 1_000) urls.clear();
      urls.set(key, url);
    }
    return url;
  };
}

export function createHttpApi(opts: HttpTransportOptions = {}): InspectorApi {
  const base = apiBase(opts.baseUrl);
  const doFetch = opts.fetch ?? window.fetch.bind(window);
  const token = Promise.resolve(opts.token);
  const headers = async (): Promise<Record<string, string>> => {
    const t = await token;
    return { 'content-type': 'application/json', ...(t ? { authorization: `Bearer ${t}` } : {}) };
  };

  const call = async (method: MethodName, req: unknown): Promise<unknown> => {
    let res: Response;
    try {
      res = await doFetch(`${base}/${method}`, { method: 'POST', headers: await headers(), credentials: 'omit', body: JSON.stringify(req ?? {}) });
    } catch (err) {
      throw new ApiError('UNAVAILABLE', `Cannot reach the Spillway server (${errMessage(err)})`);
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

  // One event stream shared by every listener, opened on first subscription. EventSource cannot
  // send a header, so the stream is read with fetch, and reconnected as EventSource would.
  const listeners = new Map<EventName, Set<(p: unknown) => void>>();
  let streaming = false;
  const dispatch = (event: string, data: string) => {
    let payload: unknown;
    try {
      payload = JSON.parse(data);
    } catch {
      return;
    }
    for (const l of listeners.get(event as EventName) ?? []) l(payload);
  };
  const readStream = async (): Promise<number> => {
    let retry = DEFAULT_RETRY_MS;
    const res = await doFetch(`${base}/events`, { headers: { ...(await headers()), accept: 'text/event-stream' }, credentials: 'omit', cache: 'no-store' });
    // No token (or a wrong one): retrying cannot help.
    if (res.status === 401 || res.status === 403) return -1;
    if (!res.ok || !res.body) return retry;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return retry;
      buf += value;
      let i: number;
      while ((i = buf.search(/\r?\n\r?\n/)) !== -1) {
        const block = buf.slice(0, i);
        buf = buf.slice(i).replace(/^\r?\n\r?\n/, '');
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          else if (line.startsWith('retry:') && /^\d+$/.test(line.slice(6).trim())) retry = Number(line.slice(6).trim());
        }
        if (data.length) dispatch(event, data.join('\n'));
      }
    }
  };
  const ensureStream = () => {
    if (streaming) return;
    streaming = true;
    void (async () => {
      for (;;) {
        const wait = await readStream().catch(() => DEFAULT_RETRY_MS);
        if (wait < 0) return;
        await new Promise((r) => setTimeout(r, wait));
      }
    })();
  };

  const api = {
    on<E extends EventName>(event: E, listener: (payload: InspectorEvents[E]) => void) {
      if (!(EVENT_NAMES as readonly string[]).includes(event)) throw new ApiError('BAD_REQUEST', `unknown event ${event}`);
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      const l = listener as (p: unknown) => void;
      set.add(l);
      ensureStream();
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
