import type { Readable } from 'node:stream';
import { canonicalS3Root, isS3Path, type RoutedSource } from '../index/s3.js';
import type { ByteSource } from './reader.js';
import { ServiceError } from './contract.js';

/**
 * Reading payloads and assets of `s3://` roots for the inspector: windows by Range GET (a 500 MB
 * object is never fetched whole), assets streamed. Only paths under a registered S3 root are
 * read; nothing is ever written to the bucket.
 */
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

  async size(p: string): Promise<number> {
    const st = await this.source.stat(p);
    if (!st) throw new ServiceError('NOT_FOUND', `object is gone: ${p}`);
    return st.size;
  }

  async readAll(p: string, size: number): Promise<Buffer> {
    return (await this.source.readRange(p, 0, size)).bytes;
  }

  /** Bytes [start, end) of an object as a stream (asset downloads, with Range). */
  async stream(p: string, start: number, end: number): Promise<Readable> {
    return (await this.source.stream(p, { start, end })).stream;
  }
}

export { isS3Path };
