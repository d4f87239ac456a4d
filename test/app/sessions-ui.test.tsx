// @vitest-environment jsdom
import './setup.js';
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { SESSIONS_SHOWN_PER_PROJECT } from '../../app/components/Sidebar.js';
import type { AppStore } from '../../app/store/index.js';
import type { RootInfo, SessionInfo } from '../../src/service/contract.js';
import { createMemoryApi, type MemoryApi, type MemoryApiOptions } from './memory-api.js';
import { renderApp } from './render.js';

const HOME = '/home/gray';
const root = (id: string, path: string, extra: Partial<RootInfo> = {}): RootInfo => ({ id, path, kind: 'sessions', addedAt: '2026-12-01T00:00:00Z', sessionCount: 1, payloadCount: 1, ...extra });
const ROOTS: RootInfo[] = [
  root('rc', `${HOME}/.claude/projects`, { kind: 'claude-projects', readOnly: true, auto: true }),
  root('rx', `${HOME}/.codex/sessions`, { readOnly: true, auto: true }),
  root('ra', '/tmp/app/sessions'),
];
const session = (p: Partial<SessionInfo> & { id: string; rootId: string }): SessionInfo => ({
  name: p.id,
  path: `/x/${p.id}.jsonl`,
  kind: 'claude-code',
  readOnly: true,
  payloadCount: 0,
  assetCount: 0,
  totalBytes: 0,
  totalTokens: 0,
  ...p,
});
/** A prompt that looks like markup: it must come out as text. */
const HOSTILE_PROMPT = '<img src=x onerror="alert(1)"> fix the flaky\n   auth test <b>now</b>';
const SESSIONS: SessionInfo[] = [
  session({
    id: 'cc1',
    rootId: 'rc',
    name: '-home-gray-Projects-claude-bug/85f0',
    project: `${HOME}/Projects/claude-bug`,
    title: HOSTILE_PROMPT,
    client: 'Claude Code 2.1.328',
    lastAt: '2026-12-01T09:00:00Z',
  }),
  session({ id: 'cc1-sub', rootId: 'rc', name: '-home-gray-Projects-claude-bug/85f0/subagents/agent-a1', project: `${HOME}/Projects/claude-bug`, title: 'SUBAGENT look up the schema', client: 'Claude Code 2.1.328', parentSessionId: 'cc1' }),
  // An older transcript without a cwd: the project is decoded from the folder name, and marked a guess.
  session({ id: 'cc2', rootId: 'rc', name: '-home-gray-work-api/0b1c', title: 'go', client: 'Claude Code 2.0.1', lastAt: '2026-11-30T09:00:00Z' }),
  session({ id: 'cx1', rootId: 'rx', kind: 'codex', name: '2026/12/01/rollout-2026-12-01T08-12-21-01a2', project: '/srv/agents/etl', title: 'load the csv', client: 'Codex 0.171.0 (codex_exec)', lastAt: '2026-12-01T08:12:00Z' }),
  session({ id: 'sp1', rootId: 'ra', kind: 'spillway', readOnly: false, name: 'session-000', lastAt: '2026-12-01T07:00:00Z' }),
];

async function renderWith(opts: MemoryApiOptions): Promise<{ api: MemoryApi; store: AppStore }> {
  const api = createMemoryApi(opts);
  return { api, store: await renderApp(api) };
}

const sidebar = () => screen.getByRole('navigation', { name: 'Roots and sessions' });
const rootGroup = (id: string) => sidebar().querySelector<HTMLElement>(`.root-group[data-root-id="${id}"]`)!;
const sessionRow = (id: string) => sidebar().querySelector<HTMLElement>(`.session-row[data-session-id="${id}"]`)!;

