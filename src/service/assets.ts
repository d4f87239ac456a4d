/**
 * Opening an asset for `readAsset`, `GET /api/asset/...` and the desktop's app:// protocol: one
 * function, so every path gets the same checks.
 *
 * An asset is served only when its file is a regular file (not a link) directly in the payload's
 * own `<session>/long_responses/assets/` folder (which may not be a link either), and its bytes hash
 * to the sha256 it is listed under. A sidecar can list any file; this is what stops a planted
 * `assets/x.png → <app data>/index.sqlite` link, or an asset of another session or root, from
 * being streamed. Errors name the payload and the hash, never where a link pointed.
 *
 * The file is opened once (O_NOFOLLOW), checked through that descriptor and handed to the caller
 * open, so what was hashed is what gets streamed. Hashes of unchanged files are remembered.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ASSETS_DIR, LONG_RESPONSES_DIR } from '../pipeline/index.js';
import type { AssetRef } from '../pipeline/types.js';
import { ServiceError } from './contract.js';
import { yieldToLoop } from './heavy.js';

/** Hash in slices this big, with the event loop turning in between. */
export const ASSET_HASH_SLICE_BYTES = 4 * 1024 * 1024;
/** Verified (file identity → sha256) pairs remembered, so a gallery does not re-hash its images. */
export const VERIFIED_ASSET_CACHE_ENTRIES = 1_024;

export interface OpenedAsset {
  /** Open for reading; the caller closes it (streaming closes it at the end). */
  handle: fs.promises.FileHandle;
  bytes: number;
  mimeType: string;
  sha256: string;
  /** The asset file's extension (`.png`), for a download name. */
  ext: string;
  /** Where it is, inside its session's assets folder (safe to show: it is not a link). */
  path: string;
}

const verified = new Map<string, string>();

function identity(st: fs.Stats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

async function hashHandle(fh: fs.promises.FileHandle, size: number): Promise<string> {
  const h = crypto.createHash('sha256');
  const buf = Buffer.allocUnsafe(Math.min(ASSET_HASH_SLICE_BYTES, Math.max(1, size)));
  let pos = 0;
  for (;;) {
    const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) break;
    h.update(buf.subarray(0, bytesRead));
    pos += bytesRead;
    if (bytesRead === buf.length) await yieldToLoop();
  }
  return h.digest('hex');
}

function refuse(payloadId: string, sha256: string, why: string): ServiceError {
  return new ServiceError('NOT_FOUND', `payload ${payloadId} has no asset ${sha256} that can be served (${why})`);
}

/** The listed asset matching `sha256` (the full digest, or a prefix of at least 32 hex chars). */
export function findListedAsset(assets: AssetRef[], payloadId: string, sha256: string): AssetRef {
  const hash = sha256.toLowerCase();
  const a = assets.find((x) => x.sha256 === hash) ?? (hash.length < 64 ? assets.find((x) => x.sha256.startsWith(hash)) : undefined);
  if (!a) throw new ServiceError('NOT_FOUND', `payload ${payloadId} has no asset ${sha256}`);
  return a;
}

/**
 * Open `asset` of the payload saved at `payloadRealPath` (already confined by the caller), after
 * the checks above.
 */
export async function openVerifiedAsset(payloadId: string, payloadRealPath: string, asset: AssetRef): Promise<OpenedAsset> {
  const longResponses = path.dirname(payloadRealPath);
  if (path.basename(longResponses) !== LONG_RESPONSES_DIR) throw refuse(payloadId, asset.sha256, 'the payload is not in a long_responses/ folder');
  const assetsDir = path.join(longResponses, ASSETS_DIR);
  // The sidecar names the file; only its name is taken, and looked up in this payload's own folder.
  const listed = path.resolve(asset.path);
  if (path.basename(path.dirname(listed)) !== ASSETS_DIR || path.basename(path.dirname(path.dirname(listed))) !== LONG_RESPONSES_DIR) {
    throw refuse(payloadId, asset.sha256, "it is not in its session's assets folder");
  }
  let dirReal: string;
  try {
    dirReal = await fs.promises.realpath(assetsDir);
  } catch {
    throw refuse(payloadId, asset.sha256, 'the assets folder is missing');
  }
  if (dirReal !== assetsDir) throw refuse(payloadId, asset.sha256, 'the assets folder is a link');
  const file = path.join(assetsDir, path.basename(listed));
  let fh: fs.promises.FileHandle;
  try {
    fh = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw refuse(payloadId, asset.sha256, code === 'ENOENT' ? 'the file is missing' : code === 'ELOOP' ? 'the file is a link' : 'the file cannot be opened');
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw refuse(payloadId, asset.sha256, 'not a regular file');
    const key = identity(st);
    let sha = verified.get(key);
    if (sha === undefined) {
      sha = await hashHandle(fh, st.size);
      if (verified.size >= VERIFIED_ASSET_CACHE_ENTRIES) verified.delete(verified.keys().next().value!);
      verified.set(key, sha);
    }
    // Content-addressed: bytes that do not hash to the name are a damaged or planted file.
    if (sha !== asset.sha256) throw refuse(payloadId, asset.sha256, 'its bytes do not match its sha256');
    return { handle: fh, bytes: st.size, mimeType: asset.mimeType, sha256: asset.sha256, ext: path.extname(file), path: file };
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw err;
  }
}

/** Read an opened asset whole (it is closed afterwards). */
export async function readOpenedAsset(a: OpenedAsset): Promise<Buffer> {
  try {
    const buf = Buffer.allocUnsafe(a.bytes);
    let off = 0;
    while (off < a.bytes) {
      const { bytesRead } = await a.handle.read(buf, off, a.bytes - off, off);
      if (bytesRead === 0) break;
      off += bytesRead;
    }
    return buf.subarray(0, off);
  } finally {
    await a.handle.close().catch(() => undefined);
  }
}
