import { proxyEntry, SetupError } from './files.js';

/**
 * Print-only setup for clients whose config Spillway does not edit: Claude Desktop and Cursor.
 * Both read an `mcpServers` map of stdio servers; neither was run against Spillway here, so the
 * proxy assumes nothing about what they show the model (`--client generic`).
 */

export const PRINT_ONLY_CLIENTS = ['claude-desktop', 'cursor'] as const;
export type PrintOnlyClient = (typeof PRINT_ONLY_CLIENTS)[number];

const WHERE: Record<PrintOnlyClient, string> = {
  'claude-desktop':
    'Merge into claude_desktop_config.json (macOS: ~/Library/Application Support/Claude/, Windows: %APPDATA%\\Claude\\), then restart Claude Desktop.',
  cursor: 'Merge into ~/.cursor/mcp.json (every project) or <project>/.cursor/mcp.json (one project).',
};

export function printSnippet(client: PrintOnlyClient, name: string | undefined, server: string[], env: NodeJS.ProcessEnv = process.env): string {
  if (!name) throw new SetupError(`${client} has no hooks: give an MCP server to put behind Spillway, e.g. --mcp fs -- npx -y @modelcontextprotocol/server-filesystem ~/work`);
  const entry = proxyEntry('generic', server, env);
  return `${WHERE[client]}\n${JSON.stringify({ mcpServers: { [name]: entry } }, null, 2)}\n`;
}
