import fs from 'node:fs';
import path from 'node:path';
import { appPaths, sanitizeToolName, stemTime } from '../../pipeline/index.js';
import { type ClientId, adapterOf } from '../../agents/index.js';

/**
 * Default session folder of one proxy run: `<app data>/sessions/<UTC start time>_<server name>`,
 * under the root the inspector watches, so spills show up there live.
 */
export function defaultSessionDir(serverName: string, startedAt: Date, sessionsRoot = appPaths(process.env).sessions): string {
  return path.join(sessionsRoot, `${stemTime(startedAt)}_${sanitizeToolName(serverName)}`);
}

/** A readable server name from the command line, used until `initialize` tells the real one. */
export function serverNameFromCommand(command: string, args: readonly string[]): string {
  const base = (p: string) => path.basename(p).replace(/\.(c|m)?js$|\.ts$|\.py$|\.exe$/i, '');
  const interpreters = /^(node|nodejs|bun|deno|python\d?(\.\d+)?|uv|uvx|npx|pnpm|bunx|tsx)$/i;
  if (interpreters.test(base(command))) {
    const first = args.find((a) => !a.startsWith('-') && a !== 'run');
    if (first) {
      // `npx -y @scope/server-x` → server-x; `node dist/index.js` → the package folder when the file is an index.
      const b = base(first);
      if (/^index$/i.test(b)) {
        const parts = first.split(/[\\/]/).filter((p) => p && p !== 'dist' && p !== 'build' && p !== 'src' && !/^index\./.test(p));
        return parts.at(-1) ?? b;
      }
      return b.replace(/^@[^/]+\//, '');
    }
  }
  return base(command) || 'server';
}

/** Create the folder once; later calls return the same promise. */
export function lazyMkdir(dir: () => string): () => Promise<string> {
  let made: Promise<string> | undefined;
  return () => {
    made ??= (async () => {
      const d = dir();
      // Private from the first spill: every folder made here is 0700 (the files inside are 0600).
      await fs.promises.mkdir(d, { recursive: true, mode: 0o700 });
      return d;
    })().catch((err: unknown) => {
      made = undefined; // a failed mkdir (full disk, permissions) is retried on the next spill
      throw err;
    });
    return made;
  };
}

/**
 * The name the client gives an MCP tool in its transcript, recorded in a spill's sidecar so the
 * index applies the client's MCP rule to it (a bare `read_text_file` got the client's general one):
 * - `claude-code`, `codex`: `mcp__<server>__<tool>` (Claude Code 2.1.328 and Codex 0.171.0 both write
 *   this; Codex as `namespace: "mcp__<server>"` + `name`, which the index joins), the server's name
 *   with every character outside `[A-Za-z0-9_-]` made `_` as Claude Code does;
 * - `gemini`: `<server>__<tool>` (Gemini CLI 0.61.0's server-qualified name);
 * - a client whose adapter names its MCP tools itself (`mcp.toolName`): that name (OpenCode: `<server>_<tool>`);
 * - `generic`: the bare tool name, since an unknown client's naming is unknown.
 * `server` is the name the client knows the server by (`--server-name`, which setup writes); the
 * proxy records the bare name when it was not given one.
 */
export function clientToolName(client: ClientId | 'generic', server: string, tool: string): string {
  if (client === 'generic') return tool;
  const s = server.replace(/[^A-Za-z0-9_-]/g, '_') || 'server';
  // A client's own naming, when its adapter states one (OpenCode: `<server>_<tool>`).
  const own = adapterOf(client)?.mcp.toolName;
  if (own) return own(s, tool);
  return client === 'gemini' ? `${s}__${tool}` : `mcp__${s}__${tool}`;
}
