import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { constants as fsc } from 'node:fs';
import path from 'node:path';
import { ASSETS_DIR, LONG_RESPONSES_DIR, assetFileName, isInside, isSafeKey, tempNameFor } from '../layout.js';
import { SpillStoreError, type NameCandidate, type SpillBody, type SpillKey, type SpillStore, type SpillStoreErrorCode, type StoreCallOptions } from './seam.js';

/**
 * The local implementation of the storage seam (seam.ts), and the atomic file writes it
 * is made of. Nothing is ever half-written under a final name or overwritten: data goes to a
 * dot-prefixed temp file in the same folder, then is hard-linked (create-only) or renamed into place.
 *
 * | call | for |
 * | --- | --- |
 * | {@link LocalSpillStore} | a session folder as a {@link SpillStore}: what the guard writes to by default |
 * | {@link writeFileAtomic} | one file, atomically (`exclusive`: never replace) |
 * | {@link saveAsset} | a content-addressed asset in a folder, verified by size and sha256 |
 */

/** Data for {@link writeFileAtomic}: a string (UTF-8), bytes, or chunks of either. */
export type WriteData = SpillBody;

export interface WriteOptions {
  /** Fail with EEXIST instead of replacing an existing file. */
  exclusive?: boolean;
  /** fsync before the rename (durable across a crash; slower). */
  fsync?: boolean;
  /** The new file's mode: private (0600) by default, like every file of a session (whole tool outputs). */
  mode?: number;
}

/**
 * A session's files are the user's alone, whichever command writes first (the hook, `mcp`, the
 * library): folders 0700, files 0600, set at creation so a file is never readable by others even
 * for a moment, whatever the umask.
 */
export const SPILL_DIR_MODE = 0o700;
export const SPILL_FILE_MODE = 0o600;

/** Pieces are flushed in chunks of about this many bytes. */
const WRITE_CHUNK_BYTES = 4 * 1024 * 1024;
/** An asset file is hashed in reads of this size when checking a copy already there. */
const HASH_READ_BYTES = 1024 * 1024;

function toBuffer(piece: string | Uint8Array): Buffer {
  return typeof piece === 'string' ? Buffer.from(piece, 'utf8') : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
}

/**
 * Write chunks through one buffer of WRITE_CHUNK_BYTES, reused: strings are encoded straight into it
 * and small byte pieces copied in, so a 40 MB linked form costs one 4 MB buffer, not a Buffer per
 * piece plus the concat of each batch (they were garbage beside the payload at the spill's peak).
 * A piece too big for the buffer is written on its own.
 */
async function writeChunks(fh: fs.FileHandle, data: Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>, signal?: AbortSignal): Promise<number> {
  let total = 0;
  let buf: Buffer | undefined;
  let used = 0;
  const write = async (b: Uint8Array) => {
    signal?.throwIfAborted();
    await fh.writeFile(b);
    total += b.byteLength;
  };
  const flush = async () => {
    if (used === 0) return;
    const n = used;
    used = 0;
    await write(buf!.subarray(0, n));
  };
  const add = async (piece: string | Uint8Array) => {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: only a long string needs counting
    const bytes = typeof piece === 'string' ? (piece.length * 3 <= WRITE_CHUNK_BYTES ? piece.length * 3 : Buffer.byteLength(piece, 'utf8')) : piece.byteLength;
    if (used + bytes > WRITE_CHUNK_BYTES) await flush();
    if (bytes > WRITE_CHUNK_BYTES) {
      await write(toBuffer(piece));
      return;
    }
    buf ??= Buffer.allocUnsafe(WRITE_CHUNK_BYTES);
    if (typeof piece === 'string') used += buf.write(piece, used, 'utf8');
    else {
      buf.set(piece, used);
      used += piece.byteLength;
    }
  };
  if (Symbol.asyncIterator in data) for await (const piece of data) await add(piece);
  else for (const piece of data) await add(piece);
  await flush();
  return total;
}

async function writeTemp(tmp: string, data: SpillBody, fsync: boolean, signal?: AbortSignal, mode = SPILL_FILE_MODE): Promise<number> {
  signal?.throwIfAborted();
  const fh = await fs.open(tmp, 'wx', mode);
  try {
    let total: number;
    if (typeof data === 'string' || data instanceof Uint8Array) {
      const buf = toBuffer(data);
      await fh.writeFile(buf);
      total = buf.byteLength;
    } else total = await writeChunks(fh, data, signal);
    if (fsync) await fh.sync();
    return total;
  } finally {
    await fh.close();
  }
}

