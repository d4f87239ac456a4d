import { guardSettingsOf } from '../settings.js';
import { GuardRules, loadRules, ruleFlagsOf } from '../rules/index.js';
import { terminalSafe } from '../../pipeline/terminal.js';
import { errMessage } from '../../pipeline/values.js';
import { handleClaudeCodeHook } from './claude-code.js';
import { MAX_HOOK_INPUT_BYTES, readHookStdin, type HookCliOptions } from './claude-code-fast.js';

/** Claude Code runs Claude models: the hook measures results with Claude's tokenizer unless told otherwise. */
export const HOOK_DEFAULT_PROFILE = 'claude' as const;

/**
 * One hook event with the verb's options, as the entry and the CLI's `hook claude-code` action both
 * run it: stdin in, the answer on stdout, notes on stderr, and exit 0 whatever happens (a failing
 * PostToolUse hook must not disturb the agent).
 */
export async function runHook(opts: HookCliOptions): Promise<void> {
  try {
    // bin/spillway.js's fast path may have read stdin already: this gives the same text.
    const stdin = await readHookStdin();
    if (stdin === undefined) {
      process.stderr.write(`spillway hook: input over ${MAX_HOOK_INPUT_BYTES} bytes; left unchanged\n`);
      return;
    }
    const outcome = await handleClaudeCodeHook(stdin, {
      guard: guardSettingsOf(opts, HOOK_DEFAULT_PROFILE),
      sessionDir: opts.session,
      focusArg: opts.focusArg,
      // The project is the folder Claude Code runs in (the event's cwd); the flags come first.
      rules: async (cwd) => new GuardRules(await loadRules(cwd ?? process.cwd(), process.env), ruleFlagsOf(opts)),
    });
    if (outcome.note) process.stderr.write(`spillway hook: ${terminalSafe(outcome.note)}\n`);
    if (outcome.output) process.stdout.write(`${JSON.stringify(outcome.output)}\n`);
  } catch (err) {
    process.stderr.write(`spillway hook: ${terminalSafe(errMessage(err))}; result left unchanged\n`);
  } finally {
    process.exitCode = 0;
  }
}
