/// <reference lib="dom" />
/**
 * Issue 30, item 1, in headless Chromium against a real `spillway serve` over the REALISTIC Claude
 * Code session the real binary wrote (test/clients/fixtures/realistic/claude-code): a Read spill read
 * back by Read with an offset, a lockfile spill by grep in Bash, an MCP read's spill by spillway_read
 * and spillway_grep. At 1280×800 and 1920×1080 (docs/screenshots/readback-*.png):
 * - each spilled call's header says "Read back N×" with the parts the index linked, each link opening
 *   the reading call, whose tokens are the table's Entered for that call; the reader's header names
 *   the spill it read and leads back;
 * - the Timeline marks the reading calls on the chart, lists them with the Timeline's tokens (the same
 *   figures), shows "reads back <spill tool> <part>" under the picked call, and its "open the spill"
 *   opens the call the spill answered, which lists the same read-back;
 * - nothing of it is cut off at either size.
 * Every disagreement is listed before the test fails.
 */
import type { Page } from 'playwright-core';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PayloadRow, ReadBack, SessionInfo } from '../../src/service/contract.js';
import { REALISTIC_CLAUDE_ROOTS, SHOTS, WALK_SIZES, agreement, claudeSessionRow, serveSuite, shortTokens as short } from './helpers/suite.js';

// A scan asked for returns once the index is whole (read-backs are linked inside it).
const suite = serveSuite('readback', () => REALISTIC_CLAUDE_ROOTS, { reindex: true });
/** What the service says, to check the page against (never a number written here). */
let session: SessionInfo;
let rows: PayloadRow[];
let readBacks: ReadBack[];

beforeAll(async () => {
  session = (await suite.call<SessionInfo[]>('listSessions', {})).find((s) => s.kind === 'claude-code')!;
  rows = (await suite.call<{ rows: PayloadRow[] }>('listPayloads', { sessionId: session.id, limit: 1000 })).rows;
  readBacks = (await suite.call<{ readBacks?: ReadBack[] }>('getTimeline', { sessionId: session.id })).readBacks ?? [];
});

/** Elements under `selector` whose content is wider than their box, or that stick out of a box that clips. */
function clipped(page: Page, selector: string): Promise<string[]> {
  return page.evaluate((sel) => {
    const out: string[] = [];
    for (const el of Array.from(document.querySelectorAll<HTMLElement>(sel))) {
      const what = `${sel} "${(el.textContent ?? '').trim().slice(0, 60)}"`;
      const r = el.getBoundingClientRect();
      if (r.width === 0) {
        out.push(`${what}: not shown`);
        continue;
      }
      if (el.scrollWidth > el.clientWidth + 1) out.push(`${what}: content ${el.scrollWidth} px in a ${el.clientWidth} px box`);
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
        if (getComputedStyle(p).overflowX === 'visible') continue;
        const q = p.getBoundingClientRect();
        if (r.left < q.left - 0.5 || r.right > q.right + 0.5) {
          out.push(`${what}: ${r.left.toFixed(0)}–${r.right.toFixed(0)} outside its ${p.className || p.tagName} ${q.left.toFixed(0)}–${q.right.toFixed(0)}`);
          break;
        }
      }
    }
    return out;
  }, selector);
}

