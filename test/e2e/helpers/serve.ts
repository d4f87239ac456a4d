/**
 * Run a real `spillway serve` process (the CLI from source) on a sessions root, and a real
 * headless Chromium against it. Used by the e2e suite and bench/ui.ts.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
export const CHROMIUM_PATH = process.env.SPILLWAY_CHROMIUM ?? '/usr/bin/chromium';
const SERVE_START_TIMEOUT_MS = 90_000;

/** The e2e suite serves the built UI: build it when dist/renderer is missing or older than app/ (as `npm start` does). */
export async function ensureRendererBuilt(): Promise<void> {
  const { isStale } = (await import(path.join(REPO_ROOT, 'scripts', 'electron-env.mjs'))) as { isStale: (out: string, inputs: string[]) => boolean };
  if (!isStale(path.join(REPO_ROOT, 'dist', 'renderer', 'index.html'), [path.join(REPO_ROOT, 'app'), path.join(REPO_ROOT, 'src', 'service', 'contract.ts')])) return;
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn'], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error('vite build failed');
}

export interface ServeProcess {
  /** The one-time link serve printed (it opens one tab; use freshUrl() for more). */
  url: string;
  /** A fresh one-time link, minted with the token. */
  freshUrl(): Promise<string>;
  origin: string;
  token: string;
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/**
 * Start `spillway serve` on the given roots with a private app-data folder (`home` is
 * SPILLWAY_HOME); resolves once it prints its URL. `env` adds to the process's environment: a
 * temporary `HOME` makes the agents' folders opened by default (with no roots) the test's own.
 */
export async function startServe(opts: { roots: string[]; home: string; extraArgs?: string[]; env?: NodeJS.ProcessEnv }): Promise<ServeProcess> {
  const token = crypto.randomBytes(24).toString('base64url');
  const args = [
    '--import',
    'tsx',
    '--conditions=source',
    path.join(REPO_ROOT, 'src', 'cli', 'main.ts'),
    'serve',
    ...opts.roots.flatMap((r) => ['--root', r]),
    '--port',
    '0',
    ...(opts.extraArgs ?? []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    // The token goes in the environment, never in argv (readable by every local account).
    env: { ...process.env, ...opts.env, SPILLWAY_HOME: opts.home, SPILLWAY_TOKEN: token, ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', BROWSER: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`spillway serve did not start in time:\n${out}`)), SERVE_START_TIMEOUT_MS);
    const check = () => {
      const m = /(http:\/\/127\.0\.0\.1:\d+\/#launch=[A-Za-z0-9_-]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`spillway serve exited with ${code}:\n${out}`));
    });
  });
  const origin = new URL(url).origin;
  return {
    url,
    async freshUrl() {
      const r = await fetch(`${origin}/api/auth/launch-url`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: '{}' });
      return ((await r.json()) as { result: { url: string } }).result.url;
    },
    origin,
    token,
    child,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
      }),
  };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

export const E2E_VIEWPORT = { width: 1440, height: 900 };

/**
 * A new browser context on the inspector: opens `url` (a one-time launch link) and waits until
 * the app is ready. `before` runs on the page first, to attach listeners that must see every request.
 */
export async function openInspector(browser: Browser, url: string, opts: { colorScheme?: 'dark' | 'light'; before?: (page: Page) => void } = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: E2E_VIEWPORT, colorScheme: opts.colorScheme ?? 'dark' });
  const page = await context.newPage();
  opts.before?.(page);
  await page.goto(url);
  await page.waitForSelector('.app[data-ready="true"]');
  return page;
}
