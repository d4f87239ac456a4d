/**
 * What Spillway writes for itself (app data, scratch analyses, the index database, window state)
 * is the user's alone: folders 0700, files 0600. A copy of a dropped 0600 file must not become
 * readable by other accounts on the machine.
 *
 * Two rules (issue 32):
 * - A mode is only ever set on what Spillway creates, at the moment it creates it. A folder that
 *   already exists keeps its mode: `--db /tmp/x.db` must not take /tmp's 1777 away, and
 *   `SPILLWAY_HOME` may name a folder the user made.
 * - App data, the database and the consent record that already exist are used only when they are
 *   the caller's: owned by the caller and not writable by group or others. Anything else is refused
 *   with {@link NotPrivateError}, whose message says how to fix it. Another account that can write
 *   there could plant a database that collects the indexed secrets, or a consent record.
 *
 * Modes are set explicitly rather than through the process umask, which would also change what
 * the host process (Electron's main, a test runner) writes elsewhere. A 0700 folder is created
 * before anything is written into it, so a file is never reachable by others even before its own
 * mode is set. On Windows modes and owners mean little; the checks are skipped there.
 *
 * | call                     | for                                                                    |
 * | ------------------------ | ---------------------------------------------------------------------- |
 * | `ensurePrivateDir(Sync)` | app data and its own folders: created 0700, or checked when they exist |
 * | `mkdirPrivateNew`        | a new folder of its own (a scratch session): exclusive, 0700           |
 * | `checkPrivate`           | one existing file or folder: the caller's, not writable by others      |
 * | `preparePrivateDbFile`   | the index database before SQLite opens it                              |
 * | `checkPrivateDb`         | an index database that may exist, before a command touches it (prune)  |
 * | `privatizeTree`          | a tree Spillway has just written (a scratch session)                   |
 * | `writePrivateFileSync`   | a small file of ours, atomically, 0600                                 |
 */
import fs from 'node:fs';
import path from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** A tree made private one entry at a time stops after this many entries (a scratch session holds a handful). */
export const PRIVATE_TREE_MAX_ENTRIES = 10_000;
/** Mode bits that let group or others write. */
const OTHERS_WRITE = 0o022;

/** App data, a database or a consent record that is not the caller's alone: Spillway will not use it. */
export class NotPrivateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotPrivateError';
  }
}

const myUid = (): number | undefined => (typeof process.getuid === 'function' ? process.getuid() : undefined);

/**
 * Refuse an existing `p` that is not the caller's: owned by another account, or writable by group
 * or others. A link is checked twice, itself (its owner) and its target. Returns false when nothing
 * is there. `what` names it for the user ("app-data folder", "index database").
 */
export function checkPrivate(p: string, what: string): boolean {
  let lst: fs.Stats;
  try {
    lst = fs.lstatSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  const uid = myUid();
  if (uid === undefined) return true;
  const stats = [lst];
  if (lst.isSymbolicLink()) {
    try {
      stats.push(fs.statSync(p));
    } catch {
      return true; // a dangling link: whoever opens it reports it
    }
  }
  for (const st of stats) {
    const folder = st.isDirectory();
    const fix = folder ? `chmod 700 ${p}` : `chmod 600 ${p}`;
    const elsewhere = what.includes('database') ? 'give --db a file in a folder of your own' : 'set SPILLWAY_HOME to a folder of your own';
    if (st.uid !== uid) {
      throw new NotPrivateError(
        `${what} ${p} belongs to another account (uid ${st.uid}, you are uid ${uid}), so Spillway will not use it: ` +
          `if it is yours, \`chown ${uid} ${p}\` and \`${fix}\`; otherwise ${elsewhere}`,
      );
    }
    if (!st.isSymbolicLink() && (st.mode & OTHERS_WRITE) !== 0) {
      throw new NotPrivateError(
        `${what} ${p} can be written by other accounts (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}), so Spillway will not use it: ` +
          `\`${fix}\` (check nobody else put anything in it), or ${elsewhere}`,
      );
    }
  }
  return true;
}

/**
 * The folders `mkdir -p` just made for `dir` (shallowest first), from the first one it reports:
 * every one of them is ours, so setting its mode takes nothing from anyone.
 */
function createdChain(dir: string, first: string | undefined): string[] {
  if (first === undefined) return [];
  const out: string[] = [];
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    out.unshift(d);
    if (d === path.resolve(first) || path.dirname(d) === d) break;
  }
  return out;
}

/** Create `dir` and its missing parents, each 0700 whatever the umask; an existing folder is left exactly as it is. */
export function mkdirPrivateSync(dir: string): boolean {
  const first = fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  for (const d of createdChain(dir, first)) chmodQuiet(d, PRIVATE_DIR_MODE);
  return first !== undefined;
}

/**
 * App data or one of its folders: created 0700 (with its missing parents) when it is not there;
 * when it is, it must be the caller's ({@link checkPrivate}) and its mode is left alone.
 */
