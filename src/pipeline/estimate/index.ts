/**
 * Token estimation: the four verbs and their types, nothing else. Which one to call:
 *
 * | you want                                                   | call                                    | cost                                   |
 * | ---------------------------------------------------------- | --------------------------------------- | -------------------------------------- |
 * | a number now, no tokenizer (prompts, budgets, summaries)   | `estimateTokens(text, { profile })`      | sync, one pass (sampled past 64 K)     |
 * | whether a result fits a limit (the guard)                  | `estimateForDecision(text, limit, opts)` | a sample; the tokenizer only near the limit, and only as far as needed |
 * | the real tokenizer's count                                 | `countTokens(text, profile)`             | loads the tokenizer (~0.1-0.6 s once), ~5-10 MB/s |
 * | the numbers a person reads (inspector, index, CLI, sidecar) | `describeTokens(text, { profile })`      | one pass; the tokenizer where the fit can be far off, or on request |
 *
 * `countTokensAnthropicApi` is `countTokens` for the `claude` profile asked of Anthropic's
 * count_tokens endpoint instead of the local tokenizer (the CLI's `estimate --anthropic-model`).
 * The words the verbs take (strategies, profiles, defaults, the Claude correction) are the other
 * door, options.ts. Everything else in this folder is internal (the features, the fit, the sampler,
 * the risk bounds), reached only through internal.ts by the estimator's tests, benches and
 * calibration scripts; docs/estimation.md describes how it works and how it was calibrated.
 */
export { estimateTokens, type CheapOptions } from './cheap.js';
export { estimateForDecision, type DecisionOptions } from './decision.js';
export { countTokens, countTokensAnthropicApi, type CountOptions } from './exact.js';
export { describeTokens, type DescribeOptions, type TokenReport } from './report.js';
export type { EstimateOptions } from './options.js';
