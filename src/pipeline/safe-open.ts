/**
 * Opening a file the user did not write: one way, for every reader (`serve`, the desktop's app://,
 * the index and its importers, the Claude Code hook, `estimate`).
 *
 * | call                         | for                                                              |
 * | ---------------------------- | ---------------------------------------------------------------- |
 * | {@link openUntrusted}        | a FileHandle and its Stats (the service, the hook)              |
 * | {@link openUntrustedSync}    | an fd and its Stats (the index's scan, the CLI)                 |
 * | {@link readUntrusted}        | the whole file, refused past a byte cap                         |
 * | {@link isConfinedDirSync}    | may this folder be listed: a real folder, no link on the way     |
 *
 * What is refused, and why, in this order:
 * 1. Anything `lstat` does not call a regular file: a FIFO (opening one blocks a libuv thread until
 *    something writes to it: four of them hang every file read of `serve`), a socket, a device, a
 *    link. Nothing is opened before this check.
 * 2. The open itself is `O_RDONLY|O_NONBLOCK|O_NOFOLLOW`: a FIFO or a link swapped in after the
 *    `lstat` neither blocks nor is followed.
 * 3. `fstat` of the descriptor must be the regular file `lstat` saw (same device and inode).
 * 4. With a `root`, every component of the path below it must be a real folder: the path of the
 *    open descriptor (`/proc/self/fd`, where the system has it; else the folder's realpath, taken
 *    after the open) must be the path asked for. A linked `<session>/` or `tool-results/` folder
 *    is refused, not only a linked file.
 * 5. With a `root`, a file with more than one hard link is refused: its other name can be anywhere,
 *    and a folder's confinement means nothing if a file in it is the same inode as one outside.
 *    Spillway's own writes leave one link (a temp file is renamed, or linked then unlinked).
 *    `hardLinks: 'allow'` is for files we ship (the built UI, which a package manager may link).
 *
 * Errors never say where a link pointed.
 */
import fs from 'node:fs';
import path from 'node:path';

export type UntrustedFileErrorCode = 'NOT_FOUND' | 'NOT_REGULAR' | 'LINK' | 'HARD_LINK' | 'OUTSIDE' | 'CHANGED' | 'TOO_BIG';

export class UntrustedFileError extends Error {
  constructor(
    readonly code: UntrustedFileErrorCode,
    readonly file: string,
    why: string,
  ) {
    super(`${JSON.stringify(file)} ${why}`);
    this.name = 'UntrustedFileError';
  }
}

export interface UntrustedOpenOptions {
  /**
   * The folder the file must lie in. Every component from it down to the file must be a real
   * folder, not a link; `'/'` asks that the whole path be one without links (a path that was
   * already resolved). Without a root only the file itself is checked: a path the user typed.
   */
  root?: string;
  /** Default: refused with a `root`, allowed without one. */
  hardLinks?: 'refuse' | 'allow';
}

const C = fs.constants;
/** Never blocks on a FIFO or a device, never follows a link in the last component. */
export const UNTRUSTED_OPEN_FLAGS = C.O_RDONLY | (C.O_NONBLOCK ?? 0) | (C.O_NOFOLLOW ?? 0);

interface Plan {
  abs: string;
  /** Where the descriptor must be once opened (the root's realpath joined with the rest). */
  expected?: string;
  refuseHardLinks: boolean;
}

/**
 * An absolute POSIX path that path.resolve would return unchanged (no empty, `.` or `..` segment,
 * no trailing slash): with root `/`, its expected descriptor path is itself.
 */
function isPlainAbsolute(p: string): boolean {
  return (
    path.sep === '/' &&
    p.length > 1 &&
    p.charCodeAt(0) === 47 &&
    p.charCodeAt(p.length - 1) !== 47 &&
    !p.includes('//') &&
    !p.includes('/./') &&
    !p.includes('/../') &&
    !p.endsWith('/.') &&
    !p.endsWith('/..')
  );
}

function plan(p: string, o: UntrustedOpenOptions, rootReal: (root: string) => string): Plan {
  if (typeof p !== 'string' || p === '' || p.includes('\0')) throw new UntrustedFileError('NOT_FOUND', String(p), 'is not a file name');
  // The scan's case (every read of a listing, 10,000 per first index): root `/`, whose realpath is
  // itself, and a path already normalized. No resolve, relative, join or realpath call per file.
  if (o.root === '/' && isPlainAbsolute(p)) return { abs: p, expected: p, refuseHardLinks: o.hardLinks !== 'allow' };
  const abs = path.resolve(p);
  let expected: string | undefined;
  if (o.root !== undefined) {
    const root = path.resolve(o.root);
    const rel = path.relative(root, abs);
    if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
      throw new UntrustedFileError('OUTSIDE', p, `is outside ${JSON.stringify(o.root)}`);
    }
    expected = path.join(rootReal(root), rel);
  }
  return { abs, expected, refuseHardLinks: (o.hardLinks ?? (o.root !== undefined ? 'refuse' : 'allow')) === 'refuse' };
}

function checkLstat(p: string, st: fs.Stats, pl: Plan): void {
  if (st.isSymbolicLink()) throw new UntrustedFileError('LINK', p, 'is a symbolic link');
  if (!st.isFile()) throw new UntrustedFileError('NOT_REGULAR', p, `is not a regular file (${kindOf(st)})`);
  if (pl.refuseHardLinks && st.nlink > 1) throw new UntrustedFileError('HARD_LINK', p, `has ${st.nlink} hard links`);
}

