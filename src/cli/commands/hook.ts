import type { Command } from 'commander';
import { addGuardOptions, type GuardCliOptions } from '../../integrations/options.js';
import { HOOK_DEFAULT_PROFILE, runHook } from '../../integrations/hooks/claude-code-run.js';
import { readHookStdin } from '../../integrations/hooks/claude-code-fast.js';
import { handleCodexHook } from '../../integrations/hooks/codex.js';
import { guardSettingsOf } from '../../integrations/settings.js';
import { GuardRules, loadRules, ruleFlagsOf } from '../../integrations/rules/index.js';
import { terminalSafe } from '../../pipeline/terminal.js';
import { errMessage } from '../../pipeline/values.js';
import { runOpenCodeHook } from '../../agents/opencode/plugin.js';

export function register(program: Command): void {
  const hook = program.command('hook').description('agent hooks that spill oversized tool results (see `spillway hook claude-code`, `spillway hook codex`)');
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
    .action((opts: GuardCliOptions) => runHook(opts));

  const cx = hook
    .command('codex')
    .description('Codex PostToolUse hook: reads the hook JSON on stdin; for an oversized or binary tool result, spills it and answers with a block whose reason is the message');
  addGuardOptions(cx)
    .addHelpText(
      'after',
      '\nCodex (0.171.0 measured) makes a blocking PostToolUse answer\'s reason the whole output its model reads: that is the\n' +
        'message. Small results: no output. Errors never block the agent: exit 0 and a line on stderr.\n' +
        'Spills go to <app data>/sessions/codex_<session_id>/ unless --session is given.',
    )
    .action(async (opts: GuardCliOptions & { session?: string }) => {
      try {
        const stdin = await readHookStdin();
        if (stdin === undefined) {
          process.stderr.write('spillway hook codex: input too large; left unchanged\n');
          return;
        }
        const outcome = await handleCodexHook(stdin, {
          guard: guardSettingsOf(opts),
          sessionDir: opts.session,
          // Codex sends the folder it runs in as the event's cwd: that project's rules, after the flags.
          rules: async (cwd) => new GuardRules(await loadRules(cwd ?? process.cwd(), process.env), ruleFlagsOf(opts)),
        });
        if (outcome.note) process.stderr.write(`spillway hook codex: ${terminalSafe(outcome.note)}\n`);
        if (outcome.output) process.stdout.write(`${JSON.stringify(outcome.output)}\n`);
      } catch (err) {
        process.stderr.write(`spillway hook codex: ${terminalSafe(errMessage(err))}; result left unchanged\n`);
      } finally {
        process.exitCode = 0;
      }
    });

  addGuardOptions(hook.command('opencode').description("OpenCode tool.execute.after, piped by Spillway's plugin: reads the event JSON on stdin; for an oversized result, spills it and prints {\"output\": <message>}"))
    .addHelpText('after', '\nInstall it with `spillway setup opencode` (writes the plugin into OpenCode\'s plugins folder; --remove undoes it).')
    .action((opts: GuardCliOptions) => runOpenCodeHook(opts));
}