describe.each(WALK_SIZES)('read-backs of the realistic Claude Code session at $width×$height', (size) => {
  const tag = `${size.width}x${size.height}`;
  const shot = (page: Page, view: string) => page.screenshot({ path: path.join(SHOTS, `readback-${view}-${tag}.png`) });

  it('the header lists each read-back and opens its call; the Timeline marks the readers and opens the spill; nothing is cut off', async () => {
    // The index linked the four reads the run made (test/index/readback.test.ts checks which).
    expect(readBacks.map((r) => r.tool)).toEqual(['Read', 'Bash', 'mcp__fs__spillway_read', 'mcp__fs__spillway_grep']);
    const context = await suite.browser.newContext({ viewport: size, colorScheme: 'light' });
    const page = await context.newPage();
    const { disagree, same } = agreement();
    try {
      const sessionRow = await claudeSessionRow(page, await suite.serve.freshUrl());
      await sessionRow.click();
      await page.locator('.prow[data-row-id]').first().waitFor({ timeout: 60_000 });

      // Each spilled call that was read back: its header lists the read-backs, in the index's order.
      const spilled = [...new Set(readBacks.map((r) => r.spillCalledIn!.payloadId))];
      expect(spilled).toHaveLength(3);
      for (const id of spilled) {
        const mine = readBacks.filter((r) => r.spillCalledIn!.payloadId === id);
        await page.locator(`.prow[data-row-id="${id}"]`).click();
        const box = page.locator(`.detail[data-payload-id="${id}"] [data-testid="read-backs"]`);
        await box.waitFor({ timeout: 30_000 });
        same(`${id}: header's count`, await box.getAttribute('data-count'), String(mine.length));
        expect(await box.textContent()).toContain(`Read back ${mine.length}×`);
        const links = box.getByTestId('read-back');
        for (const [i, rb] of mine.entries()) {
          same(`${id}: read-back ${i}'s call`, await links.nth(i).getAttribute('data-reader-id'), rb.readerId);
          // Its tokens are the reader's Entered in the table (the ledger's one figure).
          const reader = rows.find((r) => r.id === rb.readerId)!;
          const by = ((await links.nth(i).locator('xpath=..').textContent()) ?? '').replace(/\s+/g, ' ');
          same(`${id}: read-back ${i}'s tool and tokens`, by.includes(`${rb.tool} · ${short(reader.entered!)}`), true);
        }
        if (mine.length === 2) await shot(page, 'payload');
        same(`${id}: read-backs cut off`, (await clipped(page, '[data-testid="read-backs"], [data-testid="read-backs"] li, [data-testid="read-back"], .readback-by')).join('; '), '');
      }
      // A link opens the reading call.
      const first = readBacks[0]!;
      await page.locator(`.prow[data-row-id="${first.spillCalledIn!.payloadId}"]`).click();
      await page.locator(`[data-testid="read-back"][data-reader-id="${first.readerId}"]`).click();
      await page.locator(`.detail[data-payload-id="${first.readerId}"]`).waitFor({ timeout: 30_000 });
      const readerEntered = await page.locator(`.detail[data-payload-id="${first.readerId}"] [data-testid="entered"]`).getAttribute('data-entered');
      same("the first reader's header entered vs its read-back's", Number(readerEntered), first.entered);
      // Its header names the spill it read, and leads back to the call the spill answered.
      const back = page.locator(`.detail[data-payload-id="${first.readerId}"] [data-testid="reads-back-spill"]`);
      same("the reader's reads-back", await back.count(), 1);
      await shot(page, 'reader');
      await back.click();
      await page.locator(`.detail[data-payload-id="${first.spillCalledIn!.payloadId}"] [data-testid="read-backs"]`).waitFor({ timeout: 30_000 });

      // The Timeline: the readers marked on the chart, listed with the Timeline's tokens.
      await page.locator('button[aria-label="Context timeline"]').click();
      const chart = page.getByTestId('timeline-chart');
      await chart.waitFor({ timeout: 90_000 });
      const card = page.getByTestId('timeline-readbacks');
      await card.waitFor({ timeout: 30_000 });
      const t = await suite.call<{ turns: Array<{ tools: Array<{ payloadId?: string; tokens: number }> }> }>('getTimeline', { sessionId: session.id });
      const turnOf = (id: string) => t.turns.findIndex((x) => x.tools.some((y) => y.payloadId === id));
      same('chart marks', await chart.getAttribute('data-readback-calls'), [...new Set(readBacks.map((r) => turnOf(r.readerId)))].sort((a, b) => a - b).join(','));
      await shot(page, 'timeline');
      const cardRows = card.getByTestId('timeline-readback');
      same('Timeline read-back rows', await cardRows.count(), readBacks.length);
      for (const [i, rb] of readBacks.entries()) {
        const cells = await cardRows.nth(i).locator('td').allTextContents();
        const tl = t.turns[turnOf(rb.readerId)]!.tools.find((y) => y.payloadId === rb.readerId)!;
        same(`Timeline row ${i}: call`, cells[0]!.trim(), String(turnOf(rb.readerId)));
        same(`Timeline row ${i}: tokens vs the Timeline's own for that call`, cells[3]!.trim(), short(tl.tokens));
        same(`Timeline row ${i}: tokens vs the table's Entered`, cells[3]!.trim(), short(rows.find((r) => r.id === rb.readerId)!.entered!));
        same(`Timeline row ${i}: reads back`, cells[2]!.includes(rb.spillTool!), true);
      }
      // The picked call shows what it read back, and "open the spill" opens the call the spill answered.
      await cardRows.nth(0).locator('td').first().getByRole('button').click();
      const mark = page.getByTestId('timeline-turn').getByTestId('timeline-readback-mark');
      await mark.first().waitFor();
      expect(await mark.first().textContent()).toContain(`reads back ${first.spillTool}`);
      await card.scrollIntoViewIfNeeded();
      await page.getByTestId('timeline-turn').scrollIntoViewIfNeeded();
      await shot(page, 'timeline-calls');
      same('Timeline read-backs cut off', (await clipped(page, '[data-testid="timeline-readbacks"] .card-head > *, [data-testid="timeline-readback"] td, [data-testid="timeline-readback"] button, [data-testid="timeline-readback-mark"], [data-testid="timeline-open-spill"]')).join('; '), '');
      await mark.first().getByTestId('timeline-open-spill').click();
      const spillCall = page.locator(`.detail[data-payload-id="${first.spillCalledIn!.payloadId}"]`);
      await spillCall.waitFor({ timeout: 30_000 });
      await spillCall.locator(`[data-testid="read-back"][data-reader-id="${first.readerId}"]`).waitFor({ timeout: 30_000 });
    } finally {
      await context.close();
    }
    expect(disagree).toEqual([]);
  }, 240_000);
});