function checkFstat(p: string, before: fs.Stats, st: fs.Stats, pl: Plan): void {
  if (!st.isFile() || st.dev !== before.dev || st.ino !== before.ino) throw new UntrustedFileError('CHANGED', p, 'changed while it was opened');
  if (pl.refuseHardLinks && st.nlink > 1) throw new UntrustedFileError('HARD_LINK', p, `has ${st.nlink} hard links`);
}

function kindOf(st: fs.Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isDirectory()) return 'a folder';
  return 'not a file';
}

function mapOpenError(p: string, err: unknown): never {
  if (err instanceof UntrustedFileError) throw err;
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT' || code === 'ENOTDIR') throw new UntrustedFileError('NOT_FOUND', p, 'does not exist');
  if (code === 'ELOOP' || code === 'EMLINK') throw new UntrustedFileError('LINK', p, 'is a symbolic link');
  throw err;
}

/** /proc/self/fd/<fd> gives the descriptor's path on Linux; null where the system has no such thing. */
let procFd: boolean | undefined;

function fdPathSync(fd: number): string | null {
  if (procFd === false) return null;
  try {
    const p = fs.readlinkSync(`/proc/self/fd/${fd}`);
    procFd = true;
    return p;
  } catch {
    if (procFd === undefined) procFd = false;
    return null;
  }
}

async function fdPath(fd: number): Promise<string | null> {
  if (procFd === false) return null;
  try {
    const p = await fs.promises.readlink(`/proc/self/fd/${fd}`);
    procFd = true;
    return p;
  } catch {
    if (procFd === undefined) procFd = false;
    return null;
  }
}

function outside(p: string): UntrustedFileError {
  return new UntrustedFileError('OUTSIDE', p, 'is reached through a linked folder');
}

export interface OpenedUntrustedSync {
  fd: number;
  stat: fs.Stats;
}

/** Open `p` for reading after the checks above; the caller closes the fd. */
export function openUntrustedSync(p: string, o: UntrustedOpenOptions = {}): OpenedUntrustedSync {
  let pl: Plan;
  let before: fs.Stats;
  let fd: number;
  try {
    pl = plan(p, o, (r) => fs.realpathSync.native(r));
    before = fs.lstatSync(pl.abs);
    checkLstat(p, before, pl);
    fd = fs.openSync(pl.abs, UNTRUSTED_OPEN_FLAGS);
  } catch (err) {
    mapOpenError(p, err);
  }
  try {
    const st = fs.fstatSync(fd);
    checkFstat(p, before, st, pl);
    if (pl.expected !== undefined) {
      const actual = fdPathSync(fd);
      const ok = actual !== null ? actual === pl.expected : fs.realpathSync.native(path.dirname(pl.abs)) === path.dirname(pl.expected);
      if (!ok) throw outside(p);
    }
    return { fd, stat: st };
  } catch (err) {
    fs.closeSync(fd);
    mapOpenError(p, err);
  }
}

export interface OpenedUntrusted {
  handle: fs.promises.FileHandle;
  stat: fs.Stats;
}

/** Open `p` for reading after the checks above; the caller closes the handle. */
export async function openUntrusted(p: string, o: UntrustedOpenOptions = {}): Promise<OpenedUntrusted> {
  let pl: Plan;
  let before: fs.Stats;
  let handle: fs.promises.FileHandle;
  try {
    let rootReal: string | undefined;
    if (o.root !== undefined) rootReal = await fs.promises.realpath(path.resolve(o.root));
    pl = plan(p, o, () => rootReal!);
    before = await fs.promises.lstat(pl.abs);
    checkLstat(p, before, pl);
    handle = await fs.promises.open(pl.abs, UNTRUSTED_OPEN_FLAGS);
  } catch (err) {
    mapOpenError(p, err);
  }
  try {
    const st = await handle.stat();
    checkFstat(p, before, st, pl);
    if (pl.expected !== undefined) {
      const actual = await fdPath(handle.fd);
      const ok = actual !== null ? actual === pl.expected : (await fs.promises.realpath(path.dirname(pl.abs))) === path.dirname(pl.expected);
      if (!ok) throw outside(p);
    }
    return { handle, stat: st };
  } catch (err) {
    await handle.close().catch(() => undefined);
    mapOpenError(p, err);
  }
}

/** The whole of `p` after the checks above; TOO_BIG (nothing read) past `maxBytes`. */
export async function readUntrusted(p: string, o: UntrustedOpenOptions & { maxBytes?: number } = {}): Promise<Buffer> {
  const { handle, stat } = await openUntrusted(p, o);
  try {
    if (o.maxBytes !== undefined && stat.size > o.maxBytes) throw new UntrustedFileError('TOO_BIG', p, `is ${stat.size} bytes, more than ${o.maxBytes}`);
    const buf = Buffer.allocUnsafe(stat.size);
    let off = 0;
    while (off < buf.length) {
      const { bytesRead } = await handle.read(buf, off, buf.length - off, off);
      if (bytesRead === 0) break;
      off += bytesRead;
    }
    return buf.subarray(0, off);
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * May `dir` be listed as a folder under `root`: it is a folder, and no component below the root
 * is a link (its realpath is the root's realpath joined with the rest). Listing only reveals
 * names; every file read from it goes through {@link openUntrustedSync} again.
 */
export function isConfinedDirSync(dir: string, root = '/'): boolean {
  try {
    const abs = path.resolve(dir);
    const r = path.resolve(root);
    const rel = path.relative(r, abs);
    if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return false;
    if (!fs.lstatSync(abs).isDirectory()) return false;
    return fs.realpathSync.native(abs) === path.join(fs.realpathSync.native(r), rel);
  } catch {
    return false;
  }
}
