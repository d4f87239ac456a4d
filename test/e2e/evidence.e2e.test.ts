/// <reference lib="dom" />
/**
 * Issue 30, items 2 and 5 (compare), in headless Chromium against a real `spillway serve` over the
 * realistic Claude Code session the real binary wrote (spills read back by Read with an offset, grep
 * in Bash, spillway_read and spillway_grep): the Tuner's Evidence panel shows, per tool, the figures
 * the service's toolEvidence gives, and its before/after table those of compareSessions. Every
 * figure is read from the DOM and checked against the service's (never a number written here); every
 * disagreement is listed before the test fails. Screenshot: docs/screenshots/evidence-panel.png.
 */
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CompareSessionsResponse, ToolEvidenceResponse } from '../../src/service/contract.js';
import { formatInt } from '../../app/lib/format.js';
import { REALISTIC_CLAUDE_ROOTS, SHOTS, agreement, serveSuite } from './helpers/suite.js';

const suite = serveSuite('evidence', () => REALISTIC_CLAUDE_ROOTS, { reindex: true });
let evidence: ToolEvidenceResponse;
let byRule: CompareSessionsResponse;

beforeAll(async () => {
  evidence = await suite.call<ToolEvidenceResponse>('toolEvidence', {});
  byRule = await suite.call<CompareSessionsResponse>('compareSessions', { by: 'rule' });
});

const pct = (v: number | null) => (v === null ? '–' : `${Math.round(v * 100)}%`);

describe('the Evidence panel', () => {
  it('shows per tool and per rule group the figures the service computed', async () => {
    // The session's spills were read back (test/index/readback.test.ts): the figures are not all zero.
    expect(evidence.totals.spillsReadBack).toBeGreaterThan(0);
    expect(evidence.totals.readBackTokens).toBeGreaterThan(0);
    const page = await (await suite.browser.newContext({ viewport: { width: 1920, height: 1080 }, colorScheme: 'light' })).newPage();
    const { disagree, same } = agreement();
    await page.goto(await suite.serve.freshUrl());
    await page.waitForSelector('.app[data-ready="true"]', { timeout: 60_000 });
    await page.keyboard.press('Control+2');
    const panel = page.getByTestId('evidence-panel');
    await panel.getByTestId('evidence-tools').waitFor({ timeout: 60_000 });
    const cells = (row: string, fields: string[]) =>
      page.evaluate(
        ([sel, fs]) => {
          const tr = document.querySelector<HTMLElement>(sel);
          if (!tr) return null;
          return Object.fromEntries(fs.map((f) => [f, (tr.querySelector(`[data-field="${f}"]`)?.firstChild?.textContent ?? '').trim()]));
        },
        [row, fields] as const,
      );
    const t = evidence.totals;
    same('totals', ((await panel.getByTestId('evidence-totals').textContent()) ?? '').trim(), `${formatInt(t.sessions)} sessions · ${formatInt(t.calls)} calls · ${formatInt(t.spills)} spills · ${formatInt(t.spillsReadBack)} read back (${formatInt(t.readBackCalls)} calls, ${formatInt(t.readBackTokens)} tokens)`);
    for (const x of [...evidence.tools, ...evidence.servers]) {
      const got = await cells(`[data-testid="evidence-tools"] tr[data-tool="${x.tool}"]`, ['calls', 'spills', 'spillRate', 'spillsReadBack', 'readBackRate', 'readBackCalls', 'readBackTokens', 'sessions']);
      if (!got) {
        disagree.push(`${x.tool}: no row`);
        continue;
      }
      same(`${x.tool} calls`, got.calls, formatInt(x.calls));
      same(`${x.tool} spills`, got.spills, formatInt(x.spills));
      same(`${x.tool} spill rate`, got.spillRate, pct(x.spillRate));
      same(`${x.tool} read back`, got.spillsReadBack, formatInt(x.spillsReadBack));
      same(`${x.tool} read-back rate`, got.readBackRate, pct(x.readBackRate));
      same(`${x.tool} read-back calls`, got.readBackCalls, formatInt(x.readBackCalls));
      same(`${x.tool} read-back tokens`, got.readBackTokens, formatInt(x.readBackTokens));
      same(`${x.tool} sessions`, got.sessions, formatInt(x.sessions));
    }
    // The suggestions: as many as the service gave (none on one session: below the thresholds), and the thresholds said.
    const sugg = panel.getByTestId('evidence-suggestions');
    same('suggestions', await sugg.locator('li').count(), evidence.suggestions.length);
    expect((await sugg.textContent()) ?? '').toContain(`at least ${formatInt(evidence.thresholds.minSpills)} spills in ${formatInt(evidence.thresholds.minSessions)} sessions`);

    await panel.getByTestId('evidence-groups').waitFor({ timeout: 30_000 });
    expect(byRule.groups.length).toBeGreaterThan(0);
    for (const g of byRule.groups) {
      const got = await cells(`[data-testid="evidence-groups"] tr[data-group="${g.label.replace(/"/g, '\\"')}"]`, ['sessions', 'calls', 'spillRate', 'readBackRate', 'readBackTokens', 'keptOutTokens', 'enteredTokens']);
      if (!got) {
        disagree.push(`group ${g.label}: no row`);
        continue;
      }
      same(`${g.label} sessions`, got.sessions, formatInt(g.sessions));
      same(`${g.label} calls`, got.calls, formatInt(g.calls));
      same(`${g.label} spill rate`, got.spillRate, pct(g.spillRate));
      same(`${g.label} read-back rate`, got.readBackRate, pct(g.readBackRate));
      same(`${g.label} read-back tokens`, got.readBackTokens, formatInt(g.readBackTokens));
      same(`${g.label} kept out`, got.keptOutTokens, formatInt(g.keptOutTokens));
      same(`${g.label} entered`, got.enteredTokens, formatInt(g.enteredTokens));
    }
    await panel.scrollIntoViewIfNeeded();
    await panel.screenshot({ path: path.join(SHOTS, 'evidence-panel.png') });

    // By date: the session's day splits nothing before it; the table follows the service's answer.
    const day = byRule.groups.map((g) => g.from!).sort()[0]!.slice(0, 10);
    const byDate = await suite.call<CompareSessionsResponse>('compareSessions', { by: 'date', since: day });
    await page.getByLabel('Group sessions by').selectOption('date');
    await page.getByLabel('Compare from date').fill(day);
    await expect.poll(async () => page.locator('[data-testid="evidence-groups"] tr[data-group]').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-group'))), { timeout: 30_000 }).toEqual(byDate.groups.map((g) => g.label));
    for (const g of byDate.groups) {
      const got = await cells(`[data-testid="evidence-groups"] tr[data-group="${g.label}"]`, ['calls', 'spillRate', 'readBackRate']);
      same(`${g.label} calls (by date)`, got?.calls, formatInt(g.calls));
      same(`${g.label} spill rate (by date)`, got?.spillRate, pct(g.spillRate));
      same(`${g.label} read-back rate (by date)`, got?.readBackRate, pct(g.readBackRate));
    }
    expect(disagree).toEqual([]);
    expect(await page.getByRole('alert').count()).toBe(0);
  });
});
