/// <reference lib="dom" />
/**
 * The Context timeline view in headless Chromium, on the real Claude Code session that compacted
 * twice by itself (test/index/fixtures/timeline/claude-code-pct5): the chart draws, the compaction
 * count shows, the session list warns, and moving the guard-limit slider redraws the replay.
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
  serve = await startServe({ roots: [ROOT], home: tmpDir('spillway-tl-e2e-'), extraArgs: ['--no-default-roots'] });
  browser = await launchChromium();
  page = await openInspector(browser, serve.url, { colorScheme: 'light' });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
});

describe('Context timeline view', () => {
  it('draws the chart with its compactions, warns in the session list, and the slider redraws the replay', async () => {
    const row = page.locator('.session-row').first();
    await row.waitFor({ timeout: 60_000 });
    await expect.poll(() => page.locator('.context-warning').count(), { timeout: 30_000 }).toBeGreaterThan(0);
    await row.click();
    await page.locator('button[aria-label="Context timeline"]').click();
    const chart = page.getByTestId('timeline-chart');
    await chart.waitFor({ timeout: 30_000 });
    await expect.poll(() => page.locator('.timeline-chart canvas').count()).toBeGreaterThan(0);
    expect(await page.getByTestId('timeline-compactions').textContent()).toBe('2');
    // Guard at 2K: the replay avoids both compactions.
    await page.getByTestId('timeline-preset-2000').click();
    await expect.poll(() => page.getByTestId('timeline-replay').textContent(), { timeout: 10_000 }).toBe('0 compaction(s)');
    await page.waitForTimeout(200);
    await page.screenshot({ path: path.join(SHOTS, 'timeline.png') });
    const peakAt2k = Number(await chart.getAttribute('data-replay-peak'));
    // A limit above every result: nothing is replaced, the replayed peak rises, and the trigger the
    // session's own compactions imply (49,000) compacts the replay where the session really did.
    await page.getByLabel('Guard limit').fill('50000');
    await expect.poll(async () => Number(await chart.getAttribute('data-replay-peak')), { timeout: 10_000 }).toBeGreaterThan(peakAt2k * 1.3);
    await expect.poll(async () => Number(await chart.getAttribute('data-replay-compactions')), { timeout: 10_000 }).toBe(2);
    await page.screenshot({ path: path.join(SHOTS, 'timeline-limit-50k.png') });
  }, 120_000);

  it('per-session replay settings: the threshold the session ran with moves the trigger and the replay, the guard builds the messages, and they stay for the session', async () => {
    const chart = page.getByTestId('timeline-chart');
    const ruleLine = page.getByTestId('timeline-trigger').locator('..');
    // The transcript does not record CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: its two auto compactions imply 5%, said to be inferred.
    expect(await page.getByTestId('timeline-trigger').textContent()).toBe('49,000');
    expect(await ruleLine.textContent()).toMatch(/\(inferred: 5% of the effective window 980,000: the session's 2 auto compactions/);
    // The window is left off the scale; the trigger, near the contexts, is drawn, and the note says only what is left out.
    expect((await page.getByTestId('timeline-off-scale').textContent())!.replace(/\s+/g, ' ')).toMatch(/^The window \(1,000,000\) is far above this session's contexts, so the scale fits the contexts and the trigger\. /);
    expect(Number(await chart.getAttribute('data-y-top'))).toBeGreaterThan(49_000);
    // The user confirms the setting the session ran with: the same trigger, now read, and the replay compacts as it did.
    await page.getByLabel('Auto-compact percent').fill('5');
    await expect.poll(() => ruleLine.textContent(), { timeout: 10_000 }).toMatch(/49,000 \(read: /);
    await expect.poll(() => page.getByTestId('timeline-asran').textContent(), { timeout: 10_000 }).toBe('rule replayed: 2');
    await expect.poll(async () => Number(await chart.getAttribute('data-replay-compactions')), { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    // At 2K every big result is replaced by the message the real guard built offline: no compaction.
    await page.getByTestId('timeline-preset-2000').click();
    await expect.poll(() => page.getByTestId('timeline-replay').textContent(), { timeout: 10_000 }).toBe('0 compaction(s)');
    await expect.poll(() => page.getByTestId('timeline-messages').textContent(), { timeout: 10_000 }).toMatch(/^messages: \d+ by the guard offline$/);
    await page.getByLabel('Replay strategy').selectOption('chars4');
    await page.getByLabel('Replay profile').selectOption('claude');
    await expect.poll(() => page.getByTestId('timeline-messages').textContent(), { timeout: 10_000 }).toMatch(/by the guard offline/);
    await page.waitForTimeout(200);
    await page.screenshot({ path: path.join(SHOTS, 'timeline-settings.png') });
    // Back on the session later: its settings are still there.
    await page.goto(await serve.freshUrl());
    await page.locator('.session-row').first().click();
    await page.locator('button[aria-label="Context timeline"]').click();
    await page.getByTestId('timeline-chart').waitFor({ timeout: 30_000 });
    expect(await page.getByLabel('Auto-compact percent').inputValue()).toBe('5');
    expect(await page.getByLabel('Replay strategy').inputValue()).toBe('chars4');
    await expect.poll(() => page.getByTestId('timeline-trigger').textContent(), { timeout: 10_000 }).toBe('49,000');
  }, 120_000);
});
