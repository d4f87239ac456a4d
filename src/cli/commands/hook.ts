import type { Command } from 'commander';
import { addGuardOptions, type GuardCliOptions } from '../../integrations/options.js';
import { HOOKED_CLIENTS, runHookVerb } from '../hook-entry.js';

/**
 * The `hook` verbs as commander sees them: their help and their options (the flags table the hook's
 * entry reads too). Their actions run the entry's {@link runHookVerb}, so the CLI and bin/spillway.js
 * run every hook the same way; bin/spillway.js reaches the CLI only for a command line the entry
 * cannot read (help, an unknown option, a value commander refuses).
 */
export function register(program: Command): void {
  const hook = program.command('hook').description('agent hooks that spill oversized tool results (see `spillway hook claude-code`, `spillway hook codex`)');
  const cc = hook
    .command('claude-code')
    .description('Claude Code PostToolUse hook: reads the hook JSON on stdin; for an oversized tool result, spills it and prints the replacement output');
  addGuardOptions(cc, HOOKED_CLIENTS['claude-code'].defaultProfile)
    .addHelpText(
      'after',
      '\nInstall it with `spillway setup claude-code` (merges it into .claude/settings.json; --remove undoes it).\n' +
        '\nOversized results are answered in the tool\'s own output shape (Read, Bash, Grep, Glob, WebFetch, WebSearch,\n' +
        'Agent, MCP tools); Claude Code drops any other answer, so a tool whose shape Spillway does not know is left\n' +
        'alone with a line on stderr. Small results: no output. Errors never block the agent: exit 0 and a line on stderr.\n' +
        'Spills go to <app data>/sessions/claude-code_<session_id>/ unless --session is given.',
    )
    .action((opts: GuardCliOptions) => runHookVerb('claude-code', opts));

  const cx = hook
    .command('codex')
    .description('Codex PostToolUse hook: reads the hook JSON on stdin; for an oversized or binary tool result, spills it and answers with a block whose reason is the message');
  addGuardOptions(cx, HOOKED_CLIENTS.codex.defaultProfile)
    .addHelpText(
      'after',
      '\nCodex (0.171.0 measured) makes a blocking PostToolUse answer\'s reason the whole output its model reads: that is the\n' +
        'message. Small results: no output. Errors never block the agent: exit 0 and a line on stderr.\n' +
        'Spills go to <app data>/sessions/codex_<session_id>/ unless --session is given.',
    )
    .action((opts: GuardCliOptions) => runHookVerb('codex', opts));

  addGuardOptions(hook.command('opencode').description("OpenCode tool.execute.after, piped by Spillway's plugin: reads the event JSON on stdin; for an oversized result, spills it and prints {\"output\": <message>}"), HOOKED_CLIENTS.opencode.defaultProfile)
    .addHelpText('after', '\nInstall it with `spillway setup opencode` (writes the plugin into OpenCode\'s plugins folder; --remove undoes it).')
    .action((opts: GuardCliOptions) => runHookVerb('opencode', opts));
}
