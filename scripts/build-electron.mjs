#!/usr/bin/env node
/**
 * Compile the desktop shell with esbuild:
 *   electron/main.ts    → dist/electron/main.mjs   (ESM; npm packages stay external and load from node_modules)
 *   electron/preload.ts → dist/electron/preload.cjs (CommonJS, self-contained: sandboxed preloads cannot import)
 *   src/service/compute-worker.ts → dist/electron/compute-worker.mjs (the service's worker thread, beside main.mjs)
 * `--watch` rebuilds on change (npm run dev).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist', 'electron');
/** Electron 40 ships Node 22+ and Chromium 140+. */
const NODE_TARGET = 'node22';
const CHROME_TARGET = 'chrome130';

export function configs({ onRebuild } = {}) {
  const plugins = onRebuild
    ? [{ name: 'notify', setup: (b) => b.onEnd((r) => onRebuild(b.initialOptions.outfile, r)) }]
    : [];
  return [
    {
      entryPoints: [path.join(root, 'electron', 'main.ts')],
      outfile: path.join(outdir, 'main.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: NODE_TARGET,
      packages: 'external',
      external: ['electron'],
      sourcemap: 'linked',
      logLevel: 'warning',
      plugins,
    },
    {
      // The service's compute worker (src/service/compute.ts looks for it next to main.mjs).
      entryPoints: [path.join(root, 'src', 'service', 'compute-worker.ts')],
      outfile: path.join(outdir, 'compute-worker.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: NODE_TARGET,
      packages: 'external',
      sourcemap: 'linked',
      logLevel: 'warning',
      plugins,
    },
    {
      entryPoints: [path.join(root, 'electron', 'preload.ts')],
      outfile: path.join(outdir, 'preload.cjs'),
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: [NODE_TARGET, CHROME_TARGET],
      external: ['electron'],
      sourcemap: 'inline',
      logLevel: 'warning',
      plugins,
    },
  ];
}

export async function buildElectron({ watch = false, onRebuild } = {}) {
  const list = configs({ onRebuild });
  if (!watch) {
    await Promise.all(list.map((c) => esbuild.build(c)));
    return [];
  }
  const ctxs = await Promise.all(list.map((c) => esbuild.context(c)));
  await Promise.all(ctxs.map((c) => c.watch()));
  return ctxs;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const watch = process.argv.includes('--watch');
  await buildElectron({ watch });
  if (!watch) console.log(`built ${path.relative(root, outdir)}/main.mjs, compute-worker.mjs and preload.cjs`);
}