describe('the sidebar lists sessions the way people know them', () => {
  it('by project path (home as ~), client badge and first prompt, as text only', async () => {
    await renderWith({ payloads: 20, roots: ROOTS, sessionList: SESSIONS });
    const claude = rootGroup('rc');
    expect(claude.querySelector('.root-name')!.textContent).toContain('Claude Code');
    const bug = claude.querySelector<HTMLElement>('.project-group[data-project="~/Projects/claude-bug"]')!;
    expect(bug.querySelector('.project-label')!.textContent).toBe('~/Projects/claude-bug');
    // Never the raw folder name.
    expect(sidebar().textContent).not.toContain('-home-gray-Projects-claude-bug');

    const row = sessionRow('cc1');
    const title = within(row).getByTestId('session-title');
    expect(title.textContent).toBe('<img src=x onerror="alert(1)"> fix the flaky auth test <b>now</b>');
    expect(row.getAttribute('title')).toContain('<img src=x onerror="alert(1)"> fix the flaky auth test <b>now</b>');
    expect(sidebar().querySelector('img, b, script')).toBeNull();
    const badge = within(row).getByTestId('client-badge');
    expect(badge.textContent).toBe('Claude Code');
    expect(badge.getAttribute('title')).toBe('Claude Code 2.1.328');

    // The sub-agent sits under its parent.
    const sub = sessionRow('cc1-sub');
    expect(sub.closest('.session-list.subagents')).toBeTruthy();
    expect(sub.closest('li')!.parentElement!.closest('li')!.querySelector('.session-row')!.getAttribute('data-session-id')).toBe('cc1');
    expect(within(sub).getByTestId('session-title').textContent).toContain('SUBAGENT look up the schema');

    // Decoded from the folder name: shown, and marked as a guess.
    const guessed = claude.querySelector<HTMLElement>('.project-group[data-project="~/work/api"]')!;
    expect(guessed.querySelector('.project-label.approximate')).toBeTruthy();
    expect(guessed.querySelector('.project-label')!.getAttribute('title')).toContain("decoded from Claude Code's folder name");

    const codex = sessionRow('cx1');
    expect(within(codex).getByTestId('client-badge').textContent).toBe('Codex');
    expect(rootGroup('rx').querySelector('.project-label')!.textContent).toBe('/srv/agents/etl');
    const own = sessionRow('sp1');
    expect(within(own).getByTestId('client-badge').textContent).toBe('Spillway');
    expect(within(own).getByTestId('session-title').textContent).toBe('session-000');

    // Picked, the table's header names it the same way.
    fireEvent.click(row);
    await waitFor(() => expect(screen.getByTestId('scope').textContent).toBe('Claude Code<img src=x onerror="alert(1)"> fix the flaky auth test <b>now</b>~/Projects/claude-bugread-only'));
    expect(screen.getByTestId('scope').querySelector('img, b')).toBeNull();
  });

  it('marks roots opened by default read-only, and says how to turn them off', async () => {
    await renderWith({ payloads: 5, roots: ROOTS, sessionList: SESSIONS });
    for (const id of ['rc', 'rx']) expect(within(rootGroup(id)).getByTestId('root-flags').textContent).toContain('read-only · opened by default');
    expect(within(rootGroup('ra')).queryByTestId('root-flags')).toBeNull();
    fireEvent.click(within(rootGroup('rc')).getByTestId('root-flags'));
    const note = within(rootGroup('rc')).getByTestId('root-note');
    expect(note.textContent).toContain('--no-default-roots');
    expect(note.textContent).toContain('~/.claude/projects');
    // Removing a default root hides it until the next start; the label says so.
    expect(within(rootGroup('rc')).getByRole('button', { name: /until the next start/ })).toBeTruthy();
  });

  it('filters by prompt, project or client', async () => {
    const many = [...SESSIONS, ...Array.from({ length: 4 }, (_, i) => session({ id: `z${i}`, rootId: 'ra', kind: 'spillway', readOnly: false, name: `session-10${i}` }))];
    await renderWith({ payloads: 5, roots: ROOTS, sessionList: many });
    const filter = screen.getByLabelText('Filter sessions');
    const shown = () => Array.from(sidebar().querySelectorAll('.session-row')).map((r) => r.getAttribute('data-session-id'));
    fireEvent.change(filter, { target: { value: 'flaky' } });
    expect(shown()).toEqual(['cc1']);
    fireEvent.change(filter, { target: { value: '~/work' } });
    expect(shown()).toEqual(['cc2']);
    fireEvent.change(filter, { target: { value: 'codex' } });
    expect(shown()).toEqual(['cx1']);
    fireEvent.change(filter, { target: { value: 'nothing like it' } });
    expect(shown()).toEqual([]);
    expect(sidebar().textContent).toContain('No session matches');
  });

  it('keeps thousands of sessions small: a few per project, the rest behind "Show more"', async () => {
    const lots = Array.from({ length: 1500 }, (_, i) =>
      session({ id: `m${i}`, rootId: 'rc', project: `${HOME}/big`, title: `prompt ${i}`, lastAt: new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString() }),
    );
    await renderWith({ payloads: 5, roots: ROOTS, sessionList: lots });
    expect(sidebar().querySelectorAll('.session-row').length).toBe(SESSIONS_SHOWN_PER_PROJECT);
    // Most recent first.
    expect(within(sidebar().querySelector<HTMLElement>('.session-row')!).getByTestId('session-title').textContent).toBe('prompt 1499');
    fireEvent.click(within(sidebar()).getByRole('button', { name: `Show ${(1500 - SESSIONS_SHOWN_PER_PROJECT).toLocaleString('en-US')} more` }));
    expect(sidebar().querySelectorAll('.session-row').length).toBe(1500);
  });
});

