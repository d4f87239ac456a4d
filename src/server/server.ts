/**
 * `spillway serve`: the inspector contract over loopback HTTP, plus the built UI.
 * The wire format is specified in ./client-contract.md; keep the two in step.
 *
 * Security model (docs/security.md says what is promised):
 * - Loopback only. The Host header must name this loopback server and the Origin (when sent) must
 *   be its own, which defeats DNS rebinding and cross-site requests from pages the user has open.
 * - Credentials (auth.ts): the token only ever in an `Authorization: Bearer` header; URLs carry a
 *   one-time launch code, assets a short-lived per-asset ticket. No cookie, so no other server on
 *   127.0.0.1 ever receives anything that opens this one.
 * - Bounded: headers must arrive within HEADERS_TIMEOUT_MS and the whole request within
 *   REQUEST_TIMEOUT_MS; a refused request (Host, Origin, token) is answered and its connection
 *   closed, its body never read; bodies are capped per method and big ones parsed off the event
 *   loop (body.ts).
 * - Payload content never reaches a browser as HTML: the API answers JSON; assets carry nosniff,
 *   a sandboxing CSP and `Content-Disposition: attachment` unless they are images or PDFs.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { isInside, openUntrusted } from '../pipeline/layout.js';
import { EVENT_NAMES, METHOD_NAMES, ServiceError, type ErrorCode, type EventName, type InspectorEvents, type MethodName } from '../service/contract.js';
import { ASSET_CSP, PDF_CSP, STATIC_TYPES, assetHeaders, uiCsp } from '../service/web-policy.js';
import type { OpenedAsset } from '../service/service.js';
import { isAcceptableToken, MIN_TOKEN_CHARS, ServeAuth, TOKEN_BYTES } from './auth.js';
import { BodyError, createBodyReader } from './body.js';

export { MIN_TOKEN_CHARS, TOKEN_BYTES, ASSET_TICKET_MAX_TTL_MS, signAssetTicket } from './auth.js';
export { MAX_REQUEST_BODY_BYTES, MAX_SMALL_BODY_BYTES, MAX_LARGE_BODIES_IN_FLIGHT } from './body.js';

/** SSE comment sent this often so proxies and browsers keep the stream open. */
export const SSE_HEARTBEAT_MS = 15_000;
/** Reconnect delay we ask event-stream clients to use. */
export const SSE_RETRY_MS = 2_000;
/** A stream whose client stopped reading is dropped once this much is queued (it reconnects and refetches). */
export const SSE_MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** Concurrent SSE streams allowed (each UI tab holds one). */
export const MAX_SSE_CLIENTS = 64;
/** The request line and headers must arrive within this. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A whole request, body included, must arrive within this (a 140 MiB upload through a slow SSH tunnel fits). */
export const REQUEST_TIMEOUT_MS = 5 * 60_000;
/** How often Node checks the two timeouts above (its default, 30 s, would let them overrun by that much). */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;
/** Largest body of `POST /api/auth/launch` (a launch code). */
const MAX_LAUNCH_BODY_BYTES = 1024;
/** The one unauthenticated body must arrive whole within this. */
export const LAUNCH_BODY_TIMEOUT_MS = 5_000;

/** Error codes on the wire: the service's, plus the transport's own. */
export type WireErrorCode =
  | ErrorCode
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'METHOD_NOT_ALLOWED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE';

const STATUS: Record<WireErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  FORBIDDEN_PATH: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTERNAL: 500,
  UNAVAILABLE: 503,
};

export function statusForCode(code: string): number {
  return STATUS[code as WireErrorCode] ?? 500;
}

/** What the server needs from the service (src/service/service.ts provides all of it). */
export interface ServedService {
  /** Validate and run one contract method. Throws ServiceError. */
  invoke(method: string, req: unknown, call?: { signal?: AbortSignal }): Promise<unknown>;
  on<E extends EventName>(event: E, listener: (payload: InspectorEvents[E]) => void): () => void;
  /** One asset, checked and open for streaming. */
  openAsset(req: { payloadId: string; sha256: string }): Promise<OpenedAsset>;
}

