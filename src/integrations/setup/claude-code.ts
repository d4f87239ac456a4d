import path from 'node:path';
import {
  homeDir,
  innerServer,
  isObj,
  jsonText,
  proxyEntry,
  readJsonObject,
  SETUP_MARK_ENV,
  SetupError,
  shellWord,
  spillwayArgv,
  writeConfig,
  type FileChange,
  type SetupMark,
} from './files.js';

/**
 * `spillway setup claude-code`: the PostToolUse hook merged into Claude Code's settings, and
 * optionally an MCP server put behind `spillway mcp`.
 *
 * | scope | hook goes to | MCP server goes to |
 * |---|---|---|
 * | `--user` (default) | `$CLAUDE_CONFIG_DIR/settings.json` (default `~/.claude/settings.json`) | `~/.claude.json` `mcpServers` (user scope) |
 * | `--project DIR` | `DIR/.claude/settings.local.json` (per developer, not committed: the command holds this machine's paths); `--shared`: `DIR/.claude/settings.json` | `DIR/.mcp.json`, and its name in `enabledMcpjsonServers` of the same settings file (Claude Code skips project servers nobody approved) |
 *
 * Everything else in those files is kept as it was. Run it twice: nothing changes. `--remove`
 * takes out only what setup put in (an MCP server it wrapped gets its own command back).
 */

type Obj = Record<string, unknown>;

export interface ClaudeSetupOptions {
  /** Project folder; absent: user scope. */
  projectDir?: string;
  /** With a project: write the shared `.claude/settings.json` instead of `settings.local.json`. */
  shared?: boolean;
  mcp?: { name: string; server: string[] };
  remove?: boolean;
  /** Extra `spillway hook claude-code` options written into the command (e.g. ['--limit', '8000']). */
  hookArgs?: string[];
  env?: NodeJS.ProcessEnv;
  now?: Date;
}

/** How a hook command that setup wrote looks, whichever install wrote it. */
const OUR_HOOK_RE = /(^|[\s/\\'"])spillway(\.js)?['"]?\s+hook\s+claude-code(\s|$)/;
/** Claude Code's timeout for our hook (s): a summary by a remote model may take up to a minute. */
export const HOOK_TIMEOUT_S = 120;

export function claudeConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.CLAUDE_CONFIG_DIR ? path.resolve(env.CLAUDE_CONFIG_DIR) : path.join(homeDir(env), '.claude');
}

export function claudeSettingsFile(o: Pick<ClaudeSetupOptions, 'projectDir' | 'shared' | 'env'>): string {
  if (o.projectDir) return path.join(path.resolve(o.projectDir), '.claude', o.shared ? 'settings.json' : 'settings.local.json');
  return path.join(claudeConfigDir(o.env), 'settings.json');
}

export function claudeMcpFile(o: Pick<ClaudeSetupOptions, 'projectDir' | 'env'>): string {
  if (o.projectDir) return path.join(path.resolve(o.projectDir), '.mcp.json');
  const env = o.env ?? process.env;
  return env.CLAUDE_CONFIG_DIR ? path.join(path.resolve(env.CLAUDE_CONFIG_DIR), '.claude.json') : path.join(homeDir(env), '.claude.json');
}

export function hookCommand(env: NodeJS.ProcessEnv = process.env, extra: string[] = []): string {
  return [...spillwayArgv(env), 'hook', 'claude-code', ...extra].map(shellWord).join(' ');
}

const isOurHook = (h: unknown) => isObj(h) && typeof h.command === 'string' && OUR_HOOK_RE.test(h.command);

function arrayAt(obj: Obj, key: string, file: string, where: string): unknown[] | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) throw new SetupError(`${file}: ${where}${key} is not an array; it was left untouched.`);
  return v;
}

