import fs from 'node:fs';
import { PROJECT_RULES_FILE, rulesFilePaths } from '../../pipeline/config.js';

/**
 * Guard rules per tool, the light half: where the two files are, which rule keys a tool call
 * matches and in what order, and reading a file without ever blocking. No zod and no package, so
 * the Claude Code hook's fast path may load it (only when a rules file exists). The other half,
 * `rules/config.ts`, validates the files and resolves each setting with its origin.
 *
 * | call | for |
 * | --- | --- |
 * | {@link rulesPaths} | the project's file (`<cwd>/.spillway.json`) and the user's (`<app data>/config.json`) |
 * | {@link toolTarget} | a tool call's names: the client's name, and for MCP its server and bare tool |
 * | {@link ruleKeyTarget} | the call a rule key stands for (a row of `config show`) |
 * | {@link matchOrder} | the rule keys a call matches, most specific first |
 * | {@link readRulesFile} | a rules file's text, or missing, or why it could not be read |
 * | {@link strictestLimit} | the fast path's bound: the smallest limit any matching rule states |
 *
 * docs/config.md describes the files, the order and the matching.
 */

export { PROJECT_RULES_FILE };
/** A rules file larger than this is refused (a config of a few rules is a few hundred bytes). */
export const MAX_RULES_FILE_BYTES = 256 * 1024;
/**
 * Largest limit a rule may set. A project file comes with the repository: without a bound, a cloned
 * repository could switch the guard off for its tools with a limit no result reaches.
 */
export const MAX_RULE_LIMIT_TOKENS = 1_000_000;
/** Longest rule key (a tool name, `server/tool`, `server/*` or `*`). */
export const MAX_RULE_MATCH_CHARS = 200;

/** The settings a rule may give, each also a flag of the guarding verbs. */
export const RULE_KEYS = ['limit', 'template', 'provider', 'model', 'focusArg'] as const;
export type RuleKey = (typeof RULE_KEYS)[number];

/** The two rules files. */
export const RULES_SCOPES = ['project', 'user'] as const;
export type RulesScope = (typeof RULES_SCOPES)[number];
/** Where a setting came from, in the order they are tried. */
export const RULE_SOURCES = ['flag', 'project', 'user', 'default'] as const;
export type RuleSource = (typeof RULE_SOURCES)[number];

/** The rule key every tool matches last. */
export const ANY_TOOL = '*';
/** A server-wide key is `<server>/*`. */
export const SERVER_WIDE = '/*';

/** The project's and the user's rules file. `cwd` is the project folder (the hook event's `cwd`, else the process's). */
export function rulesPaths(cwd: string, env: NodeJS.ProcessEnv): Record<RulesScope, string> {
  return rulesFilePaths(cwd, env);
}

/** A tool call as rules see it. */
export interface ToolTarget {
  /** Names an exact rule key may have: the client's name (`Bash`, `mcp__fs__read_file`), and behind the proxy the server's own. */
  names: string[];
  /** The MCP server, when the call is an MCP tool's. */
  server?: string;
  /** The tool's name on that server. */
  serverTool?: string;
}

/** `mcp__<server>__<tool>`: how Claude Code and Codex name an MCP server's tool (the server is up to the first `__`). */
const CLIENT_MCP_NAME_RE = /^mcp__(.+?)__(.+)$/;

/**
 * The target of a call named `tool`. With `server` (the proxy, which knows which server it fronts),
 * `tool` is the server's own name for it and `clientName` what the client calls it; without, a
 * client's `mcp__<server>__<tool>` name is read as server and tool.
 */
export function toolTarget(tool: string, server?: string, clientName?: string): ToolTarget {
  const names = [...new Set([clientName, tool].filter((n): n is string => typeof n === 'string' && n.length > 0))];
  if (server) return { names, server, serverTool: tool };
  const m = CLIENT_MCP_NAME_RE.exec(tool);
  return m ? { names, server: m[1], serverTool: m[2] } : { names };
}

