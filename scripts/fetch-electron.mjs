#!/usr/bin/env node
/**
 * Fetch the Electron binary after `npm install`, without ever failing the install.
 *
 * package.json's `allowScripts` turns Electron's own postinstall off (npm 11 honours it), because
 * that script fails the whole `npm install` on a machine that cannot reach Electron's download host.
 * This script, run from `prepare`, runs the same downloader (`electron/install.js`, which honours
 * ELECTRON_SKIP_BINARY_DOWNLOAD and its cache) and turns a failure into one plain line: the desktop
 * shell is unavailable, and `npm start` opens the inspector in the browser instead.
 * `node scripts/fetch-electron.mjs` can be run again later to get the desktop shell.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { findElectron, repoRoot } from './electron-env.mjs';

/** A download of ~100 MB on a slow line; a closed network fails in about a second. */
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;

export function fetchElectron({ quiet = false } = {}) {
  const have = findElectron();
  if (have.ok) return have;
  let installer;
  try {
    installer = path.join(path.dirname(createRequire(path.join(repoRoot, 'package.json')).resolve('electron/package.json')), 'install.js');
  } catch {
    return say({ ok: false, reason: 'the electron package is not installed (production install?)' }, quiet);
  }
  if (process.env.ELECTRON_SKIP_BINARY_DOWNLOAD) return say({ ok: false, reason: 'ELECTRON_SKIP_BINARY_DOWNLOAD is set' }, quiet);
  if (!fs.existsSync(installer)) return say({ ok: false, reason: `no installer at ${installer}` }, quiet);
  const r = spawnSync(process.execPath, [installer], { cwd: path.dirname(installer), encoding: 'utf8', timeout: DOWNLOAD_TIMEOUT_MS });
  const after = findElectron();
  if (after.ok) return after;
  const why = r.error
    ? r.error.message
    : (r.stderr || r.stdout || '').split('\n').map((l) => l.trim()).find((l) => /error|ENOTFOUND|ECONN|EAI_AGAIN|timed? ?out/i.test(l)) ?? `the downloader exited with ${r.status}`;
  return say({ ok: false, reason: `could not download it (${why})` }, quiet);
}

function say(result, quiet) {
  if (!quiet) {
    console.log(
      `spillway: the Electron desktop shell is unavailable: ${result.reason}. ` +
        '`npm start` will open the inspector in your browser instead (`spillway serve --open`); ' +
        'run `node scripts/fetch-electron.mjs` later to get the desktop app.',
    );
  }
  return result;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) fetchElectron();