export function ensurePrivateDirSync(dir: string, what = 'app-data folder'): void {
  if (!mkdirPrivateSync(dir)) checkPrivate(dir, what);
}

export async function ensurePrivateDir(dir: string, what = 'app-data folder'): Promise<void> {
  const first = await fs.promises.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first === undefined) {
    checkPrivate(dir, what);
    return;
  }
  for (const d of createdChain(dir, first)) chmodQuiet(d, PRIVATE_DIR_MODE);
}

/**
 * A new folder of Spillway's own (a scratch session), 0700 whatever the umask, in a parent that is
 * the caller's. Exclusive: a name that exists already fails with EEXIST, so what is later made
 * private inside it ({@link privatizeTree}) is only ever what this call created.
 */
export async function mkdirPrivateNew(dir: string): Promise<void> {
  await ensurePrivateDir(path.dirname(dir));
  await fs.promises.mkdir(dir, { mode: PRIVATE_DIR_MODE });
  chmodQuiet(dir, PRIVATE_DIR_MODE);
}

function chmodQuiet(p: string, mode: number): void {
  try {
    fs.chmodSync(p, mode);
  } catch {
    /* a file system without modes */
  }
}

function ownedByUs(st: fs.Stats): boolean {
  return typeof process.getuid !== 'function' || st.uid === process.getuid();
}

async function chmodOwned(p: string, mode: number): Promise<void> {
  try {
    const st = await fs.promises.lstat(p);
    // Never follow a link, never touch what another account owns.
    if (st.isSymbolicLink() || !ownedByUs(st) || (st.mode & 0o777) === mode) return;
    await fs.promises.chmod(p, mode);
  } catch {
    /* gone meanwhile, or a file system without modes */
  }
}

/**
 * The SQLite database file before SQLite opens it. A new one is created here, exclusively, as
 * 0600: SQLite gives its -wal and -shm files the mode of the database file, so all three are
 * private. Missing folders on the way are created 0700; the folder it is in, when it exists, is
 * never touched (it may be /tmp). An existing database, and its -wal, -shm and -journal files, must
 * be the caller's ({@link checkPrivate}): one another account planted or can write could collect
 * what is indexed. An existing file keeps its mode.
 */
export function preparePrivateDbFile(dbPath: string): void {
  if (dbPath === ':memory:') return;
  mkdirPrivateSync(path.dirname(dbPath));
  let fd: number | undefined;
  try {
    fd = fs.openSync(dbPath, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW, PRIVATE_FILE_MODE);
  } catch (err) {
    // EEXIST: checked below. Anything else (an unwritable place): the index reports it when it opens the file.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return;
  }
  if (fd !== undefined) {
    try {
      fs.fchmodSync(fd, PRIVATE_FILE_MODE); // ours, just made: 0600 whatever the umask
    } catch {
      /* a file system without modes */
    } finally {
      fs.closeSync(fd);
    }
  }
  checkPrivateDb(dbPath);
}

/**
 * An index database that may exist (and its -wal, -shm and -journal files): each one there must be
 * the caller's ({@link checkPrivate}). Creates nothing. Returns whether the database itself exists.
 */
export function checkPrivateDb(dbPath: string): boolean {
  if (dbPath === ':memory:') return false;
  let exists = false;
  for (const [f, what] of [
    [dbPath, 'index database'],
    [`${dbPath}-wal`, 'index database journal'],
    [`${dbPath}-shm`, 'index database shared memory'],
    [`${dbPath}-journal`, 'index database journal'],
  ] as const) {
    if (checkPrivate(f, what) && f === dbPath) exists = true;
  }
  return exists;
}

/**
 * Make every folder under `root` 0700 and every file 0600 (links are left alone, never followed).
 * Only for a tree Spillway has just written itself (a scratch session {@link mkdirPrivateNew} created).
 */
export async function privatizeTree(root: string): Promise<void> {
  let budget = PRIVATE_TREE_MAX_ENTRIES;
  const walk = async (dir: string): Promise<void> => {
    await chmodOwned(dir, PRIVATE_DIR_MODE);
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (--budget < 0) return;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) await chmodOwned(p, PRIVATE_FILE_MODE);
    }
  };
  await walk(root);
}

/** Make one file Spillway has just written 0600 (a saved template: the others in its folder are left as they are). */
export async function privatizeFile(file: string): Promise<void> {
  await chmodOwned(file, PRIVATE_FILE_MODE);
}

/** Write `text` to `file` atomically (temp file, then rename) as a 0600 file, in a folder that is the caller's. */
export function writePrivateFileSync(file: string, text: string): void {
  ensurePrivateDirSync(path.dirname(file));
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmp, text, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  chmodQuiet(tmp, PRIVATE_FILE_MODE);
  fs.renameSync(tmp, file);
}
