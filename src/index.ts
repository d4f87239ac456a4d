/**
 * The `spillway` package root: what an agent imports.
 * `import { guardLargeResult } from 'spillway'`
 *
 * Everything is the pipeline's, except that the two guard calls summarize as the CLI, the proxy and
 * the hook do: with no `summarize` option, the default summarizer (src/summarize/default.ts: the
 * offline structural summary unless SPILLWAY_SUMMARIZER names another); `summarize: false` gives
 * the preview instead. The pipeline itself knows no summarizer (it sits below that layer), and reads
 * no environment variable: this door passes the process's (`env`, e.g. SPILLWAY_STORE) unless given.
 */
import {
  guardLargeResult as guardWithHook,
  handleLargeResponse as handleWithHook,
  type GuardOptions,
  type GuardResult,
  type HandleLargeResponseArgs,
  type SummarizeHook,
  type ToolResult,
} from './pipeline/index.js';
import { defaultSummarizer } from './summarize/index.js';

export * from './pipeline/index.js';

/** `summarize`: a hook, nothing for the default summary, or `false` for the preview only. */
export type LibraryGuardOptions = Omit<GuardOptions, 'summarize'> & { summarize?: SummarizeHook | false };
export type LibraryHandleArgs = Omit<HandleLargeResponseArgs, 'summarize'> & { summarize?: SummarizeHook | false };

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
export function guardLargeResult(result: ToolResult, options: LibraryGuardOptions): Promise<GuardResult | null> {
  return guardWithHook(result, { env: process.env, ...options, summarize: hookOf(options?.summarize) });
}

/** The pipeline's handleLargeResponse, with the default summary (see above). Never throws. */
export function handleLargeResponse(args: LibraryHandleArgs): Promise<GuardResult> {
  return handleWithHook({ env: process.env, ...args, summarize: hookOf(args?.summarize) });
}