/** Settings with our hook in (or out): everything else as it was. */
function mergeHook(settings: Obj, file: string, command: string | undefined): { value: Obj; detail: string } {
  const value: Obj = { ...settings };
  if (value.hooks !== undefined && !isObj(value.hooks)) throw new SetupError(`${file}: "hooks" is not an object; it was left untouched.`);
  const hooks: Obj = { ...((value.hooks as Obj | undefined) ?? {}) };
  const groups = (arrayAt(hooks, 'PostToolUse', file, 'hooks.') ?? []).map((g, i) => {
    if (!isObj(g) || (g.hooks !== undefined && !Array.isArray(g.hooks))) throw new SetupError(`${file}: hooks.PostToolUse[${i}] is not a hook group; it was left untouched.`);
    return g;
  });
  const ours = groups.flatMap((g) => ((g.hooks as unknown[] | undefined) ?? []).filter(isOurHook));
  const wanted = { type: 'command', command, timeout: HOOK_TIMEOUT_S };
  if (command !== undefined && ours.length === 1 && JSON.stringify(ours[0]) === JSON.stringify(wanted)) return { value: settings, detail: 'hook already in place' };
  // Out with every hook of ours (an old install's path included), then in with the one wanted.
  let kept: Obj[] = groups
    .map((g): Obj => ({ ...g, hooks: ((g.hooks as unknown[] | undefined) ?? []).filter((h) => !isOurHook(h)) }))
    .filter((g, i) => (g.hooks as unknown[]).length > 0 || ((groups[i]!.hooks as unknown[] | undefined) ?? []).length === 0);
  if (command !== undefined) kept = [...kept, { matcher: '*', hooks: [wanted] }];
  if (kept.length) hooks.PostToolUse = kept;
  else delete hooks.PostToolUse;
  if (Object.keys(hooks).length) value.hooks = hooks;
  else delete value.hooks;
  const detail =
    command === undefined
      ? ours.length
        ? `removed the PostToolUse hook (${ours.length} entr${ours.length === 1 ? 'y' : 'ies'})`
        : 'no Spillway hook to remove'
      : ours.length
        ? 'replaced the PostToolUse hook with this install\'s command'
        : 'added the PostToolUse hook for every tool (matcher "*")';
  return { value, detail };
}

function withEnabledServer(settings: Obj, file: string, name: string, on: boolean): Obj {
  const list = (arrayAt(settings, 'enabledMcpjsonServers', file, '') ?? []).filter((x) => x !== name);
  const value: Obj = { ...settings };
  if (on) value.enabledMcpjsonServers = [...list, name];
  else if (list.length) value.enabledMcpjsonServers = list;
  else delete value.enabledMcpjsonServers;
  return value;
}

