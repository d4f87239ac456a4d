/**
 * The payload header and the Estimates tab name the rule that decided what entered the model's context,
 * from the ledger (issue 29: "show what entered the context for that call, and which rule").
 */
import { describe, expect, it } from 'vitest';
import type { PayloadLedger } from '../../src/service/contract.js';
import { enteredRule } from '../../app/components/detail/ledger.js';

const ledger = (full: number, asClient: number, entered: number, assets = 0): PayloadLedger => ({
  full: { bytes: full * 4, tokens: full, profile: 'claude', images: 0, provenance: 'estimated' },
  asClient: { tokens: asClient, rule: 'claude-code.bash', provenance: 'observed', evidence: 'test' },
  entered: { tokens: entered, provenance: 'measured' },
  keptOut: { assets, bytes: assets * 1000, assetTokens: assets * 100, spilled: full - entered, provenance: 'estimated' },
});

describe('enteredRule', () => {
  it("a spill entered as the guard's message", () => {
    expect(enteredRule('spill', ledger(40_000, 8_000, 700)).id).toBe('guard-message');
  });
  it('assets cut out, with their count', () => {
    const r = enteredRule('inline-assets', ledger(5_000, 5_000, 900, 2));
    expect(r.id).toBe('guard-assets');
    expect(r.text).toContain('2 assets');
  });
  it("a result the client capped itself names the client's rule and its provenance", () => {
    const r = enteredRule('pass', ledger(40_000, 600, 600));
    expect(r.id).toBe('client-cap');
    expect(r.text).toContain('claude-code.bash');
    expect(r.text).toContain('observed');
  });
  it('otherwise it passed whole', () => {
    expect(enteredRule('pass', ledger(300, 300, 310)).id).toBe('whole');
  });
});