/**
 * The call a rule key stands for, read back as the tool it names (`server/*`: any tool of that
 * server; `*`: any tool): what `config show` and the inspector's preview resolve a key's row with.
 */
export function ruleKeyTarget(key: string): ToolTarget {
  if (key === ANY_TOOL) return { names: [] };
  const slash = key.indexOf('/');
  if (slash > 0) {
    const server = key.slice(0, slash);
    const tool = key.slice(slash + 1);
    return tool === '*' ? { names: [], server } : { names: [], server, serverTool: tool };
  }
  return toolTarget(key);
}

/** The rule keys a call matches, most specific first: its exact names, `server/tool`, `server/*`, then `*`. */
export function matchOrder(t: ToolTarget): string[] {
  const keys = [...t.names];
  if (t.server) {
    if (t.serverTool) keys.push(`${t.server}/${t.serverTool}`);
    keys.push(`${t.server}${SERVER_WIDE}`);
  }
  keys.push(ANY_TOOL);
  return [...new Set(keys)];
}

export type RulesText = { state: 'missing' } | { state: 'read'; text: string } | { state: 'error'; error: string };

const C = fs.constants;

/**
 * A rules file's text. The user wrote it (links are followed: a config kept with one's dotfiles is
 * a link), but the project's comes with a repository: it must be a regular file under
 * {@link MAX_RULES_FILE_BYTES}, checked before the open, and the open never blocks (a FIFO named
 * `.spillway.json` would hang every hook call), then checked again on the descriptor.
 */
export function readRulesFile(file: string): RulesText {
  let before: fs.Stats | undefined;
  try {
    before = fs.statSync(file, { throwIfNoEntry: false });
  } catch (err) {
    return { state: 'error', error: `${file}: ${(err as Error).message}` };
  }
  if (!before) return { state: 'missing' };
  if (!before.isFile()) return { state: 'error', error: `${file} is not a regular file` };
  if (before.size > MAX_RULES_FILE_BYTES) return { state: 'error', error: `${file} is ${before.size} bytes, more than the ${MAX_RULES_FILE_BYTES} a rules file may have` };
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, C.O_RDONLY | (C.O_NONBLOCK ?? 0));
    const st = fs.fstatSync(fd);
    if (!st.isFile() || st.ino !== before.ino || st.dev !== before.dev) return { state: 'error', error: `${file} changed while it was opened` };
    if (st.size > MAX_RULES_FILE_BYTES) return { state: 'error', error: `${file} is more than ${MAX_RULES_FILE_BYTES} bytes` };
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = fs.readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return { state: 'read', text: buf.subarray(0, off).toString('utf8') };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { state: 'missing' };
    return { state: 'error', error: `${file}: ${(err as Error).message}` };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The smallest `limit` any rule matching `target` states in these files, valid or not; undefined
 * when none does; NaN when a file is not JSON. The hook's fast path passes a result only when it
 * fits this and the default: whatever the full hook resolves (a rule of a valid file, or the
 * default when a file is refused) is never below it, so the fast path never passes what the full
 * hook would spill.
 */
export function strictestLimit(texts: readonly string[], target: ToolTarget): number | undefined {
  let min: number | undefined;
  const keys = matchOrder(target);
  for (const text of texts) {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      return Number.NaN;
    }
    const rules = isObj(doc) && Object.hasOwn(doc, 'rules') ? doc.rules : undefined;
    if (!isObj(rules)) continue;
    for (const k of keys) {
      const rule = Object.hasOwn(rules, k) ? rules[k] : undefined;
      const limit = isObj(rule) && Object.hasOwn(rule, 'limit') ? rule.limit : undefined;
      if (typeof limit === 'number' && limit > 0 && Number.isFinite(limit)) min = min === undefined ? limit : Math.min(min, limit);
    }
  }
  return min === undefined ? undefined : Math.max(1, Math.floor(min));
}
