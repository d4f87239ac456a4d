/**
 * What the e2e walks share: the two window sizes people use, the screenshot folder, one `spillway
 * serve` and one Chromium per file (with the API at hand to check the page against), and the UI's
 * short token form. A walk calls `serveSuite` at the top level of its file; the returned object's
 * fields are set once its beforeAll has run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { formatTokens } from '../../../app/lib/format.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { ensureRendererBuilt, launchChromium, REPO_ROOT, startServe, type ServeProcess } from './serve.js';

export const SHOTS = path.join(REPO_ROOT, 'docs', 'screenshots');
export const WALK_SIZES = [
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
] as const;
/** The realistic Claude Code session the real binary wrote (test/clients/realistic.ts). */
export const REALISTIC_CLAUDE = path.join(REPO_ROOT, 'test', 'clients', 'fixtures', 'realistic', 'claude-code');
export const REALISTIC_CLAUDE_ROOTS = [path.join(REALISTIC_CLAUDE, 'projects'), path.join(REALISTIC_CLAUDE, 'spillway-sessions')];

export interface Suite {
  serve: ServeProcess;
  browser: Browser;
  /** This file's private folder (removed after it). */
  tmp: string;
  /** A method of the service's HTTP API, with the token. */
  call<T>(method: string, req: unknown): Promise<T>;
}

/**
 * Start serve on the roots `roots(tmp)` gives (it may write them there first) with private app data,
 * and Chromium. With `reindex`, wait for a scan asked for: it returns once the index is whole (the
 * ledger's measured figures and the read-backs included), so the walk reads a finished index.
 */
export function serveSuite(prefix: string, roots: (tmp: string) => Promise<string[]> | string[], o: { reindex?: boolean } = {}): Suite {
  const s = {} as Suite;
  s.call = async <T>(method: string, req: unknown): Promise<T> => {
    const r = await fetch(`${s.serve.origin}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${s.serve.token}` }, body: JSON.stringify(req) });
    expect(r.status).toBe(200);
    return ((await r.json()) as { result: T }).result;
  };
  beforeAll(async () => {
    await ensureRendererBuilt();
    fs.mkdirSync(SHOTS, { recursive: true });
    // Not tmpDir: that is removed after each test, and the sessions must outlive the first.
    s.tmp = fs.mkdtempSync(path.join(os.tmpdir(), `spillway-${prefix}-e2e-`));
    s.serve = await startServe({ roots: await roots(s.tmp), home: path.join(s.tmp, 'home'), extraArgs: ['--no-default-roots'] });
    if (o.reindex) await s.call('reindex', {});
    s.browser = await launchChromium();
  }, 240_000);
  afterAll(async () => {
    await s.browser?.close();
    await s.serve?.stop();
    if (s.tmp) fs.rmSync(s.tmp, { recursive: true, force: true });
  });
  return s;
}

/** The UI's short token form ("12k", "4.5k", "1.2M"): the app's own formatter, so a walk reads figures as the page prints them. */
export const shortTokens = formatTokens;

/**
 * Disagreements between figures, said once each: a walk lists them all (and takes every screenshot)
 * before failing on `disagree`.
 */
export function agreement(): { disagree: string[]; same: (what: string, a: unknown, b: unknown) => void } {
  const disagree: string[] = [];
  return {
    disagree,
    same: (what, a, b) => {
      if (a !== b) disagree.push(`${what}: ${String(a)} ≠ ${String(b)}`);
    },
  };
}

/** A fresh page, once the app is ready, and the sidebar row of the realistic Claude Code session (waited for). */
export async function claudeSessionRow(page: Page, url: string): Promise<Locator> {
  await page.goto(url);
  await page.waitForSelector('.app[data-ready="true"]', { timeout: 60_000 });
  const row = page.locator('.session-row:has([data-testid="client-badge"]:text("Claude Code"))').first();
  await row.waitFor({ timeout: 90_000 });
  return row;
}
