/**
 * The limit tuner and the waste report on a real Claude Code session (the timeline's fixture, a
 * session that compacted twice): their figures are the Timeline's replay, the view states what
 * they assume, and every call row shows its arguments and opens its call.
 * Screenshots go to docs/screenshots/ (the docs show them).
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tmpDir } from '../index/helpers.js';
import { ensureRendererBuilt, launchChromium, openInspector, REPO_ROOT, startServe, type ServeProcess } from './helpers/serve.js';

const ROOT = path.join(REPO_ROOT, 'test', 'index', 'fixtures', 'timeline', 'claude-code-pct5');
const SHOTS = path.join(REPO_ROOT, 'docs', 'screenshots');

let serve: ServeProcess;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  await ensureRendererBuilt();
  serve = await startServe({ roots: [ROOT], home: tmpDir('spillway-tuner-e2e-'), extraArgs: ['--no-default-roots'] });
  browser = await launchChromium();
  page = await openInspector(browser, serve.url, { colorScheme: 'light' });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
});

describe('limit tuner and waste report: views of the replay', () => {
  it('the waste report opens first on a fresh page, from the replay, with each call\'s arguments', async () => {
    const row = page.locator('.session-row').first();
    await row.waitFor({ timeout: 60_000 });
    await row.click();
    await page.keyboard.press('Control+3');
    const waste = page.getByTestId('waste');
    await waste.waitFor({ timeout: 30_000 });
    await expect.poll(async () => (await waste.textContent()) ?? '', { timeout: 30_000 }).toContain('tokens × calls');
    expect(await page.getByRole('alert').count()).toBe(0);
    const args = waste.getByTestId('call-args');
    expect(await args.count()).toBeGreaterThan(0);
    expect(await args.first().textContent()).not.toBe('(no arguments recorded)');
    await page.screenshot({ path: path.join(SHOTS, 'waste-report-replay.png') });
  });

  it('the tuner replays the session at the slider\'s limit and says what it assumes', async () => {
    await page.keyboard.press('Control+2');
    const stats = page.getByTestId('tuner-stats');
    await stats.waitFor({ timeout: 30_000 });
    await expect.poll(async () => (await stats.textContent()) ?? '', { timeout: 30_000 }).toContain('Saved against no guard');
    const assumptions = (await page.getByTestId('tuner-assumptions').textContent()) ?? '';
    expect(assumptions).toContain('tokens × the calls it stays in context');
    await page.getByLabel('Limit in tokens').fill('2000');
    await expect.poll(async () => (await stats.textContent()) ?? '', { timeout: 30_000 }).toContain('Guard at 2,000');
    await page.screenshot({ path: path.join(SHOTS, 'limit-tuner-replay.png'), fullPage: true });
  });
});