describe('read-only sessions', () => {
  it('say so on the payload, and that summary runs go to app data', async () => {
    const { store, api } = await renderWith({ payloads: 6, roots: ROOTS, sessionList: SESSIONS });
    const ro = api.rows.find((r) => r.sessionId === 'cc1')!;
    await act(() => store.getState().openPayload(ro.id));
    expect(screen.getByTestId('read-only-badge').textContent).toBe('read-only');
    fireEvent.click(screen.getByRole('tab', { name: /Summaries/ }));
    await waitFor(() => expect(screen.getByTestId('runs-kept').textContent).toBe('This session is read-only: runs are kept in /tmp/app/summary-runs, never written next to it.'));
    const own = api.rows.find((r) => r.sessionId === 'sp1')!;
    await act(() => store.getState().openPayload(own.id));
    expect(screen.queryByTestId('read-only-badge')).toBeNull();
  });
});

describe('search while full-text search is still filling in', () => {
  it('says how many payloads are not searchable yet, and asks again when the fill ends', async () => {
    const { api, store } = await renderWith({ payloads: 30, sessions: 1 });
    api.unsearched = 1234;
    act(() => api.emit('onIndexProgress', { rootId: 'r0', done: 200, total: 1434, phase: 'fulltext' }));
    fireEvent.change(screen.getByLabelText('Search payloads'), { target: { value: 'line 3' } });
    const notice = await screen.findByTestId('partial-notice');
    expect(notice.textContent).toBe('Search still filling in: 1,234 payloads not yet searchable (200 / 1,434 done). Results refresh when it is done.');
    const before = api.calls.filter((c) => c.method === 'listPayloads').length;
    api.unsearched = 0;
    act(() => api.emit('onIndexProgress', { rootId: 'r0', done: 1434, total: 1434, phase: 'fulltext' }));
    await waitFor(() => expect(screen.queryByTestId('partial-notice')).toBeNull());
    const again = api.calls.filter((c) => c.method === 'listPayloads').slice(before);
    expect(again.length).toBeGreaterThan(0);
    expect((again[0]!.req as { query?: string }).query).toBe('line 3');
    expect(store.getState().partial).toBeNull();
  });

  it('in the Ctrl+K palette too', async () => {
    const { api } = await renderWith({ payloads: 12, sessions: 2 });
    api.unsearched = 7;
    fireEvent.keyDown(window, { key: 'k', ctrlKey: true });
    const input = await screen.findByRole('combobox', { name: /Search every payload/ });
    fireEvent.change(input, { target: { value: 'line 3 of p7' } });
    const notice = await screen.findByTestId('palette-partial', {}, { timeout: 3000 });
    expect(notice.textContent).toContain('7 payloads not yet searchable');
    api.unsearched = 0;
    act(() => api.emit('onIndexProgress', { rootId: 'r0', done: 9, total: 9, phase: 'fulltext' }));
    await waitFor(() => expect(screen.queryByTestId('palette-partial')).toBeNull(), { timeout: 3000 });
  });
});

