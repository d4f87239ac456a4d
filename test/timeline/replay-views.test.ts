/**
 * The limit tuner and the waste report are views of the Timeline's replay: for a session with
 * model calls their figures are the replay's (tokens × calls in context, the session's cache
 * prices), not a second count of payloads at list price. Sessions without calls show payload sizes
 * only, and say so.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { totalsOf } from '../../src/timeline/reports.js';
import { generateSessionsRoot } from '../helpers/gen-sessions.js';
import { REPO, tmpDir, tmpTimelines } from './helpers.js';

const TIMELINE = path.join(REPO, 'test', 'index', 'fixtures', 'timeline');
const PCT5 = path.join(TIMELINE, 'claude-code-pct5');

describe('the tuner and the waste report give the Timeline replay\'s answer', () => {
  it('a session with calls: the tuner, the waste report and getTimeline agree at the same limit', async () => {
    const { index, timelines } = tmpTimelines();
    index.addRoot(PCT5);
    await index.scan();
    const s = index.listSessions().find((x) => x.payloadCount > 0)!;
    const limit = 2_000;
    const tuner = await timelines.limitTunerData({ sessionId: s.id, limitTokens: limit });
    const waste = await timelines.wasteReport({ sessionId: s.id, limitTokens: limit });
    // Built again with every guard message in: the tuner's own request may have left some pending.
    const t = (await timelines.timeline({ sessionId: s.id, limits: [limit] }, { guardBudgetMs: 60_000 }))!;
    const again = await timelines.limitTunerData({ sessionId: s.id, limitTokens: limit });
    const wasteAgain = await timelines.wasteReport({ sessionId: s.id, limitTokens: limit });
    expect(tuner.replay.sessionsTotal).toBe(1);
    expect(tuner.payloadsOnly.payloads).toBe(0);
    const view = again.replay.sessions[0]!;
    expect(view.atLimit).toEqual(totalsOf(t.replays.find((r) => r.scenario.limit === limit)!));
    expect(view.noGuard).toEqual(totalsOf(t.replays.find((r) => r.scenario.noGuard)!));
    expect(view.asRan).toEqual(totalsOf(t.replays[0]!));
    expect(view.atLimit.pending).toBe(0);
    expect(wasteAgain.replay).toEqual(view);
    // Tokens × calls, as the Timeline's costliest list, at the session's prices.
    expect(waste.basis).toBe('replay');
    const timesCalls = t.topCosts.reduce((a, c) => a + c.tokens * c.turnsInContext, 0);
    expect(waste.totalTokens).toBe(timesCalls);
    const usd = t.topCosts.reduce((a, c) => a + (c.inputTokens * t.prices.input + c.cacheWriteTokens * t.prices.cacheWrite + c.cacheReadTokens * t.prices.cacheRead) / 1e6, 0);
    expect(waste.totalUsd).toBeCloseTo(usd, 9);
    expect(waste.biggest[0]!.tokensTimesCalls).toBe(Math.max(...t.topCosts.map((c) => c.tokens * c.turnsInContext)));
    // Every row that names a call carries its arguments and the payload it opens.
    const rows = index.listPayloads({ sessionId: s.id, limit: 1000 }).rows;
    for (const b of waste.biggest.filter((x) => x.payloadId)) expect(b.args).toBe(rows.find((r) => r.id === b.payloadId)!.inputExcerpt);
    expect(waste.biggest.some((b) => b.args)).toBe(true);
    // A result the session's own guard passed and the guard at 2,000 spills is a flip, with its arguments.
    for (const f of again.replay.flips) {
      expect((f.action === 'spill') !== (f.atLimit === 'spill')).toBe(true);
      expect(f.payloadId).toBeDefined();
    }
    await index.close();
  });

  it('bare spill folders have no calls to multiply: payload sizes only, labelled', async () => {
    const root = await generateSessionsRoot(path.join(tmpDir(), 'root'), { sessions: 2, payloads: 10, seed: 3 });
    const { index, timelines } = tmpTimelines();
    index.addRoot(root.root);
    await index.scan();
    const t = await timelines.limitTunerData({ limitTokens: 1_000 });
    expect(t.replay.sessionsTotal).toBe(0);
    expect(t.replay.sessions).toEqual([]);
    expect(t.payloadsOnly.payloads).toBe(t.total);
    expect(t.payloadsOnly.sessions).toBe(2);
    expect(t.payloadsOnly.overLimit).toBe(t.sizes.filter((x) => x.tokens > 1_000).length);
    expect(t.assumptions.join(' ')).toMatch(/no calls to multiply/);
    const w = await timelines.wasteReport({ sessionId: index.listSessions()[0]!.id });
    expect(w.basis).toBe('payload-sizes');
    expect(w.replay).toBeUndefined();
    expect(w.totalUsd).toBeUndefined();
    await index.close();
  });

  it('replays a folder of sessions a page at a time, giving the event loop a turn between sessions', async () => {
    const { index, timelines } = tmpTimelines();
    index.addRoot(TIMELINE);
    await index.scan();
    const withCalls = (await timelines.limitTunerData({ limitTokens: 6_000, maxSessions: 1 })).replay;
    expect(withCalls.sessionsTotal).toBeGreaterThan(1);
    expect(withCalls.sessions).toHaveLength(1);
    expect(withCalls.next).toBe(1);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const seen = new Set(withCalls.sessions.map((s) => s.sessionId));
    let next = withCalls.next;
    while (next !== undefined) {
      const page = (await timelines.limitTunerData({ limitTokens: 6_000, offset: next, maxSessions: 2 })).replay;
      for (const s of page.sessions) seen.add(s.sessionId);
      next = page.next;
    }
    clearInterval(timer);
    expect(seen.size).toBe(withCalls.sessionsTotal);
    expect(ticks).toBeGreaterThan(0);
    await index.close();
  });
});
