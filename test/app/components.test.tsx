// @vitest-environment jsdom
import './setup.js';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import type { ReactNode } from 'react';
import { describe, expect, it } from 'vitest';
import { App } from '../../app/App.js';
import { JsonTree } from '../../app/components/viewer/JsonTree.js';
import { RunDiff } from '../../app/components/detail/RunDiff.js';
import { createAppStore } from '../../app/store/index.js';
import { StoreContext } from '../../app/store/react.js';
import type { SummaryRun } from '../../src/service/contract.js';
import { createMemoryApi } from './memory-api.js';
import { renderApp } from './render.js';

const run = (id: string, summary: string, focus: string): SummaryRun => ({
  id,
  createdAt: `2026-11-02T09:00:0${id.length}Z`,
  status: 'ok',
  summary,
  provider: 'structural',
  model: 'structural',
  focus,
  inputTokens: 10,
  outputTokens: 5,
  ms: 3,
});

describe('the app shell', () => {
  it('lists sessions, opens the first one and shows its payload count', async () => {
    const api = createMemoryApi({ payloads: 40, sessions: 2 });
    const store = await renderApp(api);
    const sidebar = within(screen.getByRole('navigation', { name: 'Roots and sessions' }));
    expect(sidebar.getByText('session-000')).toBeTruthy();
    expect(sidebar.getByText('session-001')).toBeTruthy();
    await waitFor(() => expect(screen.getByTestId('payload-count').textContent).toBe('20 payloads'));
    expect(store.getState().selectedSessionId).toBeTruthy();
    fireEvent.click(sidebar.getByText('session-001'));
    // The table says whose payloads it shows.
    await waitFor(() => expect(screen.getByTestId('scope').textContent).toContain('session-001'));
    await waitFor(() => expect(store.getState().selectedSessionId).toBe('s1'));
    const req = api.calls.filter((c) => c.method === 'listPayloads').at(-1)!.req as { sessionId: string };
    expect(req.sessionId).toBe('s1');
  });

  it('virtualizes 100,000 rows: a page is fetched, not the whole list, and few rows are in the DOM', async () => {
    const api = createMemoryApi({ payloads: 100_000, sessions: 1 });
    await renderApp(api);
    await waitFor(() => expect(screen.getByTestId('payload-count').textContent).toBe('100,000 payloads'));
    await waitFor(() => expect(document.querySelectorAll('.prow[data-row-id]').length).toBeGreaterThan(10));
    expect(document.querySelectorAll('.prow').length).toBeLessThan(200);
    const pages = api.calls.filter((c) => c.method === 'listPayloads').map((c) => c.req as { limit: number });
    expect(pages.every((p) => p.limit <= 1000)).toBe(true);
  });

  it('sorts by a column header and filters by tool', async () => {
    const api = createMemoryApi({ payloads: 30, sessions: 1 });
    const store = await renderApp(api);
    await waitFor(() => expect(document.querySelectorAll('.prow[data-row-id]').length).toBe(30));
    // The table names its two token figures: what entered the model's context, and the full result.
    const heads = screen.getAllByRole('columnheader').map((h) => h.textContent ?? '');
    expect(heads.some((h) => h.includes('Entered'))).toBe(true);
    expect(heads.some((h) => h.includes('Full'))).toBe(true);
    fireEvent.click(within(screen.getAllByRole('columnheader').find((h) => h.textContent?.includes('Entered'))!).getByRole('button'));
    await waitFor(() => {
      const first = document.querySelector('.prow[data-row-id]')!.getAttribute('data-row-id')!;
      const max = api.rows.reduce((a, r) => (r.entered! > a.entered! ? r : a));
      expect(first).toBe(max.id);
    });
    expect(store.getState().sort).toEqual({ field: 'entered', dir: 'desc' });
    fireEvent.change(screen.getByLabelText('Tool'), { target: { value: 'fetch' } });
    await waitFor(() => expect(screen.getByTestId('payload-count').textContent).toBe('6 payloads'));
  });

  it('moves through the table with the keyboard and opens the payload', async () => {
    const api = createMemoryApi({ payloads: 10, sessions: 1 });
    const store = await renderApp(api);
    await waitFor(() => expect(document.querySelectorAll('.prow[data-row-id]').length).toBe(10));
    const grid = screen.getByTestId('payload-table');
    grid.focus();
    fireEvent.keyDown(grid, { key: 'ArrowDown' });
    fireEvent.keyDown(grid, { key: 'ArrowDown' });
    fireEvent.keyDown(grid, { key: 'Enter' });
    await waitFor(() => expect(store.getState().detail?.row.id).toBeTruthy());
    expect(store.getState().selectedIndex).toBe(1);
    expect(screen.getByRole('tab', { name: 'Raw' }).getAttribute('aria-selected')).toBe('true');
  });

  it('opens the search palette with Ctrl+K and jumps to a result', async () => {
    const api = createMemoryApi({ payloads: 12, sessions: 2 });
    const store = await renderApp(api);
    fireEvent.keyDown(window, { key: 'k', ctrlKey: true });
    const input = await screen.findByRole('combobox', { name: /Search every payload/ });
    fireEvent.change(input, { target: { value: 'line 3 of p7' } });
    const list = screen.getByRole('listbox');
    await waitFor(() => expect(within(list).getAllByRole('option').length).toBe(1), { timeout: 3000 });
    expect(within(list).getByRole('option').textContent).toContain('line 3 of p7');
    fireEvent.keyDown(input, { key: 'Enter' });
    await waitFor(() => expect(store.getState().detail?.row.id).toBe('p7'));
    expect(store.getState().paletteOpen).toBe(false);
    expect(store.getState().selectedSessionId).toBe('s1');
  });

  it('shows estimates side by side and their difference from the exact count', async () => {
    const api = createMemoryApi({ payloads: 4, sessions: 1 });
    const store = await renderApp(api);
    await act(() => store.getState().openPayload('p1'));
    fireEvent.click(screen.getByRole('tab', { name: 'Estimates' }));
    const panel = await screen.findByTestId('estimates');
    await waitFor(() => expect(panel.textContent).toContain('craft-density'));
    expect(panel.textContent).toContain('on demand');
    fireEvent.click(within(panel).getByRole('button', { name: /Count exact/ }));
    await waitFor(() => expect(within(panel).getByText('reference')).toBeTruthy());
    // calibrated = tokens, o200k = 1.02 × tokens: calibrated reads about −2% from exact.
    const row = within(panel).getAllByText('calibrated').map((e) => e.closest('tr')).find(Boolean)!;
    expect(row.textContent).toMatch(/−[12]\.\d%/);
    expect(panel.textContent).toContain('Dense: 40% base64');
  });

  it('re-runs a summary with a new focus and diffs two runs', async () => {
    const api = createMemoryApi({ payloads: 4, sessions: 1 });
    const store = await renderApp(api);
    await act(() => store.getState().openPayload('p2'));
    fireEvent.click(screen.getByRole('tab', { name: /Summaries/ }));
    const focus = await screen.findByLabelText('Focus');
    await waitFor(() => expect((screen.getByRole('button', { name: 'Run summary' }) as HTMLButtonElement).disabled).toBe(false));
    fireEvent.change(focus, { target: { value: 'errors' } });
    fireEvent.click(screen.getByRole('button', { name: 'Run summary' }));
    await waitFor(() => expect(store.getState().detail?.summaryRuns).toHaveLength(1));
    fireEvent.change(focus, { target: { value: 'names' } });
    await waitFor(() => expect((screen.getByRole('button', { name: 'Run summary' }) as HTMLButtonElement).disabled).toBe(false));
    fireEvent.click(screen.getByRole('button', { name: 'Run summary' }));
    await waitFor(() => expect(store.getState().detail?.summaryRuns).toHaveLength(2));
    const summarizeReqs = api.calls.filter((c) => c.method === 'summarize').map((c) => (c.req as { focus: string }).focus);
    expect(summarizeReqs).toEqual(['errors', 'names']);
    const boxes = within(screen.getByTestId('runs')).getAllByRole('checkbox');
    fireEvent.click(boxes[0]!);
    fireEvent.click(boxes[1]!);
    const diff = await screen.findByTestId('run-diff');
    expect(diff.querySelector('.diff-del')!.textContent).toContain('errors');
    expect(diff.querySelector('.diff-add')!.textContent).toContain('names');
  });

  it('shows the scores without a judge of each run in the runs table and above each side of the comparison', async () => {
    const api = createMemoryApi({ payloads: 4, sessions: 1 });
    const store = await renderApp(api);
    await act(() => store.getState().openPayload('p2'));
    fireEvent.click(screen.getByRole('tab', { name: /Summaries/ }));
    await waitFor(() => expect((screen.getByRole('button', { name: 'Run summary' }) as HTMLButtonElement).disabled).toBe(false));
    fireEvent.change(await screen.findByLabelText('Focus'), { target: { value: 'line 3 of p2' } });
    fireEvent.click(screen.getByRole('button', { name: 'Run summary' }));
    await waitFor(() => expect(store.getState().detail?.summaryRuns).toHaveLength(1));
    await waitFor(() => expect(api.calls.filter((c) => c.method === 'scoreSummaries')).toHaveLength(1));
    // The payload's lines 2-3 ("tool": ..., "id": "p2") were read back; "Summary of p2 about line 3 of p2." quotes neither: 0%.
    const cell = (name: string) => screen.getByTestId('runs').querySelector(`[data-score="${name}"]`)!;
    await waitFor(() => expect(cell('read-back').textContent).toBe('0%'));
    const scored = await api.scoreSummaries({ payloadId: 'p2' });
    const s = scored.runs[0]!.scores!;
    expect(cell('compression').textContent).toBe(`${(s.compression.ratio! * 100).toFixed(1)}%`);
    expect(cell('compression').getAttribute('title')).toContain(`(calibrated, o200k)`);
    fireEvent.change(screen.getByLabelText('Focus'), { target: { value: 'names' } });
    await waitFor(() => expect((screen.getByRole('button', { name: 'Run summary' }) as HTMLButtonElement).disabled).toBe(false));
    fireEvent.click(screen.getByRole('button', { name: 'Run summary' }));
    await waitFor(() => expect(store.getState().detail?.summaryRuns).toHaveLength(2));
    // A new run is scored again, with the others.
    await waitFor(() => expect(api.calls.filter((c) => c.method === 'scoreSummaries').length).toBeGreaterThanOrEqual(2));
    const boxes = within(screen.getByTestId('runs')).getAllByRole('checkbox');
    fireEvent.click(boxes[0]!);
    fireEvent.click(boxes[1]!);
    const sides = await screen.findAllByTestId('run-scores');
    expect(sides).toHaveLength(2);
    await waitFor(() => expect(sides[0]!.textContent).toMatch(/^read-back 0% · anchors (\d+%|—) · invented \d+.* · size \d+\.\d%$/));
  });

  it('moves the limit slider: the service replays at the new limit, and the config follows', async () => {
    const api = createMemoryApi({ payloads: 50, sessions: 1 });
    const store = await renderApp(api);
    fireEvent.keyDown(window, { key: '2', ctrlKey: true });
    expect(store.getState().view).toBe('tuner');
    const slider = await screen.findByTestId('limit-slider');
    const over = () => screen.getByTestId('over-limit').textContent;
    expect(over()).toContain(`${api.rows.filter((r) => r.tokens > 12_000).length} of 50`);
    fireEvent.change(slider, { target: { value: '300' } });
    const limit = store.getState().tunerLimit!;
    expect(limit).toBeLessThan(2_000);
    expect(over()).toContain(`${api.rows.filter((r) => r.tokens > limit).length} of 50`);
    expect(screen.getByTestId('config-snippet').textContent).toContain(`"limitTokens": ${limit}`);
    // The replay's figures come from the service, asked again once the slider rests.
    await waitFor(() => expect(store.getState().tuner?.limitTokens).toBe(limit), { timeout: 3_000 });
    const flips = api.rows.filter((r) => r.tokens > limit !== (r.action === 'spill')).length;
    await waitFor(() => expect(screen.getByTestId('flips').querySelectorAll('tbody tr').length).toBe(flips));
    fireEvent.change(screen.getByLabelText('Context window tokens'), { target: { value: '200000' } });
    expect(store.getState().tunerLimit).toBe(12_000);
  });

  it('"Copy config" names the profile the tuner\'s numbers were counted with, not the app default', async () => {
    const api = createMemoryApi({ payloads: 20, sessions: 1 });
    const store = await renderApp(api);
    expect(store.getState().info?.defaults.profile).not.toBe('claude');
    fireEvent.keyDown(window, { key: '2', ctrlKey: true });
    const snippet = await screen.findByTestId('config-snippet');
    expect(JSON.parse(snippet.textContent!).profile).toBe('claude');
  });

  it('every tuner row that names a tool call shows its arguments and opens that call', async () => {
    const api = createMemoryApi({ payloads: 50, sessions: 1 });
    const store = await renderApp(api);
    fireEvent.keyDown(window, { key: '2', ctrlKey: true });
    const slider = await screen.findByTestId('limit-slider');
    fireEvent.change(slider, { target: { value: '300' } });
    const table = await screen.findByTestId('flips', undefined, { timeout: 3_000 });
    const first = table.querySelector('tbody tr')!;
    const link = within(first as HTMLElement).getByRole('button');
    const row = api.rows.find((r) => r.tool === link.textContent && first.textContent!.includes(r.inputExcerpt!))!;
    expect(row).toBeDefined();
    expect(first.querySelector('[data-testid="call-args"]')!.textContent).toBe(row.inputExcerpt);
    fireEvent.click(link);
    await waitFor(() => expect(store.getState().view).toBe('payloads'));
    await waitFor(() => expect(store.getState().detail?.row.id).toBe(row.id));
  });

  it('opens the waste report on a fresh page, before the tuner ever set a limit', async () => {
    const api = createMemoryApi({ payloads: 20, sessions: 1 });
    const store = await renderApp(api);
    expect(store.getState().tunerLimit).toBeNull();
    fireEvent.keyDown(window, { key: '3', ctrlKey: true });
    const waste = await screen.findByTestId('waste');
    expect(store.getState().wasteError).toBeNull();
    // Its rows name their calls with their arguments too.
    const args = within(waste).getAllByTestId('call-args').map((e) => e.textContent);
    expect(args.length).toBeGreaterThan(0);
    expect(args.every((a) => api.rows.some((r) => r.inputExcerpt === a))).toBe(true);
  });

  it('shows a full-screen error with a retry when the back end is unreachable', async () => {
    const api = createMemoryApi();
    const broken = new Proxy(api, { get: (t, p) => (p === 'getInfo' ? async () => Promise.reject(new Error('connection refused')) : Reflect.get(t, p)) });
    const store = createAppStore(broken);
    render(<StoreContext.Provider value={store}><App /></StoreContext.Provider>);
    await act(() => store.getState().init());
    expect(screen.getByRole('alert').textContent).toContain('connection refused');
    expect(screen.getByRole('button', { name: 'Try again' })).toBeTruthy();
  });

  it('refreshes the session list when the indexer reports new payloads', async () => {
    const api = createMemoryApi({ payloads: 6, sessions: 1 });
    await renderApp(api);
    const before = api.calls.filter((c) => c.method === 'listSessions').length;
    act(() => api.emit('onDidIndex', { sessionIds: ['s0'], added: 3, changed: 0, removed: 0 }));
    act(() => api.emit('onDidIndex', { sessionIds: ['s0'], added: 2, changed: 0, removed: 0 }));
    await waitFor(() => expect(api.calls.filter((c) => c.method === 'listSessions').length).toBe(before + 1), { timeout: 3000 });
    act(() => api.emit('onIndexProgress', { rootId: 'r0', done: 5, total: 10 }));
    expect(screen.getByTestId('indexing').textContent).toContain('5 / 10');
  });
});

