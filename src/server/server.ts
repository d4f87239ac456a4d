/**
 * `spillway serve`: the inspector contract over loopback HTTP, plus the built UI.
 * The wire format is specified in ./client-contract.md; keep the two in step. This file binds and
 * routes; each route is its own file under routes/, made from the shared context (context.ts).
 *
 * Security model (docs/security.md says what is promised):
 * - Loopback only. The Host header must name this loopback server and the Origin (when sent) must
 *   be its own, which defeats DNS rebinding and cross-site requests from pages the user has open.
 * - Credentials (auth.ts): the token only ever in an `Authorization: Bearer` header; URLs carry a
 *   one-time launch code, assets a short-lived per-asset ticket, a reloaded tab its rotating
 *   renewal secret (sessionStorage: this origin's, this tab's). No cookie, so no other server on
 *   127.0.0.1 ever receives anything that opens this one.
 * - Bounded: headers must arrive within HEADERS_TIMEOUT_MS and the whole request within
 *   REQUEST_TIMEOUT_MS; a refused request (Host, Origin, token) is answered and its connection
 *   closed, its body never read; bodies are capped per method and big ones parsed off the event
 *   loop (body.ts).
 * - Payload content never reaches a browser as HTML: the API answers JSON; assets carry nosniff,
 *   a sandboxing CSP and `Content-Disposition: attachment` unless they are images or PDFs.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ASSET_CSP, PDF_CSP } from '../service/web-policy.js';
import { isAcceptableToken, MIN_TOKEN_CHARS, ServeAuth, TOKEN_BYTES } from './auth.js';
import { createBodyReader } from './body.js';
import { checkHostAndOrigin, requireBearer, type Handler, type RouteContext, type ServedService } from './context.js';
import { baseHeaders, HttpError, sendJson, statusForCode, toWireError } from './http.js';
import { apiRoute } from './routes/api.js';
import { ASSET_PREFIX, assetRoute } from './routes/asset.js';
import { eventsRoute } from './routes/events.js';
import { launchRoute, launchUrlRoute, renewRoute } from './routes/launch.js';
import { defaultStaticDir, staticRoute } from './routes/static.js';

export { MIN_TOKEN_CHARS, TOKEN_BYTES, ASSET_TICKET_MAX_TTL_MS, RENEWAL_TTL_MS, signAssetTicket } from './auth.js';
export { MAX_REQUEST_BODY_BYTES, MAX_SMALL_BODY_BYTES, MAX_LARGE_BODIES_IN_FLIGHT } from './body.js';
export { statusForCode, type WireErrorCode } from './http.js';
export type { ServedService } from './context.js';
export { SSE_HEARTBEAT_MS, SSE_RETRY_MS, SSE_MAX_QUEUED_BYTES, MAX_SSE_CLIENTS } from './routes/events.js';
export { LAUNCH_BODY_TIMEOUT_MS } from './routes/launch.js';
export { UI_CSP, defaultStaticDir } from './routes/static.js';
export { ASSET_CSP, PDF_CSP };

/** The request line and headers must arrive within this. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A whole request, body included, must arrive within this (a 140 MiB upload through a slow SSH tunnel fits). */
export const REQUEST_TIMEOUT_MS = 5 * 60_000;
/** How often Node checks the two timeouts above (its default, 30 s, would let them overrun by that much). */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

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
  // Known once bound: until then every Host is refused, so no route runs.
  const allowed = { hosts: new Set<string>(), origins: new Set<string>() };
  let origin = '';
  const launchUrl = (o: { ttlMs?: number } = {}): string => `${origin}/#launch=${auth.mintLaunchCode(o.ttlMs)}`;
  const ctx: RouteContext = {
    service: opts.service,
    auth,
    bodies: createBodyReader({ idleTimeoutMs: opts.limits?.bodyIdleTimeoutMs, maxLargeInFlight: opts.limits?.maxLargeBodiesInFlight }),
    staticDir: opts.staticDir === null ? null : path.resolve(opts.staticDir ?? defaultStaticDir()),
    sseClients: new Set<http.ServerResponse>(),
    launchUrl,
    onLaunchUsed: opts.onLaunchUsed,
  };
  const launch = launchRoute(ctx);
  const launchLink = launchUrlRoute(ctx);
  const renew = renewRoute(ctx);
  const asset = assetRoute(ctx);
  const events = eventsRoute(ctx);
  const api = apiRoute(ctx);
  const ui = staticRoute(ctx);

  const route: Handler = (req, res, url) => {
    checkHostAndOrigin(req, allowed);
    const p = url.pathname;
    if (p === '/api/auth/launch') return launch(req, res, url);
    if (p === '/api/auth/renew') return renew(req, res, url);
    // Its own ticket or the bearer token: the route checks which.
    if (p.startsWith(ASSET_PREFIX)) return asset(req, res, url);
    if (p === '/api' || p.startsWith('/api/')) {
      requireBearer(auth, req, res);
      if (p === '/api/events') return events(req, res, url);
      if (p === '/api/auth/launch-url') return launchLink(req, res, url);
      if (p === '/api') throw new HttpError('NOT_FOUND', 'use POST /api/<method>');
      return api(req, res, url);
    }
    // The UI itself is public (a bundle of code, no data): what it shows needs the token.
    return ui(req, res, url);
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
  for (const h of [`127.0.0.1:${actualPort}`, `localhost:${actualPort}`, ...(bindHost === '::1' ? [`[::1]:${actualPort}`] : [])]) {
    allowed.hosts.add(h);
    allowed.origins.add(`http://${h}`);
  }
  origin = `http://${hostForUrl}:${actualPort}`;

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
        for (const res of ctx.sseClients) res.end();
        ctx.sseClients.clear();
        server.close(() => resolve());
        server.closeIdleConnections();
        // Anything still running (a long summary) is cut off after a grace period.
        setTimeout(() => server.closeAllConnections(), 2_000).unref();
      }).then(() => ctx.bodies.close());
      return closing;
    },
  };
}
