/**
 * The ledger (docs/index.md "The ledger"): one record per tool result, written at indexing and read
 * by every view, on a small realistic Claude Code session (ledger-fixture.ts): an image Read, a
 * base64 dump the hook spilled with its image cut out, a Bash output Claude Code persisted itself,
 * an MCP read and a Grep.
 */
import { describe, expect, it } from 'vitest';
import { HOOK_LIMIT, writeLedgerSession } from './ledger-fixture.js';
import { tmpDir } from './helpers.js';
import { tmpTimelines } from '../timeline/helpers.js';

async function indexed() {
  const dir = tmpDir('spillway-ledger-');
  const fx = await writeLedgerSession(dir);
  // As the service opens them: the timeline layer measures the ledgers in the index's background phase.
  const { index, timelines } = tmpTimelines();
  index.addRoot(fx.spills);
  index.addRoot(fx.projects);
  await index.scan();
  const session = index.listSessions().find((s) => s.kind === 'claude-code')!;
  const rows = index.listPayloads({ sessionId: session.id, limit: 100 }).rows;
  return { fx, index, timelines, session, rows };
}

describe('the ledger, written at indexing', () => {
  it('an image Read is priced by its pixels (Anthropic\'s rule), full and entered, never as its base64', async () => {
    const { fx, index, rows } = await indexed();
    const read = rows.find((r) => r.tool === 'Read')!;
    expect(read.full).toBe(fx.imageTokens);
    // Entered is measured at indexing (the usage delta of its call, split): the pixels' price and the block's wrapping.
    expect(read.enteredHow).toBe('measured');
    expect(Math.abs(read.entered! - fx.imageTokens) / fx.imageTokens).toBeLessThan(0.01);
    // The base64 text would have been ~100x that.
    expect(read.tokens).toBeGreaterThan(20 * fx.imageTokens);
    const d = await index.getPayload(read.id);
    expect(d.ledger).toMatchObject({ full: { tokens: fx.imageTokens, images: 1 }, asClient: { tokens: fx.imageTokens, rule: 'claude-code.read' }, entered: { tokens: read.entered, provenance: 'measured' } });
  });

  it("a Bash output Claude Code persisted: full is the whole output, as the client its preview, entered the stub", async () => {
    const { fx, index, rows } = await indexed();
    const logs = rows.find((r) => r.tool === 'Bash' && r.action === 'spill' && !r.join)!;
    const d = await index.getPayload(logs.id);
    expect(d.ledger!.full.bytes).toBe(fx.bashBigChars);
    expect(d.ledger!.asClient).toMatchObject({ rule: 'claude-code.bash', provenance: 'observed' });
    expect(d.ledger!.asClient.tokens).toBeLessThan(d.ledger!.full.tokens / 5);
    expect(d.ledger!.entered.tokens).toBeLessThan(d.ledger!.full.tokens / 5);
  });

  it('the base64 dump the hook spilled: the asset it cut is kept out, by its text cost; the client would have shown a preview', async () => {
    const { index, rows } = await indexed();
    const b64 = rows.find((r) => r.join !== undefined)!;
    const d = await index.getPayload(b64.id);
    expect(d.ledger!.keptOut.assets).toBe(1);
    expect(d.ledger!.keptOut.bytes).toBeGreaterThan(1_000);
    expect(d.ledger!.keptOut.assetTokens).toBeGreaterThan(HOOK_LIMIT);
    // Claude Code would have persisted the 2 MB of base64 (over 30,000 characters) and shown ~2,000 characters of it.
    expect(d.ledger!.asClient.rule).toBe('claude-code.bash');
    expect(d.ledger!.asClient.tokens).toBeLessThan(3_000);
    expect(d.ledger!.entered.tokens).toBeLessThan(1_000);
  });

  it('the sidebar total is what entered, named, not the sum of the full results', async () => {
    const { session, rows } = await indexed();
    expect(session.enteredTokens).toBe(rows.reduce((a, r) => a + (r.entered ?? 0), 0));
    expect(session.fullTokens).toBe(rows.reduce((a, r) => a + (r.full ?? 0), 0));
    expect(session.enteredTokens!).toBeLessThan(session.totalTokens / 10);
  });
});

describe('the ledger, measured by the timeline and read by every view', () => {
  it('entered becomes the measured share of each call; the table, the header and the timeline show the same figure', async () => {
    const { fx, index, session, timelines } = await indexed();
    const t = (await timelines.timeline({ sessionId: session.id }))!;
    const tools = t.turns.flatMap((x) => x.tools);
    const read = tools.find((x) => x.name === 'Read')!;
    // The image entered at its pixels in the timeline too (it was 0 before).
    expect(Math.abs(read.tokens - fx.entered.toolu_read_png!) / fx.entered.toolu_read_png!).toBeLessThan(0.05);
    const rows = index.listPayloads({ sessionId: session.id, limit: 100 }).rows;
    for (const x of tools) {
      const row = rows.find((r) => r.id === x.payloadId)!;
      expect(row.entered, x.name).toBe(x.tokens);
      expect(row.enteredHow).toBe('measured');
      expect(x.ledger!.entered).toEqual({ tokens: x.tokens, provenance: 'measured' });
      expect((await index.getPayload(row.id)).ledger!.entered.tokens).toBe(x.tokens);
    }
    const again = index.listSessions().find((s) => s.id === session.id)!;
    expect(again.enteredTokens).toBe(tools.reduce((a, x) => a + x.tokens, 0));
  });

  it('replays: at the session\'s own settings within 2% per call; no guard is the client\'s own rule; the cut asset is cut again', async () => {
    const { fx, session, timelines } = await indexed();
    const t = (await timelines.timeline({ sessionId: session.id, limits: [HOOK_LIMIT, 2_000, 25_000] }, { guardBudgetMs: 60_000 }))!;
    const measured = t.turns.map((x) => x.context!);
    expect(measured).toEqual(fx.contexts);
    const [asRan, noGuard, atOwn, at2k, at25k] = t.replays;
    for (const r of [asRan!, atOwn!]) r.contexts.forEach((c, i) => expect(Math.abs(c - measured[i]!) / measured[i]!, `${r.label} call ${i}`).toBeLessThan(0.02));
    // Every limit cuts the image out again: none puts the base64 dump back whole.
    for (const r of [at2k!, at25k!]) expect(r.peak).toBeLessThan(measured[measured.length - 1]! * 1.1);
    // No guard is what Claude Code would have let in: a preview of the base64 dump, not its 200k tokens.
    expect(noGuard!.peak).toBeLessThan(measured[measured.length - 1]! + 3_000);
    expect(noGuard!.peak).toBeGreaterThan(measured[measured.length - 1]!);
  });

  it('savings are against what the client would have done anyway: tokens kept out × calls they stayed; a spill smaller than the preview saves, one bigger would be negative', async () => {
    const { session, timelines } = await indexed();
    const t = (await timelines.timeline({ sessionId: session.id }))!;
    const b64 = t.topCosts.find((c) => c.id === 'toolu_b64')!;
    expect(b64.clientTokens!).toBeGreaterThan(b64.tokens);
    expect(b64.savedTokens).toBe((b64.clientTokens! - b64.tokens) * b64.turnsInContext);
    expect(b64.savedUsd!).toBeGreaterThan(0);
    // A result that passed saved nothing.
    const grep = t.topCosts.find((c) => c.id === 'toolu_grep')!;
    expect(grep.savedTokens).toBe(0);
  });
});
