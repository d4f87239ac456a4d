// @vitest-environment jsdom
/**
 * Read-backs in the inspector (issue 30, item 1): "Read back N×" in the payload's header, each a
 * link to the reading call; on the Timeline, the calls that read a spill back, their tokens and a
 * link to the spill. On the memory double; the e2e walk (test/e2e/readback.e2e.test.ts) runs the
 * same on a real `spillway serve` over the realistic Claude Code session.
 */
import './setup.js';
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import type { ReadBack } from '../../src/service/contract.js';
import { partText, readBackTotals, spillTarget } from '../../app/lib/readback.js';
import { READ_BACKS_SHOWN } from '../../app/components/detail/ReadBacks.js';
import { createMemoryApi } from './memory-api.js';
import { renderApp } from './render.js';

// jsdom draws no canvas: the chart is a stand-in here (the e2e walk draws the real one and its marks).
vi.mock('uplot', () => import('./uplot-stub.js'));

const rb = (over: Partial<ReadBack> & Pick<ReadBack, 'readerId' | 'part'>): ReadBack => ({
  sessionId: 's0',
  tool: 'Bash',
  at: '2026-11-01T08:05:00.000Z',
  via: 'shell',
  path: '/tmp/root/s0/long_responses/p2.json',
  spillId: 'p2',
  spillTool: 'search_issues',
  spillSessionId: 's0',
  tokens: 90,
  ...over,
});

/** p2 (a spill: 15,938 tokens) read back six times; p3 is a call on the double's Timeline (its call 3), reading twice. Sessions: see inSessions. */
const READ_BACKS: ReadBack[] = [
  rb({ readerId: 'p3', tool: 'Read', via: 'read', part: { kind: 'lines', start: 120, end: 180 }, tokens: 700, entered: 812 }),
  // A pattern from a transcript is text: markup in it must never become elements.
  rb({ readerId: 'p3', tool: 'Read', via: 'read', part: { kind: 'grep', pattern: '<b>ERROR</b>', regex: 'basic', ignoreCase: false, matched: [150, 333], matchCount: 2 }, tokens: 700, entered: 812 }),
  rb({ readerId: 'p4', part: { kind: 'bytes', start: 0, end: 4096 }, tokens: 40 }),
  rb({ readerId: 'p6', part: { kind: 'json', path: '.items[0].id' }, tokens: 30, entered: 33 }),
  rb({ readerId: 'p8', tool: 'mcp__fs__spillway_query', via: 'drill-down', part: { kind: 'query', query: 'count by status', handle: 'h_1' }, tokens: 20 }),
  rb({ readerId: 'p1', tool: 'Read', via: 'read', part: { kind: 'tail', count: 20 }, tokens: 50, entered: 55 }),
];
/** The double spreads payload pN over session s(N mod sessions): each read-back in its reader's, the spill in its own. */
const inSessions = (n: number, list = READ_BACKS): ReadBack[] =>
  list.map((r) => ({ ...r, sessionId: `s${Number(r.readerId.slice(1)) % n}`, spillSessionId: `s${Number(r.spillId.slice(1)) % n}` }));

