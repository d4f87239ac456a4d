import { parseHookArgs } from './claude-code-fast.js';
import { runHook } from './claude-code-run.js';

/**
 * `spillway hook claude-code` for a result the fast path did not pass, without the CLI: the hook,
 * the guard and the summarizer load, not commander, the other verbs, zod or the index (~70 modules
 * instead of ~290; issue 20: a spill cost 6-7x `node -e 0`, most of it loading). bin/spillway.js
 * runs it after the fast path (claude-code-fast.ts) and before the CLI.
 *
 * The verb's action in src/cli/commands/hook.ts runs the same runHook (claude-code-run.ts) with what commander
 * hands it (its settings from integrations/settings.ts, which loads no commander). Around it the
 * entry does what the CLI's main() does, and must print the same bytes, write the same spill and
 * exit with the same code: test/integrations/hook-entry.test.ts runs both on the same stdin. A command
 * line that parseHookArgs cannot read as commander would (help, an unknown option, a value
 * commander refuses) is left to the CLI, which prints its usage message.
 */

/**
 * Run the hook for `spillway hook claude-code <args>`: true when it ran (whatever the result, as
 * the verb: exit 0, a line on stderr for what went wrong); false when the CLI must read the args.
 */
export async function runHookEntry(args: readonly string[]): Promise<boolean> {
  const opts = parseHookArgs(args);
  if (!opts) return false;
  await runHook(opts);
  return true;
}
