/**
 * The built UI, read with GET. Public (a bundle of code, no data): what it shows needs the token.
 * It may not be framed at all, and every file is opened the one safe way, confined to the UI folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isInside, openUntrusted } from '../../pipeline/layout.js';
import { STATIC_TYPES, uiCsp } from '../../service/web-policy.js';
import type { Handler, RouteContext } from '../context.js';
import { HttpError, streamBody } from '../http.js';

/** The served UI may not be framed at all. */
export const UI_CSP = uiCsp("'none'");

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

export const staticRoute =
  (ctx: RouteContext): Handler =>
  async (req, res, url) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      throw new HttpError('METHOD_NOT_ALLOWED', 'the UI is read with GET', true);
    }
    res.setHeader('Content-Security-Policy', UI_CSP);
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Cache-Control', 'no-cache');
    let rel: string;
    try {
      rel = decodeURIComponent(url.pathname);
    } catch {
      throw new HttpError('BAD_REQUEST', 'path is not valid percent-encoding');
    }
    if (rel.includes('\0') || rel.includes('\\')) throw new HttpError('NOT_FOUND', 'not found');
    const staticDir = ctx.staticDir;
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