/** The mcpServers map with NAME behind the proxy (or back out of it). */
function mergeMcp(config: Obj, file: string, name: string, server: string[], remove: boolean, env: NodeJS.ProcessEnv): { value: Obj; detail: string } {
  if (config.mcpServers !== undefined && !isObj(config.mcpServers)) throw new SetupError(`${file}: "mcpServers" is not an object; it was left untouched.`);
  const servers: Obj = { ...((config.mcpServers as Obj | undefined) ?? {}) };
  const existing = servers[name];
  if (existing !== undefined && !isObj(existing)) throw new SetupError(`${file}: mcpServers.${name} is not an object; it was left untouched.`);
  const cur = existing as Obj | undefined;
  const curEnv = isObj(cur?.env) ? (cur!.env as Obj) : {};
  const mark = curEnv[SETUP_MARK_ENV] as SetupMark | undefined;
  const inner = cur ? innerServer(cur.command, cur.args) : undefined;
  const put = (v: Obj | undefined) => {
    if (v) servers[name] = v;
    else delete servers[name];
    return { ...config, mcpServers: servers };
  };
  if (remove) {
    if (!cur) return { value: config, detail: `no MCP server ${JSON.stringify(name)} to remove` };
    if (!inner || !mark) throw new SetupError(`${file}: MCP server ${JSON.stringify(name)} was not set up by spillway; it was left alone.`);
    if (mark === 'added') return { value: put(undefined), detail: `removed MCP server ${JSON.stringify(name)}` };
    const { [SETUP_MARK_ENV]: _m, ...restEnv } = curEnv;
    const { env: _e, ...rest } = cur!;
    return {
      value: put({ ...rest, command: inner[0], args: inner.slice(1), ...(Object.keys(restEnv).length ? { env: restEnv } : {}) }),
      detail: `MCP server ${JSON.stringify(name)} runs its own command again (${inner.join(' ')})`,
    };
  }
  let target: string[];
  let newMark: SetupMark;
  if (server.length) {
    target = server;
    newMark = inner && mark ? mark : cur ? 'wrapped' : 'added';
  } else {
    if (!cur) throw new SetupError(`${file}: there is no MCP server ${JSON.stringify(name)} to put behind Spillway; give its command after --.`);
    if (inner && mark) {
      target = inner;
      newMark = mark;
    } else {
      if (cur.type !== undefined && cur.type !== 'stdio') throw new SetupError(`${file}: MCP server ${JSON.stringify(name)} is a ${String(cur.type)} server; spillway mcp proxies stdio servers only.`);
      if (typeof cur.command !== 'string') throw new SetupError(`${file}: MCP server ${JSON.stringify(name)} has no command to wrap.`);
      target = [cur.command, ...(Array.isArray(cur.args) ? cur.args.map(String) : [])];
      newMark = 'wrapped';
    }
  }
  const entry = proxyEntry('claude-code', target, env);
  const next: Obj = { ...(cur ?? {}), type: 'stdio', command: entry.command, args: entry.args, env: { ...curEnv, [SETUP_MARK_ENV]: newMark } };
  if (JSON.stringify(next) === JSON.stringify(cur)) return { value: config, detail: `MCP server ${JSON.stringify(name)} already behind Spillway` };
  return { value: put(next), detail: `MCP server ${JSON.stringify(name)} runs behind spillway mcp (${target.join(' ')})` };
}

/** Merge (or remove) the hook and the optional MCP server. Reads every file first: an invalid one stops setup before anything is written. */
export function setupClaudeCode(o: ClaudeSetupOptions): FileChange[] {
  const env = o.env ?? process.env;
  const settingsFile = claudeSettingsFile(o);
  const settings = readJsonObject(settingsFile);
  const command = o.remove ? undefined : hookCommand(env, o.hookArgs ?? []);
  const hook = mergeHook(settings.value, settingsFile, command);
  let settingsValue = hook.value;
  let mcp: { file: string; text?: string; value: Obj; detail: string; same: boolean } | undefined;
  if (o.mcp) {
    const mcpFile = claudeMcpFile(o);
    const cfg = readJsonObject(mcpFile);
    const merged = mergeMcp(cfg.value, mcpFile, o.mcp.name, o.mcp.server, o.remove === true, env);
    mcp = { file: mcpFile, text: cfg.text, value: merged.value, detail: merged.detail, same: merged.value === cfg.value };
    const stillThere = isObj(merged.value.mcpServers) && (merged.value.mcpServers as Obj)[o.mcp.name] !== undefined;
    if (o.projectDir) settingsValue = withEnabledServer(settingsValue, settingsFile, o.mcp.name, stillThere);
  }
  const changes: FileChange[] = [];
  const settingsText = settingsValue === settings.value && settings.text !== undefined ? settings.text : jsonText(settingsValue);
  if (!(o.remove && settings.text === undefined)) changes.push(writeConfig(settingsFile, settings.text, settingsText, hook.detail, o.now));
  if (mcp) {
    const text = mcp.same && mcp.text !== undefined ? mcp.text : jsonText(mcp.value);
    if (!(o.remove && mcp.text === undefined)) changes.push(writeConfig(mcp.file, mcp.text, text, mcp.detail, o.now));
  }
  return changes;
}
