/**
 * What the routes share: the service, the credentials, the body reader and the open event streams,
 * handed to each route as one value (`(ctx) => handler`), and the checks routes make before they
 * read anything.
 */
import type http from 'node:http';
import type { EventName, InspectorEvents } from '../service/contract.js';
import type { OpenedAsset } from '../service/service.js';
import type { ServeAuth } from './auth.js';
import type { BodyReader } from './body.js';
import { HttpError } from './http.js';

/** What the server needs from the service (src/service/service.ts provides all of it). */
export interface ServedService {
  /** Validate and run one contract method. Throws ServiceError. */
  invoke(method: string, req: unknown, call?: { signal?: AbortSignal }): Promise<unknown>;
  on<E extends EventName>(event: E, listener: (payload: InspectorEvents[E]) => void): () => void;
  /** One asset, checked and open for streaming. */
  openAsset(req: { payloadId: string; sha256: string }): Promise<OpenedAsset>;
}

export interface RouteContext {
  readonly service: ServedService;
  readonly auth: ServeAuth;
  readonly bodies: BodyReader;
  /** Built UI folder, resolved; null: API only. */
  readonly staticDir: string | null;
  /** Open event streams (the server ends them on close). */
  readonly sseClients: Set<http.ServerResponse>;
  /** A fresh one-time link to this server. */
  launchUrl(opts?: { ttlMs?: number }): string;
  /** Called when a launch link was used. */
  onLaunchUsed?: () => void;
}

/** One route: the request has passed the Host and Origin checks; `url` is its parsed URL. */
export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => Promise<void> | void;

/** The Host and Origin (when sent) must be this loopback server's own: DNS rebinding and cross-site pages are refused. */
export function checkHostAndOrigin(req: http.IncomingMessage, allowed: { hosts: ReadonlySet<string>; origins: ReadonlySet<string> }): void {
  const host = (req.headers.host ?? '').toLowerCase();
  if (!allowed.hosts.has(host)) {
    throw new HttpError('FORBIDDEN', `Host ${JSON.stringify(req.headers.host ?? '')} is not this server (DNS rebinding?)`, true);
  }
  const origin = req.headers.origin;
  if (origin !== undefined && !allowed.origins.has(origin.toLowerCase())) {
    throw new HttpError('FORBIDDEN', `Origin ${JSON.stringify(origin)} may not call this server`, true);
  }
  // A browser that sends Fetch Metadata tells us when a request is cross-site even without Origin.
  if (req.headers['sec-fetch-site'] === 'cross-site') throw new HttpError('FORBIDDEN', 'cross-site requests are refused', true);
}

export function requireBearer(auth: ServeAuth, req: http.IncomingMessage, res: http.ServerResponse): void {
  if (auth.bearer(req.headers.authorization)) return;
  res.setHeader('WWW-Authenticate', 'Bearer realm="spillway"');
  throw new HttpError(
    'UNAUTHORIZED',
    'missing or wrong token: open a fresh link from the `spillway serve` terminal (each link works once), or send Authorization: Bearer',
    true,
  );
}

export function requirePost(req: http.IncomingMessage, res: http.ServerResponse, what: string): void {
  if (req.method !== 'POST') {
    res.setHeader('Allow', 'POST');
    throw new HttpError('METHOD_NOT_ALLOWED', `use POST ${what}`, true);
  }
  // JSON only: a cross-site HTML form cannot send application/json without a CORS preflight.
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new HttpError('UNSUPPORTED_MEDIA_TYPE', 'send the request as application/json', true);
}
