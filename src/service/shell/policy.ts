/**
 * The desktop shell's security decisions as plain functions (no `electron` import), so Node tests
 * reach them; electron/main.ts only wires them to Electron's events.
 *
 * | function               | decides                                                                 |
 * | ---------------------- | ----------------------------------------------------------------------- |
 * | `isAppUrl`             | what the window may show: the app, or in an unpackaged dev run the local Vite server |
 * | `devUrlFor`            | whether the dev server URL counts (never in a packaged app)             |
 * | `isExternalHttpUrl`    | which links may be offered to the system browser                        |
 * | `ExternalLinkGate`     | one "open in browser?" dialog at a time: a link leaves only when the user clicks Open |
 * | `checkDroppedPath`     | which dropped/opened paths the main process lets the service read      |
 * | `checkDroppedFolder`   | which dropped folders the window may then add as a root                |
 * | `resolveStaticPath`    | which files app:// serves from the built renderer                       |
 * | `parseAssetPath`       | app:// asset URLs                                                       |
 * | `restoreBounds`        | where a remembered window goes back                                     |
 */
import fs from 'node:fs';
import path from 'node:path';
import { checkPathText } from '../paths.js';
import { uiCsp } from '../web-policy.js';

export { isPlainObject, isTrustedSender, type IpcSender } from './ipc.js';

/** The origin the renderer is served from in a packaged or `npm start` build. */
export const APP_SCHEME = 'app';
export const APP_HOST = 'spillway';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;

/** The renderer's CSP in the desktop app: the shared one, framing only its own PDFs. */
export const DESKTOP_CSP = uiCsp("'self'");

/** Longest link offered to the system browser (the dialog shows it whole; a longer one hides what it carries). */
export const MAX_EXTERNAL_URL_CHARS = 2_048;

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

const isLoopbackHttp = (u: URL) => u.protocol === 'http:' && (u.hostname === '127.0.0.1' || u.hostname === 'localhost');

/** The window may only ever show the app itself (or, in dev, the Vite dev server on loopback). */
export function isAppUrl(url: string, devOrigin?: string): boolean {
  const u = parse(url);
  if (!u) return false;
  if (u.protocol === `${APP_SCHEME}:` && u.host === APP_HOST) return true;
  if (devOrigin) {
    const d = parse(devOrigin);
    return !!d && u.origin === d.origin && isLoopbackHttp(u);
  }
  return false;
}

/**
 * The dev server URL `npm run dev` sets (its environment variable, read by electron/main.ts), or
 * undefined: a packaged app ignores it (else anyone who can set an environment variable could load
 * their page with the app's IPC), and only a loopback http URL counts.
 */
export function devUrlFor(o: { isPackaged: boolean; requested: string | undefined }): string | undefined {
  if (o.isPackaged) return undefined;
  const u = o.requested ? parse(o.requested) : null;
  return u && isLoopbackHttp(u) ? u.href : undefined;
}

/** Links the user clicks may be offered to the system browser only when they are plain http(s). */
export function isExternalHttpUrl(url: string): boolean {
  const u = parse(url);
  return !!u && (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password && url.length <= MAX_EXTERNAL_URL_CHARS;
}

/**
 * A link leaves the app only after the user clicks "Open" in a dialog of the main process, which
 * the page cannot click for them. One dialog at a time: a page asking again and again gets refusals.
 */
export class ExternalLinkGate {
  private pending = false;

  /** 'ask' (show the dialog, then call done()), or 'refuse'. */
  request(url: unknown): 'ask' | 'refuse' {
    if (typeof url !== 'string' || !isExternalHttpUrl(url) || this.pending) return 'refuse';
    this.pending = true;
    return 'ask';
  }

  done(): void {
    this.pending = false;
  }
}

/** Pseudo-file systems: their "files" (`/proc/<pid>/environ`) are never something the user dropped. */
const PSEUDO_FS = ['/proc', '/sys', '/dev'];

/**
 * A path the preload got from `webUtils.getPathForFile` for a real drop, or the Open File dialog
 * returned: an absolute path to a regular file, plain text, outside the pseudo-file systems.
 * Returns the reason to refuse, or null.
 */
export function checkDroppedPath(p: unknown): string | null {
  if (typeof p !== 'string') return 'not a path';
  try {
    checkPathText(p);
  } catch (err) {
    return (err as Error).message;
  }
  if (!path.isAbsolute(p)) return 'not an absolute path';
  let real: string;
  try {
    real = fs.realpathSync.native(p);
    if (!fs.statSync(real).isFile()) return 'not a regular file';
  } catch {
    return 'no such file';
  }
  if (PSEUDO_FS.some((d) => real === d || real.startsWith(d + '/'))) return 'not a file anyone drops';
  return null;
}

/**
 * A folder the preload got from `webUtils.getPathForFile` for a real drop: absolute, plain text, a
 * directory after following links, outside the pseudo-file systems. It is the user's consent for
 * the window to add it as a root (roots-policy.ts still applies its hard limits). Returns the reason
 * to refuse, or null.
 */
export function checkDroppedFolder(p: unknown): string | null {
  if (typeof p !== 'string') return 'not a path';
  try {
    checkPathText(p);
  } catch (err) {
    return (err as Error).message;
  }
  if (!path.isAbsolute(p)) return 'not an absolute path';
  let real: string;
  try {
    real = fs.realpathSync.native(p);
    if (!fs.statSync(real).isDirectory()) return 'not a folder';
  } catch {
    return 'no such folder';
  }
  if (PSEUDO_FS.some((d) => real === d || real.startsWith(d + '/'))) return 'not a folder anyone drops';
  return null;
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
