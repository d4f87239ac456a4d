#!/usr/bin/env node
/**
 * `npm start`: build what is missing or stale, then launch the desktop app. Where the Electron
 * binary is missing (no network at install time, CI, `ELECTRON_SKIP_BINARY_DOWNLOAD=1`), try to fetch it
 * once more, then say so and open the same inspector
 * in the browser through `spillway serve --open` instead. Extra arguments are passed on
 * (`npm start -- ~/my-sessions`).
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildElectron } from './build-electron.mjs';
import { isStale, repoRoot } from './electron-env.mjs';
import { fetchElectron } from './fetch-electron.mjs';

const args = process.argv.slice(2);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const run = (cmd, argv) => {
  const r = spawnSync(cmd, argv, { cwd: repoRoot, stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

const rendererIndex = path.join(repoRoot, 'dist', 'renderer', 'index.html');
if (isStale(rendererIndex, [path.join(repoRoot, 'app'), path.join(repoRoot, 'src', 'service', 'contract.ts')])) {
  console.log('spillway: building the inspector UI (dist/renderer, about a minute); its address follows');
  // Vite's per-file report and its plugin-timing note are ~100 lines that would bury the address: errors only.
  run(npm, ['run', '--silent', 'build:renderer', '--', '--logLevel', 'error']);
}

const electron = fetchElectron({ quiet: true });
if (electron.ok) {
  await buildElectron();
  const child = spawn(electron.bin, [path.join(repoRoot, 'dist', 'electron', 'main.mjs'), ...args], { cwd: repoRoot, stdio: 'inherit' });
  child.on('exit', (code) => process.exit(code ?? 0));
} else {
  console.log(
    `spillway: the Electron desktop app cannot start here: ${electron.reason}.\n` +
      'spillway: opening the same inspector in your browser instead (spillway serve --open).\n' +
      'spillway: to get the desktop app later, run `node scripts/fetch-electron.mjs` on a machine that can download it.',
  );
  const rootArgs = args.flatMap((a) => (a.startsWith('-') ? [a] : ['--root', a]));
  // In a checkout run the CLI from source (dist/lib may be older than src/); installed, use the built bin.
  const fromSource = fs.existsSync(path.join(repoRoot, 'src', 'cli', 'main.ts')) && fs.existsSync(path.join(repoRoot, 'node_modules', 'tsx'));
  const cli = fromSource
    ? ['--import', 'tsx', '--conditions=source', path.join(repoRoot, 'src', 'cli', 'main.ts')]
    : [path.join(repoRoot, 'bin', 'spillway.js')];
  const child = spawn(process.execPath, [...cli, 'serve', '--open', ...rootArgs], { cwd: repoRoot, stdio: 'inherit' });
  const stop = () => child.kill('SIGTERM');
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  child.on('exit', (code) => process.exit(code ?? 0));
}
