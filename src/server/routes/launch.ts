/**
 * The unauthenticated API calls, each trading a one-time secret for the token (auth.ts):
 * `POST /api/auth/launch {"code"}` a launch code, `POST /api/auth/renew {"renew"}` a renewal
 * secret (after a reload); both answer `{token, renew}`, the next renewal secret.
 * And `POST /api/auth/launch-url` (authenticated): a fresh launch link.
 */
import { type Handler, type RouteContext, requirePost } from '../context.js';
import { HttpError, sendJson } from '../http.js';

/** Largest body of `POST /api/auth/launch` (a launch code). */
export const MAX_LAUNCH_BODY_BYTES = 1024;
/** The one unauthenticated body must arrive whole within this. */
export const LAUNCH_BODY_TIMEOUT_MS = 5_000;

/** Read the small JSON body of an unauthenticated call and return its `field`. */
async function readSecret(req: Parameters<Handler>[0], field: string): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  const tooBig = () => new HttpError('PAYLOAD_TOO_LARGE', 'an auth request is one secret, nothing more', true);
  if (declared > MAX_LAUNCH_BODY_BYTES) throw tooBig();
  // Unauthenticated: it gets a few seconds, not the request timeout.
  const raw = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new HttpError('BAD_REQUEST', 'the auth request was too slow', true)), LAUNCH_BODY_TIMEOUT_MS);
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
  try {
    return (JSON.parse(raw) as Record<string, unknown> | null)?.[field];
  } catch {
    return undefined;
  }
}

export const launchRoute =
  (ctx: RouteContext): Handler =>
  async (req, res) => {
    requirePost(req, res, '/api/auth/launch');
    const code = await readSecret(req, 'code');
    if (!ctx.auth.redeemLaunchCode(code)) {
      throw new HttpError('UNAUTHORIZED', 'this link was already used or has expired: open a fresh one from the `spillway serve` terminal', true);
    }
    sendJson(res, 200, { result: { token: ctx.auth.token, renew: ctx.auth.mintRenewal() } });
    ctx.onLaunchUsed?.();
  };

/** After a reload: the tab's renewal secret buys the token again, and the next secret. */
export const renewRoute =
  (ctx: RouteContext): Handler =>
  async (req, res) => {
    requirePost(req, res, '/api/auth/renew');
    const next = ctx.auth.renew(await readSecret(req, 'renew'));
    if (!next) {
      throw new HttpError('UNAUTHORIZED', 'this tab can no longer renew its access: open a fresh link from the `spillway serve` terminal', true);
    }
    sendJson(res, 200, { result: { token: ctx.auth.token, renew: next } });
  };

/** Behind the bearer check (the router makes it). */
export const launchUrlRoute =
  (ctx: RouteContext): Handler =>
  (req, res) => {
    requirePost(req, res, '/api/auth/launch-url');
    req.resume();
    sendJson(res, 200, { result: { url: ctx.launchUrl() } });
  };
