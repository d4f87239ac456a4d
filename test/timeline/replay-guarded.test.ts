import { describe, expect, it } from 'vitest';
import { buildTimeline, contextRule, replay, type PayloadLink } from '../../src/timeline/replay.js';
import type { TurnRecord } from '../../src/index/index.js';

/**
 * A session that ran with the guard: its big results reached the model as the guard's messages.
 * Replayed at another limit under which the guard still spills them, nothing changes, so the
 * replay must draw the measured contexts, whatever the ratio between Spillway's estimates and
 * the API's counts (here the API counts 0.6 of the estimate, as a chars/4 double does).
 */
const turn = (seq: number, context: number, parts: TurnRecord['parts'], tools: TurnRecord['tools'] = []): TurnRecord => ({
  seq,
  at: `2026-12-02T05:34:0${seq}.000Z`,
  model: 'claude-opus-5-5',
  context,
  input: 1,
  cacheWrite: context,
  cacheRead: 0,
  output: 40,
  kind: 'main',
  parts,
  tools,
  line: seq * 3,
});

describe('the replay of a guarded session at a limit that spills the same results', () => {
  it('puts back what was measured for each spilled result, so it draws the measured contexts', () => {
    const turns = [
      turn(0, 2_500, { baseline: 4_000, user: 100 }),
      // The Read came back as the guard's message: estimated 2,300, the API counted 0.6 of that.
      turn(1, 2_500 + 1_400, { assistant: 20 }, [{ id: 'toolu_read', name: 'Read', tokens: 2_300 }]),
      turn(2, 2_500 + 1_400 + 1_000, { assistant: 20 }, [{ id: 'toolu_bash', name: 'Bash', tokens: 1_650 }]),
      turn(3, 2_500 + 1_400 + 1_000 + 20, { assistant: 20 }, [{ id: 'toolu_small', name: 'Read', tokens: 10 }]),
    ];
    const payloads = new Map<string, PayloadLink>([
      ['toolu_read', { payloadId: 'p-read', tokens: 24_508, action: 'spill', messageTokens: 2_300 }],
      ['toolu_bash', { payloadId: 'p-bash', tokens: 145_594, action: 'spill', messageTokens: 1_650 }],
      ['toolu_small', { payloadId: 'p-small', tokens: 8, action: 'pass' }],
    ]);
    const rule = contextRule('claude-code', turns);
    const { data, series } = buildTimeline({ sessionId: 's', client: 'claude-code', turns, compactions: [], notes: [], payloads, rule, prices: { input: 5, cacheWrite: 6.25, cacheRead: 0.5, output: 25 } }, []);
    const measured = data.turns.map((t) => t.context!);
    // The guard at 8,000 and at 2,000 still spills both big results (the model got the saved message).
    const spillsBoth = (id: string, limit: number) => (id === 'p-small' ? null : limit < 24_508 ? { tokens: 2_000 } : null);
    for (const limit of [2_000, 8_000]) {
      const r = replay(series, { limit }, undefined, spillsBoth);
      expect(r.replaced).toBe(2);
      expect(r.contexts).toEqual(measured);
      expect(r.peak).toBe(Math.max(...measured));
    }
    // Above the Read's size it passes whole: the replay grows by the whole result, in the API's units.
    const high = replay(series, { limit: 30_000 }, undefined, (id, limit) => (id === 'p-bash' && limit < 145_594 ? { tokens: 1_700 } : null));
    expect(high.contexts[1]!).toBeGreaterThan(measured[1]! + 10_000);
  });

  it("prices the replay as the session used the cache, so the session as it ran costs what was measured", () => {
    const prices = { input: 5, cacheWrite: 6.25, cacheRead: 0.5, output: 25 };
    const contexts = [2_500, 3_900, 4_900, 4_920];
    // A caching client: each call reads the one before from the cache and writes what is new.
    const cached = contexts.map((c, i) => ({ ...turn(i, c, i ? { assistant: 20 } : { baseline: 2_400, user: 100 }), input: 3, cacheRead: i ? contexts[i - 1]! : 0, cacheWrite: c - 3 - (i ? contexts[i - 1]! : 0) }));
    // A model API that reports no cache at all (a double counting the request, a proxy): all plain input.
    const plain = contexts.map((c, i) => ({ ...turn(i, c, i ? { assistant: 20 } : { baseline: 2_400, user: 100 }), input: c, cacheRead: 0, cacheWrite: 0 }));
    for (const turns of [cached, plain]) {
      const { data, series } = buildTimeline({ sessionId: 's', client: 'claude-code', turns, compactions: [], notes: [], payloads: new Map(), rule: contextRule('claude-code', turns), prices }, []);
      const asRan = replay(series, {});
      expect(asRan.costUsd).toBeCloseTo(data.measured.costUsd, 6);
      expect(asRan.inputTokens + asRan.cacheWriteTokens + asRan.cacheReadTokens).toBe(data.measured.inputTokens + data.measured.cacheWriteTokens + data.measured.cacheReadTokens);
    }
  });
});