describe('index progress', () => {
  it('shows listing, then full-text search, with counts, and goes when both are done', async () => {
    const { api } = await renderWith({ payloads: 4, sessions: 1 });
    act(() => api.emit('onIndexProgress', { rootId: 'r0', done: 5, total: 10, phase: 'list' }));
    const bar = screen.getByTestId('indexing');
    expect(bar.getAttribute('data-phase')).toBe('list');
    expect(bar.querySelector('[data-phase-step="list"]')!.textContent).toBe('Listing 5 / 10');
    expect(bar.querySelector('[data-phase-step="fulltext"]')!.textContent).toBe('search next');
    // The root's own row shows where its scan is.
    expect(document.querySelector('.root-group[data-root-id="r0"] .root-phase')!.textContent).toBe('listing 50%');
    act(() => api.emit('onIndexProgress', { rootId: 'r0', done: 10, total: 10, phase: 'list' }));
    act(() => api.emit('onIndexProgress', { rootId: 'r0', done: 0, total: 10, phase: 'fulltext' }));
    act(() => api.emit('onIndexProgress', { rootId: 'r0', done: 3, total: 10, phase: 'fulltext' }));
    await waitFor(() => expect(screen.getByTestId('indexing').querySelector('[data-phase-step="fulltext"]')!.textContent).toBe('Making searchable 3 / 10'), { timeout: 2000 });
    expect(screen.getByTestId('indexing').getAttribute('data-phase')).toBe('fulltext');
    expect(screen.getByTestId('indexing').querySelector('[data-phase-step="list"]')!.textContent).toBe('Listed');
    act(() => api.emit('onIndexProgress', { rootId: 'r0', done: 10, total: 10, phase: 'fulltext' }));
    expect(screen.queryByTestId('indexing')).toBeNull();
  });

  it('an empty root (0 of 0) leaves no bar behind', async () => {
    const { api } = await renderWith({ payloads: 4, sessions: 1 });
    act(() => api.emit('onIndexProgress', { rootId: 'r0', done: 0, total: 0, phase: 'list' }));
    act(() => api.emit('onIndexProgress', { rootId: 'r0', done: 0, total: 0, phase: 'fulltext' }));
    expect(screen.queryByTestId('indexing')).toBeNull();
  });
});

describe('no sessions at all', () => {
  it('says which folders were looked at and how to add one', async () => {
    await renderWith({ payloads: 0, roots: [root('ra', '/tmp/app/sessions', { sessionCount: 0, payloadCount: 0 })], sessionList: [] });
    const state = await screen.findByTestId('no-sessions');
    expect(state.textContent).toContain('No sessions found');
    expect(state.textContent).toContain('/tmp/app/sessions');
    expect(state.textContent).toContain('--no-default-roots');
    for (const how of ['spillway index DIR', 'npm start -- DIR', 'spillway serve --root DIR', 'Open Folder']) expect(state.textContent).toContain(how);
  });

  it('lists the default roots it looked in, marked', async () => {
    const roots = ROOTS.map((r) => ({ ...r, sessionCount: 0, payloadCount: 0 }));
    await renderWith({ payloads: 0, roots, sessionList: [] });
    const state = await screen.findByTestId('no-sessions');
    expect(state.textContent).toContain('~/.claude/projects');
    expect(state.textContent).toContain('Claude Code · read-only · opened by default');
    expect(state.textContent).not.toContain('No agent folder was opened by default');
  });
});

describe('the counts beside folders agree with their sessions and with the status bar', () => {
  it('a folder of spills joined with transcripts counts them as its sessions do; the total counts each call once; an empty scratch folder is neither shown nor counted', async () => {
    const roots: RootInfo[] = [
      root('rc', `${HOME}/.claude/projects`, { kind: 'claude-projects', readOnly: true, auto: true, payloadCount: 3 }),
      root('ra', '/tmp/app/sessions', { payloadCount: 0, joinedCount: 2 }),
      root('rs', '/tmp/app/scratch', { sessionCount: 0, payloadCount: 0 }),
    ];
    await renderWith({ payloads: 3, roots, sessionList: [session({ id: 'cc1', rootId: 'rc', title: 'go' }), session({ id: 'sp1', rootId: 'ra', kind: 'spillway', readOnly: false })] });
    const count = rootGroup('ra').querySelector<HTMLElement>('.root-name .count')!;
    expect(count.textContent).toBe('2');
    expect(count.title).toMatch(/2 payloads in 1 sessions; 2 of them are spills joined with a transcript's tool call/);
    expect(rootGroup('rs')).toBeNull();
    expect(screen.getByRole('status').textContent).toMatch(/2 folders · 3 payloads/);
  });
});
