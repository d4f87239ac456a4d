/**
 * `spillway serve`: the inspector contract over loopback HTTP, plus the built UI.
 * The wire format is specified in ./client-contract.md; keep the two in step.
 *
 * Security model: the server binds to loopback only, and every request must carry the
 * random token (query `?token=`, the `spillway_token_<port>` cookie, or `Authorization: Bearer`).
 * The Host header must name the loopback address and port and the Origin (when sent) must be
 * this server's own, which defeats DNS rebinding and cross-site requests from pages the user
 * has open. Payload content never reaches a browser as HTML: the API answers JSON, and asset
 * downloads carry nosniff, a sandboxing CSP and `Content-Disposition: attachment` unless they
 * are images or PDFs.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isInside } from '../pipeline/layout.js';
import { EVENT_NAMES, METHOD_NAMES, ServiceError, type ErrorCode, type EventName, type InspectorEvents } from '../service/contract.js';
import { ASSET_CSP, PDF_CSP, STATIC_TYPES, uiCsp } from '../service/web-policy.js';
import type { ResolvedAsset } from '../service/service.js';

/** Largest JSON request body (bytes): a 100 MiB dropped file, base64-encoded, plus slack. */
export const MAX_REQUEST_BODY_BYTES = 140 * 1024 * 1024;
/** SSE comment sent this often so proxies and browsers keep the stream open. */
export const SSE_HEARTBEAT_MS = 15_000;
/** Reconnect delay we ask EventSource to use. */
export const SSE_RETRY_MS = 2_000;
/** A stream whose client stopped reading is dropped once this much is queued (it reconnects and refetches). */
export const SSE_MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** Concurrent SSE streams allowed (each UI tab holds one). */
export const MAX_SSE_CLIENTS = 64;
/** Token length when generated: 32 random bytes, base64url (43 chars). */
export const TOKEN_BYTES = 32;
/** Shortest token accepted from the caller. */
export const MIN_TOKEN_CHARS = 16;

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
  /** The confined file of one asset, for streaming. */
  resolveAsset(req: { payloadId: string; sha256: string }): Promise<ResolvedAsset>;
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
}

export interface RunningServer {
  /** `http://127.0.0.1:PORT/?token=…`: open this. */
  url: string;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  host: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

const LOOPBACK_HOSTS: Record<string, string> = { '127.0.0.1': '127.0.0.1', localhost: '127.0.0.1', '::1': '::1' };

/** The served UI may not be framed at all. */
export const UI_CSP = uiCsp("'none'");
export { ASSET_CSP, PDF_CSP };
const API_CSP = "default-src 'none'; frame-ancestors 'none'; sandbox";

/** Served inline so `<img src>` and `<iframe src>` work; everything else is a download. */
const INLINE_ASSET_TYPES = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'image/x-icon',
  'image/vnd.microsoft.icon',
  'image/svg+xml',
  'application/pdf',
]);


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

function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && crypto.timingSafeEqual(ab, bb);
}

function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return out;
}

