#!/usr/bin/env node
/**
 * Installs the real agent clients the end-to-end tests drive (Claude Code, Codex, Gemini CLI, OpenCode), at the
 * versions pinned in test/clients/install/package-lock.json, into .cache/clients (or
 * $SPILLWAY_CLIENTS_DIR). They are ~900 MB of native binaries that want Node 22 for their own use, so
 * they are not devDependencies: `npm install` stays light, and `npm test` calls this first. A second
 * call finds the same lock already installed and returns at once.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '..');
const source = path.join(repoRoot, 'test', 'clients', 'install');
export const clientsDir = process.env.SPILLWAY_CLIENTS_DIR ? path.resolve(process.env.SPILLWAY_CLIENTS_DIR) : path.join(repoRoot, '.cache', 'clients');

export function installClients({ quiet = false } = {}) {
  const lock = fs.readFileSync(path.join(source, 'package-lock.json'));
  const want = crypto.createHash('sha256').update(fs.readFileSync(path.join(source, 'package.json'))).update(lock).digest('hex');
  const stamp = path.join(clientsDir, '.installed');
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === want && fs.existsSync(path.join(clientsDir, 'node_modules'))) return clientsDir;
  if (!quiet) console.log(`spillway: installing the pinned agent clients for the end-to-end tests into ${path.relative(repoRoot, clientsDir) || clientsDir} (once, ~1 minute)`);
  fs.mkdirSync(clientsDir, { recursive: true });
  for (const f of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(source, f), path.join(clientsDir, f));
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--loglevel', 'error'], { cwd: clientsDir, stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.status !== 0) throw new Error(`npm ci in ${clientsDir} failed (exit ${r.status ?? r.signal}); the client tests need the npm registry once`);
  fs.writeFileSync(stamp, want);
  return clientsDir;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    installClients();
  } catch (e) {
    console.error(`spillway: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
}
