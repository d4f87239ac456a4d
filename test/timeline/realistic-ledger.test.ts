/**
 * The ledger and the replay on the sessions the real binaries wrote (test/clients/realistic.ts:
 * Claude Code 2.1.328 with the hook and the proxy, Codex 0.171.0 with the proxy only; recorded into
 * test/clients/fixtures/realistic/). Replaying a session at the settings it ran with reproduces what
 * was measured, and each tool result's "entered" is one figure in every view.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { REALISTIC_FIXTURES } from '../clients/realistic.js';
import { copyTree, tmpDir, tmpTimelines } from './helpers.js';

/** The limit each session's guard ran with, as its own messages to the model state it ("> limit 12,000 tokens"). */
function ownLimit(kind: string): number {
  const saw = fs.readFileSync(path.join(REALISTIC_FIXTURES, kind, 'model-saw.json'), 'utf8');
  const limits = new Set([...saw.matchAll(/> limit ([\d,]+) tokens/g)].map((m) => Number(m[1]!.replace(/,/g, ''))));
  expect(limits.size, `${kind}: one limit in its guard's messages`).toBe(1);
  return [...limits][0]!;
}

async function indexed(kind: 'claude-code' | 'codex') {
  const dir = copyTree(path.join(REALISTIC_FIXTURES, kind), path.join(tmpDir('spillway-realistic-'), kind));
  const { index, timelines } = tmpTimelines();
  index.addRoot(path.join(dir, 'spillway-sessions'));
  index.addRoot(path.join(dir, kind === 'codex' ? 'sessions' : 'projects'));
  await index.scan();
  const session = index.listSessions().find((s) => s.kind === kind)!;
  expect(session).toBeDefined();
  return { index, timelines, session };
}

const within = (a: number, b: number) => Math.abs(a - b) / b;

describe.each(['claude-code', 'codex'] as const)('the realistic %s session, recorded from the real binary', (kind) => {
  it('replayed at its own limit it reproduces the measured context per call, its peak and its cost (within 2%)', async () => {
    const { session, timelines } = await indexed(kind);
    const limit = ownLimit(kind);
    const t = (await timelines.timeline({ sessionId: session.id, limits: [limit] }, { guardBudgetMs: 60_000 }))!;
    const measured = t.turns.map((x) => x.context!);
    expect(measured.length).toBeGreaterThan(10);
    const own = t.replays.find((r) => r.scenario.limit === limit)!;
    expect(own.pending ?? 0).toBe(0);
    own.contexts.forEach((c, i) => expect(within(c, measured[i]!), `call ${i}: ${c} vs ${measured[i]}`).toBeLessThan(0.02));
    expect(within(own.peak, t.measured.peak)).toBeLessThan(0.02);
    expect(within(own.costUsd, t.measured.costUsd)).toBeLessThan(0.02);
    // No guard is what the client would have let in: never below what was measured, never its results whole.
    const noGuard = t.replays.find((r) => r.scenario.noGuard)!;
    expect(noGuard.peak).toBeGreaterThanOrEqual(t.measured.peak);
    // The tuner at that limit: no call's decision differs from the session's own.
    const tuner = await timelines.limitTunerData({ sessionId: session.id, limitTokens: limit });
    expect(tuner.replay.flips.map((c) => `${c.tool} ${c.action}→${c.atLimit}`)).toEqual([]);
    expect(tuner.replay.sessions[0]!.atLimit.peak).toBe(own.peak);
  });

  it('each result\'s "entered" is one figure: timeline, table, payload header, sidebar, tuner and waste report', async () => {
    const { index, session, timelines } = await indexed(kind);
    const t = (await timelines.timeline({ sessionId: session.id }))!;
    const tools = t.turns.flatMap((x) => x.tools).filter((x) => x.payloadId);
    expect(tools.length).toBeGreaterThan(10);
    const rows = new Map(index.listPayloads({ sessionId: session.id, limit: 1_000 }).rows.map((r) => [r.id, r]));
    for (const x of tools) {
      const row = rows.get(x.payloadId!)!;
      expect(row.entered, `${x.name} ${x.id}`).toBe(x.tokens);
      expect(row.enteredHow).toBe('measured');
      expect(x.ledger!.entered).toEqual({ tokens: x.tokens, provenance: 'measured' });
      expect((await index.getPayload(row.id)).ledger!.entered).toEqual({ tokens: x.tokens, provenance: 'measured' });
    }
    const sidebar = index.listSessions().find((s) => s.id === session.id)!;
    expect(sidebar.enteredTokens).toBe([...rows.values()].reduce((a, r) => a + (r.entered ?? 0), 0));
    expect(sidebar.enteredTokens).toBe(tools.reduce((a, x) => a + x.tokens, 0));
    const waste = await timelines.wasteReport({ sessionId: session.id });
    const byId = new Map(tools.map((x) => [x.id, x]));
    expect(waste.biggest.length).toBeGreaterThan(0);
    for (const c of waste.biggest) expect(c.tokens, c.tool).toBe(byId.get(c.id)!.tokens);
    for (const g of waste.byTool) expect(g.tokens, g.tool).toBe(tools.filter((x) => x.name === g.tool).reduce((a, x) => a + x.tokens, 0));
  });

  it('the measured "entered" is written once, at indexing: a timeline request writes nothing', async () => {
    const { index, session, timelines } = await indexed(kind);
    const listed = index.listPayloads({ sessionId: session.id, limit: 1_000 }).rows;
    // Every result of a call with usage is measured before any view asked for the Timeline.
    expect(listed.filter((r) => r.enteredHow === 'measured').length).toBeGreaterThan(10);
    // The index's own connection (internal): a write transaction is what would contend with a listing's writer.
    const db = (index as unknown as { core: { db: { transaction: (...a: unknown[]) => unknown } } }).core.db;
    const tx = vi.spyOn(db, 'transaction');
    await timelines.timeline({ sessionId: session.id });
    const again = (await timelines.timeline({ sessionId: session.id }))!;
    expect(tx).not.toHaveBeenCalled();
    // And what it read back is the figure the first one wrote.
    const rows = new Map(index.listPayloads({ sessionId: session.id, limit: 1_000 }).rows.map((r) => [r.id, r]));
    for (const x of again.turns.flatMap((u) => u.tools).filter((u) => u.payloadId)) expect(rows.get(x.payloadId!)!.entered).toBe(x.tokens);
  });
});
