#!/usr/bin/env node
/**
 * `npm run dev`: the Vite dev server (hot reload for app/) plus the desktop shell, rebuilt and
 * restarted when electron/ changes. Without an Electron binary: `spillway serve` for the API and
 * Vite in front of it, proxying /api, so the browser gets hot reload too.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { createServer } from 'vite';
import { buildElectron } from './build-electron.mjs';
import { findElectron, repoRoot } from './electron-env.mjs';

const args = process.argv.slice(2);
const VITE_PORT = Number(process.env.SPILLWAY_VITE_PORT ?? 5174);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const children = new Set();
const track = (child) => {
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
};
const shutdown = async (vite) => {
  for (const c of children) c.kill('SIGTERM');
  await vite?.close();
  process.exit(0);
};

const electron = findElectron();
if (electron.ok) {
  const vite = await createServer({ configFile: path.join(repoRoot, 'vite.config.ts'), server: { port: VITE_PORT } });
  await vite.listen();
  const devUrl = `http://127.0.0.1:${VITE_PORT}/`;
  let app;
  const launch = () => {
    app?.kill('SIGTERM');
    app = track(
      spawn(electron.bin, [path.join(repoRoot, 'dist', 'electron', 'main.mjs'), ...args], {
        cwd: repoRoot,
        stdio: 'inherit',
        env: { ...process.env, SPILLWAY_DEV_URL: devUrl },
      }),
    );
  };
  let timer;
  await buildElectron({
    watch: true,
    onRebuild: (_out, result) => {
      if (result.errors.length) return;
      clearTimeout(timer);
      timer = setTimeout(launch, 150);
    },
  });
  console.log(`spillway dev: Vite at ${devUrl}, Electron restarts when electron/ or src/ changes`);
  process.on('SIGINT', () => void shutdown(vite));
} else {
  console.log(`spillway dev: no Electron binary (${electron.reason}); serving the API with \`spillway serve\` and the UI with Vite (hot reload).`);
  const apiPort = await freePort();
  const token = crypto.randomBytes(24).toString('base64url');
  const rootArgs = args.flatMap((a) => (a.startsWith('-') ? [a] : ['--root', a]));
  const target = `http://127.0.0.1:${apiPort}`;
  // The token goes through the environment (argv is readable by every local account). serve's
  // one-time links name its own port; the page is opened on Vite's, which proxies /api to it.
  const api = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', path.join(repoRoot, 'src', 'cli', 'main.ts'), 'serve', '--port', String(apiPort), ...rootArgs], {
    cwd: repoRoot,
    env: { ...process.env, SPILLWAY_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(api);
  const toVite = (chunk) => chunk.toString().split(`${target}/#launch=`).join(`http://127.0.0.1:${VITE_PORT}/#launch=`);
  api.stdout.on('data', (c) => process.stdout.write(toVite(c)));
  api.stderr.on('data', (c) => process.stderr.write(toVite(c)));
  const vite = await createServer({
    configFile: path.join(repoRoot, 'vite.config.ts'),
    server: {
      port: VITE_PORT,
      proxy: {
        // serve checks Host and Origin: present the request as its own.
        '/api': {
          target,
          changeOrigin: true,
          configure: (proxy) => proxy.on('proxyReq', (req) => req.getHeader('origin') && req.setHeader('origin', target)),
        },
      },
    },
  });
  await vite.listen();
  console.log(`spillway dev: open the http://127.0.0.1:${VITE_PORT}/#launch=… link above (each link opens one tab; serve prints a fresh one when it is used)`);
  process.on('SIGINT', () => void shutdown(vite));
}
