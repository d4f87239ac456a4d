/// <reference lib="dom" />
/**
 * Issue 29, item 6: the inspector at the two window sizes people use (1280×800, 1920×1080), in
 * headless Chromium against `spillway serve`. Widths are read from the DOM:
 * - the payload pane keeps room (at 1400×900 it was ~480 px beside a fixed 600 px list);
 * - "Model saw" and a summary comparison never squeeze into two ~200 px columns;
 * - the Timeline's legend gives each part its own share (not the running stacked total), says which
 *   call it describes before any hover, its call rows show their arguments and open the payload;
 * - the Timeline's header names the session as the sidebar does.
 * Screenshots go to docs/screenshots/ with the size in their name.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { generateSessionsRoot } from '../helpers/gen-sessions.js';
import { REPO_ROOT } from './helpers/serve.js';
import { SHOTS, WALK_SIZES, serveSuite } from './helpers/suite.js';

const TIMELINE_ROOT = path.join(REPO_ROOT, 'test', 'index', 'fixtures', 'timeline', 'claude-code-pct5');
/** What "readable" means here: the payload pane, and each column of a two-column card. */
const DETAIL_MIN_PX = 560;
const COLUMN_MIN_PX = 400;

const suite = serveSuite('layout', async (tmp) => {
  const generated = path.join(tmp, 'sessions');
  await generateSessionsRoot(generated, { sessions: 1, payloads: 24, seed: 29 });
  return [generated, TIMELINE_ROOT];
});

const widthOf = async (page: Page, selector: string) => (await page.locator(selector).first().boundingBox())?.width ?? 0;

async function open(size: { width: number; height: number }): Promise<Page> {
  const context = await suite.browser.newContext({ viewport: size, colorScheme: 'light' });
  const page = await context.newPage();
  await page.goto(await suite.serve.freshUrl());
  await page.waitForSelector('.app[data-ready="true"]', { timeout: 60_000 });
  await page.locator('.session-row').first().waitFor({ timeout: 60_000 });
  return page;
}

