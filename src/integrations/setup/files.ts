import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * What `spillway setup` shares between clients: reading a config file without ever damaging it,
 * writing it back atomically with its mode kept and a backup beside it, and the command line that
 * runs this very install of Spillway.
 */

/** A config file that cannot be merged (bad JSON or TOML, an unexpected shape): left exactly as it was. */
export class SetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SetupError';
  }
}

export type FileAction = 'created' | 'updated' | 'unchanged' | 'removed-entry' | 'nothing-to-remove';

export interface FileChange {
  file: string;
  action: FileAction;
  /** The copy of the previous content, when the file was changed. */
  backup?: string;
  /** What changed, for the user. */
  detail: string;
}

/** Largest config file `setup` reads (Claude Code's ~/.claude.json grows with history, but not this far). */
export const MAX_CONFIG_FILE_BYTES = 64 * 1024 * 1024;

export function readText(file: string): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SetupError(`cannot read ${file}: ${(err as Error).message}`);
  }
  if (!st.isFile()) throw new SetupError(`${file} is not a regular file`);
  if (st.size > MAX_CONFIG_FILE_BYTES) throw new SetupError(`${file} is larger than ${MAX_CONFIG_FILE_BYTES} bytes; not touching it`);
  return fs.readFileSync(file, 'utf8');
}

type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON config file as an object ({} when it does not exist). Throws SetupError, naming the file, when it is not a JSON object. */
export function readJsonObject(file: string): { text?: string; value: Obj } {
  const text = readText(file);
  if (text === undefined || text.trim() === '') return { text, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new SetupError(`${file} is not valid JSON (${(err as Error).message}); it was left untouched. Fix it, or move it away, and run setup again.`);
  }
  if (!isObj(value)) throw new SetupError(`${file} does not hold a JSON object; it was left untouched.`);
  return { text, value };
}

/** JSON as Claude Code writes its settings: two-space indent, a final newline. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function stamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/**
 * Write `text` to `file` when it differs from `previous`: the old content is first copied to
 * `<file>.<UTC time>.spillway-backup`, then the new one goes to a temp file with the same mode and
 * is renamed into place, so a crash leaves either file whole.
 */
export function writeConfig(file: string, previous: string | undefined, text: string, detail: string, now = new Date()): FileChange {
  if (previous === text) return { file, action: 'unchanged', detail };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  let mode = 0o644;
  let backup: string | undefined;
  if (previous !== undefined) {
    mode = fs.statSync(file).mode & 0o777;
    backup = `${file}.${stamp(now)}.spillway-backup`;
    for (let i = 1; fs.existsSync(backup); i++) backup = `${file}.${stamp(now)}-${i}.spillway-backup`;
    fs.copyFileSync(file, backup, fs.constants.COPYFILE_EXCL);
    fs.chmodSync(backup, mode);
  }
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
  const fd = fs.openSync(tmp, 'wx', mode);
  try {
    fs.writeFileSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return { file, action: previous === undefined ? 'created' : 'updated', ...(backup ? { backup } : {}), detail };
}

/** The folder of this Spillway install: the one whose package.json is named "spillway", above this module. */
export function installRoot(from = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === 'spillway') return dir;
    } catch {
      /* no package.json here */
    }
    if (path.dirname(dir) === dir) throw new SetupError('cannot find the Spillway install this command runs from');
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/**
 * The command line that runs this install: `spillway` when the one on PATH is this install's bin
 * (after `npm link` or a global install), else the absolute node running now and this checkout's
 * bin/spillway.js. Never `npx spillway`: no package of that name is ours on the registry.
 */
export function spillwayArgv(env: NodeJS.ProcessEnv = process.env, root = installRoot()): string[] {
  const bin = path.join(root, 'bin', 'spillway.js');
  const found = onPath('spillway', env);
  if (found) {
    try {
      if (fs.realpathSync(found) === fs.realpathSync(bin)) return ['spillway'];
    } catch {
      /* a dangling link: use the absolute form */
    }
  }
  return [process.execPath, bin];
}

/** A word for a POSIX shell, quoted only when it needs to be. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HOME || os.homedir();
}

/** Marks an MCP server entry that setup wrote (`added`: a new server; `wrapped`: an existing one put behind the proxy). */
export const SETUP_MARK_ENV = 'SET_UP_BY_SPILLWAY';
export type SetupMark = 'added' | 'wrapped';

/** The stdio MCP entry that runs `server` behind `spillway mcp --client <client>`. */
export function proxyEntry(client: string, server: string[], env: NodeJS.ProcessEnv = process.env): { command: string; args: string[] } {
  if (!server.length) throw new SetupError('give the MCP server command after --, e.g. -- npx -y @modelcontextprotocol/server-filesystem ~/work');
  const argv = spillwayArgv(env);
  return { command: argv[0]!, args: [...argv.slice(1), 'mcp', '--client', client, '--', ...server] };
}

/** The server command inside a proxy entry that setup wrote (what follows `mcp … --`), or undefined if it is not one. */
export function innerServer(command: unknown, args: unknown): string[] | undefined {
  if (typeof command !== 'string' || !Array.isArray(args) || !args.every((a) => typeof a === 'string')) return undefined;
  const all = [command, ...(args as string[])];
  const mcp = all.indexOf('mcp');
  const dash = all.indexOf('--', mcp + 1);
  if (mcp < 0 || dash < 0 || !all.slice(0, mcp).some((a) => /(^|[/\\])spillway(\.js)?$/.test(a))) return undefined;
  return all.slice(dash + 1);
}
