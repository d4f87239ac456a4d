/// <reference lib="dom" />
/**
 * The joined session view in Chromium: a real Claude Code session with the Spillway hook (the
 * model double asks for a large Read and a small one), then `spillway serve` on that HOME with its
 * default folders (the agent's transcripts, read-only, and app data's Spillway sessions). The
 * transcript's tool call and the hook's spill are one row: with the spill's summary, one token
 * figure named by strategy and profile, and a footer that counts each call once; the hook's own
 * session opens on its own, named by client, project and first prompt. Screenshots go to
 * docs/screenshots/ (joined-*.png).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicDouble, type AnthropicDouble } from '../clients/doubles/anthropic.js';
import { runClaudeCode, sourceHookCommand, type ClaudeRun } from '../clients/claude.js';
import { tmpDir } from '../clients/harness.js';
import { ensureRendererBuilt, launchChromium, openInspector, REPO_ROOT, startServe, type ServeProcess } from './helpers/serve.js';

const SHOTS = path.join(REPO_ROOT, 'docs', 'screenshots');
const POLL = { timeout: 60_000, interval: 100 };
const PROMPT = 'look at the quarterly report';

let anthropic: AnthropicDouble;
let run: ClaudeRun;
let serve: ServeProcess;
let browser: Browser;
let page: Page;
let cwd: string;
const pageErrors: string[] = [];

async function shot(name: string): Promise<void> {
  await page.waitForTimeout(200);
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

beforeAll(async () => {
  await ensureRendererBuilt();
  cwd = tmpDir('spillway-e2e-join-cwd-');
  let report = '';
  for (let i = 0; report.length < 70_000; i++) report += `line ${i}: revenue ${i * 13} for region ${i % 17}\n`;
  fs.writeFileSync(path.join(cwd, 'report.txt'), report);
  fs.writeFileSync(path.join(cwd, 'notes.txt'), 'one\ntwo\n');
  anthropic = await startAnthropicDouble({
    steps: [
      { toolUses: [{ id: 'toolu_01e2ereport', name: 'Read', input: { file_path: path.join(cwd, 'report.txt') } }] },
      { toolUses: [{ id: 'toolu_01e2enotes', name: 'Read', input: { file_path: path.join(cwd, 'notes.txt') } }] },
      { text: 'done' },
    ],
  });
  run = await runClaudeCode({
    baseUrl: anthropic.origin,
    prompt: PROMPT,
    cwd,
    settings: { hooks: { PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: sourceHookCommand(), timeout: 120 }] }] } },
    timeoutMs: 180_000,
  });
  expect(run.code, run.stderr.slice(-2000)).toBe(0);
  serve = await startServe({ roots: [], home: path.join(run.home, 'spillway'), env: { HOME: run.home, CLAUDE_CONFIG_DIR: '', CODEX_HOME: '', SPILLWAY_NO_DEFAULT_ROOTS: '' } });
  browser = await launchChromium();
  page = await openInspector(browser, serve.url, { before: (p) => p.on('pageerror', (e) => pageErrors.push(e.message)) });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  await anthropic?.close();
});

describe('the joined session view', () => {
  it('one row per tool call under the Claude Code session, the spill on it with its summary count; the footer counts each call once', async () => {
    const claudeRoot = page.locator('.root-group', { has: page.locator('.root-name', { hasText: 'Claude Code' }) });
    const session = claudeRoot.locator('.session-row', { hasText: PROMPT });
    await session.waitFor({ timeout: 60_000 });
    await session.click();
    const rows = page.locator('.prow[data-row-id]');
    await expect.poll(() => rows.count(), POLL).toBe(2);
    const spilled = page.locator('.prow', { has: page.getByTestId('row-joined') });
    expect(await spilled.count()).toBe(1);
    expect(await spilled.locator('.col-summ').textContent()).toBe('1');
    // Two tool calls in this HOME: the spill is not counted a second time under Spillway sessions.
    await expect.poll(() => page.locator('.statusbar').textContent(), POLL).toContain('2 payloads');
    await spilled.click();
    await page.getByTestId('figure').waitFor();
    await expect.poll(() => page.getByTestId('figure').textContent(), POLL).toMatch(/tokens · calibrated, \w+/);
    expect(await page.getByTestId('joined-badge').textContent()).toBe('spill');
    await shot('joined-session');
  });

  it('the transcript row shows the guard\'s summary (no "No summary yet"), and the Estimates tab names the same figure', async () => {
    await page.getByRole('tab', { name: /Summaries/ }).click();
    await page.getByTestId('summaries').waitFor();
    await expect.poll(() => page.getByTestId('summary-text').textContent(), POLL).toMatch(/\S/);
    expect(await page.getByTestId('summaries').textContent()).not.toContain('No summary yet');
    await shot('joined-summaries');
    const figure = (await page.getByTestId('figure').textContent())!;
    await page.getByRole('tab', { name: 'Estimates' }).click();
    const note = page.getByTestId('figure-note');
    await note.waitFor({ timeout: 60_000 });
    const text = (await note.textContent())!;
    expect(text).toMatch(/^Listed everywhere as [\d,]+ tokens \(calibrated estimate, \w+\): the number the guard decided with, and the one the model's message stated/);
    // The header's short figure and the note's exact one are the same number.
    const exact = Number(/as ([\d,]+) tokens/.exec(text)![1]!.replace(/,/g, ''));
    expect(figure).toContain(exact >= 1000 ? `${Math.round(exact / 1000)}k` : String(exact));
    await shot('joined-estimates');
  });

  it("the session's timeline replays its guard with the profile the hook counted with, and says so", async () => {
    const claudeRoot = page.locator('.root-group', { has: page.locator('.root-name', { hasText: 'Claude Code' }) });
    await claudeRoot.locator('.session-row', { hasText: PROMPT }).click();
    await page.locator('button[aria-label="Context timeline"]').click();
    await page.getByTestId('timeline-chart').waitFor({ timeout: 30_000 });
    const profile = page.getByLabel('Replay profile');
    expect(await profile.inputValue()).toBe('');
    expect(await profile.locator('option').first().textContent()).toBe("as the session's guard (claude)");
    await page.locator('button[aria-label="Payloads"]').click();
  });

  it('the hook\'s own session still opens on its own, named by client, project and first prompt', async () => {
    const own = page.locator('.root-group', { has: page.locator('.root-name', { hasText: 'Spillway sessions' }) });
    const s = own.locator('.session-row').first();
    await s.waitFor({ timeout: 60_000 });
    expect(await s.getByTestId('session-title').textContent()).toBe(PROMPT);
    expect(await s.getByTestId('client-badge').textContent()).toBe('Claude Code · hook');
    // The row's facts stay whole beside the long badge: the time is inside the row, not clipped at its edge.
    const meta = (await s.locator('.session-meta').boundingBox())!;
    const when = (await s.locator('.session-meta .when').boundingBox())!;
    expect(when.x + when.width).toBeLessThanOrEqual(meta.x + meta.width + 0.5);
    expect(await s.locator('.session-meta .when').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await s.click();
    const rows = page.locator('.prow[data-row-id]');
    await expect.poll(() => rows.count(), POLL).toBe(1);
    expect(await rows.first().getByTestId('row-joined').textContent()).toBe('in transcript');
    await shot('joined-spill-session');
    expect(pageErrors).toEqual([]);
  });
});
