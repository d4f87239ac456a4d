/**
 * What the UI may load and how static files are typed, in one place for its three hosts: the
 * built page's meta tag (vite.config.ts), `spillway serve` (src/server) and the desktop shell's
 * app:// protocol (electron/). Pure data: no Node or browser API.
 */

/**
 * The renderer's CSP directives. No remote origin anywhere: the UI talks only to its own origin
 * (serve, app://) or to the preload bridge. `style-src 'unsafe-inline'` is for Monaco, which injects
 * its styles at run time, and its workers start from blob: URLs; scripts stay 'self' only.
 */
const UI_DIRECTIVES = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-src 'self' blob:",
  "media-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
];

/**
 * The UI's CSP as a header. `frame-ancestors` only works in a header (a meta tag ignores it): the
 * served page may not be framed at all; the desktop page may frame its own PDFs.
 */
export function uiCsp(frameAncestors: "'none'" | "'self'" | null): string {
  return [...UI_DIRECTIVES, ...(frameAncestors ? [`frame-ancestors ${frameAncestors}`] : [])].join('; ');
}

/** Assets and anything else that is not the UI: no scripts, no plugins, a unique origin. */
export const ASSET_CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox";
/** Chromium will not render a PDF inside a sandboxed document, so PDFs get no sandbox (they run no page script). */
export const PDF_CSP = "default-src 'none'; frame-ancestors 'self'";

/** Content types of the built UI's files, by extension. */
export const STATIC_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
};

/** Asset types shown in the page (`<img>`, a PDF frame); every other asset is a download. */
export const INLINE_ASSET_TYPES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/bmp',
  'image/x-icon',
  'image/vnd.microsoft.icon',
  'image/svg+xml',
  'application/pdf',
]);

/** A declared MIME type as a safe Content-Type (anything odd becomes application/octet-stream). */
export function safeMimeType(mimeType: string): string {
  return /^[a-z]+\/[a-z0-9.+-]+$/i.test(mimeType) ? mimeType.toLowerCase() : 'application/octet-stream';
}

/**
 * The headers every asset response carries, over `serve` and app:// alike: its type, nosniff, a
 * sandboxing CSP (PDFs excepted: Chromium renders none in a sandbox), and inline only for images
 * and PDFs, else `attachment` under a name made of its hash.
 */
export function assetHeaders(a: { mimeType: string; sha256: string; ext: string; bytes: number }): Record<string, string> {
  const mime = safeMimeType(a.mimeType);
  const ext = a.ext.replace(/[^A-Za-z0-9.]/g, '').slice(0, 16);
  return {
    'Content-Type': mime,
    'Content-Length': String(a.bytes),
    'Content-Security-Policy': mime === 'application/pdf' ? PDF_CSP : ASSET_CSP,
    'Content-Disposition': `${INLINE_ASSET_TYPES.has(mime) ? 'inline' : 'attachment'}; filename="${a.sha256.slice(0, 32)}${ext}"`,
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'private, max-age=3600, immutable',
  };
}
