/**
 * `GET|HEAD /api/asset/<payloadId>/<sha256>`: one asset's bytes, with ranges. An `<img>` or a PDF
 * frame cannot send a header, so a short-lived ticket for exactly this asset stands in for the
 * bearer token. The headers (nosniff, a sandboxing CSP, attachment unless image or PDF) come from
 * the service's web policy.
 */
import { assetHeaders } from '../../service/web-policy.js';
import { type Handler, type RouteContext, requireBearer } from '../context.js';
import { HttpError, streamBody } from '../http.js';

export const ASSET_PREFIX = '/api/asset/';

export const assetRoute =
  (ctx: RouteContext): Handler =>
  async (req, res, url) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      throw new HttpError('METHOD_NOT_ALLOWED', 'use GET /api/asset/<payloadId>/<sha256>', true);
    }
    const rest = url.pathname.slice(ASSET_PREFIX.length);
    const slash = rest.lastIndexOf('/');
    if (slash <= 0) throw new HttpError('NOT_FOUND', 'use /api/asset/<payloadId>/<sha256>');
    let payloadId: string;
    try {
      payloadId = decodeURIComponent(rest.slice(0, slash));
    } catch {
      throw new HttpError('BAD_REQUEST', 'payload id is not valid percent-encoding');
    }
    const sha256 = rest.slice(slash + 1);
    if (!ctx.auth.assetTicket(url.searchParams.get('ticket'), payloadId, sha256)) requireBearer(ctx.auth, req, res);
    // The service checks both, confines the file to the payload's own assets folder and verifies its sha256.
    const asset = await ctx.service.openAsset({ payloadId, sha256 });
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