describe('read-backs in words', () => {
  it('names each part, and counts a call that read twice once in the tokens', () => {
    expect(READ_BACKS.map((r) => partText(r.part))).toEqual([
      'lines 120–180',
      'grep `<b>ERROR</b>` (2 lines)',
      'bytes 0–4,096',
      'jq `.items[0].id`',
      'query `count by status` on h_1',
      'last 20 lines',
    ]);
    expect(partText({ kind: 'lines', start: 7, end: 7 })).toBe('line 7');
    expect(partText({ kind: 'lines', start: 7 })).toBe('lines 7–end');
    expect(partText({ kind: 'bytes', start: -512 })).toBe('last 512 bytes');
    expect(partText({ kind: 'grep', pattern: 'x', regex: 'fixed', ignoreCase: true })).toBe('grep `x`');
    // p3's 812 entered once, p4's whole 40 (no ledger), p6's 33, p8's 20, p1's 55.
    expect(readBackTotals(READ_BACKS)).toEqual({ count: 6, calls: 5, tokens: 812 + 40 + 33 + 20 + 55 });
  });

  it('opens the spill as the call it answered in the session shown, else in its own session', () => {
    const joined = rb({ readerId: 'x', part: { kind: 'whole' }, spillId: 'sp', spillSessionId: 'spills', spillCalledIn: { payloadId: 'call', sessionId: 'transcript' } });
    expect(spillTarget(joined, 'transcript')).toEqual({ payloadId: 'call', sessionId: 'transcript' });
    expect(spillTarget(joined, 'spills')).toEqual({ payloadId: 'sp', sessionId: 'spills' });
    expect(spillTarget({ ...joined, spillCalledIn: undefined }, 'transcript')).toEqual({ payloadId: 'sp', sessionId: 'spills' });
  });
});

/** The app on the memory API with the read-backs in two sessions, `session` selected and `payload` opened. */
async function openedIn(session: string, payload: string) {
  const store = await renderApp(createMemoryApi({ payloads: 12, sessions: 2, readBacks: inSessions(2) }));
  act(() => store.getState().selectSession(session));
  await act(() => store.getState().openPayload(payload));
  return store;
}

describe("the payload's header", () => {
  it('says "Read back 6×", lists the parts as text, and each opens its reading call (in its session)', async () => {
    const store = await openedIn('s0', 'p2');
    const box = await screen.findByTestId('read-backs');
    expect(box.textContent).toContain('Read back 6×');
    expect(box.textContent).toContain('5 calls');
    // The first READ_BACKS_SHOWN, then "2 more".
    expect(within(box).getAllByTestId('read-back').map((b) => b.textContent)).toEqual(READ_BACKS.slice(0, READ_BACKS_SHOWN).map((r) => partText(r.part)));
    expect(box.querySelector('b')).toBeNull();
    // Each link names the reader's tool and what it cost in context.
    const first = within(box).getAllByTestId('read-back')[0]!;
    expect(first.closest('li')!.textContent).toContain('Read · 812');
    expect(first.getAttribute('title')).toContain('812 tokens entered');
    expect(within(box).getAllByTestId('read-back')[1]!.getAttribute('title')).toContain('matching lines 150, 333');
    fireEvent.click(within(box).getByTestId('read-backs-more'));
    expect(within(box).getAllByTestId('read-back')).toHaveLength(6);
    // A reader in this session (p4, like the spill, in s0): opened, the table stays.
    fireEvent.click(within(box).getAllByTestId('read-back')[2]!);
    await waitFor(() => expect(store.getState().detail?.row.id).toBe('p4'));
    expect(store.getState().selectedSessionId).toBe('s0');
    // A reader in another session (p1, in s1): the table moves to it.
    await act(() => store.getState().openPayload('p2'));
    fireEvent.click(await screen.findByTestId('read-backs-more'));
    fireEvent.click(within(screen.getByTestId('read-backs')).getAllByTestId('read-back')[5]!);
    await waitFor(() => expect(store.getState().detail?.row.id).toBe('p1'));
    expect(store.getState().selectedSessionId).toBe('s1');
  });

  it("the reading call's header names what it read back, each a link to the spill", async () => {
    const store = await openedIn('s1', 'p3');
    const box = await screen.findByTestId('reads-back');
    expect(within(box).getAllByTestId('reads-back-spill').map((b) => b.closest('li')!.textContent)).toEqual(['search_issueslines 120–180', 'search_issuesgrep `<b>ERROR</b>` (2 lines)']);
    expect(box.querySelector('b')).toBeNull();
    expect(screen.queryByTestId('read-backs')).toBeNull();
    // The spill p2 is in s0: the table moves there.
    fireEvent.click(within(box).getAllByTestId('reads-back-spill')[0]!);
    await waitFor(() => expect(store.getState().detail?.row.id).toBe('p2'));
    expect(store.getState().selectedSessionId).toBe('s0');
  });

  it('says nothing for a payload nobody read back', async () => {
    const api = createMemoryApi({ payloads: 12, sessions: 2, readBacks: inSessions(2) });
    const store = await renderApp(api);
    await act(() => store.getState().openPayload('p10'));
    await waitFor(() => expect(store.getState().detail?.row.id).toBe('p10'));
    expect(screen.queryByTestId('read-backs')).toBeNull();
    expect(screen.queryByTestId('reads-back')).toBeNull();
  });
});

