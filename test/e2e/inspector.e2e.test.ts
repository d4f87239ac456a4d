/// <reference lib="dom" />
/**
 * End to end: a real `spillway serve` process on a generated sessions root (with a 100 MB payload),
 * driven through Debian's headless Chromium. Screenshots of each main view go to
 * test-results/screenshots/ (git-ignored).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSessionsRoot } from '../helpers/gen-sessions.js';
import { ensureRendererBuilt, launchChromium, openInspector, REPO_ROOT, startServe, type ServeProcess } from './helpers/serve.js';
import { VIEWS } from '../../src/service/shell/views.js';

const BIG_PAYLOAD_BYTES = 100 * 1024 * 1024;
const SHOTS = path.join(REPO_ROOT, 'test-results', 'screenshots');

let tmp: string;
let serve: ServeProcess;
let browser: Browser;
let page: Page;
const requests: string[] = [];
const consoleErrors: string[] = [];

/** Polls with room for a loaded 2-core machine (vitest's default is 1 s). */
const POLL_TIMEOUT_MS = 20_000;
const poll = <T,>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: POLL_TIMEOUT_MS, interval: 100 });

async function shot(name: string, p: Page = page): Promise<void> {
  await p.waitForTimeout(150); // let transitions settle
  await p.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

/** Poll until the locator's text contains `text` (vitest's expect has no locator matchers). */
async function expectText(locator: ReturnType<Page['locator']>, text: string): Promise<void> {
  await expect.poll(async () => (await locator.textContent({ timeout: 30_000 })) ?? '', { timeout: 30_000 }).toContain(text);
}

beforeAll(async () => {
  await ensureRendererBuilt();
  fs.mkdirSync(SHOTS, { recursive: true });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-e2e-'));
  const root = path.join(tmp, 'sessions');
  await generateSessionsRoot(root, { sessions: 4, payloads: 240, seed: 42, bigPayloadBytes: BIG_PAYLOAD_BYTES, imageShare: 0.08 });
  serve = await startServe({ roots: [root], home: path.join(tmp, 'home') });
  browser = await launchChromium();
  page = await openInspector(browser, serve.url, {
    before: (p) => {
      p.on('request', (r: Request) => requests.push(r.url()));
      p.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
      p.on('pageerror', (e) => consoleErrors.push(e.message));
    },
  });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('inspector in Chromium against spillway serve', () => {
  it('drops the token from the address bar and lists roots and sessions', async () => {
    expect(page.url()).not.toContain('token=');
    expect(page.url()).not.toContain('launch=');
    const sessions = page.locator('.session-row');
    await expect.poll(() => sessions.count(), { timeout: 60_000 }).toBeGreaterThanOrEqual(4);
  });

  it('opens a session and lists its payloads in the virtualized table', async () => {
    await page.locator('.session-row', { hasText: 'session-000' }).click();
    await expect.poll(async () => page.getByTestId('payload-count').textContent(), { timeout: 30_000 }).toMatch(/^\d[\d,]* payloads$/);
    const count = Number((await page.getByTestId('payload-count').textContent())!.replace(/\D/g, ''));
    expect(count).toBeGreaterThanOrEqual(60);
    // Virtualized: far fewer row elements than payloads once the list is long.
    await poll(() => page.locator('.prow[data-row-id]').count()).toBeGreaterThan(10);
    expect(await page.locator('.prow').count()).toBeLessThan(count);
    // Keyboard: focus the table, move down, open.
    await page.getByTestId('payload-table').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.detail[data-payload-id]');
    await page.waitForSelector('.viewer[data-state="ready"]');
    await shot('payloads-generated');
  });

  it('opens the 100 MB payload and scrolls through it in windows', async () => {
    await page.locator('.th', { hasText: 'Size' }).locator('button').click();
    await poll(() => page.locator('.th', { hasText: 'Size' }).getAttribute('aria-sort')).toBe('descending');
    const first = page.locator('.prow').first();
    await poll(() => first.locator('.col-size').textContent()).toBe('100 MB');
    const t0 = Date.now();
    await first.click();
    const viewer = page.locator('.viewer[data-state="ready"]');
    await viewer.waitFor();
    await expect.poll(() => page.locator('.viewer .view-lines').innerText(), { timeout: 20_000 }).not.toBe('');
    const openMs = Date.now() - t0;
    expect(openMs).toBeLessThan(15_000);
    const end0 = Number(await viewer.getAttribute('data-window-end'));
    expect(end0).toBeGreaterThan(0);
    expect(end0).toBeLessThan(BIG_PAYLOAD_BYTES / 10);
    await expectText(page.locator('.viewer-bar'), '100 MB');

    // Scroll: the wheel moves the editor; reaching the window's end swaps the next window in.
    const editor = page.locator('.viewer .monaco-editor').first();
    const box = (await editor.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const firstLine = () => page.locator('.viewer .line-numbers').first().textContent();
    const lineBefore = await firstLine();
    for (let i = 0; i < 5; i++) await page.mouse.wheel(0, 600);
    await poll(firstLine).not.toBe(lineBefore);
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Control+End');
      await page.waitForTimeout(300);
    }
    await poll(async () => Number(await page.locator('.viewer').getAttribute('data-window-end'))).toBeGreaterThan(end0);
    await poll(() => page.locator('.viewer .view-lines').innerText()).not.toBe('');

    // Jump to the middle with the scrubber and to the end.
    const scrubber = page.getByLabel('Position in payload');
    await scrubber.fill('500');
    await poll(async () => Number(await page.locator('.viewer').getAttribute('data-window-start'))).toBeGreaterThan(BIG_PAYLOAD_BYTES * 0.4);
    await page.locator('.viewer-bar').getByRole('button', { name: 'End' }).click();
    // The saved file may be the linked form, a little smaller than the original: the end is the file's end.
    const total = Number(await page.locator('.viewer').getAttribute('data-total'));
    expect(total).toBeGreaterThan(BIG_PAYLOAD_BYTES * 0.99);
    await poll(async () => Number(await page.locator('.viewer').getAttribute('data-window-end'))).toBe(total);
    await poll(() => page.locator('.viewer .view-lines').innerText()).not.toBe('');
    await shot('viewer-100mb');
  });

  it('shows every strategy side by side, and exact counts on demand', async () => {
    await page.locator('.prow').nth(3).click();
    await page.waitForSelector('.detail[data-payload-id]');
    await page.getByRole('tab', { name: 'Estimates' }).click();
    const table = page.getByTestId('estimates');
    await table.waitFor();
    await expectText(table, 'chars4');
    await expectText(table, 'calibrated');
    await page.getByRole('button', { name: /Count exact/ }).click();
    await expect.poll(() => table.locator('.badge.ok', { hasText: 'exact' }).count(), { timeout: 60_000 }).toBeGreaterThanOrEqual(2);
    await expectText(table, 'Why it is dense');
    await expectText(table, 'How far to trust the calibrated estimate');
    await poll(() => page.getByTestId('trust-note').innerText()).toMatch(/±\d+%/);
    await poll(() => (table.locator('td', { hasText: 'reference' })).count()).toBe(1);
    await shot('estimates');
  });

  it('shows extracted assets: images through <img>, linked-JSON references that jump to them', async () => {
    await page.locator('.filter-tool').fill('mcp__browser__screenshot');
    await poll(() => page.locator('.prow[data-row-id] .tool-name').first().textContent()).toBe('mcp__browser__screenshot');
    await poll(async () => (await page.locator('.prow[data-row-id] .tool-name').allTextContents()).every((t) => t === 'mcp__browser__screenshot')).toBe(true);
    await page.locator('.prow[data-row-id]').first().click();
    await page.waitForSelector('.detail[data-payload-id][aria-busy="false"]');
    // The linked form is its own tab when it sits next to the original; else the saved payload is the linked form.
    const linkedTab = page.getByRole('tab', { name: 'Linked' });
    await (await linkedTab.count() ? linkedTab : page.getByRole('tab', { name: 'Tree' })).click();
    const chip = page.locator('.asset-chip').first();
    await chip.waitFor({ timeout: 30_000 });
    await chip.click();
    const gallery = page.getByTestId('assets');
    await gallery.waitFor();
    await page.locator('.asset-card.highlight').waitFor();
    const img = gallery.locator('img').first();
    await img.waitFor();
    await poll(() => img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBeGreaterThan(0);
    expect(await img.getAttribute('src')).toMatch(/\/api\/asset\//);
    // Never inline SVG or HTML from a payload: images only as <img>.
    expect(await page.locator('.detail svg image, .detail foreignObject, .detail iframe').count()).toBe(0);
    await expectText(gallery, 'sha256');
    await shot('assets');
    await page.locator('.filter-tool').fill('');
    await poll(() => page.getByTestId('payload-count').textContent()).toMatch(/^6\d payloads$/);
  });

  it('re-runs a summary with a new focus and compares two runs side by side', async () => {
    await page.getByRole('tab', { name: /Summaries/ }).click();
    await page.getByTestId('summaries').waitFor();
    const runs = () => page.locator('[data-testid="runs"] tbody tr').count();
    const before = (await page.locator('[data-testid="runs"]').count()) ? await runs() : 0;
    const focus = page.locator('input[name="focus"]');
    await focus.fill('error messages and failing paths');
    await page.getByRole('button', { name: 'Run summary' }).click();
    await expect.poll(runs, { timeout: 60_000 }).toBe(before + 1);
    await focus.fill('exported function names');
    await page.getByRole('button', { name: 'Run summary' }).click();
    await expect.poll(runs, { timeout: 60_000 }).toBe(before + 2);
    const boxes = page.locator('[data-testid="runs"] tbody input[type="checkbox"]');
    await boxes.nth(0).check();
    await boxes.nth(1).check();
    const diff = page.getByTestId('run-diff');
    await diff.waitFor();
    await expectText(diff, 'focus: exported function names');
    await expectText(diff, 'focus: error messages and failing paths');
    await diff.scrollIntoViewIfNeeded();
    await shot('summaries');
  });

  it('moves the limit slider; spill folders without calls say so and show payload sizes only', async () => {
    await page.keyboard.press('Control+2');
    await page.getByTestId('histogram').waitFor({ timeout: 30_000 });
    const over = page.getByTestId('over-limit');
    const before = await over.textContent();
    // These generated sessions are spill folders: no model calls, so no replay to show, and the view says why.
    await expectText(page.getByTestId('tuner-no-calls'), 'no answer in tokens × calls');
    await expectText(page.getByTestId('tuner-payloads-only'), 'no calls to multiply');
    await expectText(page.getByTestId('tuner-assumptions'), 'tokens × the calls it stays in context');
    const slider = page.getByTestId('limit-slider');
    await slider.focus();
    for (let i = 0; i < 120; i++) await page.keyboard.press('ArrowLeft');
    await poll(() => over.textContent()).not.toBe(before);
    await expectText(page.getByTestId('config-snippet'), '"limitTokens"');
    // The context-window rule: 10% of 50,000 is 5,000 (between 2,000 and 12,000).
    await page.getByLabel('Context window tokens').fill('50000');
    await expectText(page.getByTestId('config-snippet'), '"limitTokens": 5000');
    await shot('limit-tuner');
  });

  it('shows the waste report for the session, each call row with its arguments', async () => {
    await page.keyboard.press('Control+3');
    const waste = page.getByTestId('waste');
    await waste.waitFor({ timeout: 30_000 });
    await expectText(waste, 'By tool');
    await expectText(waste, 'payload sizes only');
    expect(await waste.getByTestId('call-args').count()).toBeGreaterThan(0);
    await shot('waste-report');
  });

  it('analyses a dropped file without touching it', async () => {
    await page.keyboard.press('Control+1');
    const content = JSON.stringify({ content: [{ type: 'text', text: 'row '.repeat(30_000) }] });
    const dt = await page.evaluateHandle((text) => {
      const d = new DataTransfer();
      d.items.add(new File([text], 'tool-result.json', { type: 'application/json' }));
      return d;
    }, content);
    await page.dispatchEvent('.app', 'dragenter', { dataTransfer: dt });
    await (page.locator('.drop-overlay')).waitFor({ state: 'visible' });
    await shot('drop-overlay');
    await page.dispatchEvent('.app', 'drop', { dataTransfer: dt });
    const analysis = page.getByTestId('analysis');
    await analysis.waitFor({ timeout: 60_000 });
    await expectText(analysis, 'tool-result.json');
    await expectText(analysis, 'application/json');
    await (analysis.locator('.badge.action-spill')).waitFor({ state: 'visible' });
    await shot('analyze');
  });

  it('searches every payload with Ctrl+K', async () => {
    await page.keyboard.press('Control+1');
    await page.keyboard.press('Control+k');
    const input = page.getByRole('combobox', { name: /Search every payload/ });
    await input.fill('function');
    await expect.poll(() => page.locator('.palette-list li').count(), { timeout: 20_000 }).toBeGreaterThan(0);
    await shot('search');
    await page.keyboard.press('Enter');
    await poll(() => (page.locator('.palette')).count()).toBe(0);
    await page.waitForSelector('.detail[data-payload-id]');
  });

  it('renders the light theme from the OS setting', async () => {
    const p = await openInspector(browser, await serve.freshUrl(), { colorScheme: 'light', before: (x) => x.on('request', (r) => requests.push(r.url())) });
    const light = p.context();
    await p.locator('.session-row').first().click();
    await p.locator('.prow[data-row-id]').nth(2).click();
    await p.waitForSelector('.viewer[data-state="ready"]');
    const bg = await p.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe('rgb(247, 247, 248)');
    await shot('payloads-light', p);
    await light.close();
  });

  it('reaches every view of the registry by its shortcut, its rail button and the command palette', async () => {
    const shown = () => page.locator('main').getAttribute('aria-label');
    // Backwards through the list, so each way is taken away from the view it leads to.
    for (const v of [...VIEWS].reverse()) {
      await page.keyboard.press('Control+1');
      await page.keyboard.press(`Control+${v.key}`);
      await poll(shown).toBe(v.id);
      await page.keyboard.press(v.id === 'payloads' ? 'Control+2' : 'Control+1');
      await page.locator(`nav[aria-label="Views"] button[aria-label="${v.label}"]`).click();
      await poll(shown).toBe(v.id);
      await page.keyboard.press(v.id === 'payloads' ? 'Control+2' : 'Control+1');
      await page.keyboard.press('Control+k');
      await page.locator('.palette input').fill(`>${v.command}`);
      await page.keyboard.press('Enter');
      await poll(shown).toBe(v.id);
    }
    expect(consoleErrors).toEqual([]);
  });

  it('sends no request off localhost, and the CSP blocks one that tries', async () => {
    const offHost = requests.filter((u) => !u.startsWith(serve.origin + '/') && !u.startsWith('data:') && !u.startsWith('blob:'));
    expect(offHost).toEqual([]);
    expect(requests.length).toBeGreaterThan(10);
    const csp = await page.evaluate(async () => (await fetch(location.href)).headers.get('content-security-policy'));
    expect(csp).toContain("default-src 'self'");
    const outcome = await page.evaluate(async () => {
      try {
        await fetch('https://example.com/');
        return 'fetched';
      } catch {
        return 'blocked';
      }
    });
    expect(outcome).toBe('blocked');
    // The only CSP violation in the whole run is the fetch just tried.
    const violations = consoleErrors.filter((e) => /Content Security Policy/i.test(e));
    expect(violations.length).toBeGreaterThan(0);
    expect(violations.filter((v) => !v.includes('https://example.com/'))).toEqual([]);
  });
});
