/**
 * Where the scanner reads sessions from: the one seam between the index and a storage.
 *
 * | call                               | the scanner uses it for                                         |
 * | ---------------------------------- | --------------------------------------------------------------- |
 * | `list(dir)`                        | walking a root: one folder's entries (size and mtime if known) |
 * | `stat(file)`                       | size and mtime (or etag) of a file the listing did not size     |
 * | `readRange(file, offset, length)`  | every read: a sidecar, a payload's head and tail, a transcript  |
 * |                                    | chunk, one transcript line; also returns the file's total size  |
 *
 * `localSource` reads the local file system (synchronously: a scan reads thousands of small
 * files, and the sync calls cost a fraction of the promise ones; the scanner yields between
 * time slices instead). Another storage (S3: ListObjectsV2 gives size + ETag per key, a ranged
 * GetObject gives bytes + total size) implements the same three calls and returns promises; the
 * scanner awaits every promise (and takes a plain answer at once), so it works unchanged. Paths are the source's own keys, joined
 * with `path.join`; a source never follows a link out of what it lists.
 */
import fs from 'node:fs';
import { isConfinedDirSync, openUntrustedSync } from '../pipeline/layout.js';

export type Awaitable<T> = T | Promise<T>;

/**
 * A promise, or another storage's thenable. The scanner's readers call on at once when a
 * synchronous source (the local one) answered with a value, and go through `then` only for a
 * promise: a trip through the microtask queue per read cost a first listing of 10,000 local
 * payloads about 3 µs each. Each call site tests for itself, so the call it makes stays direct.
 */
export function isPromiseLike<T>(v: Awaitable<T> | PromiseLike<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

export interface SourceStat {
  size: number;
  mtimeMs: number;
  /** A content tag when the storage has one (S3's ETag); fingerprints then use it. */
  etag?: string;
}

export interface SourceEntry {
  name: string;
  /** `other`: a symlink, socket or device; never followed or read. */
  type: 'file' | 'dir' | 'other';
  /** Size and time when the listing has them (S3 does); the local listing leaves them out. */
  stat?: SourceStat;
}

export interface RangeRead extends SourceStat {
  /** At most `length` bytes from `offset`; fewer at the end of the file. */
  bytes: Buffer;
}

export interface SessionSource {
  /** Entries of one folder; null when it is not a readable folder. */
  list(dir: string): Awaitable<SourceEntry[] | null>;
  /** A regular file's size and time; null when it is gone or not a regular file. */
  stat(file: string): Awaitable<SourceStat | null>;
  /**
   * Bytes [offset, offset + length) of a regular file, with the file's total size and time.
   * Throws when the file cannot be read. `into` is a buffer the caller reuses: a source may fill
   * it and return a view of it (valid until the next call with the same buffer), or ignore it.
   * `o.listed`: this source's `list` gave the file as `type: 'file'` moments ago (a listing's read
   * of a unit's sidecar); the local source then skips its own pre-open type check (safe-open.ts
   * `listedAsFile`).
   */
  readRange(file: string, offset: number, length: number, into?: Buffer, o?: ReadOptions): Awaitable<RangeRead>;
  /**
   * Called at the start of each scan of a root: a source that lists ahead (S3) lists it anew
   * here, or says which parts of the root changed (see RefreshPlan).
   */
  refresh?(root: string, o?: RefreshOptions): Awaitable<void | RefreshPlan>;
}

export interface ReadOptions {
  /** The file was listed as a regular file by this source just before (see `readRange`). */
  listed?: boolean;
}

export interface RefreshOptions {
  /** List the whole root, whatever the source would rather do (a reindex asked for). */
  full?: boolean;
  /** What the source returned as `state` after the last pass over this root, in any run. */
  state?: string | null;
  /** The scan is limited to these paths: only they need listing. */
  scopes?: string[];
}

/** What a source that knows what changed tells the scanner to do with this scan. */
export interface RefreshPlan {
  /** Only these sessions (paths relative to the root) changed; the rest of the root is as it was. */
  sessions?: string[];
  /** The listing of those sessions may be partial: nothing may be dropped for not being seen. */
  additive?: boolean;
  /**
   * Units (paths relative to the root, `<session>/long_responses/<stem>`) deleted on purpose since
   * the last pass (S3: prune's tombstones in the journal): they leave the index in this pass,
   * whatever `additive` says, and a session left with none goes too.
   */
  gone?: string[];
  /** Kept with the root once this pass is committed, handed back at the next refresh. */
  state?: string;
  /** After this pass is committed and shown, scan the root again in full (newest sessions first, then the rest). */
  more?: boolean;
  /**
   * `sessions` are newest first and not listed yet: the scanner lists them a few at a time, in
   * that order, each batch asked for through `refresh({ scopes })`, committed and announced
   * before the next (a first open shows the newest sessions before it has read the others).
   */
  inOrder?: boolean;
}


/** Every path under a root is link-free (roots are registered by their real path): `/` as the root confines it. */
const CONFINED = { root: '/' } as const;
const LISTED = { root: '/', listedAsFile: true } as const;

function readFully(fd: number, buf: Buffer, position: number): number {
  let off = 0;
  while (off < buf.length) {
    const n = fs.readSync(fd, buf, off, buf.length - off, position + off);
    if (n === 0) break;
    off += n;
  }
  return off;
}

/**
 * The local file system. Roots are registered by their real path (roots.ts), so every path under
 * one is link-free: a folder or file whose path is not (a linked `<session>/`, `tool-results/` or
 * `subagents/` folder, at any depth) is neither listed nor read. Files are opened the one safe way
 * (safe-open.ts): a FIFO, socket, device, link or hard link is refused before anything blocks.
 */
export const localSource: SessionSource = {
  list(dir) {
    let entries: fs.Dirent[];
    try {
      // A folder that is a link, or lies under one, could lead anywhere: not listed.
      if (!isConfinedDirSync(dir)) return null;
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return null;
    }
    return entries.map((e) => ({ name: e.name, type: e.isFile() ? 'file' : e.isDirectory() ? 'dir' : 'other' }));
  },
  stat(file) {
    try {
      const st = fs.lstatSync(file);
      return st.isFile() ? { size: st.size, mtimeMs: st.mtimeMs } : null;
    } catch {
      return null;
    }
  },
  readRange(file, offset, length, into, o) {
    const { fd, stat: st } = openUntrustedSync(file, o?.listed ? LISTED : CONFINED);
    try {
      const want = Math.max(0, Math.min(length, st.size - offset));
      const buf = into && into.length >= want ? into.subarray(0, want) : Buffer.allocUnsafe(want);
      const n = readFully(fd, buf, offset);
      return { bytes: buf.subarray(0, n), size: st.size, mtimeMs: st.mtimeMs };
    } finally {
      fs.closeSync(fd);
    }
  },
};
