/// <reference lib="dom" />
/**
 * Nothing the payload list or the sidebar shows is cut off at the two window sizes people use
 * (1280×800, 1920×1080): the action badge of each row, the "≥ tokens" filter and the sidebar's client
 * badge ("Spillway", "Claude Code"). Read from the DOM in headless Chromium against `spillway serve`:
 * an element is clipped when its content is wider than its box (scrollWidth > clientWidth, which is
 * what an ellipsis or an overflow:hidden cell hides), when an input's placeholder is wider than the
 * room inside it, or when its box leaves the pane that holds it. At 1280×800 the list had five
 * columns in a four-column grid (the ledger's Entered and Full columns came after the narrow layout),
 * so the action cell dropped to a hidden second row.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSessionsRoot } from '../helpers/gen-sessions.js';
import { ensureRendererBuilt, launchChromium, REPO_ROOT, startServe, type ServeProcess } from './helpers/serve.js';

const TIMELINE_ROOT = path.join(REPO_ROOT, 'test', 'index', 'fixtures', 'timeline', 'claude-code-pct5');
const SIZES = [
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
] as const;

let serve: ServeProcess;
let browser: Browser;
let tmp: string;

beforeAll(async () => {
  await ensureRendererBuilt();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-clip-e2e-'));
  const generated = path.join(tmp, 'sessions');
  // Payloads of every action, so "inline-assets" (the widest badge) is among the rows.
  await generateSessionsRoot(generated, { sessions: 1, payloads: 24, seed: 7, imageShare: 0.3 });
  serve = await startServe({ roots: [generated, TIMELINE_ROOT], home: path.join(tmp, 'home'), extraArgs: ['--no-default-roots'] });
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

interface Clip {
  what: string;
  why: string;
}

/** Every element matched by `selector` that is clipped, with the reason, read in the page. */
async function clipped(page: Page, selector: string, paneSelector: string, opts: { hiddenOk?: boolean } = {}): Promise<{ seen: number; clips: Clip[] }> {
  return page.evaluate(
    ([sel, paneSel, hiddenOk]) => {
      const clips: Array<{ what: string; why: string }> = [];
      const els = Array.from(document.querySelectorAll<HTMLElement>(sel));
      const ctx = document.createElement('canvas').getContext('2d')!;
      for (const el of els) {
        const what = `${sel} "${(el.textContent || (el as HTMLInputElement).placeholder || '').trim()}"`;
        const r = el.getBoundingClientRect();
        const style = getComputedStyle(el);
        if (style.display === 'none' || r.width === 0) {
          if (hiddenOk) continue;
          clips.push({ what, why: 'not shown (no box)' });
          continue;
        }
        if (el.scrollWidth > el.clientWidth + 1) clips.push({ what, why: `content ${el.scrollWidth} px in a ${el.clientWidth} px box` });
        if (el instanceof HTMLInputElement && el.placeholder) {
          ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
          // A number field keeps room for its spin button (about 15 px in Chromium) even when it is not drawn.
          const spin = el.type === 'number' ? 16 : 0;
          const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - spin;
          const need = ctx.measureText(el.placeholder).width;
          if (need > room + 0.5) clips.push({ what, why: `placeholder needs ${need.toFixed(0)} px, has ${room.toFixed(0)}` });
        }
        // Every box up to the pane must hold it across (an overflow:hidden cell or row clips what sticks out;
        // up and down, the list scrolls its rows out of view on purpose).
        const pane = el.closest(paneSel);
        for (let p = el.parentElement; p && p !== pane?.parentElement; p = p.parentElement) {
          const ov = getComputedStyle(p).overflowX;
          if (ov === 'visible') continue;
          const q = p.getBoundingClientRect();
          if (r.left < q.left - 0.5 || r.right > q.right + 0.5) {
            clips.push({ what, why: `box ${r.left.toFixed(0)}–${r.right.toFixed(0)} outside its ${p.className || p.tagName} ${q.left.toFixed(0)}–${q.right.toFixed(0)}` });
            break;
          }
        }
      }
      return { seen: els.length, clips };
    },
    [selector, paneSelector, opts.hiddenOk ?? false] as const,
  );
}

describe.each(SIZES)('at $width×$height', (size) => {
  it('the action badges, the "≥ tokens" filter and the sidebar badges are whole', async () => {
    const context = await browser.newContext({ viewport: size, colorScheme: 'light' });
    const page = await context.newPage();
    try {
      await page.goto(await serve.freshUrl());
      await page.waitForSelector('.app[data-ready="true"]', { timeout: 60_000 });
      await page.locator('.session-row').nth(1).waitFor({ timeout: 60_000 });
      // Both sessions' badges carry their payload figures once listed.
      await expect.poll(() => page.locator('[data-testid="session-entered"]').count(), { timeout: 60_000 }).toBe(2);

      const sidebar = await clipped(page, '.session-row [data-testid="client-badge"]', '.sidebar');
      expect(sidebar.seen).toBe(2);
      expect(sidebar.clips).toEqual([]);
      const meta = await clipped(page, '.session-meta > *', '.sidebar');
      expect(meta.clips).toEqual([]);

      for (const session of ['.session-row:not(:has(.context-warning))', '.session-row:has(.context-warning)']) {
        await page.locator(session).first().click();
        await page.locator('.prow[data-row-id]').first().waitFor({ timeout: 60_000 });
        await page.locator('.prow[data-row-id]').first().click();
        await page.locator('.detail[data-payload-id]').waitFor();
        const filter = await clipped(page, '.filter-bar input, .filter-bar select', '.list-pane');
        expect(filter.seen).toBe(5);
        expect(filter.clips).toEqual([]);
        const actions = await clipped(page, '.prow[data-row-id] .col-action .badge', '.list-pane');
        expect(actions.seen).toBeGreaterThan(0);
        expect(actions.clips).toEqual([]);
        // A narrow list hides whole columns on purpose; the ones it shows are whole.
        const heads = await clipped(page, '.ptable-head .th-btn, .ptable-head .th-label', '.list-pane', { hiddenOk: true });
        expect(heads.seen).toBe(8);
        expect(heads.clips).toEqual([]);
        // The figures are whole too (a number cut to "12." misleads more than a missing one).
        const figures = await clipped(page, '.prow[data-row-id] .num', '.list-pane', { hiddenOk: true });
        expect(figures.clips).toEqual([]);
      }
    } finally {
      await context.close();
    }
  }, 180_000);
});
