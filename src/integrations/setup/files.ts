import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { appDataDir } from '../../pipeline/config.js';
import { isObj } from '../../pipeline/values.js';

/**
 * What `spillway setup` shares between clients: reading a config file without ever damaging it
 * (through a symlink to its target), writing it back atomically with its mode kept and a backup in
 * app data, the manifest of what setup added, and the command line that runs this very install.
 */

/** A config file that cannot be merged (bad JSON or TOML, an unexpected shape): left exactly as it was. */
export class SetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SetupError';
  }
}

export type FileAction = 'created' | 'updated' | 'deleted' | 'unchanged';

export interface FileChange {
  file: string;
  action: FileAction;
  /** The copy of the previous content, when the file was changed. */
  backup?: string;
  /** What changed, for the user. */
  detail: string;
  /** What the user should know that is not a change: a hook also registered in another scope, a wrapper kept. */
  notes?: string[];
}

/** Largest config file `setup` reads (Claude Code's ~/.claude.json grows with history, but not this far). */
export const MAX_CONFIG_FILE_BYTES = 64 * 1024 * 1024;

/**
 * Where a config file's content really lives: the file itself, or, when it is a symlink (a dotfiles
 * repo), the file the link points to, so the write goes there and the link stays a link. A link
 * whose target is missing is refused: setup would otherwise create a file somewhere the user did not
 * name.
 */
export function contentPath(file: string): string {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return file;
    throw new SetupError(`cannot read ${file}: ${(err as Error).message}`);
  }
  if (!st.isSymbolicLink()) return file;
  try {
    return fs.realpathSync(file);
  } catch (err) {
    throw new SetupError(`${file} is a symlink to ${fs.readlinkSync(file)}, which cannot be opened (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); it was left untouched. Create its target, or remove the link, and run setup again.`);
  }
}

export function readText(file: string): string | undefined {
  const real = contentPath(file);
  let st: fs.Stats;
  try {
    st = fs.statSync(real);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SetupError(`cannot read ${file}: ${(err as Error).message}`);
  }
  if (!st.isFile()) throw new SetupError(`${file} is not a regular file`);
  if (st.size > MAX_CONFIG_FILE_BYTES) throw new SetupError(`${file} is larger than ${MAX_CONFIG_FILE_BYTES} bytes; not touching it`);
  return fs.readFileSync(real, 'utf8');
}

type Obj = Record<string, unknown>;

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

/**
 * JSON as Claude Code writes its settings (two-space indent, a final newline), or, given the file's
 * previous text laid out over several lines, in that text's own indent, line ends, final whitespace
 * and byte order mark: so setup then `--remove` gives back the very bytes (issue 32). A one-line
 * (compact) file gets the default: setup's entries would be unreadable on one line.
 */
export function jsonText(value: unknown, like?: string): string {
  const m = like === undefined ? null : /^(\uFEFF?)\s*[{[][ \t]*\r?\n([ \t]+)\S/.exec(like);
  if (!m) return `${JSON.stringify(value, null, 2)}\n`;
  const crlf = /\r\n/.test(like!);
  const body = JSON.stringify(value, null, m[2]); // a newline inside a JSON string is escaped: every \n here is a line end
  return `${m[1]}${crlf ? body.replace(/\n/g, '\r\n') : body}${/\s*$/.exec(like!)![0]}`;
}

function stamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
}

/**
 * Setup's own folders in app data: private (0700), as they hold copies of config files that may
 * carry tokens. Only the folders made here get a mode; one that exists keeps its own (issue 32:
 * never change the mode of a folder Spillway did not create).
 */
function privateDir(dir: string): string {
  const first = fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (first !== undefined) {
    for (let d = path.resolve(dir); ; d = path.dirname(d)) {
      fs.chmodSync(d, 0o700); // made just now, by us: 0700 whatever the umask
      if (d === path.resolve(first) || path.dirname(d) === d) break;
    }
  }
  return dir;
}

/** `<app data>/backups/`: every copy setup keeps of a file before it changes it. */
export function backupDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(appDataDir(env), 'backups');
}

/**
 * Copy `file`'s current content to `<app data>/backups/<name>.<hash of its path>.<UTC time>.spillway-backup`
 * (0600, never overwriting one): never beside the file, where it would show in a project's git
 * status. The hash tells apart two files of the same name (a project's and the user's settings.json).
 */