describe('the Timeline', () => {
  it('lists the calls that read a spill back with the Timeline’s tokens, marks them among the call’s results, and opens the reader or the spill', async () => {
    // One session: the double's Timeline has calls 1–3 (p1–p3); p1's tail is left out, so call 3 alone is marked.
    const api = createMemoryApi({ payloads: 12, sessions: 1, readBacks: inSessions(1, READ_BACKS.filter((r) => r.readerId !== 'p1')) });
    const store = await renderApp(api);
    act(() => store.getState().setView('timeline'));
    const card = await screen.findByTestId('timeline-readbacks');
    const rows = within(card).getAllByTestId('timeline-readback');
    expect(rows.map((r) => r.getAttribute('data-reader-id'))).toEqual(['p3', 'p3', 'p4', 'p6', 'p8']);
    // p3 is the double's call 3, whose result entered with 40,000 tokens: the card says the Timeline's figure for it.
    expect(rows[0]!.textContent).toContain('40k');
    expect(rows[0]!.textContent).toContain('search_issues lines 120–180');
    expect(rows[2]!.textContent).toContain('—');
    expect(card.textContent).toContain('5 reads of a spill by 4 calls');
    // A slider move asks for the replays alone (no read-backs in that answer): the card stays.
    fireEvent.change(screen.getByLabelText('Guard limit'), { target: { value: '8000' } });
    await waitFor(() => expect(api.calls.some((c) => c.method === 'getTimeline' && (c.req as { replayOnly?: boolean }).replayOnly)).toBe(true));
    expect(screen.getByTestId('timeline-readbacks')).toBeTruthy();
    // The chart knows which calls to mark.
    expect(screen.getByTestId('timeline-chart').getAttribute('data-readback-calls')).toBe('3');
    // The call's number shows its results above, the reader marked there.
    fireEvent.click(within(rows[0]!).getByRole('button', { name: '3' }));
    const turn = screen.getByTestId('timeline-turn');
    const marks = await within(turn).findAllByTestId('timeline-readback-mark');
    expect(marks.map((m) => m.textContent)).toEqual(['read-backreads back search_issues lines 120–180 · open the spill', 'read-backreads back search_issues grep `<b>ERROR</b>` (2 lines) · open the spill']);
    expect(turn.querySelector('b')).toBeNull();
    // "open the spill" opens the spill, not the reading call its row opens.
    fireEvent.click(within(marks[0]!).getByTestId('timeline-open-spill'));
    await waitFor(() => expect(store.getState().detail?.row.id).toBe('p2'));
    expect(store.getState().view).toBe('payloads');
    act(() => store.getState().setView('timeline'));
    fireEvent.click(within((await screen.findAllByTestId('timeline-readback'))[3]!).getByTestId('timeline-open-reader'));
    await waitFor(() => expect(store.getState().detail?.row.id).toBe('p6'));
  });

  it('shows no read-back card for a session without read-backs', async () => {
    const api = createMemoryApi({ payloads: 12, sessions: 1 });
    const store = await renderApp(api);
    act(() => store.getState().setView('timeline'));
    await screen.findByTestId('timeline-chart');
    expect(screen.queryByTestId('timeline-readbacks')).toBeNull();
  });
});