describe.each(WALK_SIZES)('at $width×$height', (size) => {
  const tag = `${size.width}x${size.height}`;

  it('the payload pane, "Model saw" and a summary comparison stay readable', async () => {
    const page = await open(size);
    try {
      // The generated session (the other one is the Claude Code transcript with the context warning).
      await page.locator('.session-row:not(:has(.context-warning))').first().click();
      await page.locator('.prow[data-row-id]').first().click();
      await page.locator('.detail[data-payload-id]').waitFor();
      const detail = await widthOf(page, '.detail');
      const list = await widthOf(page, '.list-pane');
      expect(detail, `payload pane beside a ${Math.round(list)} px list`).toBeGreaterThanOrEqual(DETAIL_MIN_PX);
      // The list still shows the tool and its arguments, not a clipped first column.
      expect(await widthOf(page, '.prow[data-row-id] .col-tool')).toBeGreaterThanOrEqual(120);
      await page.screenshot({ path: path.join(SHOTS, `payloads-${tag}.png`) });

      await page.getByRole('tab', { name: 'Model saw' }).click();
      const cards = page.locator('[data-testid="model-saw"] > .card');
      await cards.first().waitFor();
      for (let i = 0; i < (await cards.count()); i++) {
        expect((await cards.nth(i).boundingBox())!.width, `"Model saw" column ${i}`).toBeGreaterThanOrEqual(COLUMN_MIN_PX);
      }
      await page.screenshot({ path: path.join(SHOTS, `model-saw-${tag}.png`) });

      await page.getByRole('tab', { name: /Summaries/ }).click();
      await page.getByTestId('summaries').waitFor();
      const focus = page.locator('input[name="focus"]');
      // Runs of this size only (the other size's runs of the same payload are listed too).
      for (const f of [`error messages (${tag})`, `names and ids (${tag})`]) {
        await focus.fill(f);
        await page.getByRole('button', { name: 'Run summary' }).click();
        await expect.poll(() => page.locator('[data-testid="runs"] tbody tr', { hasText: f }).count(), { timeout: 60_000 }).toBe(1);
      }
      for (const f of [`error messages (${tag})`, `names and ids (${tag})`]) {
        await page.locator('[data-testid="runs"] tbody tr', { hasText: f }).locator('input[type="checkbox"]').check();
      }
      const diff = page.getByTestId('run-diff');
      await diff.waitFor();
      const cols = page.locator('.run-diff-col');
      expect(await cols.count()).toBe(2);
      for (let i = 0; i < 2; i++) expect((await cols.nth(i).boundingBox())!.width, `comparison column ${i}`).toBeGreaterThanOrEqual(COLUMN_MIN_PX);
      await diff.scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(SHOTS, `summaries-${tag}.png`) });
    } finally {
      await page.context().close();
    }
  }, 180_000);

  it("the Timeline: the session's title, a legend of each part's own share, call rows with arguments that open", async () => {
    const page = await open(size);
    try {
      const row = page.locator('.session-row:has(.context-warning)').first();
      await row.waitFor({ timeout: 60_000 });
      const sidebarTitle = (await row.getByTestId('session-title').textContent())!.trim();
      await row.click();
      await page.locator('button[aria-label="Context timeline"]').click();
      await page.getByTestId('timeline-chart').waitFor({ timeout: 60_000 });
      await expect.poll(() => page.locator('.timeline-chart canvas').count()).toBeGreaterThan(0);

      // One title: the sidebar's, never the transcript's folder or file name.
      const scope = (await page.getByTestId('view-scope').textContent())!;
      expect(scope).toBe(`Session: ${sidebarTitle}`);
      expect(scope).not.toMatch(/\.jsonl|^Session: -/);

      // The legend before any hover: the peak call, named, and a number for every part (not "--").
      const legend = async () =>
        page.locator('.u-legend .u-series').evaluateAll((rows) =>
          rows.map((r) => ({ label: r.querySelector('.u-label')?.textContent ?? '', value: r.querySelector('.u-value')?.textContent ?? '' })),
        );
      await page.mouse.move(0, 0);
      const still = await legend();
      expect(still[0]!.value).toMatch(/^\d+ \(peak\)$/);
      for (const s of still) expect(s.value, s.label).not.toBe('--');
      const num = (v: string) => Number(v.replace(/,/g, ''));
      const measured = num(still.find((s) => s.label === 'context (measured)')!.value);
      const parts = still.filter((s) => !['call', 'context (measured)', 'window', 'trigger', 'replay (simulated)'].includes(s.label));
      expect(parts.length).toBeGreaterThan(1);
      // Own shares: each below the context, and together no more than it (running totals summed far past it).
      const sum = parts.reduce((a, s) => a + num(s.value), 0);
      expect(sum).toBeGreaterThan(0);
      expect(sum).toBeLessThanOrEqual(measured);

      // Another limit redraws the chart in place: the same plot, not a new one (a rebuilt chart lost the
      // hovered call and, mid-rebuild, had no plot area to point at).
      await page.locator('.timeline-chart .u-over').evaluate((e) => e.setAttribute('data-kept', '1'));
      const peakBefore = await page.getByTestId('timeline-chart').getAttribute('data-replay-peak');
      await page.locator('[data-testid^="timeline-preset-"]').first().click();
      await expect.poll(() => page.getByTestId('timeline-chart').getAttribute('data-replay-peak'), { timeout: 30_000 }).not.toBe(peakBefore);
      expect(await page.locator('.timeline-chart .u-over[data-kept="1"]').count()).toBe(1);

      // Hovering a call: the x value is that call, and the parts are still its own.
      const chart = (await page.locator('.timeline-chart .u-over').boundingBox())!;
      await page.mouse.move(chart.x + chart.width * 0.3, chart.y + chart.height / 2);
      await expect.poll(async () => (await legend())[0]!.value).toMatch(/^\d+$/);
      const hovered = await legend();
      const hoveredParts = hovered.filter((s) => parts.some((p) => p.label === s.label)).reduce((a, s) => a + num(s.value), 0);
      expect(hoveredParts).toBeLessThanOrEqual(num(hovered.find((s) => s.label === 'context (measured)')!.value));
      await page.mouse.move(0, 0);
      await page.screenshot({ path: path.join(SHOTS, `timeline-${tag}.png`), fullPage: false });

      // The costliest results name each call with its arguments, and a click opens that payload.
      const costRows = page.locator('section.card:has(h3:text("Costliest results")) tbody tr[data-payload-id]');
      await expect.poll(() => costRows.locator('[data-testid="call-args"]').count(), { timeout: 30_000 }).toBe(await costRows.count());
      expect(await costRows.count()).toBeGreaterThan(0);
      const first = costRows.first();
      const id = await first.getAttribute('data-payload-id');
      const args = (await first.locator('[data-testid="call-args"]').textContent())!;
      expect(args.length).toBeGreaterThan(2);
      await first.scrollIntoViewIfNeeded();
      await page.screenshot({ path: path.join(SHOTS, `timeline-costs-${tag}.png`) });
      await first.click();
      await page.locator(`.detail[data-payload-id="${id}"]`).waitFor({ timeout: 30_000 });
      expect(await page.locator('.detail-input').textContent()).toContain(args.slice(0, 20));
    } finally {
      await page.context().close();
    }
  }, 180_000);
});
