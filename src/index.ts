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
 * door passes the process's (`env`, e.g. SPILLWAY_STORE) unless the caller gives one.
 */
import {
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
  estimateTokens,
  estimateForDecision,
  countTokens,
  describeTokens,
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
