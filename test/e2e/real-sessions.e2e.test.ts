/// <reference lib="dom" />
/**
 * End to end, the way a new user meets the inspector: `spillway serve` with no roots, in a home
 * folder holding real Claude Code and Codex transcript trees (written by the real clients, from
 * test/index/fixtures/real), plus a Spillway session in app data. The agents' folders open by
 * default, read-only, and the sidebar lists sessions by project, client and first prompt.
 * A second serve with `--no-default-roots` and an empty home shows the empty state.
 * Screenshots go to test-results/screenshots/ (git-ignored).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSessionsRoot } from '../helpers/gen-sessions.js';
import { ensureRendererBuilt, launchChromium, openInspector, REPO_ROOT, startServe, type ServeProcess } from './helpers/serve.js';

const REAL = path.join(REPO_ROOT, 'test', 'index', 'fixtures', 'real');
const SHOTS = path.join(REPO_ROOT, 'test-results', 'screenshots');
const POLL = { timeout: 30_000, interval: 100 };

/** Claude Code names a project folder after its cwd with every non-alphanumeric character as `-`. */
const claudeFolderOf = (cwd: string) => cwd.replace(/[^A-Za-z0-9]/g, '-');

let tmp: string;
let home: string;
let movedProject: string;
let serve: ServeProcess;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
/** The variables that move the agents' folders or turn the defaults off, cleared for a deterministic run. */
const CLEAN_ENV = { CLAUDE_CONFIG_DIR: '', CODEX_HOME: '', SPILLWAY_NO_DEFAULT_ROOTS: '' };

async function shot(name: string, p: Page = page): Promise<void> {
  await p.waitForTimeout(150);
  await p.screenshot({ path: path.join(SHOTS, `${name}.png`) });
}

/** A home folder as the agents leave it; returns the project the moved transcript ran in. */
function agentHome(dir: string): string {
  const projects = path.join(dir, '.claude', 'projects');
  for (const scenario of ['03-mcp-fs-everything-agent-async', 'proxy-read-text-file-and-grep', '02-grep-glob-webfetch-websearch-notebook-image']) {
    fs.cpSync(path.join(REAL, 'claude-code', scenario), projects, { recursive: true });
  }
  // One real transcript moved, as if it had run in a project inside this home: its recorded cwd
  // and its folder name say `<home>/Projects/claude-bug`, so the sidebar's `~` can be checked.
  // Nothing else in it changes; spill files resolve by name inside the session's own folder.
  const from = '/tmp/exp/cwd-vj1jXP';
  const movedProject = path.join(dir, 'Projects', 'claude-bug');
  const src = path.join(REAL, 'claude-code', '01-read70k-bash400k-nohook', claudeFolderOf(from));
  const dst = path.join(projects, claudeFolderOf(movedProject));
  fs.cpSync(src, dst, { recursive: true });
  for (const f of fs.readdirSync(dst).filter((n) => n.endsWith('.jsonl'))) {
    const file = path.join(dst, f);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').split(from).join(movedProject));
  }
  fs.cpSync(path.join(REAL, 'codex', '01-mcp-fs-read-text-file-540k-plus-exec-cat', 'sessions'), path.join(dir, '.codex', 'sessions'), { recursive: true });
  return movedProject;
}