/** Codes of file systems that cannot hard-link: publish by an exclusive copy instead. */
const NO_LINK_CODES = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/** Put the finished temp file under its final name; exclusive means never replace. */
async function publish(tmp: string, finalPath: string, exclusive: boolean): Promise<void> {
  if (!exclusive) {
    await fs.rename(tmp, finalPath);
    return;
  }
  try {
    await fs.link(tmp, finalPath);
  } catch (err) {
    if (!NO_LINK_CODES.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
    // File systems without hard links: copy with an exclusive create (not atomic for readers, still never overwrites).
    await fs.copyFile(tmp, finalPath, fsc.COPYFILE_EXCL);
  }
  await fs.unlink(tmp).catch(() => undefined);
}

/** Atomic write: temp file in the same folder, then rename (or link, with `exclusive`). Returns bytes written. */
export async function writeFileAtomic(finalPath: string, data: WriteData, opts: WriteOptions = {}): Promise<number> {
  const tmp = tempNameFor(finalPath);
  try {
    const n = await writeTemp(tmp, data, opts.fsync ?? false, undefined, opts.mode);
    await publish(tmp, finalPath, opts.exclusive ?? false);
    return n;
  } catch (err) {
    await fs.unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** A temp file written once, then published under as many candidate names as needed (hard links make each claim atomic). */
class StagedFile {
  private constructor(readonly tmp: string) {}

  static async write(dir: string, data: SpillBody, signal?: AbortSignal): Promise<StagedFile> {
    const tmp = tempNameFor(path.join(dir, 'staged'));
    try {
      await writeTemp(tmp, data, false, signal);
      return new StagedFile(tmp);
    } catch (err) {
      await fs.unlink(tmp).catch(() => undefined);
      throw err;
    }
  }

  /** Link under `finalPath`; false when the name is taken. */
  async tryPublish(finalPath: string): Promise<boolean> {
    try {
      await fs.link(this.tmp, finalPath);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') return false;
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
      try {
        await fs.copyFile(this.tmp, finalPath, fsc.COPYFILE_EXCL);
        return true;
      } catch (e2) {
        if ((e2 as NodeJS.ErrnoException).code === 'EEXIST') return false;
        throw e2;
      }
    }
  }

  async discard(): Promise<void> {
    await fs.unlink(this.tmp).catch(() => undefined);
  }
}

function sha256Hex(data: Uint8Array): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

async function fileSha256(p: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  const fh = await fs.open(p, 'r');
  try {
    for await (const chunk of fh.createReadStream({ highWaterMark: HASH_READ_BYTES })) hash.update(chunk as Buffer);
  } finally {
    await fh.close().catch(() => undefined);
  }
  return hash.digest('hex');
}

/** Write `bytes` at `p` unless an intact copy (same size, same sha256) is there; a damaged one is replaced atomically. */
async function saveVerified(p: string, bytes: Uint8Array, sha256: string): Promise<boolean> {
  try {
    const st = await fs.lstat(p);
    if (st.isFile() && st.size === bytes.byteLength && (await fileSha256(p)) === sha256) return true;
  } catch {
    /* absent: write it */
  }
  await writeFileAtomic(p, bytes);
  return false;
}

/**
 * Write an asset content-addressed into `assetsDir`. An existing file is trusted only when its
 * size and sha256 match; otherwise (truncated, corrupted) it is replaced atomically.
 */
export async function saveAsset(
  assetsDir: string,
  bytes: Uint8Array,
  ext: string,
  sha256 = sha256Hex(bytes),
): Promise<{ path: string; fileName: string; sha256: string; reused: boolean }> {
  const fileName = assetFileName(sha256, ext);
  const p = path.join(assetsDir, fileName);
  return { path: p, fileName, sha256, reused: await saveVerified(p, bytes, sha256) };
}

/** Errors of a file system that is there but cannot take the write now: another store may. */
const UNAVAILABLE_CODES = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT', 'EIO', 'EBUSY', 'EMFILE', 'ENFILE', 'EAGAIN', 'ETIMEDOUT', 'ESTALE', 'ENOTCONN', 'ABORT_ERR']);

function storeError(err: unknown, key: SpillKey | undefined, fallback: SpillStoreErrorCode = 'FAILED'): SpillStoreError {
  if (err instanceof SpillStoreError) return err;
  const e = err as NodeJS.ErrnoException;
  const code = e?.name === 'AbortError' ? 'ABORT_ERR' : (e?.code ?? '');
  const kind: SpillStoreErrorCode = code === 'EEXIST' ? 'EXISTS' : code === 'ENOENT' ? 'NOT_FOUND' : UNAVAILABLE_CODES.has(code) ? 'UNAVAILABLE' : fallback;
  const text = e instanceof Error ? (e.code && !e.message.startsWith(e.code) ? `${e.code}: ${e.message}` : e.message) : String(err);
  return new SpillStoreError(kind, text, key, { cause: err });
}

/**
 * A session folder as a {@link SpillStore}: today's behaviour, exactly. Payloads are written once
 * to a temp file and hard-linked under the first free name (EEXIST: the next sequence number), so
 * a name is claimed atomically across processes; sidecars are linked create-only; assets are
 * verified by size and sha256 before being trusted. A long_responses/ or assets/ that leads
 * out of the session (a symlink) is refused, and so is any key with `..`.
 */
export class LocalSpillStore implements SpillStore {
  readonly location: string;
  private ready?: Promise<void>;

  constructor(sessionDir: string) {
    this.location = path.resolve(sessionDir);
  }

  describe(key: SpillKey): string {
    return this.pathOf(key);
  }

  private pathOf(key: SpillKey): string {
    if (!isSafeKey(key)) throw new SpillStoreError('REFUSED', `path escapes its folder: ${JSON.stringify(key)} is not a key inside the session`, key);
    return path.join(this.location, ...key.split('/'));
  }

  /** The session's folders, created once per store; a folder that leads outside the session is refused. */
  private prepare(): Promise<void> {
    this.ready ??= (async () => {
      const longResponses = path.join(this.location, LONG_RESPONSES_DIR);
      const assets = path.join(longResponses, ASSETS_DIR);
      const refuse = () => new SpillStoreError('REFUSED', `refusing to write: ${longResponses} leads outside the session folder`);
      // Checked before anything is created inside it: a symlink out of the session gets nothing.
      await fs.mkdir(longResponses, { recursive: true, mode: SPILL_DIR_MODE });
      const [realSession, realLong] = await Promise.all([fs.realpath(this.location), fs.realpath(longResponses)]);
      if (!isInside(realSession, realLong)) throw refuse();
      await fs.mkdir(assets, { recursive: true, mode: SPILL_DIR_MODE });
      if (!isInside(realLong, await fs.realpath(assets))) throw refuse();
    })();
    // A failed preparation is tried again by the next call (the folder may have been fixed or removed).
    this.ready.catch(() => (this.ready = undefined));
    return this.ready;
  }

  /** Run one write with the folders ready, mapping file-system errors to store errors. */
  private async writing<T>(key: SpillKey | undefined, opts: StoreCallOptions | undefined, fn: () => Promise<T>): Promise<T> {
    try {
      opts?.signal?.throwIfAborted();
      await this.prepare();
      return await fn();
    } catch (err) {
      const e = storeError(err, key);
      if (e.code !== 'EXISTS') this.ready = undefined;
      throw e;
    }
  }

  putPayload(candidates: Iterable<NameCandidate>, body: () => SpillBody, opts?: StoreCallOptions): Promise<NameCandidate> {
    return this.writing(undefined, opts, async () => {
      const staged = await StagedFile.write(path.join(this.location, LONG_RESPONSES_DIR), body(), opts?.signal);
      try {
        for (const c of candidates) {
          opts?.signal?.throwIfAborted();
          if (await staged.tryPublish(this.pathOf(c.key))) return c;
        }
      } finally {
        await staged.discard();
      }
      throw new SpillStoreError('FAILED', 'no free file name');
    });
  }

  putSidecar(key: SpillKey, json: string, opts?: StoreCallOptions): Promise<void> {
    return this.writing(key, opts, async () => {
      const p = this.pathOf(key);
      const staged = await StagedFile.write(path.dirname(p), json, opts?.signal);
      try {
        if (!(await staged.tryPublish(p))) throw new SpillStoreError('EXISTS', `${p} exists`, key);
      } finally {
        await staged.discard();
      }
    });
  }

  movePayload(from: SpillKey, candidates: Iterable<NameCandidate>, opts?: StoreCallOptions): Promise<NameCandidate> {
    return this.writing(from, opts, async () => {
      const fromPath = this.pathOf(from);
      for (const c of candidates) {
        opts?.signal?.throwIfAborted();
        try {
          await fs.link(fromPath, this.pathOf(c.key));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
          throw err;
        }
        await fs.unlink(fromPath).catch(() => undefined);
        return c;
      }
      throw new SpillStoreError('FAILED', 'no free file name', from);
    });
  }

  putAsset(key: SpillKey, bytes: Uint8Array, sha256: string, opts?: StoreCallOptions): Promise<{ reused: boolean }> {
    return this.writing(key, opts, async () => ({ reused: await saveVerified(this.pathOf(key), bytes, sha256) }));
  }

  /** The file of a key, refusing one whose real path (symlinks followed) is outside the session. */
  private async confined(key: SpillKey): Promise<string> {
    const p = this.pathOf(key);
    const [realBase, realP] = await Promise.all([fs.realpath(this.location), fs.realpath(p)]);
    if (!isInside(realBase, realP)) throw new SpillStoreError('REFUSED', `${key} resolves outside ${this.location}`, key);
    return p;
  }

  async read(key: SpillKey, opts?: StoreCallOptions): Promise<Buffer> {
    try {
      return await fs.readFile(await this.confined(key), { signal: opts?.signal });
    } catch (err) {
      throw storeError(err, key);
    }
  }

  async stat(key: SpillKey): Promise<{ bytes: number } | null> {
    try {
      return { bytes: (await fs.stat(await this.confined(key))).size };
    } catch (err) {
      const e = storeError(err, key);
      if (e.code === 'NOT_FOUND') return null;
      throw e;
    }
  }
}
