/**
 * `POST /api/auth/launch {"code"}`: the one unauthenticated API call, trading a one-time launch
 * code for the token; and `POST /api/auth/launch-url` (authenticated): a fresh launch link.
 */
import { type Handler, type RouteContext, requirePost } from '../context.js';
import { HttpError, sendJson } from '../http.js';

/** Largest body of `POST /api/auth/launch` (a launch code). */
export const MAX_LAUNCH_BODY_BYTES = 1024;
/** The one unauthenticated body must arrive whole within this. */
export const LAUNCH_BODY_TIMEOUT_MS = 5_000;

export const launchRoute =
  (ctx: RouteContext): Handler =>
  async (req, res) => {
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
    if (!ctx.auth.redeemLaunchCode(code)) {
      throw new HttpError('UNAUTHORIZED', 'this link was already used or has expired: open a fresh one from the `spillway serve` terminal', true);
    }
    sendJson(res, 200, { result: { token: ctx.auth.token } });
    ctx.onLaunchUsed?.();
  };

/** Behind the bearer check (the router makes it). */
export const launchUrlRoute =
  (ctx: RouteContext): Handler =>
  (req, res) => {
    requirePost(req, res, '/api/auth/launch-url');
    req.resume();
    sendJson(res, 200, { result: { url: ctx.launchUrl() } });
  };