beforeAll(async () => {
  await ensureRendererBuilt();
  fs.mkdirSync(SHOTS, { recursive: true });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-e2e-real-'));
  home = path.join(tmp, 'home');
  movedProject = agentHome(home);
  const appData = path.join(tmp, 'app');
  // What the hook and the proxy leave in app data: a Spillway session of spilled results.
  await generateSessionsRoot(path.join(appData, 'sessions'), { sessions: 1, payloads: 24, seed: 7, imageShare: 0 });
  serve = await startServe({ roots: [], home: appData, env: { ...CLEAN_ENV, HOME: home } });
  browser = await launchChromium();
  page = await openInspector(browser, serve.url, { before: (p) => p.on('pageerror', (e) => pageErrors.push(e.message)) });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('spillway serve with no roots, in a home with real Claude Code and Codex sessions', () => {
  it('says on the terminal which folders it opened by default, and how to turn that off', async () => {
    await expect.poll(() => serve.output(), POLL).toContain('opened read-only by default; --no-default-roots');
    expect(serve.output()).toContain(`root ${path.join(home, '.claude', 'projects')} (claude-projects, read-only, opened by default)`);
    expect(serve.output()).toContain(`root ${path.join(home, '.codex', 'sessions')} (sessions, read-only, opened by default)`);
  });

  it('marks the default roots read-only and opened by default, and says how to turn them off', async () => {
    const claudeRoot = page.locator('.root-group', { has: page.locator('.root-name', { hasText: 'Claude Code' }) });
    const codexRoot = page.locator('.root-group', { has: page.locator('.root-name', { hasText: 'Codex' }) });
    for (const root of [claudeRoot, codexRoot]) {
      await expect.poll(() => root.getAttribute('data-auto'), POLL).toBe('true');
      expect(await root.getByTestId('root-flags').textContent()).toContain('read-only · opened by default');
    }
    // The app-data folder is the user's own, writable: no marking.
    const own = page.locator('.root-group', { has: page.locator('.root-name', { hasText: 'Spillway sessions' }) });
    expect(await own.getByTestId('root-flags').count()).toBe(0);
    await claudeRoot.getByTestId('root-flags').click();
    const note = claudeRoot.getByTestId('root-note');
    await expect.poll(() => note.textContent(), POLL).toContain('--no-default-roots');
    expect(await note.textContent()).toContain('~/.claude/projects');
    expect(await note.textContent()).toContain('never writes next to these sessions');
    await claudeRoot.getByTestId('root-flags').click();
  });

  it('lists sessions by project path (home as ~), client and first prompt, sub-agents under their parent', async () => {
    const claudeRoot = page.locator('.root-group', { has: page.locator('.root-name', { hasText: 'Claude Code' }) });
    // The moved transcript: its project is shown as ~/Projects/claude-bug, not `-tmp-…-Projects-claude-bug`.
    const moved = claudeRoot.locator('.project-group[data-project="~/Projects/claude-bug"]');
    await moved.waitFor({ timeout: 60_000 });
    expect(await moved.locator('.project-label').textContent()).toBe('~/Projects/claude-bug');
    expect(await moved.locator('.project-label').getAttribute('title')).toBe('~/Projects/claude-bug');
    expect(await page.locator('.sidebar').textContent()).not.toContain(claudeFolderOf(movedProject));
    const movedSession = moved.locator('.session-row').first();
    expect(await movedSession.getByTestId('session-title').textContent()).toBe('go');
    expect(await movedSession.getByTestId('client-badge').textContent()).toBe('Claude Code');
    expect(await movedSession.getByTestId('client-badge').getAttribute('title')).toBe('Claude Code 2.1.328');

    // Projects outside the home keep their full path; the first prompt is the title, its full text in the tooltip.
    const proxy = claudeRoot.locator('.project-group[data-project="/tmp/spillway-cc-proxy-cwd-0FkHgX"]');
    const proxyRow = proxy.locator('.session-row').first();
    expect(await proxyRow.getByTestId('session-title').textContent()).toBe('read data/rows.csv and find row 12345');
    expect(await proxyRow.getAttribute('title')).toContain('read data/rows.csv and find row 12345');
    // One line, ellipsized: the title never wraps the row.
    expect(await proxyRow.getByTestId('session-title').evaluate((el) => getComputedStyle(el).whiteSpace)).toBe('nowrap');
    expect(await proxyRow.getByTestId('session-title').evaluate((el) => getComputedStyle(el).textOverflow)).toBe('ellipsis');

    // The async Agent's transcript sits under the session that started it.
    const withAgent = claudeRoot.locator('.project-group[data-project="/tmp/exp/cwd-Msvplq"]');
    const sub = withAgent.locator('.session-list.subagents .session-row');
    expect(await sub.count()).toBe(1);
    expect(await sub.getByTestId('session-title').textContent()).toContain('SUBAGENT do it');

    // Codex: project from the rollout's cwd, its own badge (version in the tooltip).
    const codexRoot = page.locator('.root-group', { has: page.locator('.root-name', { hasText: 'Codex' }) });
    const codex = codexRoot.locator('.project-group[data-project="/tmp/exp/cxcwd-PSHN5r"] .session-row').first();
    expect(await codex.getByTestId('client-badge').textContent()).toBe('Codex');
    expect(await codex.getByTestId('client-badge').getAttribute('title')).toBe('Codex 0.171.0 (codex_exec)');
    expect(await codex.getByTestId('session-title').textContent()).toBe('go');

    // Spillway's own session: its folder name (no prompt recorded), the Spillway badge.
    const own = page.locator('.root-group', { has: page.locator('.root-name', { hasText: 'Spillway sessions' }) }).locator('.session-row').first();
    expect(await own.getByTestId('session-title').textContent()).toBe('session-000');
    expect(await own.getByTestId('client-badge').textContent()).toBe('Spillway');
  });

  it('filters sessions by prompt, project or client', async () => {
    const filter = page.getByLabel('Filter sessions');
    await filter.fill('rows.csv');
    await expect.poll(() => page.locator('.session-row').count(), POLL).toBe(1);
    await filter.fill('claude-bug');
    await expect.poll(() => page.locator('.session-row').count(), POLL).toBe(1);
    await filter.fill('codex');
    await expect.poll(() => page.locator('.session-row').count(), POLL).toBe(1);
    await filter.fill('');
    await expect.poll(() => page.locator('.session-row').count(), POLL).toBeGreaterThanOrEqual(7);
  });

  it('opens a real Claude Code payload read-only, and says where its summary runs go', async () => {
    await page.locator('.project-group[data-project="~/Projects/claude-bug"] .session-row').first().click();
    await expect.poll(() => page.getByTestId('payload-count').textContent(), POLL).toBe('4 payloads');
    await page.locator('.th', { hasText: 'Size' }).locator('button').click();
    await expect.poll(() => page.locator('.prow[data-row-id] .tool-name').first().textContent(), POLL).toBe('Bash');
    await page.locator('.prow[data-row-id]').nth(1).click();
    await page.waitForSelector('.detail[data-payload-id][aria-busy="false"]');
    await page.getByTestId('read-only-badge').waitFor();
    await page.waitForSelector('.viewer[data-state="ready"]');
    await shot('payloads');
    await page.getByRole('tab', { name: /Summaries/ }).click();
    const kept = page.getByTestId('runs-kept');
    await expect.poll(() => kept.textContent(), POLL).toContain('This session is read-only');
    expect(await kept.textContent()).toContain(path.join(tmp, 'app', 'summary-runs'));
    await page.getByRole('tab', { name: 'Raw' }).click();
    expect(pageErrors).toEqual([]);
  });
});

describe('spillway serve --no-default-roots in an empty home', () => {
  let empty: ServeProcess | undefined;
  afterAll(async () => {
    await empty?.stop();
  });

  it('shows where it looked and how to add a folder', async () => {
    const emptyHome = path.join(tmp, 'empty-home');
    fs.mkdirSync(emptyHome);
    // The agents' folders exist, yet the flag keeps them closed.
    agentHome(emptyHome);
    empty = await startServe({ roots: [], home: path.join(tmp, 'app-empty'), extraArgs: ['--no-default-roots'], env: { ...CLEAN_ENV, HOME: emptyHome } });
    const p = await openInspector(browser, empty.url);
    const state = p.getByTestId('no-sessions');
    await state.waitFor({ timeout: 30_000 });
    await expect.poll(() => state.textContent(), POLL).toContain('No sessions found');
    const text = (await state.textContent()) ?? '';
    expect(text).toContain(path.join(tmp, 'app-empty', 'sessions'));
    expect(text).toContain('--no-default-roots');
    expect(text).toContain('spillway index DIR');
    expect(text).toContain('npm start -- DIR');
    expect(text).toContain('Open Folder');
    expect(await p.locator('.root-group[data-auto="true"]').count()).toBe(0);
    await shot('empty-state', p);
    await p.context().close();
  });
});
