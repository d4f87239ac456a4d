import path from 'node:path';
import { deleteConfig, homeDir, innerServer, jsonText, Manifest, missingDirs, proxyEntry, readJsonObject, SETUP_MARK_ENV, SetupError, shellWord, spillwayArgv, writeConfig, type FileChange, type SetupMark } from './files.js';
import { isObj } from '../../pipeline/values.js';

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
 * takes out everything setup put in that scope, and only that: the hook it wrote (recognised by its
 * exact command, {@link isOurHookCommand}), every MCP server marked `SET_UP_BY_SPILLWAY` (or only
 * `--mcp NAME`; one it wrapped gets its own command back), and the `enabledMcpjsonServers` names it
 * added (kept in the manifest, files.ts). A file setup created is deleted once nothing is left in it.
 *
 * `--no-hook` (`hook: false`) leaves the hook alone: with `--mcp`, only the server (and, in a
 * project, its approval) is added, for a user whose hook lives in another scope or who wants only
 * the proxy; with `--remove`, the servers go and the hook stays. A settings file that would not
 * change is then neither written nor created.
 */

type Obj = Record<string, unknown>;

export interface ClaudeSetupOptions {
  /** Project folder; absent: user scope. */
  projectDir?: string;
  /** With a project: write the shared `.claude/settings.json` instead of `settings.local.json`. */
  shared?: boolean;
  mcp?: { name: string; server: string[] };
  remove?: boolean;
  /** false: leave the PostToolUse hook as it is (add none, remove none); only the MCP server changes. Default true. */
  hook?: boolean;
  /** Extra `spillway hook claude-code` options written into the command (e.g. ['--limit', '8000']). */
  hookArgs?: string[];
  env?: NodeJS.ProcessEnv;
  now?: Date;
  /** The folder setup runs in: at user scope, its project settings are checked for the hook too. Default process.cwd(). */
  cwd?: string;
}

