/**
 * The `spillway` package root: what an agent imports, and nothing else.
 * `import { guardLargeResult } from 'spillway'`
 *
 * Every export is named here: the two guard calls, restore, the four estimate verbs, the storage
 * seam and their types. test/api-report.test.ts holds this list as data, so a new export is a
 * deliberate change; the README's library section and docs/guard.md list the same names. The rest of
 * the pipeline (detection, previews, layout, limits…) is the inside of the library: the other layers
 * reach it through src/pipeline/index.ts, and renaming it breaks no user.
 *
 * The two guard calls summarize as the CLI, the proxy and the hook do: with no `summarize` option,
 * the default summarizer (src/summarize/default.ts: the offline structural summary unless
 * SPILLWAY_SUMMARIZER names another); `summarize: false` gives the preview instead. The pipeline
 * itself knows no summarizer (it sits below that layer), and reads no environment variable: this
 * door passes the process's (`env`, e.g. SPILLWAY_STORE) unless the caller gives one, and the four
 * estimate verbs take their `claudeCorrection` from SPILLWAY_CLAUDE_CORRECTION unless given one.
 */
import {
  claudeCorrectionFromEnv,
  countTokens as countWith,
  describeTokens as describeWith,
  estimateForDecision as decideWith,
  estimateTokens as estimateWith,
  guardLargeResult as guardWithHook,
  handleLargeResponse as handleWithHook,
  type GuardOptions as PipelineGuardOptions,
  type GuardResult,
  type HandleLargeResponseArgs as PipelineHandleArgs,
  type SummarizeHook,
  type ToolResult,
} from './pipeline/index.js';
import { defaultSummarizer } from './summarize/index.js';

export {
  restorePayload,
  restoreToFile,
  restoreFromStore,
  readMeta,
  RestoreError,
  LocalSpillStore,
  SpillStoreError,
  type AssetRef,
  type Estimate,
  type GuardResult,
  type NameCandidate,
  type PayloadMeta,
  type Profile,
  type SpillBody,
  type SpillKey,
  type SpillReader,
  type SpillStore,
  type StoreCallOptions,
  type StrategyName,
  type SummarizeHook,
  type TokenReport,
  type ToolResult,
} from './pipeline/index.js';

/** The guard's options; `summarize`: a hook, nothing for the default summary, or `false` for the preview only. */
export type GuardOptions = Omit<PipelineGuardOptions, 'summarize'> & { summarize?: SummarizeHook | false };
/** handleLargeResponse's arguments; `summarize` as in {@link GuardOptions}. */
export type HandleLargeResponseArgs = Omit<PipelineHandleArgs, 'summarize'> & { summarize?: SummarizeHook | false };

function hookOf(summarize: SummarizeHook | false | undefined): SummarizeHook | undefined {
  if (summarize === false) return undefined;
  if (summarize !== undefined) return summarize;
  try {
    return defaultSummarizer(process.env);
  } catch {
    return undefined; // never throw on a tool result: the preview instead
  }
}

/** The pipeline's guardLargeResult, with the default summary (see above). Never throws. */
export function guardLargeResult(result: ToolResult, options: GuardOptions): Promise<GuardResult | null> {
  return guardWithHook(result, { env: process.env, ...options, summarize: hookOf(options?.summarize) });
}

/** The pipeline's handleLargeResponse, with the default summary (see above). Never throws. */
export function handleLargeResponse(args: HandleLargeResponseArgs): Promise<GuardResult> {
  return handleWithHook({ env: process.env, ...args, summarize: hookOf(args?.summarize) });
}

/** The estimate verbs' options with the process's SPILLWAY_CLAUDE_CORRECTION where the caller gave no correction. */
function withEnvCorrection<O extends { claudeCorrection?: number }>(opts: O | undefined): O {
  if (opts?.claudeCorrection !== undefined) return opts;
  const claudeCorrection = claudeCorrectionFromEnv(process.env);
  return (claudeCorrection === undefined ? (opts ?? {}) : { ...opts, claudeCorrection }) as O;
}

/** The cheap estimate of a text (estimate/cheap.ts); synchronous. */
export function estimateTokens(text: string, opts?: Parameters<typeof estimateWith>[1]): ReturnType<typeof estimateWith> {
  return estimateWith(text, withEnvCorrection(opts));
}

/** The estimate the guard decides with against `limitTokens`: cheap far from it, exact near it. */
export function estimateForDecision(text: string, limitTokens: number, opts?: Parameters<typeof decideWith>[2]): ReturnType<typeof decideWith> {
  return decideWith(text, limitTokens, withEnvCorrection(opts));
}

/** An exact count with `profile`'s tokenizer (the claude profile corrected). */
export function countTokens(text: string, profile: Parameters<typeof countWith>[1], opts?: Parameters<typeof countWith>[2]): ReturnType<typeof countWith> {
  return countWith(text, profile, withEnvCorrection(opts));
}

/** Every strategy's estimate of a text, the density shares and how far to trust them. */
export function describeTokens(text: string, opts?: Parameters<typeof describeWith>[1]): ReturnType<typeof describeWith> {
  return describeWith(text, withEnvCorrection(opts));
}
