/**
 * OpenCode's adapter (../adapter.ts). Since 1.2 OpenCode keeps every session in one SQLite database,
 * `$XDG_DATA_HOME/opencode/opencode.db` (default `~/.local/share/opencode/`, on every OS), in WAL mode;
 * the index's half (src/index/import-opencode.ts) reads it read-only, one unit per session. Its guard
 * is a plugin (plugin.ts, guard.ts), its setup `spillway setup opencode` (setup.ts).
 */
import path from 'node:path';
import type { AgentEnv, ClientAdapter } from '../adapter.js';
import { CLIENTS } from '../clients.js';
import { opencodeContext } from './context.js';
import { OPENCODE_RULES } from './rules.js';

/** Its database's file name. */
export const OPENCODE_DB = 'opencode.db';
/** The first 16 bytes of every SQLite 3 database. */
const SQLITE_MAGIC = 'SQLite format 3\u0000';

/** Its data folder under a home: `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode` (the xdg-basedir rule it follows). */
export function opencodeHomeRoot(home: string, env: AgentEnv): string {
  return env.XDG_DATA_HOME ? path.join(path.resolve(env.XDG_DATA_HOME), 'opencode') : path.join(home, ...CLIENTS.opencode.homeSuffix);
}

export const OPENCODE: ClientAdapter = {
  meta: CLIENTS.opencode,
  files: {
    recognise: (name, head) => name === OPENCODE_DB && head.startsWith(SQLITE_MAGIC),
    // The strictest test of all (a name and a magic number): first.
    recognisePriority: 0,
    homeRoots: (home, env) => [opencodeHomeRoot(home, env)],
    // Beside the database: auth.json (provider keys), tool-output/, storage/ (sessions before 1.2, not read),
    // snapshot/ (git data), log/. Only the database is opened.
    guardedHome: { dir: 'opencode', chatDirs: [], chatFiles: [OPENCODE_DB] },
    database: { name: OPENCODE_DB },
    hint: '~/.local/share/opencode/opencode.db',
  },
  rules: OPENCODE_RULES,
  // OpenCode runs any provider's model (a local one too): its sessions' model names the provider
  // (providerOf); one it does not name is priced as Anthropic's, the dearest list prices, so a cost is
  // not understated. A local model costs nothing: OpenCode stores each message's own `cost` (0 then),
  // which the index does not read yet.
  provider: 'anthropic',
  prices: { input: 5, cacheWrite: 6.25, cacheRead: 0.5, output: 25 },
  context: opencodeContext,
  mcp: {
    // Read in its 1.18.33 binary: the text of the content blocks (and resource texts) joined by a blank
    // line, images as attachments, structuredContent not shown; then its cut (rules.ts).
    shows: 'content-only',
    // Read in its 1.18.33 binary: its MCP client introduces itself as {name: "opencode", version}.
    names: ['opencode'],
    // A model of any provider: o200k is the middle of the tokenizers' counts.
    profile: 'o200k',
    // Observed (test/clients/opencode-setup.test.ts): the proxy's server "fs" and its read_text_file became `fs_read_text_file`.
    toolName: (server, tool) => `${server}_${tool}`,
  },
};
