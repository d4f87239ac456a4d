import type { Command } from 'commander';
import { addGuardOptions, guardSettingsOf, oneOf, type GuardCliOptions } from '../../integrations/options.js';
import { GuardRules, loadRules, ruleFlagsOf } from '../../integrations/rules/index.js';
import { terminalSafe } from '../../pipeline/terminal.js';
import { guardLargeResult } from '../../pipeline/index.js';
import { runMcpProxy } from '../../integrations/mcp/proxy.js';
import { createDrillDownTools, loadProjectionFor } from '../../integrations/mcp/drilldown.js';
import { MCP_CLIENT_KINDS, mcpClientsHelp, mcpProfileOf, type McpClientKind } from '../../integrations/mcp/tool-result.js';
import type { Profile } from '../../pipeline/index.js';

/** The tokenizer family a client's model counts with (its adapter's); o200k for clients not known. */
export function clientProfile(client: McpClientKind | undefined): Profile {
  return mcpProfileOf(client);
}

interface McpCliOptions extends GuardCliOptions {
  projection?: string;
  drillDown?: boolean;
  quiet?: boolean;
  client?: McpClientKind;
  serverName?: string;
}

export function register(program: Command): void {
  const cmd = program
    .command('mcp')
    .description('run an MCP server (stdio) behind Spillway: oversized tool results are spilled to the session folder')
    .usage('[options] -- <command> [args...]')
    .argument('<command>', 'the MCP server command')
    .argument('[args...]', 'its arguments (put -- before the command so its options are not read as ours)');
  addGuardOptions(cmd)
    .option('--projection <file>', 'per-tool projection specs (a JSON file or a folder of <tool>.json; default: the saved specs in <app data>/projections)')
    .option(
      '--client <kind>',
      `what the client shows its model: ${MCP_CLIENT_KINDS.join(', ')} (${mcpClientsHelp()}; ` +
        'generic, the default, counts both, so an unknown client never gets too much); the client also sets the default --profile (its models\' tokenizer)',
      oneOf('--client', MCP_CLIENT_KINDS),
    )
    .option('--server-name <name>', 'the name the client knows this server by (its config key): spills record tools as the client names them, e.g. mcp__<name>__<tool> (default: the server\'s own name)')
    .option('--no-drill-down', 'do not add the spillway_read / spillway_grep / spillway_query tools')
    .option('--quiet', 'no log lines on stderr (the server\'s own stderr still passes)')
    .addHelpText(
      'after',
      '\nExample:\n  spillway mcp --client codex --limit 8000 -- npx -y @modelcontextprotocol/server-filesystem ~/work\n' +
        '(`spillway setup claude-code|codex --mcp NAME -- <server>` writes this into the client\'s config.)\n' +
        '\nStdout carries only MCP messages; logs go to stderr. Without --session, spills go to a new folder\n' +
        'under the app-data sessions root, named by start time and server name.',
    )
    .action(async (command: string, args: string[], opts: McpCliOptions) => {
      // The flags, once: the proxy's own fast pass reads the limit from the same object the guard gets.
      const settings = guardSettingsOf(opts, clientProfile(opts.client));
      // The client starts the proxy in its project folder: that folder's rules, then the user's, after the flags.
      const rules = new GuardRules(await loadRules(process.cwd(), process.env), ruleFlagsOf(opts));
      if (!opts.quiet) for (const e of rules.errors) process.stderr.write(`spillway mcp: ${terminalSafe(e)}\n`);
      const projectionFor = loadProjectionFor(opts.projection);
      const { proxy, done } = runMcpProxy({
        command,
        args,
        sessionDir: opts.session,
        limitTokens: settings.limitTokens,
        contextWindowTokens: settings.contextWindowTokens,
        summarize: settings.summarize,
        projectionFor,
        focusArg: opts.focusArg,
        rules,
        // The flags' settings, but each call's limit, summarizer and rule are its tool's (the rules already put the flags first).
        guard: (result, options) => guardLargeResult(result, { ...options, ...settings, limitTokens: options.limitTokens, summarize: options.summarize, ...(options.rule ? { rule: options.rule } : {}) }),
        client: opts.client,
        serverName: opts.serverName,
        localTools: opts.drillDown === false ? undefined : (session, sessionDir) => createDrillDownTools({ session, sessionDir, store: opts.store }),
        quiet: opts.quiet,
      });
      const onSignal = (sig: NodeJS.Signals) => proxy.signal(sig);
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      process.on('SIGHUP', onSignal);
      const code = await done;
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      process.off('SIGHUP', onSignal);
      // stdin may still hold the event loop open; everything is flushed by now.
      process.exit(code);
    });
}
