import type { Command } from 'commander';
import { addGuardOptions, guardSettingsOf, type GuardCliOptions } from '../../integrations/options.js';
import { handleClaudeCodeHook } from '../../integrations/hooks/claude-code.js';
import { terminalSafe } from '../../pipeline/terminal.js';
import { MAX_HOOK_INPUT_BYTES, readHookStdin } from '../../integrations/hooks/claude-code-fast.js';

/** Claude Code runs Claude models: the hook measures results with Claude's tokenizer unless told otherwise. */
export const HOOK_DEFAULT_PROFILE = 'claude' as const;

export { MAX_HOOK_INPUT_BYTES };

export function register(program: Command): void {
  const hook = program.command('hook').description('agent hooks that spill oversized tool results (see `spillway hook claude-code`)');
  const cc = hook
    .command('claude-code')
    .description('Claude Code PostToolUse hook: reads the hook JSON on stdin; for an oversized tool result, spills it and prints the replacement output');
  addGuardOptions(cc, HOOK_DEFAULT_PROFILE)
    .addHelpText(
      'after',
      '\nInstall it with `spillway setup claude-code` (merges it into .claude/settings.json; --remove undoes it).\n' +
        '\nOversized results are answered in the tool\'s own output shape (Read, Bash, Grep, Glob, WebFetch, WebSearch,\n' +
        'Agent, MCP tools); Claude Code drops any other answer, so a tool whose shape Spillway does not know is left\n' +
        'alone with a line on stderr. Small results: no output. Errors never block the agent: exit 0 and a line on stderr.\n' +
        'Spills go to <app data>/sessions/claude-code_<session_id>/ unless --session is given.',
    )
    .action(async (opts: GuardCliOptions) => {
      // Whatever happens, exit 0: a failing PostToolUse hook must not disturb the agent.
      try {
        // bin/spillway.js's fast path may have read stdin already: this gives the same text.
        const stdin = await readHookStdin();
        if (stdin === undefined) {
          process.stderr.write(`spillway hook: input over ${MAX_HOOK_INPUT_BYTES} bytes; left unchanged\n`);
          return;
        }
        const outcome = await handleClaudeCodeHook(stdin, { guard: guardSettingsOf(opts, HOOK_DEFAULT_PROFILE), sessionDir: opts.session, focusArg: opts.focusArg });
        if (outcome.note) process.stderr.write(`spillway hook: ${terminalSafe(outcome.note)}\n`);
        if (outcome.output) process.stdout.write(`${JSON.stringify(outcome.output)}\n`);
      } catch (err) {
        process.stderr.write(`spillway hook: ${terminalSafe(err instanceof Error ? err.message : String(err))}; result left unchanged\n`);
      }
      process.exitCode = 0;
    });
}
