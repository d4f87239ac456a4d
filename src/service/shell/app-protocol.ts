/**
 * The desktop app's `app://spillway/…` protocol as a fetch-style handler (Request → Response), so
 * Node tests run it: the built renderer's files, and under `/api/asset/<payloadId>/<sha256>` the
 * service's checked assets with the same headers `spillway serve` sends (web-policy.ts), the
 * `attachment` disposition included. Errors say "not found" and nothing about the file system.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { openUntrusted } from '../../pipeline/layout.js';
import type { OpenedAsset } from '../assets.js';
import { STATIC_TYPES, assetHeaders } from '../web-policy.js';
import { APP_HOST, DESKTOP_CSP, parseAssetPath, resolveStaticPath } from './policy.js';

export interface AppProtocolOptions {
  service: { openAsset(req: { payloadId: string; sha256: string }): Promise<OpenedAsset> };
  /** The built renderer (dist/renderer). */
  rendererDir: string;
}

const notFound = () => new Response('not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' } });

/** A stream as a response body (the file or object behind it is closed at the end or on cancel). */
function body(stream: Readable): ReadableStream {
  return Readable.toWeb(stream) as unknown as ReadableStream;
}

export function createAppProtocolHandler(o: AppProtocolOptions): (request: Request) => Promise<Response> {
  return async (request) => {
    let url: URL;
    try {
      url = new URL(request.url);
    } catch {
      return notFound();
    }
    if (url.host !== APP_HOST || (request.method !== 'GET' && request.method !== 'HEAD')) return notFound();
    const asset = parseAssetPath(url.pathname);
    if (asset) {
      let a: OpenedAsset;
      try {
        a = await o.service.openAsset(asset);
      } catch {
        return notFound();
      }
      const headers = assetHeaders(a);
      if (request.method === 'HEAD' || a.bytes === 0) {
        await a.close();
        return new Response(null, { status: 200, headers });
      }
      try {
        return new Response(body(await a.stream()), { status: 200, headers });
      } catch {
        await a.close();
        return notFound();
      }
    }
    const file = resolveStaticPath(o.rendererDir, url.pathname);
    if (!file) return notFound();
    let fh: fs.promises.FileHandle;
    try {
      // The one safe open (safe-open.ts), as `serve` opens the same files; hard links allowed (our package's files).
      fh = (await openUntrusted(file, { root: o.rendererDir, hardLinks: 'allow' })).handle;
    } catch {
      return notFound();
    }
    return new Response(body(fh.createReadStream({ autoClose: true })), {
      status: 200,
      headers: {
        'content-type': STATIC_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        'content-security-policy': DESKTOP_CSP,
        'x-content-type-options': 'nosniff',
      },
    });
  };
}
