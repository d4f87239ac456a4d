/**
 * The replay's message for a result over the replayed limit is the one the real guard builds
 * offline from the saved payload (no provider, nothing written), kept per (payload, settings).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { OfflineGuard, settingsOf } from '../../src/timeline/guard.js';
import { estimateText } from '../../src/index/index.js';
import { REPO, tmpDir, tmpTimelines } from './helpers.js';

const PCT5 = path.join(REPO, 'test', 'index', 'fixtures', 'timeline', 'claude-code-pct5');

describe('the real guard, offline, for the replay', () => {
  it('builds the message the guard gives, once per (payload, settings), and writes nothing', async () => {
    const dir = tmpDir('spillway-offline-guard-');
    const text = Array.from({ length: 3_000 }, (_, i) => `line ${i}: ${'lorem ipsum dolor sit amet '.repeat(3)}`).join('\n');
    let reads = 0;
    const guard = new OfflineGuard(async () => {
      reads++;
      return { type: 'text', text, bytes: text.length };
    });
    const target = { payloadId: 'p1', tool: 'Read', sessionPath: dir };
    const at2k = settingsOf(2_000, { strategy: 'chars4', profile: 'claude' });
    expect(await guard.build([target], at2k, 10_000)).toBe(0);
    const direct = await guardLargeResult(text, { sessionPath: path.join(tmpDir(), 's'), toolName: 'Read', limitTokens: 2_000, strategy: 'chars4', profile: 'claude' });
    const built = guard.known('p1', at2k)!;
    // The same message but for the folder it names.
    expect(Math.abs(built.tokens - estimateText(direct!.message, 'claude'))).toBeLessThanOrEqual(20);
    expect(built.tokens).toBeLessThan(2_000);
    await guard.build([target], at2k, 10_000);
    expect(guard.runs).toBe(1);
    expect(reads).toBe(1);
    // Over every estimate of it, the guard passes it whole.
    const high = settingsOf(10_000_000, {});
    await guard.build([target], high, 10_000);
    expect(guard.known('p1', high)).toBeNull();
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a payload that cannot be read back keeps no entry (the replay falls back and says so)', async () => {
    const guard = new OfflineGuard(async () => {
      throw new Error('gone');
    });
    await guard.build([{ payloadId: 'x', tool: 'Bash', sessionPath: '/nowhere' }], settingsOf(1_000, {}), 1_000);
    expect(guard.known('x', settingsOf(1_000, {}))).toBeUndefined();
  });

  it('the replay of a real session at 2K uses the guard\'s messages for every result it replaces', async () => {
    const { index, timelines } = tmpTimelines();
    index.addRoot(PCT5);
    await index.scan();
    const s = index.listSessions()[0]!;
    // No budget: nothing built yet, every replaced result at the usual size, and the reply says how many are pending.
    const early = (await timelines.timeline({ sessionId: s.id, limits: [2_000], autoCompactPct: 5 }, { guardBudgetMs: 0 }))!;
    expect(early.replays[2]!.messages.guard).toBe(0);
    expect(early.replays[2]!.pending).toBeGreaterThanOrEqual(5);
    const t = (await timelines.timeline({ sessionId: s.id, limits: [2_000], autoCompactPct: 5 }, { guardBudgetMs: 60_000 }))!;
    const g2k = t.replays[2]!;
    expect(g2k.replaced).toBeGreaterThanOrEqual(5);
    expect(g2k.messages).toEqual({ guard: g2k.replaced, saved: 0, fixed: 0 });
    expect(g2k.pending).toBeUndefined();
    // A slider move to the same limit with other settings builds those settings' messages.
    const again = (await timelines.timeline({ sessionId: s.id, limits: [2_000], autoCompactPct: 5, strategy: 'chars4', profile: 'o200k', replayOnly: true }, { guardBudgetMs: 60_000 }))!;
    expect(again.replays[2]!.messages.guard).toBe(again.replays[2]!.replaced);
    expect(again.turns).toEqual([]);
    await index.close();
  });
});
