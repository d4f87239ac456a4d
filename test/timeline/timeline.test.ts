/**
 * The timeline of sessions the real clients ran until they compacted by themselves
 * (fixtures/timeline/SOURCES.md): the measured contexts, the split of each delta, what each tool
 * result cost, and the replay of the client's rule, which must find the real compactions.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { replay } from '../../src/timeline/index.js';
import { REPO, tmpTimelines } from './helpers.js';

const TL = path.join(REPO, 'test', 'index', 'fixtures', 'timeline');

async function timelineOf(root: string, req: Record<string, unknown> = {}) {
  const { index, timelines } = tmpTimelines();
  index.addRoot(root);
  await index.scan();
  const s = index.listSessions()[0]!;
  const t = (await timelines.timeline({ sessionId: s.id, limits: [2_000, 8_000, 200_000], keepLast: [1], ...req }))!;
  return { index, s, t };
}

const near = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => Math.abs(x - b[i]!) <= 1);

describe('timeline of Claude Code 2.1.328 with CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=5 (two real compactions)', () => {
  it('per-call context is the measured usage; parts add up to each delta within the stated residual', async () => {
    const { t } = await timelineOf(path.join(TL, 'claude-code-pct5'), { autoCompactPct: 5 });
    expect(t.turns.map((x) => x.context)).toEqual([20_490, 33_656, 48_504, 33_879, 45_314, 48_003, 48_087, 26_151]);
    expect(t.compactions.map((c) => c.turn)).toEqual([3, 7]);
    for (const x of t.turns) {
      const sum = Object.values(x.parts).reduce((a, b) => a + b, 0);
      expect(Math.abs(sum - x.delta!)).toBeLessThanOrEqual(Object.keys(x.parts).length);
    }
    // The baseline comes from the recorded request shape; the first call's residual is what that estimate missed.
    expect(t.baselineSource).toBe('estimated');
    expect(Math.abs(t.turns[0]!.residual!)).toBeLessThan(0.1 * t.turns[0]!.context!);
    expect(t.rule).toMatchObject({ trigger: 49_000, triggerSource: 'read', window: 1_000_000 });
    expect(t.warning).toBe('compacted 2×');
  });

  it('without the setting, the trigger is inferred from the two auto compactions: 5% of the effective window, said to be inferred', async () => {
    const { t } = await timelineOf(path.join(TL, 'claude-code-pct5'));
    // The transcript does not record CLAUDE_AUTOCOMPACT_PCT_OVERRIDE; its compactions bound the trigger.
    expect(t.rule).toMatchObject({ trigger: 49_000, triggerSource: 'inferred' });
    expect(t.rule.how).toMatch(/^5% of the effective window 980,000: the session's 2 auto compactions at [\d,]+ tokens, below the default 967,000 \(CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=5 fits them/);
    expect(t.replays[0]!.compactionsAt).toEqual([3, 7]);
    // The setting, once given, is read and wins.
    const given = await timelineOf(path.join(TL, 'claude-code-pct5'), { autoCompactPct: 6 });
    expect(given.t.rule).toMatchObject({ trigger: 58_800, triggerSource: 'read' });
  });

  it('the replay of the rule finds both compactions at the calls they happened; a guard that spills the 13K results avoids them', async () => {
    const { t } = await timelineOf(path.join(TL, 'claude-code-pct5'), { autoCompactPct: 5 });
    const [asRan, noGuard, g2k, g8k, g200k] = t.replays;
    expect(asRan!.compactionsAt).toEqual([3, 7]);
    expect(g2k!.compactionsAt).toEqual([]);
    expect(g8k!.compactionsAt).toEqual([]);
    expect(g2k!.replaced).toBeGreaterThanOrEqual(5);
    // The session ran with no guard: no guard, or one above every result, is the session as it ran.
    expect(noGuard!.compactionsAt).toEqual([3, 7]);
    expect(g200k!.compactionsAt).toEqual([3, 7]);
    expect(g200k!.contexts).toEqual(noGuard!.contexts);
    expect(noGuard!.peak).toBeGreaterThanOrEqual(g8k!.peak);
    expect(g8k!.costUsd).toBeLessThan(asRan!.costUsd);
    expect(t.replays.every((r) => r.provenance === 'simulated')).toBe(true);
    // The replay of the session as it ran stays close to what was measured.
    const measured = t.turns.map((x) => x.context!);
    asRan!.contexts.forEach((c, i) => expect(Math.abs(c - measured[i]!) / measured[i]!).toBeLessThan(0.05));
  });

  it('tool results ranked by tokens × calls in context, split into the cache write and the reads after it', async () => {
    const { t } = await timelineOf(path.join(TL, 'claude-code-pct5'), { autoCompactPct: 5 });
    const top = t.topCosts[0]!;
    // Paid as the session used the cache: every call it rode in pays for it once, read from the cache or sent again.
    expect(Math.abs(top.cacheWriteTokens + top.cacheReadTokens + top.inputTokens - top.tokens * top.turnsInContext)).toBeLessThanOrEqual(2);
    expect(top.cacheReadTokens).toBeGreaterThan(0);
    expect(top.cacheReadTokens).toBeLessThanOrEqual(top.tokens * (top.turnsInContext - 1));
    expect(top.cacheWriteTokens).toBeGreaterThanOrEqual(top.tokens);
    // The session as it ran, replayed in the same proportions, costs about what was measured.
    expect(Math.abs(t.replays[0]!.costUsd / t.measured.costUsd - 1)).toBeLessThan(0.1);
    const cost = (c: (typeof t.topCosts)[number]) => c.tokens * c.turnsInContext;
    expect(t.topCosts.map(cost)).toEqual([...t.topCosts.map(cost)].sort((a, b) => b - a));
    expect(t.topCosts.every((c) => c.payloadId)).toBe(true);
    // A result stays until the next compaction: the first Read (call 1) rode along in calls 1 and 2.
    expect(t.topCosts.find((c) => c.turn === 1)!.turnsInContext).toBe(2);
  });

  it('a long session under a guard compacts less often than without it (speed: npm run bench context)', async () => {
    const n = 2_000;
    const series = {
      contexts: new Array(n).fill(0),
      // Growth counts the results as they entered (the replay swaps them).
      growth: Array.from({ length: n }, (_, i) => (i ? 300 + 2_500 + (i % 7) * 1_000 : 20_000)),
      outputs: new Array(n).fill(50),
      tools: Array.from({ length: n }, (_, i) => (i ? [{ seen: 2_000 + (i % 7) * 1_000, full: 2_000 + (i % 7) * 1_000, message: 600, messageFrom: 'fixed' as const }, { seen: 500, full: 500, message: 600, messageFrom: 'fixed' as const }] : [])),
      pending: new Array(n).fill(0),
      realCompactions: [],
      scale: 1,
      post: 25_000,
      cacheHit: 1,
      writeShare: 1,
      baseline: 20_000,
      rule: { client: 'claude-code' as const, window: 200_000, windowSource: 'inferred' as const, trigger: 167_000, triggerSource: 'inferred' as const, when: 'before-call' as const, how: '' },
      prices: { input: 5, cacheWrite: 6.25, cacheRead: 0.5, output: 25 },
    };
    const guarded = replay(series, { limit: 4_000 });
    const open = replay(series, {});
    expect(guarded.compactionsAt.length).toBeGreaterThan(1);
    expect(guarded.compactionsAt.length).toBeLessThan(open.compactionsAt.length);
    expect(guarded.peak).toBeLessThan(167_000 + 10_000);
    expect(guarded.replaced).toBe([...Array(n).keys()].filter((i) => i && 2_000 + (i % 7) * 1_000 > 4_000).length);
  });
});

describe('timeline of the 1M-window compaction (Claude Code 2.1.328 default rule) and of Codex 0.171.0', () => {
  it('Claude Code: the default trigger 967,000, the replay finds the compaction within one call', async () => {
    const { t } = await timelineOf(path.join(TL, 'claude-code'));
    expect(t.rule).toMatchObject({ window: 1_000_000, trigger: 967_000, triggerSource: 'inferred' });
    expect(t.compactions.map((c) => c.turn)).toEqual([5]);
    expect(Math.abs(t.replays[0]!.compactionsAt[0]! - 5)).toBeLessThanOrEqual(1);
  });

  it('Codex: the window as read, model_auto_compact_token_limit as given, the replay finds both compactions', async () => {
    const { t } = await timelineOf(path.join(TL, 'codex'), { autoCompactLimit: 12_000 });
    expect(t.rule).toMatchObject({ client: 'codex', window: 258_400, windowSource: 'read', trigger: 12_000, triggerSource: 'read' });
    expect(t.turns.map((x) => x.context)).toEqual([8_696, 10_278, 8_843, 8_845, 9_701, 9_844]);
    expect(t.compactions.map((c) => c.turn)).toEqual([2, 3]);
    expect(near(t.replays[0]!.compactionsAt, [2, 3])).toBe(true);
    // Without the setting, the rule is inferred (90% of the raw window) and predicts none for this small session.
    const { t: inferred } = await timelineOf(path.join(TL, 'codex'));
    expect(inferred.rule).toMatchObject({ trigger: Math.floor((258_400 / 0.95) * 0.9), triggerSource: 'inferred' });
    expect(inferred.replays[0]!.compactionsAt).toEqual([]);
  });

  it('the session list warning: compacted sessions are flagged', async () => {
    const { index, s } = await timelineOf(path.join(TL, 'codex'));
    expect(index.contextWarnings().get(s.id)).toBe('compacted 2×');
  });
});
