/** `POST /api/<method>`: one contract method per path, its body capped per method (body.ts). Behind the bearer check. */
import { METHOD_NAMES, type MethodName } from '../../service/contract.js';
import { type Handler, type RouteContext, requirePost } from '../context.js';
import { HttpError, sendJson } from '../http.js';

const METHODS: ReadonlySet<string> = new Set(METHOD_NAMES);

export const apiRoute =
  (ctx: RouteContext): Handler =>
  async (req, res, url) => {
    const name = url.pathname.slice('/api/'.length);
    if (!METHODS.has(name)) throw new HttpError('NOT_FOUND', `no such method: ${JSON.stringify(name)}`, true);
    requirePost(req, res, `/api/${name}`);
    // A client that goes away (closed tab, aborted fetch) cancels its call: a 50 MB summary in the
    // compute worker stops instead of running on for nobody.
    const gone = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) gone.abort();
    };
    res.on('close', onClose);
    try {
      const body = await ctx.bodies.read(req, name as MethodName, gone.signal);
      const result = await ctx.service.invoke(name, body, { signal: gone.signal });
      sendJson(res, 200, { result });
    } finally {
      res.off('close', onClose);
    }
  };
