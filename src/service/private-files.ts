/**
 * What Spillway writes for itself (app data, scratch analyses, the index database, window state)
 * is the user's alone: folders 0700, files 0600. A copy of a dropped 0600 file must not become
 * readable by other accounts on the machine.
 *
 * Modes are set explicitly rather than through the process umask, which would also change what
 * the host process (Electron's main, a test runner) writes elsewhere. A 0700 folder is created
 * before anything is written into it, so a file is never reachable by others even before its own
 * mode is set. On Windows modes mean little; these calls are harmless there.
 */
import fs from 'node:fs';
import path from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** A tree made private one entry at a time stops after this many entries (a scratch session holds a handful). */
export const PRIVATE_TREE_MAX_ENTRIES = 10_000;

/** Create `dir` (and missing parents) as 0700; an existing folder we own is set to 0700 too. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await fs.promises.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  await chmodOwned(dir, PRIVATE_DIR_MODE);
}

export function ensurePrivateDirSync(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  try {
    const st = fs.lstatSync(dir);
    if (st.isDirectory() && ownedByUs(st) && (st.mode & 0o777) !== PRIVATE_DIR_MODE) fs.chmodSync(dir, PRIVATE_DIR_MODE);
  } catch {
    /* best effort: the folder exists, its mode is the OS's business */
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
 * The SQLite database file as 0600 before SQLite opens it: SQLite gives its -wal and -shm files
 * the mode of the database file, so creating it private keeps all three private.
 */
export function preparePrivateDbFile(dbPath: string): void {
  if (dbPath === ':memory:') return;
  ensurePrivateDirSync(path.dirname(dbPath));
  try {
    fs.closeSync(fs.openSync(dbPath, fs.constants.O_CREAT | fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW, PRIVATE_FILE_MODE));
  } catch {
    return; // a link or an unwritable place: let the index report it when it opens the file
  }
  for (const f of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) {
    try {
      const st = fs.lstatSync(f);
      if (st.isFile() && ownedByUs(st) && (st.mode & 0o777) !== PRIVATE_FILE_MODE) fs.chmodSync(f, PRIVATE_FILE_MODE);
    } catch {
      /* not there yet */
    }
  }
}

/** Make every folder under `root` 0700 and every file 0600 (links are left alone, never followed). */
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

/** Write `text` to `file` atomically (temp file, then rename) as a 0600 file. */
export function writePrivateFileSync(file: string, text: string): void {
  ensurePrivateDirSync(path.dirname(file));
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmp, text, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  fs.renameSync(tmp, file);
}
