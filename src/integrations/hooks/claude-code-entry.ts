import { guardSettingsOf } from '../settings.js';
import { terminalSafe } from '../../pipeline/terminal.js';
import { handleClaudeCodeHook } from './claude-code.js';
import { MAX_HOOK_INPUT_BYTES, parseHookArgs, readHookStdin, type HookCliOptions } from './claude-code-fast.js';
import { errMessage } from '../../pipeline/values.js';

/**
 * `spillway hook claude-code` for a result the fast path did not pass, without the CLI: the hook,
 * the guard and the summarizer load, not commander, the other verbs, zod or the index (~70 modules
 * instead of ~290; issue 20: a spill cost 6-7x `node -e 0`, most of it loading). bin/spillway.js
 * runs it after the fast path (claude-code-fast.ts) and before the CLI.
 *
 * It does what the verb's action in src/cli/commands/hook.ts does with what commander hands it
 * (the same guardSettingsOf, from integrations/settings.ts, which loads no commander),
 * and what main() around it does, and must print the same bytes, write the same spill and exit
 * with the same code: test/integrations/hook-entry.test.ts runs both on the same stdin. A command
 * line that parseHookArgs cannot read as commander would (help, an unknown option, a value
 * commander refuses) is left to the CLI, which prints its usage message.
 */

/** Claude Code runs Claude models: the same default as HOOK_DEFAULT_PROFILE (src/cli/commands/hook.ts; a test holds them equal). */
export const ENTRY_DEFAULT_PROFILE = 'claude' as const;

/**
 * Run the hook for `spillway hook claude-code <args>`: true when it ran (whatever the result, as
 * the verb: exit 0, a line on stderr for what went wrong); false when the CLI must read the args.
 */
export async function runHookEntry(args: readonly string[]): Promise<boolean> {
  const opts = parseHookArgs(args);
  if (!opts) return false;
  // Whatever happens, exit 0: a failing PostToolUse hook must not disturb the agent.
  try {
    const stdin = await readHookStdin();
    if (stdin === undefined) {
      process.stderr.write(`spillway hook: input over ${MAX_HOOK_INPUT_BYTES} bytes; left unchanged\n`);
      return true;
    }
    const outcome = await handleClaudeCodeHook(stdin, { guard: guardSettingsOf(opts, ENTRY_DEFAULT_PROFILE), sessionDir: opts.session, focusArg: opts.focusArg });
    if (outcome.note) process.stderr.write(`spillway hook: ${terminalSafe(outcome.note)}\n`);
    if (outcome.output) process.stdout.write(`${JSON.stringify(outcome.output)}\n`);
  } catch (err) {
    process.stderr.write(`spillway hook: ${terminalSafe(errMessage(err))}; result left unchanged\n`);
  }
  process.exitCode = 0;
  return true;
}
