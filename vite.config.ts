import path from 'node:path';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';

/**
 * The renderer's CSP. No remote origin anywhere: the UI talks only to its own origin (serve) or to
 * the preload bridge (Electron). `style-src 'unsafe-inline'` is needed by Monaco, which injects
 * its styles at run time; scripts stay 'self' only. Images and PDFs come from data:/blob: URLs
 * the renderer builds from readAsset, so no asset is ever fetched from elsewhere.
 */
export const RENDERER_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "frame-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** The CSP goes in as a meta tag in the built page only: Vite's dev server needs inline scripts for hot reload. */
function cspMeta(): Plugin {
  return {
    name: 'spillway-csp',
    apply: 'build',
    transformIndexHtml: () => [
      { tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: RENDERER_CSP }, injectTo: 'head' },
    ],
  };
}

export default defineConfig({
  root: 'app',
  base: './',
  plugins: [react(), cspMeta()],
  resolve: {
    // app/ imports the contract's types and name lists from src/service/contract.ts; `source` lets it resolve TS.
    conditions: ['source'],
  },
  build: {
    outDir: path.resolve(import.meta.dirname, 'dist/renderer'),
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 6000,
    sourcemap: false,
  },
  worker: { format: 'es' },
  server: {
    port: Number(process.env.SPILLWAY_VITE_PORT ?? 5174),
    strictPort: true,
    host: '127.0.0.1',
    proxy: process.env.SPILLWAY_API_ORIGIN
      ? { '/api': { target: process.env.SPILLWAY_API_ORIGIN, changeOrigin: false } }
      : undefined,
  },
});