class HttpError extends Error {
  constructor(
    readonly code: WireErrorCode,
    message: string,
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

function sendError(res: http.ServerResponse, code: WireErrorCode, message: string, extra: Record<string, string> = {}): void {
  for (const [k, v] of Object.entries(extra)) res.setHeader(k, v);
  sendJson(res, statusForCode(code), { error: { code, message } });
}

function toWireError(err: unknown): { code: WireErrorCode; message: string } {
  if (err instanceof ServiceError || err instanceof HttpError) return { code: err.code, message: err.message };
  return { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) };
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const tooBig = () => new HttpError('PAYLOAD_TOO_LARGE', `request body is larger than ${MAX_REQUEST_BODY_BYTES} bytes`);
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > MAX_REQUEST_BODY_BYTES) {
      reject(tooBig());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BODY_BYTES) {
        // Stop keeping it, but let the rest drain so the client reads our 413 rather than a reset.
        req.off('data', onData);
        req.resume();
        chunks.length = 0;
        reject(tooBig());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks, size)));
    req.once('error', reject);
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
  if (opts.token !== undefined && !(opts.token.length >= MIN_TOKEN_CHARS && /^[A-Za-z0-9_-]+$/.test(opts.token))) {
    throw new Error(`token must be at least ${MIN_TOKEN_CHARS} characters of A-Z a-z 0-9 _ -`);
  }
  const token = opts.token ?? crypto.randomBytes(TOKEN_BYTES).toString('base64url');
  const staticDir = opts.staticDir === null ? null : path.resolve(opts.staticDir ?? defaultStaticDir());
  const service = opts.service;
  const methods: ReadonlySet<string> = new Set(METHOD_NAMES);
  const sseClients = new Set<http.ServerResponse>();

  let actualPort = 0;
  let allowedHosts = new Set<string>();
  let allowedOrigins = new Set<string>();
  const cookieName = () => `spillway_token_${actualPort}`;

  const checkHostAndOrigin = (req: http.IncomingMessage): void => {
    const host = (req.headers.host ?? '').toLowerCase();
    if (!allowedHosts.has(host)) {
      throw new HttpError('FORBIDDEN', `Host ${JSON.stringify(req.headers.host ?? '')} is not this server (DNS rebinding?)`);
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin.toLowerCase())) {
      throw new HttpError('FORBIDDEN', `Origin ${JSON.stringify(origin)} may not call this server`);
    }
    // A browser that sends Fetch Metadata tells us when a request is cross-site even without Origin.
    const site = req.headers['sec-fetch-site'];
    if (site === 'cross-site') throw new HttpError('FORBIDDEN', 'cross-site requests are refused');
  };

  /** True when the request carries the token; sets the cookie when it came in the query. */
  const authenticate = (req: http.IncomingMessage, url: URL, res: http.ServerResponse): boolean => {
    const fromQuery = url.searchParams.get('token');
    if (fromQuery !== null && safeEqual(fromQuery, token)) {
      res.setHeader('Set-Cookie', `${cookieName()}=${token}; HttpOnly; SameSite=Strict; Path=/`);
      return true;
    }
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ') && safeEqual(auth.slice(7).trim(), token)) return true;
    const cookie = parseCookies(req.headers.cookie).get(cookieName());
    return cookie !== undefined && safeEqual(cookie, token);
  };

  const handleApi = async (req: http.IncomingMessage, res: http.ServerResponse, name: string): Promise<void> => {
    if (!methods.has(name)) throw new HttpError('NOT_FOUND', `no such method: ${JSON.stringify(name)}`);
    if (req.method !== 'POST') {
      res.setHeader('Allow', 'POST');
      throw new HttpError('METHOD_NOT_ALLOWED', `use POST /api/${name}`);
    }
    // JSON only: a cross-site HTML form cannot send application/json without a CORS preflight.
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') throw new HttpError('UNSUPPORTED_MEDIA_TYPE', 'send the request as application/json');
    const raw = await readBody(req);
    let body: unknown = {};
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch (err) {
        throw new HttpError('BAD_REQUEST', `request body is not JSON: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new HttpError('BAD_REQUEST', 'request body must be a JSON object');
    }
    // A client that goes away (closed tab, aborted fetch) cancels its call: a 50 MB summary in the
    // compute worker stops instead of running on for nobody.
    const gone = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) gone.abort();
    };
    res.on('close', onClose);
    try {
      const result = await service.invoke(name, body, { signal: gone.signal });
      sendJson(res, 200, { result });
    } finally {
      res.off('close', onClose);
    }
  };

  const handleEvents = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET');
      throw new HttpError('METHOD_NOT_ALLOWED', 'use GET /api/events');
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

  const handleAsset = async (req: http.IncomingMessage, res: http.ServerResponse, rest: string): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      throw new HttpError('METHOD_NOT_ALLOWED', 'use GET /api/asset/<payloadId>/<sha256>');
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
    // The service validates both and confines the file to the payload's session.
    const asset = await service.resolveAsset({ payloadId, sha256 });
    const mime = /^[a-z]+\/[a-z0-9.+-]+$/i.test(asset.mimeType) ? asset.mimeType.toLowerCase() : 'application/octet-stream';
    const inline = INLINE_ASSET_TYPES.has(mime);
    const st = asset.open ? { size: asset.bytes } : await fs.promises.stat(asset.path);
    const ext = path.extname(asset.path).replace(/[^A-Za-z0-9.]/g, '');
    res.setHeader('Content-Type', mime);
    res.setHeader('Content-Security-Policy', mime === 'application/pdf' ? PDF_CSP : ASSET_CSP);
    res.setHeader('Content-Disposition', `${inline ? 'inline' : 'attachment'}; filename="${asset.sha256.slice(0, 32)}${ext}"`);
    res.setHeader('Cache-Control', 'private, max-age=3600, immutable');
    res.setHeader('Accept-Ranges', 'bytes');
    let start = 0;
    let end = st.size - 1;
    const range = req.headers.range;
    const m = range ? /^bytes=(\d*)-(\d*)$/.exec(range.trim()) : null;
    if (m && (m[1] || m[2])) {
      if (m[1]) {
        start = Number(m[1]);
        end = m[2] ? Math.min(Number(m[2]), st.size - 1) : st.size - 1;
      } else {
        start = Math.max(0, st.size - Number(m[2]));
      }
      if (start > end || start >= st.size) {
        res.statusCode = 416;
        res.setHeader('Content-Range', `bytes */${st.size}`);
        res.end();
        return;
      }
      res.statusCode = 206;
      res.setHeader('Content-Range', `bytes ${start}-${end}/${st.size}`);
    } else res.statusCode = 200;
    res.setHeader('Content-Length', st.size === 0 ? 0 : end - start + 1);
    if (req.method === 'HEAD' || st.size === 0) {
      res.end();
      return;
    }
    const stream = asset.open ? await asset.open(start, end + 1) : fs.createReadStream(asset.path, { start, end });
    await new Promise<void>((resolve, reject) => {
      stream.on('error', reject);
      res.on('close', () => {
        stream.destroy();
        resolve();
      });
      stream.pipe(res).on('finish', resolve);
    });
  };

  const sendStatic = async (req: http.IncomingMessage, res: http.ServerResponse, pathname: string): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      throw new HttpError('METHOD_NOT_ALLOWED', 'the UI is read with GET');
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
    const real = await fs.promises.realpath(file);
    const realRoot = await fs.promises.realpath(staticDir);
    if (!isInside(realRoot, real)) throw new HttpError('NOT_FOUND', 'not found');
    res.statusCode = 200;
    res.setHeader('Content-Type', STATIC_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream');
    res.setHeader('Content-Length', st.size);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const stream = fs.createReadStream(real);
      stream.on('error', reject);
      res.on('close', () => {
        stream.destroy();
        resolve();
      });
      stream.pipe(res).on('finish', resolve);
    });
  };

  const server = http.createServer((req, res) => {
    baseHeaders(res);
    void (async () => {
      let url: URL;
      try {
        url = new URL(req.url ?? '/', 'http://127.0.0.1');
      } catch {
        sendError(res, 'BAD_REQUEST', 'bad request URL');
        return;
      }
      try {
        checkHostAndOrigin(req);
        if (!authenticate(req, url, res)) {
          res.setHeader('WWW-Authenticate', 'Bearer realm="spillway"');
          throw new HttpError('UNAUTHORIZED', 'missing or wrong token: open the URL that `spillway serve` printed');
        }
        const p = url.pathname;
        if (p === '/api/events') handleEvents(req, res);
        else if (p.startsWith('/api/asset/')) await handleAsset(req, res, p.slice('/api/asset/'.length));
        else if (p.startsWith('/api/')) await handleApi(req, res, p.slice('/api/'.length));
        else if (p === '/api') throw new HttpError('NOT_FOUND', 'use POST /api/<method>');
        else await sendStatic(req, res, p);
      } catch (err) {
        const { code, message } = toWireError(err);
        if (res.headersSent) res.destroy();
        else sendError(res, code, message);
        // Drain what the client is still sending, so the error reaches it instead of a reset.
        if (!req.complete) req.resume();
      }
    })();
  });
  server.headersTimeout = 30_000;
  server.requestTimeout = 0; // big analyze uploads and long summaries may take minutes

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
  actualPort = addr.port;
  const hostForUrl = bindHost === '::1' ? '[::1]' : '127.0.0.1';
  allowedHosts = new Set([`127.0.0.1:${actualPort}`, `localhost:${actualPort}`, ...(bindHost === '::1' ? [`[::1]:${actualPort}`] : [])]);
  allowedOrigins = new Set([...allowedHosts].map((h) => `http://${h}`));
  const origin = `http://${hostForUrl}:${actualPort}`;

  let closing: Promise<void> | null = null;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    host: bindHost,
    port: actualPort,
    token,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const res of sseClients) res.end();
        sseClients.clear();
        server.close(() => resolve());
        server.closeIdleConnections();
        // Anything still running (a long summary) is cut off after a grace period.
        setTimeout(() => server.closeAllConnections(), 2_000).unref();
      });
      return closing;
    },
  };
}
