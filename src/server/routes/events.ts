/** `GET /api/events`: the service's events as server-sent events, one stream per UI tab. Behind the bearer check. */
import { EVENT_NAMES } from '../../service/contract.js';
import type { Handler, RouteContext } from '../context.js';
import { HttpError } from '../http.js';

/** SSE comment sent this often so proxies and browsers keep the stream open. */
export const SSE_HEARTBEAT_MS = 15_000;
/** Reconnect delay we ask event-stream clients to use. */
export const SSE_RETRY_MS = 2_000;
/** A stream whose client stopped reading is dropped once this much is queued (it reconnects and refetches). */
export const SSE_MAX_QUEUED_BYTES = 8 * 1024 * 1024;
/** Concurrent SSE streams allowed (each UI tab holds one). */
export const MAX_SSE_CLIENTS = 64;

export const eventsRoute =
  (ctx: RouteContext): Handler =>
  (req, res) => {
    if (req.method !== 'GET') {
      res.setHeader('Allow', 'GET');
      throw new HttpError('METHOD_NOT_ALLOWED', 'use GET /api/events', true);
    }
    const clients = ctx.sseClients;
    if (clients.size >= MAX_SSE_CLIENTS) throw new HttpError('UNAVAILABLE', 'too many event streams open');
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    res.write(`retry: ${SSE_RETRY_MS}\n: connected\n\n`);
    clients.add(res);
    const unsubs = EVENT_NAMES.map((name) =>
      ctx.service.on(name, (payload) => {
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
      clients.delete(res);
    };
    res.on('close', done);
    req.on('close', done);
  };