export interface StartServerOptions {
  service: ServedService;
  /** Loopback only: `127.0.0.1` (default), `localhost` (binds 127.0.0.1) or `::1`. */
  host?: string;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Reuse a token (at least 16 URL-safe chars); default: a fresh random one. */
  token?: string;
  /** Built UI (Vite output). Default: `<repo>/dist/renderer`. `null`: API only. */
  staticDir?: string | null;
  /** Called when a launch link was used (the CLI then prints a fresh one). */
  onLaunchUsed?: () => void;
  /** Tighter limits for tests; defaults are the named constants. */
  limits?: { headersTimeoutMs?: number; requestTimeoutMs?: number; bodyIdleTimeoutMs?: number; maxLargeBodiesInFlight?: number };
}

export interface RunningServer {
  /** `http://127.0.0.1:PORT/#launch=…`: a one-time link to open. */
  url: string;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  host: string;
  port: number;
  /** The bearer token, for scripts (`Authorization: Bearer …`). */
  token: string;
  /** A fresh one-time link; with `ttlMs` it also expires (what `--open` hands a browser). */
  launchUrl(opts?: { ttlMs?: number }): string;
  close(): Promise<void>;
}

const LOOPBACK_HOSTS: Record<string, string> = { '127.0.0.1': '127.0.0.1', localhost: '127.0.0.1', '::1': '::1' };

/** The served UI may not be framed at all. */
export const UI_CSP = uiCsp("'none'");
export { ASSET_CSP, PDF_CSP };
const API_CSP = "default-src 'none'; frame-ancestors 'none'; sandbox";

/** `<repo>/dist/renderer`, found by walking up from this module to the package root. */
export function defaultStaticDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'dist', 'renderer');
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return path.resolve('dist', 'renderer');
}

class HttpError extends Error {
  constructor(
    readonly code: WireErrorCode,
    message: string,
    /** Answer, then close the connection without reading what the client still sends. */
    readonly drop = false,
  ) {
    super(message);
  }
}

function baseHeaders(res: http.ServerResponse): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  let text: string;
  try {
    text = JSON.stringify(body);
  } catch (err) {
    status = 500;
    text = JSON.stringify({ error: { code: 'INTERNAL', message: `response is not serializable: ${String(err)}` } });
  }
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Security-Policy', API_CSP);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

function toWireError(err: unknown): { code: WireErrorCode; message: string; drop: boolean } {
  if (err instanceof HttpError) return { code: err.code, message: err.message, drop: err.drop };
  if (err instanceof BodyError) return { code: err.code, message: err.message, drop: true };
  if (err instanceof ServiceError) return { code: err.code, message: err.message, drop: false };
  return { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err), drop: false };
}

/** Pipe an asset's stream to `res`; a client that goes away stops (and closes) it. */
function streamBody(res: http.ServerResponse, stream: Readable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    stream.on('error', reject);
    res.on('close', () => {
      stream.destroy();
      resolve();
    });
    stream.pipe(res).on('finish', resolve);
  });
}