describe('pieces', () => {
  const wrap = (ui: ReactNode) => render(<StoreContext.Provider value={createAppStore(createMemoryApi())}>{ui}</StoreContext.Provider>);

  it('renders payload strings as text, never as HTML, and makes asset references clickable', () => {
    const clicked: string[] = [];
    const value = {
      html: '<img src=x onerror="alert(1)"><script>alert(2)</script>',
      image: { $spillwayAsset: { path: '/a.png', mimeType: 'image/png', bytes: 2048, sha256: 'ab'.repeat(32) } },
      list: Array.from({ length: 250 }, (_, i) => i),
    };
    const { container } = wrap(<JsonTree value={value} defaultOpenDepth={1} onAsset={(r) => clicked.push(r.sha256)} />);
    expect(container.querySelector('img')).toBeNull();
    expect(container.querySelector('script')).toBeNull();
    expect(container.textContent).toContain('<img src=x onerror=');
    fireEvent.click(screen.getByRole('button', { name: /Open asset/ }));
    expect(clicked).toEqual(['ab'.repeat(32)]);
    fireEvent.click(screen.getByRole('button', { name: 'Expand $.list' }));
    expect(container.textContent).toContain('Show 150 more of 150');
  });

  it('diffs two runs word by word', () => {
    const { container } = wrap(<RunDiff left={run('a', 'The build failed in auth.ts', 'errors')} right={run('bb', 'The build passed in auth.ts', 'status')} />);
    expect(container.querySelector('.diff-del')!.textContent).toBe('failed');
    expect(container.querySelector('.diff-add')!.textContent).toBe('passed');
    expect(container.textContent).toContain('−1 words');
  });
});
