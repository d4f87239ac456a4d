import type { Summarizer } from '../pipeline/types.js';
import { createSummarizer, isProviderName } from './summarizer.js';
import type { ProviderName } from './types.js';

/**
 * The one default summary of every way in: the library's package root, `guard`, `mcp`, `hook` and
 * `summarize`. `SPILLWAY_SUMMARIZER` when it names a provider, else the offline structural summary
 * (a schema, the fields and a sample, with no model and no network). `env` is the caller's
 * variables, read at the edge.
 */
export function defaultProviderName(env: NodeJS.ProcessEnv): ProviderName {
  const p = env.SPILLWAY_SUMMARIZER;
  return isProviderName(p) ? p : 'structural';
}

const made = new Map<ProviderName, Summarizer>();

/** The default summarizer ({@link defaultProviderName}), made once per provider. */
export function defaultSummarizer(env: NodeJS.ProcessEnv): Summarizer {
  const name = defaultProviderName(env);
  let s = made.get(name);
  if (!s) made.set(name, (s = createSummarizer({ provider: name, env })));
  return s;
}
