import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { constants as fsc } from 'node:fs';
import path from 'node:path';
import { META_SUFFIX, assetFileName, isInside, makeStem, sessionPaths, tempNameFor, type SessionPaths } from './layout.js';
import { LimitError, MAX_NAME_ATTEMPTS, MAX_REMEMBERED_STEM_BASES, MAX_SIDECAR_ATTEMPTS } from './limits.js';
import type { PayloadMeta } from './types.js';
import { errText } from './errors.js';

/**
 * Writes that never leave a half-written file under a final name and never overwrite
 * another result: data goes to a dot-prefixed temp file in the same folder, then is renamed
 * (or hard-linked, when the name must be new) into place.
 */

export type WriteData = string | Uint8Array | Iterable<string | Uint8Array>;

export interface WriteOptions {
  /** Fail with EEXIST instead of replacing an existing file. */
  exclusive?: boolean;
  /** fsync before the rename (durable across a crash; slower). */
  fsync?: boolean;
}

/** Pieces are flushed in chunks of about this many bytes. */
const WRITE_CHUNK_BYTES = 4 * 1024 * 1024;

async function writeTemp(tmp: string, data: WriteData, fsync: boolean): Promise<number> {
  const fh = await fs.open(tmp, 'wx', 0o644);
  let total = 0;
  try {
    if (typeof data === 'string' || data instanceof Uint8Array) {
      const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      await fh.writeFile(buf);
      total = buf.byteLength;
    } else {
      let batch: Buffer[] = [];
      let batchBytes = 0;
      const flush = async () => {
        if (batch.length === 0) return;
        const buf = batch.length === 1 ? batch[0]! : Buffer.concat(batch, batchBytes);
        await fh.writeFile(buf);
        total += buf.byteLength;
        batch = [];
        batchBytes = 0;
      };
      for (const piece of data) {
        const b = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
        if (b.byteLength >= WRITE_CHUNK_BYTES) {
          await flush();
          batch = [b];
          batchBytes = b.byteLength;
          await flush();
          continue;
        }
        batch.push(b);
        batchBytes += b.byteLength;
        if (batchBytes >= WRITE_CHUNK_BYTES) await flush();
      }
      await flush();
    }
    if (fsync) await fh.sync();
  } finally {
    await fh.close();
  }
  return total;
}

