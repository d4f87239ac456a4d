import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  deleteConfig,
  innerServer,
  jsonText,
  Manifest,
  missingDirs,
  proxyEntry,
  readJsonObject,
  SETUP_MARK_ENV,
  SetupError,
  spillwayArgv,
  writeConfig,
  type FileChange,
  type SetupMark,
} from '../../integrations/setup/files.js';
import { isObj } from '../../pipeline/values.js';
import { opencodePluginSource, PLUGIN_FILE_NAME, PLUGIN_MARK } from './plugin.js';

/**
 * `spillway setup opencode`: Spillway's plugin (plugin.ts) written into OpenCode's plugins folder,
 * and optionally an MCP server put behind `spillway mcp` in its `opencode.json`.
 *
 * | scope | plugin goes to | MCP server goes to |
 * |---|---|---|
 * | `--user` (default) | `$XDG_CONFIG_HOME/opencode/plugins/spillway-guard.js` (default `~/.config/opencode/…`) | `~/.config/opencode/opencode.json` `mcp` |
 * | `--project DIR` | `DIR/.opencode/plugins/spillway-guard.js` | `DIR/opencode.json` `mcp` |
 *
 * The plugin file is setup's own (its first line is {@link PLUGIN_MARK}): a file of that name
 * without the mark is never overwritten or deleted. opencode.json is merged: every other key stays.
 * Run it twice: nothing changes. `--remove` deletes the plugin file and takes out (or unwraps) every
 * MCP server marked `SET_UP_BY_SPILLWAY` in its `environment`; a file setup created is deleted once
 * nothing else is in it. Files are written by files.ts, which keeps the mode and owner of a file
 * setup did not create.
 */

type Obj = Record<string, unknown>;

export interface OpenCodeSetupOptions {
  projectDir?: string;
  mcp?: { name: string; server: string[] };
  remove?: boolean;
  /** false: leave the plugin as it is; only the MCP server changes. Default true. */
  hook?: boolean;
  hookArgs?: string[];
  env?: NodeJS.ProcessEnv;
  now?: Date;
}

export function opencodeConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME ? path.resolve(env.XDG_CONFIG_HOME) : path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'opencode');
}

export function opencodePluginFile(o: Pick<OpenCodeSetupOptions, 'projectDir' | 'env'>): string {
  const dir = o.projectDir ? path.join(path.resolve(o.projectDir), '.opencode') : opencodeConfigDir(o.env);
  return path.join(dir, 'plugins', PLUGIN_FILE_NAME);
}

export function opencodeConfigFile(o: Pick<OpenCodeSetupOptions, 'projectDir' | 'env'>): string {
  const dir = o.projectDir ? path.resolve(o.projectDir) : opencodeConfigDir(o.env);
  const json = path.join(dir, 'opencode.json');
  // OpenCode reads opencode.jsonc too; setup writes JSON only, and never a second file beside the user's.
  if (!fs.existsSync(json) && fs.existsSync(path.join(dir, 'opencode.jsonc')))
    throw new SetupError(`${path.join(dir, 'opencode.jsonc')} is JSONC, which setup does not rewrite (its comments would be lost); add the server by hand, or rename it to opencode.json if it has no comments.`);
  return json;
}

