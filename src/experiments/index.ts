/**
 * Summary experiments (docs/experiments.md): datasets of indexed payloads, runs of a variant over
 * them through a job queue (bounded, cancellable, under a budget, cached, resumable), and
 * comparisons of runs against a baseline. The store is the index's (src/index/experiments.ts).
 *
 * | export | for |
 * | --- | --- |
 * | `saveDataset`, `selectItems`, `sample`, `specName` | make a dataset: by filter or ids, with a seeded sample |
 * | `runExperiment` | run or resume one variant over a dataset |
 * | `compareRuns` | a baseline against candidates: per item deltas, aggregates, regressions first |
 * | `runQueue` | the job queue alone (bounded concurrency, stop, cancel) |
 */
export { saveDataset, selectItems, sample, specName, checkDatasetName, ExperimentError, DEFAULT_SAMPLE_SEED } from './dataset.js';
export { runExperiment, parseFocusPolicy, cacheKey, DEFAULT_RUN_CONCURRENCY, MAX_RUN_CONCURRENCY, type RunOptions } from './run.js';
export {
  compareRuns,
  figuresOf,
  METRICS,
  SAME_EPSILON,
  type Comparison,
  type CandidateComparison,
  type ItemComparison,
  type MetricAggregate,
  type MetricName,
  type Figures,
  type RunResults,
} from './compare.js';
export { runQueue, type QueueControl, type QueueOptions, type QueueOutcome } from './queue.js';
export type { Budget, FocusPolicy, ItemInput, ItemSource, RunProgress, RunReport, Variant } from './types.js';
