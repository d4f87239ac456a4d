/**
 * Where the Electron binary is, or why it is not there. `require('electron')` returns the binary's
 * path, but throws when the postinstall download was skipped (ELECTRON_SKIP_BINARY_DOWNLOAD) or failed.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function findElectron() {
  if (process.env.SPILLWAY_NO_ELECTRON) return { ok: false, reason: 'SPILLWAY_NO_ELECTRON is set' };
  const require = createRequire(path.join(repoRoot, 'package.json'));
  let bin;
  try {
    bin = require('electron');
  } catch (err) {
    return { ok: false, reason: String(err instanceof Error ? err.message.split('\n')[0] : err) };
  }
  if (typeof bin !== 'string' || !fs.existsSync(bin)) return { ok: false, reason: `the Electron binary is not installed (${bin ?? 'no path'})` };
  return { ok: true, bin };
}

/** Newest mtime of a file, or under a folder (skipping node_modules), to tell whether a build is stale. */
export function newestMtime(dir) {
  let newest = 0;
  if (!fs.existsSync(dir)) return newest;
  if (!fs.statSync(dir).isDirectory()) return fs.statSync(dir).mtimeMs;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules') continue;
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

export function isStale(output, inputs) {
  if (!fs.existsSync(output)) return true;
  const built = fs.statSync(output).mtimeMs;
  return inputs.some((i) => newestMtime(i) > built);
}
