import crypto from 'node:crypto';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { AssetRef } from '../pipeline/types.js';
import { S3StoreError } from '../pipeline/store/s3/index.js';
import { canonicalS3Root, isS3Path, type RoutedSource } from '../index/index.js';
import type { ByteSource } from './reader.js';
import { ServiceError } from './contract.js';
import { ownAssetName, refuse, rememberVerified, verifiedSha, type OpenedAsset } from './assets.js';

/**
 * Reading payloads and assets of `s3://` roots for the inspector: windows by Range GET (a 500 MB
 * object is never fetched whole), assets streamed. Only paths under a registered S3 root are
 * read; nothing is ever written to the bucket.
 *
 * | call                   | does                                                                    |
 * | ---------------------- | ----------------------------------------------------------------------- |
 * | `confine(p, what)`     | the canonical URL when it lies under a registered S3 root, else FORBIDDEN_PATH |
 * | `open(p)`              | a payload object as a ByteSource: each window is one Range GET           |
 * | `openAsset(...)`       | an asset after the checks of assets.ts, its bytes hashed, then pinned to that ETag |
 */

/** Assets up to this size are kept in memory from the hashing GET (no second request, nothing to pin). */
export const S3_ASSET_KEEP_BYTES = 8 * 1024 * 1024;

export class S3Reads {
  private readonly roots = new Set<string>();

  constructor(private readonly source: RoutedSource) {}

  allowRoot(root: string): void {
    this.roots.add(canonicalS3Root(root));
  }

  forget(root: string): void {
    this.roots.delete(canonicalS3Root(root));
  }

  /** The path, canonical, when it lies under a registered S3 root; else FORBIDDEN. */
  confine(p: string, what: string): string {
    let url: string;
    try {
      url = canonicalS3Root(p);
    } catch {
      throw new ServiceError('FORBIDDEN_PATH', `${what} is not a usable s3:// path`);
    }
    for (const r of this.roots) if ((url + '/').startsWith(r + '/')) return url;
    throw new ServiceError('FORBIDDEN_PATH', `${what} is outside every registered root: ${url}`);
  }

  /** A payload object as a ByteSource: each window is one Range GET. */
  async open(p: string): Promise<ByteSource> {
    const st = await this.source.stat(p);
    if (!st) throw new ServiceError('NOT_FOUND', `object is gone: ${p}`);
    return {
      key: `s3\0${p}\0${st.size}\0${st.etag ?? st.mtimeMs}`,
      size: st.size,
      read: async (start, end) => (end > start ? (await this.source.readRange(p, start, end - start)).bytes : Buffer.alloc(0)),
      close: async () => undefined,
    };
  }

  /**
   * `asset` of the payload at `payloadUrl` (confined by the caller), with the checks local assets
   * get: only its name is taken, looked up under the payload's own `long_responses/assets/`, and
   * its bytes must hash to its sha256. What is then read or streamed is that same version: kept
   * in memory when small, else fetched with `If-Match` on the ETag that was hashed.
   */
  async openAsset(payloadId: string, payloadUrl: string, asset: AssetRef): Promise<OpenedAsset> {
    const listed = isS3Path(asset.path) ? canonicalS3Root(asset.path) : asset.path;
    const { assetsDir, name } = ownAssetName(path.posix, payloadId, payloadUrl, listed, asset.sha256);
    const url = this.confine(`${assetsDir}/${name}`, 'asset path');
    const st = await this.source.stat(url);
    if (!st) throw refuse(payloadId, asset.sha256, 'the file is missing');
    const etag = st.etag;
    const identity = `s3\0${url}\0${etag ?? ''}\0${st.size}`;
    let kept: Buffer | undefined;
    if (!etag || verifiedSha(identity) === undefined) {
      // One GET, hashed as it arrives; small assets are kept so nothing is fetched twice.
      const { stream } = await this.source.stream(url, undefined, etag ? { ifMatch: etag } : {}).catch((err: unknown) => {
        // Replaced since the listing (412), or deleted: not the object the index knows.
        if (err instanceof S3StoreError && err.code === 'NOT_FOUND') throw refuse(payloadId, asset.sha256, 'the object changed or went away since it was listed');
        throw err;
      });
      const h = crypto.createHash('sha256');
      const parts: Buffer[] = [];
      let n = 0;
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        h.update(chunk);
        n += chunk.length;
        if (n <= S3_ASSET_KEEP_BYTES) parts.push(chunk);
        else parts.length = 0;
      }
      const sha = h.digest('hex');
      if (sha !== asset.sha256) throw refuse(payloadId, asset.sha256, 'its bytes do not match its sha256');
      if (etag) rememberVerified(identity, sha);
      if (n <= S3_ASSET_KEEP_BYTES) kept = Buffer.concat(parts, n);
      // Without an ETag nothing pins a second read to the bytes just hashed: keep them, whatever their size.
      else if (!etag) throw refuse(payloadId, asset.sha256, 'the object has no ETag to pin a streamed read to');
    } else if (verifiedSha(identity) !== asset.sha256) throw refuse(payloadId, asset.sha256, 'its bytes do not match its sha256');
    const size = kept?.length ?? st.size;
    /** The version that was hashed, or a refusal: If-Match fails once the object was replaced. */
    const pinned = async (range?: { start: number; end: number }) => {
      try {
        return (await this.source.stream(url, range, { ifMatch: etag! })).stream;
      } catch (err) {
        if (err instanceof S3StoreError && err.code === 'NOT_FOUND') throw refuse(payloadId, asset.sha256, 'the object changed or went away since it was checked');
        throw err;
      }
    };
    return {
      bytes: size,
      mimeType: asset.mimeType,
      sha256: asset.sha256,
      ext: path.posix.extname(name),
      path: url,
      stream: async (start = 0, end = size - 1) => (kept ? Readable.from([kept.subarray(start, end + 1)]) : pinned({ start, end: end + 1 })),
      read: async () => {
        if (kept) return kept;
        const chunks: Buffer[] = [];
        for await (const c of (await pinned()) as AsyncIterable<Buffer>) chunks.push(c);
        return Buffer.concat(chunks);
      },
      close: async () => undefined,
    };
  }
}

export { isS3Path };