/** Put the finished temp file under its final name; exclusive means never replace. */
async function publish(tmp: string, finalPath: string, exclusive: boolean): Promise<void> {
  if (!exclusive) {
    await fs.rename(tmp, finalPath);
    return;
  }
  try {
    await fs.link(tmp, finalPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS' && code !== 'EXDEV')
      throw err;
    // File systems without hard links: copy with an exclusive create (not atomic for readers, still never overwrites).
    await fs.copyFile(tmp, finalPath, fsc.COPYFILE_EXCL);
  }
  await fs.unlink(tmp).catch(() => undefined);
}

/** Atomic write: temp file in the same folder, then rename (or link, with `exclusive`). Returns bytes written. */
export async function writeFileAtomic(finalPath: string, data: WriteData, opts: WriteOptions = {}): Promise<number> {
  const tmp = tempNameFor(finalPath);
  try {
    const n = await writeTemp(tmp, data, opts.fsync ?? false);
    await publish(tmp, finalPath, opts.exclusive ?? false);
    return n;
  } catch (err) {
    await fs.unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/**
 * A temp file written once and then published under the first free name `nameFor(seq)`.
 * Hard links make the claim atomic across processes: EEXIST means taken, try the next.
 */
export class StagedFile {
  private constructor(readonly tmp: string, readonly bytes: number) {}

  static async write(dir: string, data: WriteData, fsync = false): Promise<StagedFile> {
    const tmp = tempNameFor(path.join(dir, 'staged'));
    try {
      const bytes = await writeTemp(tmp, data, fsync);
      return new StagedFile(tmp, bytes);
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
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') {
        try {
          await fs.copyFile(this.tmp, finalPath, fsc.COPYFILE_EXCL);
          return true;
        } catch (e2) {
          if ((e2 as NodeJS.ErrnoException).code === 'EEXIST') return false;
          throw e2;
        }
      }
      throw err;
    }
  }

  async discard(): Promise<void> {
    await fs.unlink(this.tmp).catch(() => undefined);
  }
}

/** Give an existing file a second, new name; false when the name is taken. */
export async function linkExisting(existing: string, finalPath: string): Promise<boolean> {
  try {
    await fs.link(existing, finalPath);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

export function sha256Hex(data: Uint8Array | string): string {
  return crypto.createHash('sha256').update(data).digest('hex');
}

async function fileSha256(p: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  const fh = await fs.open(p, 'r');
  try {
    for await (const chunk of fh.createReadStream({ highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  } finally {
    await fh.close().catch(() => undefined);
  }
  return hash.digest('hex');
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
  try {
    const st = await fs.lstat(p);
    if (st.isFile() && st.size === bytes.byteLength && (await fileSha256(p)) === sha256) {
      return { path: p, fileName, sha256, reused: true };
    }
  } catch {
    /* absent: write it */
  }
  await writeFileAtomic(p, bytes);
  return { path: p, fileName, sha256, reused: false };
}

/** What a payload's name is made of; the sequence number is added by {@link nameCandidates}. */
export interface StemParts {
  time: Date;
  tool: string;
  inputHash: string;
}

/** One name a payload may take: its stem and its file name (`<stem><suffix>`). */
export interface NameCandidate {
  stem: string;
  fileName: string;
}

/** Next sequence number to try per stem base in this process, so concurrent spills rarely race for a name. */
const nextSeqByBase = new Map<string, number>();

function takeSeq(base: string): number {
  const n = nextSeqByBase.get(base) ?? 0;
  if (nextSeqByBase.size > MAX_REMEMBERED_STEM_BASES) nextSeqByBase.clear();
  nextSeqByBase.set(base, n + 1);
  return n;
}

function seenSeq(base: string, seq: number): void {
  const n = nextSeqByBase.get(base) ?? 0;
  if (seq + 1 > n) nextSeqByBase.set(base, seq + 1);
}

/**
 * The names a payload may take, in the order to try them: `<time>_<tool>_<input hash>_<seq><suffix>`
 * with the lowest sequence number not yet handed out in this process. Asking for the next one
 * means the last was taken (by another process), which this process then remembers. Throws a
 * {@link LimitError} after MAX_NAME_ATTEMPTS.
 */
export function* nameCandidates(parts: StemParts, suffix: string): Generator<NameCandidate, never> {
  const base = makeStem({ ...parts, seq: 0 }).replace(/_0$/, '');
  for (let tries = 0; tries < MAX_NAME_ATTEMPTS; tries++) {
    const seq = takeSeq(base);
    const stem = makeStem({ ...parts, seq });
    yield { stem, fileName: stem + suffix };
    seenSeq(base, seq);
  }
  throw new LimitError('MAX_NAME_ATTEMPTS', MAX_NAME_ATTEMPTS, MAX_NAME_ATTEMPTS);
}

/** Publish under the first free candidate in `dir`; `publish` returns false when a name is taken. */
async function claimName(
  publish: (finalPath: string) => Promise<boolean>,
  dir: string,
  candidates: Iterable<NameCandidate>,
): Promise<NameCandidate & { path: string }> {
  for (const c of candidates) {
    const p = path.join(dir, c.fileName);
    if (await publish(p)) return { ...c, path: p };
  }
  throw new Error('no free file name');
}

/** The session's folders, created; refuses a long_responses/ or assets/ that leads out of the session (a symlink). */
export async function prepareSessionDirs(sessionPath: string): Promise<SessionPaths> {
  const paths = sessionPaths(sessionPath);
  await fs.mkdir(paths.assets, { recursive: true });
  const [realSession, realLong, realAssets] = await Promise.all([
    fs.realpath(paths.session),
    fs.realpath(paths.longResponses),
    fs.realpath(paths.assets),
  ]);
  if (!isInside(realSession, realLong) || !isInside(realLong, realAssets)) {
    throw new Error(`refusing to write: ${paths.longResponses} leads outside the session folder`);
  }
  return paths;
}

/** Write `data` once, then publish it under the first free candidate name in `dir` (create-only). */
export async function publishNew(dir: string, candidates: Iterable<NameCandidate>, data: WriteData): Promise<NameCandidate & { path: string }> {
  const staged = await StagedFile.write(dir, data);
  try {
    return await claimName((p) => staged.tryPublish(p), dir, candidates);
  } finally {
    await staged.discard();
  }
}

/** Write the sidecar of `stem` in `dir`, create-only: its path, or null when another writer holds that name. */
export async function publishSidecar(dir: string, stem: string, json: string): Promise<string | null> {
  const p = path.join(dir, stem + META_SUFFIX);
  const staged = await StagedFile.write(dir, json);
  try {
    return (await staged.tryPublish(p)) ? p : null;
  } finally {
    await staged.discard();
  }
}

/** Move a published file to the first free candidate name in `dir` (a new link, then the old name removed). */
export async function renamePublished(from: string, dir: string, candidates: Iterable<NameCandidate>): Promise<NameCandidate & { path: string }> {
  const moved = await claimName((p) => linkExisting(from, p), dir, candidates);
  await fs.unlink(from).catch(() => undefined);
  return moved;
}

/**
 * Write the sidecar last: it is the commit marker, and its name the final claim on the stem. When
 * another writer holds `<stem>.meta.json` (same stem, other extension), the payload moves to a fresh
 * stem and the message is rebuilt for it. A sidecar that cannot be written is noted, not fatal.
 */
export async function commitSidecar(
  dir: string,
  published: { stem: string; path: string },
  fresh: Iterable<NameCandidate>,
  messageFor: (payloadPath: string) => string,
  metaFor: (stem: string, payloadPath: string, message: string) => PayloadMeta,
  notes: string[],
): Promise<{ message: string; payloadPath: string; metaPath?: string }> {
  let { stem, path: payloadPath } = published;
  let message = messageFor(payloadPath);
  try {
    for (let attempt = 0; ; attempt++) {
      const metaPath = await publishSidecar(dir, stem, JSON.stringify(metaFor(stem, payloadPath, message), null, 2) + '\n');
      if (metaPath) return { message, payloadPath, metaPath };
      if (attempt > MAX_SIDECAR_ATTEMPTS) throw new Error('could not find a free name for the sidecar');
      ({ stem, path: payloadPath } = await renamePublished(payloadPath, dir, fresh));
      message = messageFor(payloadPath);
    }
  } catch (err) {
    notes.push(`the sidecar (.meta.json) could not be written: ${errText(err)}`);
    return { message, payloadPath };
  }
}
