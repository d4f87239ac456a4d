/**
 * Token estimation. Which one to call:
 *
 * | you want                                                   | call                                    | cost                                   |
 * | ---------------------------------------------------------- | --------------------------------------- | -------------------------------------- |
 * | a number now, no tokenizer (prompts, budgets, summaries)   | `estimateTokens(text, { profile })`      | sync, one pass (sampled past 64 K)     |
 * | whether a result fits a limit (the guard)                  | `estimateForDecision(text, limit, opts)` | a sample; the tokenizer only near the limit, and only as far as needed |
 * | the real tokenizer's count                                 | `countTokens(text, profile)`             | loads the tokenizer (~0.1-0.6 s once), ~5-10 MB/s |
 * | the numbers a person reads (inspector, index, CLI, sidecar) | `describeTokens(text, { profile })`      | one pass; the tokenizer where the fit can be far off, or on request |
 *
 * Everything else in this folder is internal (the features, the fit, the sampler, the risk bounds);
 * docs/estimation.md describes how it works and how it was calibrated.
 */
export { estimateTokens, type CheapOptions } from './cheap.js';
export { estimateForDecision, MAX_PLAUSIBLE_BYTES_PER_TOKEN, type DecisionOptions } from './decision.js';
export { countTokens, countTokensAnthropicApi, type CountOptions } from './exact.js';
export { describeTokens, type DescribeOptions, type TokenReport } from './report.js';
export type { RiskPart } from './risk.js';
export {
  ALL_STRATEGIES,
  CHEAP_STRATEGIES,
  CLAUDE_CORRECTION_ENV,
  DEFAULT_PROFILE,
  DEFAULT_STRATEGY,
  EXACT_STRATEGIES,
  parseClaudeCorrection,
  type CheapStrategy,
  type EstimateOptions,
} from './options.js';
