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
 * The file is opened once (safe-open.ts: never a FIFO, socket, device, link or hard link, never
 * through a linked folder, never a blocking open), checked through that descriptor and handed to the caller
 * open, so what was hashed is what gets streamed. Hashes of unchanged files are remembered. An
 * asset of an `s3://` root gets the same checks on its key and bytes (s3-read.ts), and is streamed
 * pinned to the ETag it was hashed at.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { ASSETS_DIR, LONG_RESPONSES_DIR, UntrustedFileError, openUntrusted, type UntrustedFileErrorCode } from '../pipeline/index.js';
import type { AssetRef } from '../pipeline/types.js';
import { ServiceError } from './contract.js';
import { yieldToLoop } from './heavy.js';

/** Hash in slices this big, with the event loop turning in between. */
export const ASSET_HASH_SLICE_BYTES = 4 * 1024 * 1024;
/** Verified (file identity → sha256) pairs remembered, so a gallery does not re-hash its images. */
export const VERIFIED_ASSET_CACHE_ENTRIES = 1_024;

export interface OpenedAsset {
  bytes: number;
  mimeType: string;
  sha256: string;
  /** The asset file's extension (`.png`), for a download name. */
  ext: string;
  /** Where it is, inside its session's assets folder (safe to show: it is not a link), or its `s3://` URL. */
  path: string;
  /**
   * Bytes [start, end] (inclusive; default all of it) of exactly what was verified: the open file,
   * or the object pinned to the version that was hashed (s3-read.ts). Call once; the asset is
   * closed when the stream ends or is destroyed.
   */
  stream(start?: number, end?: number): Promise<Readable>;
  /** The whole asset; closed afterwards. */
  read(): Promise<Buffer>;
  /** Close without reading (a HEAD, an asset too big to inline); safe to call again. */
  close(): Promise<void>;
}

const verified = new Map<string, string>();

/** The sha256 remembered for an asset's identity (a file's inode and times, an object's URL and ETag). */
export const verifiedSha = (identity: string): string | undefined => verified.get(identity);

export function rememberVerified(identity: string, sha256: string): void {
  if (verified.size >= VERIFIED_ASSET_CACHE_ENTRIES) verified.delete(verified.keys().next().value!);
  verified.set(identity, sha256);
}

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

/** Why an asset file was refused, in words that name no link target. */
const UNTRUSTED_WHY: Record<UntrustedFileErrorCode, string> = {
  NOT_FOUND: 'the file is missing',
  NOT_REGULAR: 'not a regular file',
  LINK: 'the file is a link',
  HARD_LINK: 'the file has more than one hard link',
  OUTSIDE: 'the assets folder is a link',
  CHANGED: 'the file changed while it was opened',
  TOO_BIG: 'the file is too big',
};

export function refuse(payloadId: string, sha256: string, why: string): ServiceError {
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
 * The checks every store shares (`paths` is `path` for files, `path.posix` for `s3://` URLs): the
 * payload lies in a `long_responses/` folder, and the sidecar lists the asset in an `assets/`
 * folder under one. Only the listed file's name is kept; it is looked up in the payload's own
 * `long_responses/assets/`, whatever folder the sidecar named.
 */
export function ownAssetName(paths: path.PlatformPath, payloadId: string, payloadReal: string, listed: string, sha256: string): { assetsDir: string; name: string } {
  const longResponses = paths.dirname(payloadReal);
  if (paths.basename(longResponses) !== LONG_RESPONSES_DIR) throw refuse(payloadId, sha256, 'the payload is not in a long_responses/ folder');
  if (paths.basename(paths.dirname(listed)) !== ASSETS_DIR || paths.basename(paths.dirname(paths.dirname(listed))) !== LONG_RESPONSES_DIR) {
    throw refuse(payloadId, sha256, "it is not in its session's assets folder");
  }
  const name = paths.basename(listed);
  if (!name || name === '.' || name === '..' || name.includes('\0')) throw refuse(payloadId, sha256, 'its name is not a file name');
  return { assetsDir: paths.join(longResponses, ASSETS_DIR), name };
}

/**
 * Open `asset` of the payload saved at `payloadRealPath` (already confined by the caller), after
 * the checks above.
 */
export async function openVerifiedAsset(payloadId: string, payloadRealPath: string, asset: AssetRef): Promise<OpenedAsset> {
  const { assetsDir, name } = ownAssetName(path, payloadId, payloadRealPath, path.resolve(asset.path), asset.sha256);
  const file = path.join(assetsDir, name);
  let fh: fs.promises.FileHandle;
  let st: fs.Stats;
  try {
    // The payload's path is already real: no component of the asset's may be a link (root '/').
    ({ handle: fh, stat: st } = await openUntrusted(file, { root: '/' }));
  } catch (err) {
    throw refuse(payloadId, asset.sha256, err instanceof UntrustedFileError ? UNTRUSTED_WHY[err.code] : 'the file cannot be opened');
  }
  try {
    const key = identity(st);
    let sha = verifiedSha(key);
    if (sha === undefined) {
      sha = await hashHandle(fh, st.size);
      rememberVerified(key, sha);
    }
    // Content-addressed: bytes that do not hash to the name are a damaged or planted file.
    if (sha !== asset.sha256) throw refuse(payloadId, asset.sha256, 'its bytes do not match its sha256');
    return openedFile(fh, { bytes: st.size, mimeType: asset.mimeType, sha256: asset.sha256, ext: path.extname(file), path: file });
  } catch (err) {
    await fh.close().catch(() => undefined);
    throw err;
  }
}

/** A verified asset file, open: what was hashed through `fh` is what is read and streamed. */
function openedFile(fh: fs.promises.FileHandle, a: Omit<OpenedAsset, 'stream' | 'read' | 'close'>): OpenedAsset {
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await fh.close().catch(() => undefined);
  };
  return {
    ...a,
    async stream(start = 0, end = a.bytes - 1) {
      closed = true; // the stream closes the file
      return fh.createReadStream({ start, end, autoClose: true });
    },
    async read() {
      try {
        const buf = Buffer.allocUnsafe(a.bytes);
        let off = 0;
        while (off < a.bytes) {
          const { bytesRead } = await fh.read(buf, off, a.bytes - off, off);
          if (bytesRead === 0) break;
          off += bytesRead;
        }
        return buf.subarray(0, off);
      } finally {
        await close();
      }
    },
    close,
  };
}
