/// <reference lib="dom" />
/**
 * Issue 14, item 1: the session credential does not reach other local origins. A real
 * `spillway serve` process, a second HTTP server on another 127.0.0.1 port recording every
 * request, and Debian's headless Chromium between them. On 3a18a0f the second server received
 * the token in the `spillway_token_<port>` cookie (browsers share cookies across ports).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSessionsRoot } from '../helpers/gen-sessions.js';
import { ensureRendererBuilt, launchChromium, startServe, type ServeProcess } from '../e2e/helpers/serve.js';

let tmp: string;
let serve: ServeProcess;
let browser: Browser;
let other: http.Server;
let otherOrigin: string;
const seen: Array<{ url: string; headers: http.IncomingHttpHeaders }> = [];

beforeAll(async () => {
  await ensureRendererBuilt();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-cred-'));
  const root = path.join(tmp, 'sessions');
  await generateSessionsRoot(root, { sessions: 1, payloads: 6, seed: 9 });
  serve = await startServe({ roots: [root], home: path.join(tmp, 'home') });
  // Any other local service the user runs (a dev server, a notebook): it logs what browsers send it.
  other = http.createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    res.setHeader('content-type', 'text/html');
    res.end('<!doctype html><title>other</title><img src="/pixel.png">');
  });
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  await new Promise((r) => other?.close(r));
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the session credential stays with the page that opened the link', () => {
  it('a second loopback server receives nothing that opens spillway serve; the page keeps no copy the browser persists', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(serve.url);
      await page.waitForSelector('.app[data-ready="true"]', { timeout: 60_000 });
      // The UI works: it loaded the sessions with the credential it holds.
      await page.locator('.session-row').first().waitFor({ timeout: 30_000 });

      // The same browser then visits another local origin, as a user would (same tab, and a new one).
      await page.goto(`${otherOrigin}/`);
      const second = await context.newPage();
      await second.goto(`${otherOrigin}/again`);
      await second.waitForLoadState('load');
      expect(seen.length).toBeGreaterThan(0);
      for (const r of seen) {
        const all = `${r.url}\n${Object.entries(r.headers).map(([k, v]) => `${k}: ${String(v)}`).join('\n')}`;
        expect(all, `request ${r.url} to the other server`).not.toContain(serve.token);
        expect(r.headers.cookie ?? '', r.url).not.toMatch(/spillway/i);
      }
      const cookies = await context.cookies();
      expect(cookies.map((c) => `${c.name}=${c.value}`).join('; ')).not.toContain(serve.token);

      // Back on the inspector's origin: no storage holds the token, the address bar has no secret.
      const back = await context.newPage();
      await back.goto(`${serve.origin}/`);
      const stored = await back.evaluate(() => JSON.stringify({ s: { ...sessionStorage }, l: { ...localStorage }, url: location.href, cookie: document.cookie }));
      expect(stored).not.toContain(serve.token);
    } finally {
      await context.close();
    }
  }, 120_000);

  it('the link in history is spent: opening it again (or trading its code) opens nothing', async () => {
    const code = new URL(serve.url).hash.replace(/^#launch=/, '');
    expect(code.length).toBeGreaterThan(20);
    const r = await fetch(`${serve.origin}/api/auth/launch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
    expect(r.status).toBe(401);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      let data = 0;
      page.on('response', (res) => {
        if (/\/api\/(listSessions|listPayloads|listRoots)$/.test(res.url()) && res.status() === 200) data++;
      });
      await page.goto(serve.url);
      await page.waitForTimeout(1_500);
      expect(data).toBe(0);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('issue 29: a reload keeps the user in; what keeps them in is a once-only secret of this tab, never the token', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const refused: string[] = [];
      page.on('response', (res) => {
        if (res.url().includes('/api/') && res.status() === 401) refused.push(res.url());
      });
      await page.goto(await serve.freshUrl());
      await page.waitForSelector('.app[data-ready="true"]', { timeout: 60_000 });
      await page.locator('.session-row').first().waitFor({ timeout: 30_000 });
      const before = await page.evaluate(() => sessionStorage.getItem('spillway.renew'));
      expect(before).toMatch(/^[A-Za-z0-9_-]{43}$/);

      // On 19f533d this reload left the page with "missing or wrong token".
      await page.reload();
      await page.waitForSelector('.app[data-ready="true"]', { timeout: 60_000 });
      await page.locator('.session-row').first().waitFor({ timeout: 30_000 });
      expect(await page.locator('text=missing or wrong token').count()).toBe(0);
      // A second reload works too: the secret rotated.
      await page.reload();
      await page.waitForSelector('.app[data-ready="true"]', { timeout: 60_000 });
      await page.locator('.session-row').first().waitFor({ timeout: 30_000 });
      expect(refused).toEqual([]);

      const after = await page.evaluate(() => JSON.stringify({ s: { ...sessionStorage }, l: { ...localStorage }, url: location.href, cookie: document.cookie }));
      expect(after).not.toContain(serve.token);
      expect(after).not.toContain(before!);
      expect((await context.cookies()).length).toBe(0);
      // The first secret is spent: a copy of it opens nothing (and revokes the tab's line, by design).
      const replay = await fetch(`${serve.origin}/api/auth/renew`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ renew: before }) });
      expect(replay.status).toBe(401);

      // Another tab (a fresh page in the same browser) has no secret: sessionStorage is per tab.
      const other = await context.newPage();
      let data = 0;
      other.on('response', (res) => {
        if (/\/api\/(listSessions|listPayloads|listRoots)$/.test(res.url()) && res.status() === 200) data++;
      });
      await other.goto(`${serve.origin}/`);
      await other.waitForTimeout(1_500);
      expect(data).toBe(0);
    } finally {
      await context.close();
    }
  }, 120_000);
});