/** A command that runs `spillway hook claude-code` somehow: setup's own, or a user's wrapper around it. */
const RUNS_OUR_HOOK_RE = /(^|[\s/\\'"])spillway(\.js)?['"]?\s+hook\s+claude-code(\s|$)/;
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

/**
 * The words of a command as {@link shellWord} joins them (plain words, or single-quoted ones, one
 * space apart), or undefined when the command is anything else: `;`, `&&`, a pipe, `$(…)`, a
 * redirect, an env prefix with a quote in it. So a user's wrapper never parses as ours.
 */
function joinedWords(cmd: string): string[] | undefined {
  const word = /([\w@%+=:,./-]+)|'([^']*(?:'\\''[^']*)*)'/y;
  const words: string[] = [];
  for (let pos = 0; ; pos++) {
    word.lastIndex = pos;
    const m = word.exec(cmd);
    if (!m) return undefined;
    words.push(m[1] ?? m[2]!.replace(/'\\''/g, "'"));
    pos = word.lastIndex;
    if (pos === cmd.length) return words;
    if (cmd[pos] !== ' ') return undefined;
  }
}

/**
 * Whether a hook command is exactly one setup writes ({@link hookCommand}), by any install:
 * `spillway hook claude-code [options]`, or `<absolute node> <absolute …/bin/spillway.js> hook
 * claude-code [options]`. Nothing before it, nothing chained after it.
 */
export function isOurHookCommand(cmd: string): boolean {
  const w = joinedWords(cmd);
  if (!w) return false;
  let i: number;
  if (w[0] === 'spillway') i = 1;
  else if (w.length > 1 && path.isAbsolute(w[0]!) && /^node(js)?[\d.]*(\.exe)?$/.test(path.basename(w[0]!)) && path.isAbsolute(w[1]!) && /[/\\]bin[/\\]spillway\.js$/.test(w[1]!)) i = 2;
  else return false;
  return w[i] === 'hook' && w[i + 1] === 'claude-code' && w.slice(i + 2).every((a, k, rest) => a.startsWith('--') || (k > 0 && rest[k - 1]!.startsWith('--')));
}

const isOurHook = (h: unknown) => isObj(h) && h.type === 'command' && typeof h.command === 'string' && isOurHookCommand(h.command);
/** A hook that runs Spillway's hook inside a command setup did not write. */
const isWrapper = (h: unknown) => isObj(h) && typeof h.command === 'string' && !isOurHook(h) && RUNS_OUR_HOOK_RE.test(h.command);

function arrayAt(obj: Obj, key: string, file: string, where: string): unknown[] | undefined {
  const v = obj[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) throw new SetupError(`${file}: ${where}${key} is not an array; it was left untouched.`);
  return v;
}

/** Settings with our hook in (or out): everything else as it was. */
function mergeHook(settings: Obj, file: string, command: string | undefined): { value: Obj; detail: string; notes: string[] } {
  const value: Obj = { ...settings };
  if (value.hooks !== undefined && !isObj(value.hooks)) throw new SetupError(`${file}: "hooks" is not an object; it was left untouched.`);
  const hooks: Obj = { ...((value.hooks as Obj | undefined) ?? {}) };
  const groups = (arrayAt(hooks, 'PostToolUse', file, 'hooks.') ?? []).map((g, i) => {
    if (!isObj(g) || (g.hooks !== undefined && !Array.isArray(g.hooks))) throw new SetupError(`${file}: hooks.PostToolUse[${i}] is not a hook group; it was left untouched.`);
    return g;
  });
  const ours = groups.flatMap((g) => ((g.hooks as unknown[] | undefined) ?? []).filter(isOurHook));
  const wrappers = groups.flatMap((g) => ((g.hooks as unknown[] | undefined) ?? []).filter(isWrapper)).map((h) => (h as Obj).command as string);
  const notes = wrappers.map(
    (c) =>
      `kept the PostToolUse hook ${JSON.stringify(c)} in ${file}: it runs spillway hook claude-code inside a command setup did not write, so setup leaves it to you` +
      (command !== undefined && !ours.length ? ', and added no hook of its own (the two would guard every result twice)' : ''),
  );
  // A wrapper of the user's already runs the hook: adding ours would run it twice.
  if (command !== undefined && wrappers.length && !ours.length) return { value: settings, detail: 'no hook added: a hook of yours already runs Spillway', notes };
  const wanted = { type: 'command', command, timeout: HOOK_TIMEOUT_S };
  if (command !== undefined && ours.length === 1 && JSON.stringify(ours[0]) === JSON.stringify(wanted)) return { value: settings, detail: 'hook already in place', notes };
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
  return { value, detail, notes };
}

/** The mcpServers map with NAME behind the proxy (or back out of it). */
function mergeMcp(config: Obj, file: string, name: string, server: string[], remove: boolean, env: NodeJS.ProcessEnv): { value: Obj; detail: string; mark?: SetupMark } {
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
    if (mark === 'added') return { value: put(undefined), detail: `removed MCP server ${JSON.stringify(name)}`, mark };
    const { [SETUP_MARK_ENV]: _m, ...restEnv } = curEnv;
    const { env: _e, ...rest } = cur!;
    return {
      value: put({ ...rest, command: inner[0], args: inner.slice(1), ...(Object.keys(restEnv).length ? { env: restEnv } : {}) }),
      detail: `MCP server ${JSON.stringify(name)} runs its own command again (${inner.join(' ')})`,
      mark,
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
  const entry = proxyEntry('claude-code', target, env, name);
  const next: Obj = { ...(cur ?? {}), type: 'stdio', command: entry.command, args: entry.args, env: { ...curEnv, [SETUP_MARK_ENV]: newMark } };
  if (JSON.stringify(next) === JSON.stringify(cur)) return { value: config, detail: `MCP server ${JSON.stringify(name)} already behind Spillway` };
  return { value: put(next), detail: `MCP server ${JSON.stringify(name)} runs behind spillway mcp (${target.join(' ')})` };
}

/** The MCP servers in a config that setup wrote (marked, and running `spillway mcp`). */
function markedServers(config: Obj): string[] {
  if (!isObj(config.mcpServers)) return [];
  return Object.entries(config.mcpServers as Obj)
    .filter(([, v]) => isObj(v) && isObj(v.env) && typeof (v.env as Obj)[SETUP_MARK_ENV] === 'string' && innerServer(v.command, v.args) !== undefined)
    .map(([k]) => k);
}

/** Nothing left but empty objects: `{}`, `{"mcpServers": {}}`, `{"hooks": {}}`. */
const isEmptyConfig = (v: Obj) => Object.values(v).every((x) => isObj(x) && Object.keys(x).length === 0);

/** The scopes whose settings hold PostToolUse hooks for the same folder, each with the flags that name it. */
function scopesOf(o: ClaudeSetupOptions): Array<{ file: string; scope: string; flags: string }> {
  const project = path.resolve(o.projectDir ?? o.cwd ?? process.cwd());
  const q = shellWord(o.projectDir ? path.resolve(o.projectDir) : '.');
  return [
    { file: claudeSettingsFile({ env: o.env }), scope: 'user', flags: '--user' },
    { file: claudeSettingsFile({ projectDir: project, shared: true }), scope: 'project (shared)', flags: `--project ${q} --shared` },
    { file: claudeSettingsFile({ projectDir: project }), scope: 'project (local)', flags: `--project ${q}` },
  ];
}

/** A note for each other scope that already runs Spillway's hook: Claude Code runs the hooks of every scope. */
function otherScopeNotes(o: ClaudeSetupOptions, here: string): string[] {
  const notes: string[] = [];
  // In the home folder, the user's settings and the project's shared ones are one file.
  const seen = new Set([path.resolve(here)]);
  for (const s of scopesOf(o)) {
    if (seen.has(path.resolve(s.file))) continue;
    seen.add(path.resolve(s.file));
    let hooks: unknown[] = [];
    try {
      const v = readJsonObject(s.file).value;
      const post = isObj(v.hooks) ? (v.hooks as Obj).PostToolUse : undefined;
      hooks = Array.isArray(post) ? post.flatMap((g) => (isObj(g) && Array.isArray(g.hooks) ? g.hooks : [])) : [];
    } catch {
      continue; // unreadable there: not this command's business
    }
    const found = hooks.filter((h) => isObj(h) && typeof h.command === 'string' && RUNS_OUR_HOOK_RE.test(h.command));
    if (!found.length) continue;
    const how = found.some(isOurHook) ? `spillway setup claude-code ${s.flags} --remove` : 'remove it by hand: setup did not write it';
    notes.push(`warning: the Spillway hook is also registered at ${s.scope} scope (${s.file}); Claude Code runs the hooks of every scope, so keep one: ${how}`);
  }
  return notes;
}

/** Merge (or remove) the hook and the optional MCP server. Reads every file first: an invalid one stops setup before anything is written. */
export function setupClaudeCode(o: ClaudeSetupOptions): FileChange[] {
  const env = o.env ?? process.env;
  const wo = { env, now: o.now };
  const manifest = new Manifest(env);
  const settingsFile = claudeSettingsFile(o);
  const settings = readJsonObject(settingsFile);
  const settingsDirs = missingDirs(settingsFile);
  const withHook = o.hook !== false;
  if (!withHook && !o.mcp && !o.remove) throw new SetupError('--no-hook leaves nothing to do without --mcp NAME (or --remove)');
  const command = o.remove ? undefined : hookCommand(env, o.hookArgs ?? []);
  const hook = withHook ? mergeHook(settings.value, settingsFile, command) : { value: settings.value, detail: '', notes: [] as string[] };
  let settingsValue = hook.value;
  const settingsDetails = withHook ? [hook.detail] : [];
  const settingsEntry = manifest.get(settingsFile);
  let enabledByUs = [...(settingsEntry.enabled ?? [])];

  // The MCP file: read for --mcp, and for --remove (which takes out every server setup added).
  const mcpFile = claudeMcpFile(o);
  let mcp: { text?: string; value: Obj; details: string[]; dirs: string[]; changed: boolean } | undefined;
  if (o.mcp || o.remove) {
    const cfg = readJsonObject(mcpFile);
    mcp = { text: cfg.text, value: cfg.value, details: [], dirs: missingDirs(mcpFile), changed: false };
    const names = o.mcp ? [o.mcp.name] : o.remove ? markedServers(cfg.value) : [];
    for (const name of names) {
      const merged = mergeMcp(mcp.value, mcpFile, name, o.mcp?.server ?? [], o.remove === true, env);
      mcp.details.push(merged.detail);
      if (merged.value !== mcp.value) mcp.changed = true;
      mcp.value = merged.value;
      if (!o.projectDir) continue;
      // Claude Code skips a project server nobody approved: setup approves the one it adds, and takes
      // back only an approval it gave (the manifest), or that of a server it added and now removed.
      const list = arrayAt(settingsValue, 'enabledMcpjsonServers', settingsFile, '') ?? [];
      const stillThere = isObj(mcp.value.mcpServers) && (mcp.value.mcpServers as Obj)[name] !== undefined && !o.remove;
      let next = list;
      if (stillThere && !list.includes(name)) {
        next = [...list, name];
        enabledByUs = [...enabledByUs.filter((n) => n !== name), name];
        settingsDetails.push(`approved ${JSON.stringify(name)} in enabledMcpjsonServers`);
      } else if (!stillThere && list.includes(name) && (enabledByUs.includes(name) || merged.mark === 'added')) {
        next = list.filter((x) => x !== name);
        settingsDetails.push(`removed ${JSON.stringify(name)} from enabledMcpjsonServers`);
      }
      if (!stillThere) enabledByUs = enabledByUs.filter((n) => n !== name);
      if (next !== list) {
        const { enabledMcpjsonServers: _e, ...rest } = settingsValue;
        settingsValue = next.length ? { ...settingsValue, enabledMcpjsonServers: next } : rest;
      }
    }
    if (o.remove && !o.mcp && !names.length && cfg.text !== undefined) mcp.details.push('no MCP server set up by Spillway here');
  }
  const notes = [...hook.notes, ...(o.remove || !withHook ? [] : otherScopeNotes(o, settingsFile))];

  const changes: FileChange[] = [];
  const settingsText = settingsValue === settings.value && settings.text !== undefined ? settings.text : jsonText(settingsValue, settings.text);
  const settingsDetail = settingsDetails.join('; ');
  // Without the hook, the settings file is touched only for an approval (a project's enabledMcpjsonServers).
  const settingsUntouched = !withHook && settingsValue === settings.value;
  if (!(o.remove && settings.text === undefined) && !settingsUntouched) {
    let c: FileChange;
    if (o.remove && settingsEntry.created && isEmptyConfig(settingsValue)) c = deleteConfig(settingsFile, settingsDetail, settingsEntry.dirs ?? [], wo);
    else c = writeConfig(settingsFile, settings.text, settingsText, settingsDetail, wo);
    if (notes.length) c.notes = notes;
    changes.push(c);
    manifest.set(settingsFile, {
      created: c.action === 'created' || (settingsEntry.created && c.action !== 'deleted'),
      dirs: c.action === 'created' ? settingsDirs : settingsEntry.dirs,
      enabled: c.action === 'deleted' ? [] : enabledByUs,
    });
  }
  if (mcp && mcp.text === undefined && o.remove) mcp = undefined; // nothing there to remove from
  if (mcp) {
    const entry = manifest.get(mcpFile);
    const text = !mcp.changed && mcp.text !== undefined ? mcp.text : jsonText(mcp.value, mcp.text);
    const detail = mcp.details.join('; ');
    let c: FileChange;
    if (o.remove && entry.created && isEmptyConfig(mcp.value)) c = deleteConfig(mcpFile, detail, entry.dirs ?? [], wo);
    else c = writeConfig(mcpFile, mcp.text, text, detail, wo);
    changes.push(c);
    manifest.set(mcpFile, { created: c.action === 'created' || (entry.created && c.action !== 'deleted'), dirs: c.action === 'created' ? mcp.dirs : entry.dirs });
  }
  manifest.save();
  return changes;
}