function backUp(file: string, text: string, env: NodeJS.ProcessEnv, now: Date): string {
  const dir = privateDir(backupDir(env));
  const tag = crypto.createHash('sha256').update(path.resolve(file)).digest('hex').slice(0, 8);
  const base = `${path.basename(file).replace(/^\.+/, '')}.${tag}.${stamp(now)}`;
  for (let i = 0; ; i++) {
    const backup = path.join(dir, `${base}${i ? `-${i}` : ''}.spillway-backup`);
    try {
      const fd = fs.openSync(backup, 'wx', 0o600);
      try {
        fs.writeFileSync(fd, text);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      return backup;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

export interface WriteOptions {
  now?: Date;
  env?: NodeJS.ProcessEnv;
}

const euid = (): number | undefined => (typeof process.geteuid === 'function' ? process.geteuid() : undefined);

/**
 * Whose a config file stays (issue 32): the file setup writes back keeps the owner, group and mode
 * of the one it replaces. Root can give a file back to its owner (fchown), so setup run as root
 * edits another account's config and leaves it that account's. Any other account cannot: a file it
 * does not own is refused before anything is written (it would otherwise become the caller's, and
 * its owner could no longer edit it). Throws SetupError naming the file.
 */
function checkCanKeepOwner(file: string, st: fs.Stats): void {
  const me = euid();
  if (me === undefined || me === 0 || st.uid === me) return;
  throw new SetupError(
    `${file} belongs to another account (uid ${st.uid}; setup runs as uid ${me}), which setup could not give it back to; it was left untouched. ` +
      'Run setup as the account that owns it (or as root, which keeps its owner).',
  );
}

/**
 * Whose a file setup creates is (issue 32): run as root in a folder that belongs to another account
 * (its home, its project), the new file is given that folder's owner and group, or the account
 * could not edit its own config. Folders are not made there as root: a folder is chowned by path,
 * which the account owning the parent could swap for a symlink between the mkdir and the chown, so
 * setup refuses and says what to create. Returns the owner for the new file (undefined: the caller's).
 */
function ownerForNew(file: string, real: string): { uid: number; gid: number } | undefined {
  if (euid() !== 0) return undefined;
  let dir = path.dirname(real);
  const missing: string[] = [];
  for (; !fs.existsSync(dir) && path.dirname(dir) !== dir; dir = path.dirname(dir)) missing.unshift(dir);
  const st = fs.statSync(dir);
  if (st.uid === 0) return undefined;
  if (missing.length) {
    throw new SetupError(
      `${file}: setup runs as root and would create ${missing[0]} inside ${dir}, which belongs to uid ${st.uid}; it would be root's, and that account could not use it. ` +
        `Nothing was written. Run setup as that account, or create ${missing[missing.length - 1]} as it first.`,
    );
  }
  return { uid: st.uid, gid: st.gid };
}

/**
 * Write `text` to `file` when it differs from `previous`. The new content goes to a temp file given
 * the old one's mode, owner and group ({@link checkCanKeepOwner}; a new file: {@link ownerForNew}),
 * then the old content is copied to app data ({@link backUp}), then the temp file is renamed into
 * place, so a crash leaves either file whole, and a refusal (an owner that cannot be given back)
 * leaves neither a changed file nor a backup. A symlinked file is written at its target (the link is kept).
 */
export function writeConfig(file: string, previous: string | undefined, text: string, detail: string, o: WriteOptions = {}): FileChange {
  if (previous === text) return { file, action: 'unchanged', detail };
  const env = o.env ?? process.env;
  const real = contentPath(file);
  const existed = fs.existsSync(real);
  let mode = 0o644;
  let old: fs.Stats | undefined;
  let owner: { uid: number; gid: number } | undefined;
  if (existed) {
    old = fs.statSync(real);
    checkCanKeepOwner(file, old);
    mode = old.mode & 0o777;
    owner = { uid: old.uid, gid: old.gid };
  } else {
    owner = ownerForNew(file, real);
    fs.mkdirSync(path.dirname(real), { recursive: true });
  }
  const tmp = path.join(path.dirname(real), `.${path.basename(real)}.${process.pid}.${Date.now()}.tmp`);
  let backup: string | undefined;
  // Replacing a file: made 0600, readable by no one else until it has the old one's owner and mode.
  // A new file: 0644 less the umask, as the client itself would make it.
  const fd = fs.openSync(tmp, 'wx', old ? 0o600 : mode);
  try {
    try {
      fs.writeFileSync(fd, text);
      if (owner) {
        const now = fs.fstatSync(fd);
        if (now.uid !== owner.uid || now.gid !== owner.gid) {
          try {
            fs.fchownSync(fd, owner.uid, owner.gid);
          } catch (err) {
            const what = old ? 'given back its owner and group' : 'given the owner and group of its folder';
            throw new SetupError(`${file} could not be ${what} (uid ${owner.uid}, gid ${owner.gid}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); it was left untouched.`);
          }
        }
      }
      // The mode as it was, whatever the umask (after the chown, which may clear setuid bits).
      if (old) fs.fchmodSync(fd, mode);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    if (existed) backup = backUp(file, fs.readFileSync(real, 'utf8'), env, o.now ?? new Date());
    fs.renameSync(tmp, real);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  const via = real !== file ? `; written through the symlink to ${real}` : '';
  return { file, action: existed ? 'updated' : 'created', ...(backup ? { backup } : {}), detail: detail + via };
}

/**
 * Delete a file setup created, now that nothing but setup's own entries was ever in it (what is
 * left is `{}`, `{"mcpServers": {}}` or blank). A backup is kept first; folders setup created for it
 * go too when empty. A symlink is never deleted (the user made it).
 */
export function deleteConfig(file: string, detail: string, dirs: string[], o: WriteOptions = {}): FileChange {
  const st = fs.lstatSync(file);
  if (!st.isFile()) return { file, action: 'updated', detail };
  const backup = backUp(file, fs.readFileSync(file, 'utf8'), o.env ?? process.env, o.now ?? new Date());
  fs.rmSync(file);
  for (const d of [...dirs].sort((a, b) => b.length - a.length)) {
    try {
      fs.rmdirSync(d);
    } catch {
      /* not empty, or gone: keep it */
    }
  }
  return { file, action: 'deleted', backup, detail: `${detail}; setup had created the file and nothing else is in it, so it was deleted` };
}

/**
 * What setup remembers of the files it touched, in `<app data>/setup/manifest.json`: which files it
 * created (so removal deletes them when they are left empty) and which names it put in a list it
 * shares with the user (`enabledMcpjsonServers`), which no mark inside the file can carry. Entries
 * inside the files carry their own mark (the exact hook command; `SET_UP_BY_SPILLWAY` in a server's
 * env), so removal still finds them when this manifest is gone.
 */
export interface ManifestEntry {
  /** Setup created the file. */
  created?: boolean;
  /** Folders setup created for it (deepest last), removed with it when empty. */
  dirs?: string[];
  /** Names setup added to the file's `enabledMcpjsonServers`. */
  enabled?: string[];
}

interface ManifestDoc {
  version: 1;
  files: Record<string, ManifestEntry>;
}

export class Manifest {
  private doc: ManifestDoc;
  private dirty = false;
  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {
    this.doc = { version: 1, files: {} };
    try {
      const v = JSON.parse(fs.readFileSync(this.file, 'utf8')) as ManifestDoc;
      if (isObj(v) && isObj(v.files)) this.doc = { version: 1, files: v.files };
    } catch {
      /* none yet, or unreadable: start empty (entries in the files still carry their marks) */
    }
  }
  get file(): string {
    return path.join(appDataDir(this.env), 'setup', 'manifest.json');
  }
  get(file: string): ManifestEntry {
    const e = this.doc.files[path.resolve(file)];
    return isObj(e) ? e : {};
  }
  set(file: string, entry: ManifestEntry): void {
    const key = path.resolve(file);
    const clean: ManifestEntry = {
      ...(entry.created ? { created: true } : {}),
      ...(entry.created && entry.dirs?.length ? { dirs: entry.dirs } : {}),
      ...(entry.enabled?.length ? { enabled: entry.enabled } : {}),
    };
    if (JSON.stringify(clean) === JSON.stringify(this.doc.files[key] ?? {})) return;
    if (Object.keys(clean).length) this.doc.files[key] = clean;
    else delete this.doc.files[key];
    this.dirty = true;
  }
  save(): void {
    if (!this.dirty) return;
    const dir = privateDir(path.dirname(this.file));
    const tmp = path.join(dir, `.manifest.${process.pid}.${Date.now()}.tmp`);
    fs.writeFileSync(tmp, jsonText(this.doc), { mode: 0o600, flag: 'wx' });
    fs.renameSync(tmp, this.file);
    this.dirty = false;
  }
}

/** The folders that do not exist yet on the way to `file` (shallowest first). */
export function missingDirs(file: string): string[] {
  const out: string[] = [];
  for (let d = path.dirname(contentPath(file)); !fs.existsSync(d); d = path.dirname(d)) {
    out.unshift(d);
    if (path.dirname(d) === d) break;
  }
  return out;
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

/**
 * The stdio MCP entry that runs `server` behind `spillway mcp --client <client>`; `name`, the server's
 * key in the client's config, becomes `--server-name` so spills name tools as the client does.
 */
export function proxyEntry(client: string, server: string[], env: NodeJS.ProcessEnv = process.env, name?: string): { command: string; args: string[] } {
  if (!server.length) throw new SetupError('give the MCP server command after --, e.g. -- npx -y @modelcontextprotocol/server-filesystem ~/work');
  const argv = spillwayArgv(env);
  return { command: argv[0]!, args: [...argv.slice(1), 'mcp', '--client', client, ...(name ? ['--server-name', name] : []), '--', ...server] };
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
