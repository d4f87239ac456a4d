/**
 * Issue 30, item 6: every default model has a price, and a tiered price is applied per request.
 * Without a price a default run reports no cost, and the experiments' budgets could not be kept.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_MODELS, PRICING, PROVIDER_NAMES, costOf } from '../../src/summarize/index.js';

describe('prices', () => {
  it('every cloud provider’s default model is in the price table', () => {
    for (const p of PROVIDER_NAMES) {
      if (p === 'structural' || p === 'local') continue; // offline and on your own machine: no API cost
      expect(PRICING[DEFAULT_MODELS[p]], `${p}: ${DEFAULT_MODELS[p]}`).toBeDefined();
    }
  });

  it('Haiku 5.5 bills a prompt over 100,000 tokens at its long-prompt rate, per request, not per run', () => {
    const haiku = PRICING['claude-haiku-5-5'];
    // Two 60k-token chunks: each under the threshold, although the run's sum (120k) is over it.
    expect(costOf(haiku, [{ inputTokens: 60_000, outputTokens: 1_000 }, { inputTokens: 60_000, outputTokens: 1_000 }])).toBeCloseTo((120_000 * 0.1 + 2_000 * 0.5) / 1e6, 9);
    // One 120k-token prompt: the long-prompt rate for that request.
    expect(costOf(haiku, [{ inputTokens: 120_000, outputTokens: 1_000 }])).toBeCloseTo((120_000 * 0.5 + 1_000 * 2.5) / 1e6, 9);
    // A flat price has no tier.
    expect(costOf(PRICING['gpt-5-mini'], [{ inputTokens: 200_000, outputTokens: 0 }])).toBeCloseTo(0.05, 9);
    expect(costOf(undefined, [{ inputTokens: 1, outputTokens: 1 }])).toBeUndefined();
  });
});
