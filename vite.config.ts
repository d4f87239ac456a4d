import path from 'node:path';
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { uiCsp } from './src/service/web-policy.js';

/** The built page's CSP (a meta tag: `frame-ancestors` is set by the hosts' headers instead). */
export const RENDERER_CSP = uiCsp(null);

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
