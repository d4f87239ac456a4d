import type { GuardAction, PayloadLedger } from '../../../src/service/contract.js';
import { formatInt } from '../../lib/format.js';

/**
 * Which rule decided what entered the model's context for one tool result, in words, from the ledger
 * (src/index/ledger.ts) and the guard's action: the guard's message (a spill), the guard cutting assets
 * out, the client's own cap (its rule from src/agents, e.g. Claude Code persisting Bash over 30,000
 * chars), or the result passed whole. The header and the Estimates tab say the same.
 */
export function enteredRule(action: GuardAction, ledger: PayloadLedger): { id: 'guard-message' | 'guard-assets' | 'client-cap' | 'whole'; text: string } {
  if (action === 'spill') return { id: 'guard-message', text: "the guard's message (the result was spilled)" };
  if (action === 'inline-assets') {
    const n = ledger.keptOut.assets;
    return { id: 'guard-assets', text: `the guard cut ${formatInt(n)} ${n === 1 ? 'asset' : 'assets'} out, the rest passed` };
  }
  if (ledger.asClient.tokens < ledger.full.tokens) return { id: 'client-cap', text: `the client's own cap (${ledger.asClient.rule}, ${ledger.asClient.provenance})` };
  return { id: 'whole', text: 'passed whole' };
}

/** "measured from the API's usage" / "estimated": what a figure's provenance means, for a title. */
export function provenanceText(p: PayloadLedger['entered']['provenance']): string {
  return p === 'measured' ? "measured from the API's usage" : 'estimated (no usage for this call)';
}