function readPlugin(file: string): string | undefined {
  try {
    const st = fs.lstatSync(file);
    if (!st.isFile()) throw new SetupError(`${file} is not a regular file; it was left untouched.`);
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The `mcp` map of opencode.json with NAME behind the proxy (or back out of it). OpenCode's local server: `{type:"local", command:[…], environment}`. */
function mergeMcp(config: Obj, file: string, name: string, server: string[], remove: boolean, env: NodeJS.ProcessEnv): { value: Obj; detail: string } {
  if (config.mcp !== undefined && !isObj(config.mcp)) throw new SetupError(`${file}: "mcp" is not an object; it was left untouched.`);
  const servers: Obj = { ...((config.mcp as Obj | undefined) ?? {}) };
  const cur = servers[name];
  if (cur !== undefined && !isObj(cur)) throw new SetupError(`${file}: mcp.${name} is not an object; it was left untouched.`);
  const c = cur as Obj | undefined;
  const cmd = c && Array.isArray(c.command) && c.command.every((x) => typeof x === 'string') ? (c.command as string[]) : undefined;
  const curEnv = isObj(c?.environment) ? (c!.environment as Obj) : {};
  const mark = curEnv[SETUP_MARK_ENV] as SetupMark | undefined;
  const inner = cmd && cmd.length ? innerServer(cmd[0], cmd.slice(1)) : undefined;
  const put = (v: Obj | undefined) => {
    if (v) servers[name] = v;
    else delete servers[name];
    const next: Obj = { ...config, mcp: servers };
    if (!Object.keys(servers).length) delete next.mcp;
    return next;
  };
  if (remove) {
    if (!c) return { value: config, detail: `no MCP server ${JSON.stringify(name)} to remove` };
    if (!inner || !mark) throw new SetupError(`${file}: MCP server ${JSON.stringify(name)} was not set up by spillway; it was left alone.`);
    if (mark === 'added') return { value: put(undefined), detail: `removed MCP server ${JSON.stringify(name)}` };
    const { [SETUP_MARK_ENV]: _m, ...restEnv } = curEnv;
    const { environment: _e, ...rest } = c;
    return { value: put({ ...rest, command: inner, ...(Object.keys(restEnv).length ? { environment: restEnv } : {}) }), detail: `MCP server ${JSON.stringify(name)} runs its own command again (${inner.join(' ')})` };
  }
  let target: string[];
  let newMark: SetupMark;
  if (server.length) {
    target = server;
    newMark = inner && mark ? mark : c ? 'wrapped' : 'added';
  } else if (inner && mark) {
    target = inner;
    newMark = mark;
  } else {
    if (!c) throw new SetupError(`${file}: there is no MCP server ${JSON.stringify(name)} to put behind Spillway; give its command after --.`);
    if (c.type !== 'local' || !cmd?.length) throw new SetupError(`${file}: MCP server ${JSON.stringify(name)} is not a local server with a command; spillway mcp proxies stdio servers only.`);
    target = cmd;
    newMark = 'wrapped';
  }
  // What OpenCode shows its model of an MCP result is not measured yet: generic counts both content and structuredContent, so it never gives too much.
  const entry = proxyEntry('generic', target, env);
  // `enabled` only on a server setup adds: a wrapped one keeps what it had, so unwrapping gives it back as it was.
  const next: Obj = { ...(c ?? { enabled: true }), type: 'local', command: [entry.command, ...entry.args], environment: { ...curEnv, [SETUP_MARK_ENV]: newMark } };
  if (JSON.stringify(next) === JSON.stringify(c)) return { value: config, detail: `MCP server ${JSON.stringify(name)} already behind Spillway` };
  return { value: put(next), detail: `MCP server ${JSON.stringify(name)} runs behind spillway mcp (${target.join(' ')})` };
}

function markedServers(config: Obj): string[] {
  if (!isObj(config.mcp)) return [];
  return Object.entries(config.mcp as Obj)
    .filter(([, v]) => isObj(v) && isObj(v.environment) && typeof (v.environment as Obj)[SETUP_MARK_ENV] === 'string' && Array.isArray(v.command) && innerServer(v.command[0], v.command.slice(1)) !== undefined)
    .map(([k]) => k);
}

/** Merge (or remove) the plugin and the optional MCP server. Reads every file first: an invalid one stops setup before anything is written. */
export function setupOpenCode(o: OpenCodeSetupOptions): FileChange[] {
  const env = o.env ?? process.env;
  const wo = { env, now: o.now };
  const manifest = new Manifest(env);
  const withHook = o.hook !== false;
  if (!withHook && !o.mcp && !o.remove) throw new SetupError('--no-hook leaves nothing to do without --mcp NAME (or --remove)');
  const pluginFile = opencodePluginFile(o);
  const pluginText = readPlugin(pluginFile);
  if (withHook && pluginText !== undefined && !pluginText.startsWith(PLUGIN_MARK))
    throw new SetupError(`${pluginFile} exists and was not written by spillway setup; it was left untouched.`);
  const configFile = o.mcp || o.remove ? opencodeConfigFile(o) : undefined;
  const cfg = configFile ? readJsonObject(configFile) : undefined;
  const changes: FileChange[] = [];

  if (withHook) {
    const entry = manifest.get(pluginFile);
    if (o.remove) {
      if (pluginText !== undefined) {
        // Only setup's own file gets here (the mark was checked above).
        changes.push(deleteConfig(pluginFile, 'removed the Spillway plugin', entry.created ? (entry.dirs ?? []) : [], wo));
        manifest.set(pluginFile, {});
      }
    } else {
      const dirs = missingDirs(pluginFile);
      const want = opencodePluginSource(spillwayArgv(env), o.hookArgs ?? []);
      const c = writeConfig(pluginFile, pluginText, want, pluginText === undefined ? 'added the plugin that guards every tool result (tool.execute.after)' : pluginText === want ? 'plugin already in place' : "replaced the plugin with this install's command", wo);
      changes.push(c);
      manifest.set(pluginFile, { created: c.action === 'created' || entry.created, dirs: c.action === 'created' ? dirs : entry.dirs });
    }
  }

  if (configFile && cfg) {
    if (o.remove && cfg.text === undefined) return finish();
    const entry = manifest.get(configFile);
    const dirs = missingDirs(configFile);
    let value = cfg.value;
    const details: string[] = [];
    const names = o.mcp ? [o.mcp.name] : markedServers(cfg.value);
    for (const name of names) {
      const m = mergeMcp(value, configFile, name, o.mcp?.server ?? [], o.remove === true, env);
      details.push(m.detail);
      value = m.value;
    }
    if (!names.length) details.push('no MCP server set up by Spillway here');
    const text = value === cfg.value && cfg.text !== undefined ? cfg.text : jsonText(value, cfg.text);
    const empty = Object.keys(value).every((k) => k === '$schema');
    let c: FileChange;
    if (o.remove && entry.created && empty) c = deleteConfig(configFile, details.join('; '), entry.dirs ?? [], wo);
    else c = writeConfig(configFile, cfg.text, text, details.join('; '), wo);
    changes.push(c);
    manifest.set(configFile, { created: c.action === 'created' || (entry.created && c.action !== 'deleted'), dirs: c.action === 'created' ? dirs : entry.dirs });
  }
  return finish();

  function finish(): FileChange[] {
    manifest.save();
    return changes;
  }
}
