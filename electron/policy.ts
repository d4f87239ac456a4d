/**
 * The desktop shell's security decisions, as pure functions (no `electron` import) so they are
 * unit-tested: which URLs the window may show, which links leave for the browser, which files the
 * app:// protocol may serve, and how a remembered window is put back on a screen that exists.
 */
import path from 'node:path';
import { ASSET_CSP, PDF_CSP, uiCsp } from '../src/service/web-policy.js';

/** The origin the renderer is served from in a packaged or `npm start` build. */
export const APP_SCHEME = 'app';
export const APP_HOST = 'spillway';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;

/** The renderer's CSP in the desktop app: the shared one, framing only its own PDFs. */
export const DESKTOP_CSP = uiCsp("'self'");
export { ASSET_CSP, PDF_CSP };

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/** The window may only ever show the app itself (or, in dev, the Vite dev server). */
export function isAppUrl(url: string, devOrigin?: string): boolean {
  const u = parse(url);
  if (!u) return false;
  if (u.protocol === `${APP_SCHEME}:` && u.host === APP_HOST) return true;
  if (devOrigin) {
    const d = parse(devOrigin);
    return !!d && u.origin === d.origin && (u.hostname === '127.0.0.1' || u.hostname === 'localhost');
  }
  return false;
}

/** Links the user clicks may open in the system browser only when they are plain http(s). */
export function isExternalHttpUrl(url: string): boolean {
  const u = parse(url);
  return !!u && (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password;
}

/**
 * Map an app:// request path to a file under the built renderer. Returns null for anything that
 * would leave the folder (`..`, encoded separators, NUL). Paths without an extension get index.html.
 */
export function resolveStaticPath(rootDir: string, urlPath: string): string | null {
  let rel: string;
  try {
    rel = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (rel.includes('\0') || rel.includes('\\')) return null;
  const normalized = path.posix.normalize('/' + rel);
  if (normalized.split('/').includes('..')) return null;
  const target = normalized === '/' || path.posix.extname(normalized) === '' ? '/index.html' : normalized;
  const abs = path.resolve(rootDir, '.' + target);
  const root = path.resolve(rootDir);
  return abs === root || abs.startsWith(root + path.sep) ? abs : null;
}

/** `api/asset/<payloadId>/<sha256>` on the app origin (the renderer builds these URLs for <img>/<iframe>). */
export function parseAssetPath(urlPath: string): { payloadId: string; sha256: string } | null {
  const m = /^\/api\/asset\/([^/]+)\/([0-9a-fA-F]{16,64})$/.exec(urlPath);
  if (!m) return null;
  try {
    return { payloadId: decodeURIComponent(m[1]!), sha256: m[2]!.toLowerCase() };
  } catch {
    return null;
  }
}

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface WindowState {
  bounds?: Rect;
  maximized?: boolean;
}

export const DEFAULT_WINDOW = { width: 1440, height: 900 };
export const MIN_WINDOW = { width: 900, height: 560 };

/**
 * Put a remembered window back only if enough of it lands on a screen that exists now (monitors
 * get unplugged); otherwise keep the size and let the OS place it.
 */
export function restoreBounds(saved: unknown, workAreas: Rect[]): Partial<Rect> & { width: number; height: number } {
  const s = saved as WindowState | undefined;
  const b = s?.bounds;
  const valid = b && [b.x, b.y, b.width, b.height].every((n) => typeof n === 'number' && Number.isFinite(n));
  if (!valid) return { ...DEFAULT_WINDOW };
  const width = Math.max(MIN_WINDOW.width, Math.min(b.width, 10_000));
  const height = Math.max(MIN_WINDOW.height, Math.min(b.height, 10_000));
  const visible = workAreas.some((a) => {
    const ix = Math.min(b.x + width, a.x + a.width) - Math.max(b.x, a.x);
    const iy = Math.min(b.y + height, a.y + a.height) - Math.max(b.y, a.y);
    return ix >= 100 && iy >= 50;
  });
  return visible ? { x: b.x, y: b.y, width, height } : { width, height };
}

/** Requests crossing IPC must be plain data objects (no class instances, no functions, no prototypes games). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  // Any realm's Object.prototype (its own prototype is null), or no prototype: no class instances.
  const proto = Object.getPrototypeOf(v);
  return proto === null || (Object.getPrototypeOf(proto) === null && Object.prototype.toString.call(v) === '[object Object]');
}
