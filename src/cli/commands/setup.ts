import type { Command } from 'commander';
import { setupClaudeCode } from '../../integrations/setup/claude-code.js';
import { setupCodex } from '../../integrations/setup/codex.js';
import { setupOpenCode } from '../../agents/opencode/setup.js';
import { PRINT_ONLY_CLIENTS, printSnippet, type PrintOnlyClient } from '../../integrations/setup/snippets.js';
import { SetupError, type FileChange } from '../../integrations/setup/files.js';
import { jsonLine, terminalSafe } from '../../pipeline/terminal.js';
import { errMessage } from '../../pipeline/values.js';

interface SetupCliOptions {
  project?: string;
  user?: boolean;
  shared?: boolean;
  mcp?: string;
  remove?: boolean;
  print?: boolean;
  /** false with --no-hook. */
  hook?: boolean;
}

export const SETUP_CLIENTS = ['claude-code', 'codex', 'opencode', ...PRINT_ONLY_CLIENTS] as const;

function report(changes: FileChange[]): void {
  for (const c of changes) {
    process.stdout.write(terminalSafe(`${c.action.padEnd(9)} ${c.file}: ${c.detail}`) + '\n');
    if (c.backup) process.stdout.write(terminalSafe(`          backup of the previous file: ${c.backup}`) + '\n');
  }
}

/** The changes, then what the user should know beyond them (a wrapper kept, the hook at another scope). */
function reportAll(changes: FileChange[]): void {
  report(changes);
  for (const n of changes.flatMap((c) => c.notes ?? [])) process.stdout.write(terminalSafe(`note      ${n}`) + '\n');
}

export function register(program: Command): void {
  program
    .command('setup')
    .description('wire Spillway into a client: claude-code (hook, and an MCP server behind the proxy), codex (MCP server), claude-desktop|cursor (--print)')
    .usage('<client> [options] [-- <server command...>]')
    .argument('<client>', `one of ${SETUP_CLIENTS.join(', ')}`)
    .argument('[server...]', 'with --mcp NAME: the MCP server command, after --')
    .option('--user', 'claude-code: your user settings (~/.claude/settings.json; the default)')
    .option('--project <dir>', 'claude-code: that project (.claude/settings.local.json, and .mcp.json for --mcp)')
    .option('--shared', 'claude-code with --project: the committed .claude/settings.json instead of settings.local.json')
    .option('--mcp <name>', 'put MCP server NAME behind spillway mcp: the command after --, or without one, wrap the existing server NAME')
    .option('--no-hook', 'claude-code: leave the hook alone; with --mcp, add only the server behind the proxy (with --remove, take out the servers, keep the hook)')
    .option('--remove', 'take out everything setup put in that scope (with --mcp NAME: the hook and that server only); a wrapped server gets its own command back')
    .option('--print', 'claude-desktop, cursor: print the config snippet (setup does not edit their files)')
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  spillway setup claude-code                          # the hook, for every project\n' +
        '  spillway setup claude-code --project . --mcp fs -- npx -y @modelcontextprotocol/server-filesystem ~/work\n' +
        '  spillway setup claude-code --project . --mcp fs --no-hook -- npx -y @modelcontextprotocol/server-filesystem ~/work  # the proxy only\n' +
        '  spillway setup codex --mcp fs -- npx -y @modelcontextprotocol/server-filesystem ~/work\n' +
        '  spillway setup codex --mcp fs                       # wrap the [mcp_servers.fs] you already have\n' +
        '  spillway setup opencode --project . --mcp fs -- npx -y @modelcontextprotocol/server-filesystem ~/work  # the plugin and the proxy\n' +
        '  spillway setup cursor --print --mcp fs -- npx -y @modelcontextprotocol/server-filesystem ~/work\n' +
        '  spillway setup claude-code --project . --remove  # everything setup added to that project, out again\n' +
        '\nFiles are merged, never replaced: other settings stay, the old file is kept in <app data>/backups/ (the path\n' +
        'is printed), a symlinked file is written at its target, and running it again changes nothing. The command written runs this install (`spillway` when the one on PATH\n' +
        'is this install, else this node and this checkout\'s bin/spillway.js). A file that is not valid JSON/TOML is left\n' +
        'untouched and setup exits 1.',
    )
    .action((client: string, server: string[], o: SetupCliOptions) => {
      try {
        if (!(SETUP_CLIENTS as readonly string[]).includes(client)) {
          process.stderr.write(`spillway setup: unknown client ${jsonLine(client)}; use one of ${SETUP_CLIENTS.join(', ')}\n`);
          process.exitCode = 2;
          return;
        }
        if (server.length && !o.mcp) throw new SetupError('a server command needs --mcp NAME');
        if (o.project && o.user) throw new SetupError('--project and --user exclude each other');
        if ((PRINT_ONLY_CLIENTS as readonly string[]).includes(client)) {
          if (!o.print) throw new SetupError(`setup does not edit ${client}'s files: add --print and merge the snippet yourself`);
          process.stdout.write(terminalSafe(printSnippet(client as PrintOnlyClient, o.mcp, server)));
          return;
        }
        if (client === 'codex') {
          reportAll(setupCodex({ mcp: o.mcp ? { name: o.mcp, server } : undefined, remove: o.remove }));
          return;
        }
        if (client === 'opencode') {
          reportAll(setupOpenCode({ projectDir: o.project, mcp: o.mcp ? { name: o.mcp, server } : undefined, remove: o.remove, hook: o.hook }));
          return;
        }
        reportAll(setupClaudeCode({ projectDir: o.project, shared: o.shared, mcp: o.mcp ? { name: o.mcp, server } : undefined, remove: o.remove, hook: o.hook }));
      } catch (err) {
        process.stderr.write(`spillway setup: ${terminalSafe(errMessage(err))}\n`);
        process.exitCode = 1;
      }
    });
}