/** Start serving. Rejects (before binding) for a non-loopback host. */
export async function startServer(opts: StartServerOptions): Promise<RunningServer> {
  const requested = (opts.host ?? '127.0.0.1').trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const bindHost = LOOPBACK_HOSTS[requested];
  if (!bindHost) {
    throw new Error(`spillway serve binds to loopback only (127.0.0.1, localhost or ::1), not ${JSON.stringify(opts.host)}`);
  }
  const port = opts.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad port ${JSON.stringify(opts.port)}`);
  if (opts.token !== undefined && !isAcceptableToken(opts.token)) {
    throw new Error(`token must be at least ${MIN_TOKEN_CHARS} characters of A-Z a-z 0-9 _ -`);
  }
  const auth = new ServeAuth(opts.token ?? crypto.randomBytes(TOKEN_BYTES).toString('base64url'));
  const staticDir = opts.staticDir === null ? null : path.resolve(opts.staticDir ?? defaultStaticDir());
  const service = opts.service;
  const methods: ReadonlySet<string> = new Set(METHOD_NAMES);
  const sseClients = new Set<http.ServerResponse>();
  const bodies = createBodyReader({ idleTimeoutMs: opts.limits?.bodyIdleTimeoutMs, maxLargeInFlight: opts.limits?.maxLargeBodiesInFlight });

  let allowedHosts = new Set<string>();
  let allowedOrigins = new Set<string>();

  const checkHostAndOrigin = (req: http.IncomingMessage): void => {
    const host = (req.headers.host ?? '').toLowerCase();
    if (!allowedHosts.has(host)) {
      throw new HttpError('FORBIDDEN', `Host ${JSON.stringify(req.headers.host ?? '')} is not this server (DNS rebinding?)`, true);
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin.toLowerCase())) {
      throw new HttpError('FORBIDDEN', `Origin ${JSON.stringify(origin)} may not call this server`, true);
    }
    // A browser that sends Fetch Metadata tells us when a request is cross-site even without Origin.
    if (req.headers['sec-fetch-site'] === 'cross-site') throw new HttpError('FORBIDDEN', 'cross-site requests are refused', true);
  };

  const requireBearer = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (auth.bearer(req.headers.authorization)) return;
    res.setHeader('WWW-Authenticate', 'Bearer realm="spillway"');
    throw new HttpError(
      'UNAUTHORIZED',
      'missing or wrong token: open a fresh link from the `spillway serve` terminal (each link works once), or send Authorization: Bearer',
      true,
    );
  };

  const requirePost = (req: http.IncomingMessage, res: http.ServerResponse, what: string): void => {
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      throw new HttpError('METHOD_NOT_ALLOWED', `use POST ${what}`, true);
    }
    // JSON only: a cross-site HTML form cannot send application/json without a CORS preflight.
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') throw new HttpError('UNSUPPORTED_MEDIA_TYPE', 'send the request as application/json', true);
  };

  /** `POST /api/auth/launch {"code"}`: the one unauthenticated API call, trading a launch code for the token. */
  const handleLaunch = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    requirePost(req, res, '/api/auth/launch');
    const declared = Number(req.headers['content-length'] ?? NaN);
    const tooBig = () => new HttpError('PAYLOAD_TOO_LARGE', 'a launch request is a code, nothing more', true);
    if (declared > MAX_LAUNCH_BODY_BYTES) throw tooBig();
    // Unauthenticated: it gets a few seconds, not the request timeout.
    const raw = await new Promise<string>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new HttpError('BAD_REQUEST', 'the launch request was too slow', true)), LAUNCH_BODY_TIMEOUT_MS);
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        text += c;
        if (text.length > MAX_LAUNCH_BODY_BYTES) reject(tooBig());
      });
      req.once('end', () => {
        clearTimeout(timer);
        resolve(text);
      });
      req.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    let code: unknown;
    try {
      code = (JSON.parse(raw) as { code?: unknown })?.code;
    } catch {
      code = undefined;
    }
    if (!auth.redeemLaunchCode(code)) {
      throw new HttpError('UNAUTHORIZED', 'this link was already used or has expired: open a fresh one from the `spillway serve` terminal', true);
    }
    sendJson(res, 200, { result: { token: auth.token } });
    opts.onLaunchUsed?.();
  };

  const handleApi = async (req: http.IncomingMessage, res: http.ServerResponse, name: string): Promise<void> => {
    if (!methods.has(name)) throw new HttpError('NOT_FOUND', `no such method: ${JSON.stringify(name)}`, true);
    requirePost(req, res, `/api/${name}`);
    // A client that goes away (closed tab, aborted fetch) cancels its call: a 50 MB summary in the
    // compute worker stops instead of running on for nobody.
    const gone = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) gone.abort();
    };
    res.on('close', onClose);
    try {
      const body = await bodies.read(req, name as MethodName, gone.signal);
      const result = await service.invoke(name, body, { signal: gone.signal });
      sendJson(res, 200, { result });
    } finally {
      res.off('close', onClose);
    }
  };

  const handleEvents = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET');
      throw new HttpError('METHOD_NOT_ALLOWED', 'use GET /api/events', true);
    }
    if (sseClients.size >= MAX_SSE_CLIENTS) throw new HttpError('UNAVAILABLE', 'too many event streams open');
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write(`retry: ${SSE_RETRY_MS}\n: connected\n\n`);
    sseClients.add(res);
    const unsubs = EVENT_NAMES.map((name) =>
      service.on(name, (payload) => {
        let data: string;
        try {
          data = JSON.stringify(payload);
        } catch {
          return;
        }
        if (res.writableLength > SSE_MAX_QUEUED_BYTES) {
          res.destroy();
          return;
        }
        res.write(`event: ${name}\ndata: ${data}\n\n`);
      }),
    );
    const beat = setInterval(() => res.write(': ping\n\n'), SSE_HEARTBEAT_MS);
    beat.unref();
    const done = () => {
      clearInterval(beat);
      for (const u of unsubs) u();
      sseClients.delete(res);
    };
    res.on('close', done);
    req.on('close', done);
  };

  const handleAsset = async (req: http.IncomingMessage, res: http.ServerResponse, url: URL, rest: string): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      throw new HttpError('METHOD_NOT_ALLOWED', 'use GET /api/asset/<payloadId>/<sha256>', true);
    }
    const slash = rest.lastIndexOf('/');
    if (slash <= 0) throw new HttpError('NOT_FOUND', 'use /api/asset/<payloadId>/<sha256>');
    let payloadId: string;
    try {
      payloadId = decodeURIComponent(rest.slice(0, slash));
    } catch {
      throw new HttpError('BAD_REQUEST', 'payload id is not valid percent-encoding');
    }
    const sha256 = rest.slice(slash + 1);
    // An <img> or a PDF frame cannot send a header: it carries a ticket for exactly this asset.
    if (!auth.assetTicket(url.searchParams.get('ticket'), payloadId, sha256)) requireBearer(req, res);
    // The service checks both, confines the file to the payload's own assets folder and verifies its sha256.
    const asset = await service.openAsset({ payloadId, sha256 });
    let streaming = false;
    try {
      const size = asset.bytes;
      for (const [k, v] of Object.entries(assetHeaders(asset))) res.setHeader(k, v);
      res.setHeader('Accept-Ranges', 'bytes');
      let start = 0;
      let end = size - 1;
      const m = req.headers.range ? /^bytes=(\d*)-(\d*)$/.exec(req.headers.range.trim()) : null;
      if (m && (m[1] || m[2])) {
        if (m[1]) {
          start = Number(m[1]);
          end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
        } else start = Math.max(0, size - Number(m[2]));
        if (start > end || start >= size) {
          res.statusCode = 416;
          res.setHeader('Content-Range', `bytes */${size}`);
          res.setHeader('Content-Length', 0);
          res.end();
          return;
        }
        res.statusCode = 206;
        res.setHeader('Content-Range', `bytes ${start}-${end}/${size}`);
      } else res.statusCode = 200;
      res.setHeader('Content-Length', size === 0 ? 0 : end - start + 1);
      if (req.method === 'HEAD' || size === 0) {
        res.end();
        return;
      }
      // A file is streamed from the descriptor that was hashed; an S3 object pinned to the version that was.
      const body = await asset.stream(start, end);
      streaming = true; // the stream closes the asset
      await streamBody(res, body);
    } finally {
      if (!streaming) await asset.close().catch(() => undefined);
    }
  };

  const sendStatic = async (req: http.IncomingMessage, res: http.ServerResponse, pathname: string): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      throw new HttpError('METHOD_NOT_ALLOWED', 'the UI is read with GET', true);
    }
    res.setHeader('Content-Security-Policy', UI_CSP);
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Cache-Control', 'no-cache');
    let rel: string;
    try {
      rel = decodeURIComponent(pathname);
    } catch {
      throw new HttpError('BAD_REQUEST', 'path is not valid percent-encoding');
    }
    if (rel.includes('\0') || rel.includes('\\')) throw new HttpError('NOT_FOUND', 'not found');
    const indexHtml = staticDir ? path.join(staticDir, 'index.html') : null;
    if (!staticDir || !indexHtml || !fs.existsSync(indexHtml)) {
      if (rel !== '/' && rel !== '/index.html') throw new HttpError('NOT_FOUND', 'not found');
      const page =
        '<!doctype html><meta charset="utf-8"><title>Spillway</title>' +
        '<p>The inspector UI is not built. Run <code>npm run build</code> (it builds <code>dist/renderer</code>), ' +
        'then reload. The API at <code>/api/&lt;method&gt;</code> works meanwhile.</p>';
      res.statusCode = 200;
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(req.method === 'HEAD' ? undefined : page);
      return;
    }
    let file = path.resolve(staticDir, '.' + path.posix.normalize(rel));
    if (!isInside(staticDir, file)) throw new HttpError('NOT_FOUND', 'not found');
    let st = await fs.promises.stat(file).catch(() => null);
    if (st?.isDirectory()) {
      file = path.join(file, 'index.html');
      st = await fs.promises.stat(file).catch(() => null);
    }
    if (!st || !st.isFile()) {
      // Client-side routes (no extension) get the app; missing files are 404.
      if (path.extname(rel) !== '') throw new HttpError('NOT_FOUND', 'not found');
      file = indexHtml;
      st = await fs.promises.stat(file);
    }
    // The one safe open (safe-open.ts): no FIFO blocks a thread, no link leads out of the UI folder.
    // Hard links are allowed: these are our package's files, and a package manager may link them.
    const opened = await openUntrusted(file, { root: staticDir, hardLinks: 'allow' }).catch(() => {
      throw new HttpError('NOT_FOUND', 'not found');
    });
    const size = opened.stat.size;
    res.statusCode = 200;
    res.setHeader('Content-Type', STATIC_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream');
    res.setHeader('Content-Length', size);
    if (req.method === 'HEAD' || size === 0) {
      await opened.handle.close();
      res.end();
      return;
    }
    await streamBody(res, opened.handle.createReadStream({ start: 0, end: size - 1, autoClose: true }));
  };

  const route = async (req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> => {
    checkHostAndOrigin(req);
    const p = url.pathname;
    if (p === '/api/auth/launch') return handleLaunch(req, res);
    if (p.startsWith('/api/asset/')) return handleAsset(req, res, url, p.slice('/api/asset/'.length));
    if (p === '/api' || p.startsWith('/api/')) {
      requireBearer(req, res);
      if (p === '/api/events') return handleEvents(req, res);
      if (p === '/api/auth/launch-url') {
        requirePost(req, res, '/api/auth/launch-url');
        req.resume();
        return sendJson(res, 200, { result: { url: launchUrl() } });
      }
      if (p === '/api') throw new HttpError('NOT_FOUND', 'use POST /api/<method>');
      return handleApi(req, res, p.slice('/api/'.length));
    }
    // The UI itself is public (a bundle of code, no data): what it shows needs the token.
    return sendStatic(req, res, p);
  };

  const server = http.createServer({ connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS }, (req, res) => {
    baseHeaders(res);
    void (async () => {
      let url: URL;
      try {
        url = new URL(req.url ?? '/', 'http://127.0.0.1');
      } catch {
        sendJson(res, 400, { error: { code: 'BAD_REQUEST', message: 'bad request URL' } });
        return;
      }
      try {
        await route(req, res, url);
      } catch (err) {
        const { code, message, drop } = toWireError(err);
        if (res.headersSent) {
          res.destroy();
          return;
        }
        // What the client is still sending is never read: answer, then close the connection.
        const cut = drop || !req.complete;
        if (cut) res.setHeader('Connection', 'close');
        sendJson(res, statusForCode(code), { error: { code, message } });
        if (cut) res.once('finish', () => req.socket.destroy());
      }
    })();
  });
  server.headersTimeout = opts.limits?.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  server.requestTimeout = opts.limits?.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  // A connection that never sends a request is dropped too (Node's headers timeout only starts
  // with the first byte). Once a request arrives the socket has no idle limit: a summary may
  // compute for minutes, an event stream idles between pings. Node's keep-alive timeout takes over after.
  const idleMs = opts.limits?.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  server.on('connection', (socket) => socket.setTimeout(idleMs, () => socket.destroy()));
  server.on('request', (req: http.IncomingMessage) => req.socket.setTimeout(0));

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: bindHost, port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  if (!['127.0.0.1', '::1'].includes(addr.address)) {
    server.close();
    throw new Error(`refusing to serve on non-loopback address ${addr.address}`);
  }
  const actualPort = addr.port;
  const hostForUrl = bindHost === '::1' ? '[::1]' : '127.0.0.1';
  allowedHosts = new Set([`127.0.0.1:${actualPort}`, `localhost:${actualPort}`, ...(bindHost === '::1' ? [`[::1]:${actualPort}`] : [])]);
  allowedOrigins = new Set([...allowedHosts].map((h) => `http://${h}`));
  const origin = `http://${hostForUrl}:${actualPort}`;
  function launchUrl(o: { ttlMs?: number } = {}): string {
    return `${origin}/#launch=${auth.mintLaunchCode(o.ttlMs)}`;
  }

  let closing: Promise<void> | null = null;
  return {
    url: launchUrl(),
    origin,
    host: bindHost,
    port: actualPort,
    token: auth.token,
    launchUrl,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const res of sseClients) res.end();
        sseClients.clear();
        server.close(() => resolve());
        server.closeIdleConnections();
        // Anything still running (a long summary) is cut off after a grace period.
        setTimeout(() => server.closeAllConnections(), 2_000).unref();
      }).then(() => bodies.close());
      return closing;
    },
  };
}
