import { Readable } from 'node:stream';
import type { CallOptions, S3Objects } from './client.js';
import { formatS3Url, parseS3Url, type S3Location } from './location.js';
import { S3Tree, type TreeEntry } from './tree.js';

/**
 * A bucket prefix as a read-only tree of sessions, for the index and the inspector. Paths are
 * `s3://bucket/<key>` URLs (a `path.join`ed `s3:/bucket/<key>` is accepted too), so the index
 * keeps them apart from local paths without knowing about S3.
 *
 * | call                              | S3 requests                                                   |
 * | --------------------------------- | ------------------------------------------------------------- |
 * | `refresh()`                       | ListObjectsV2 of the whole root, 1 per 1,000 keys (continuation) |
 * | `list(dir)` / `stat(file)`        | none: answered from the last listing (size, ETag, time)         |
 * | `readRange(file, offset, length)` | one Range GET: never the whole object                           |
 * | `stream(file, range?)`            | one GET, streamed                                                |
 *
 * Nothing here writes to the bucket.
 */

/** `s3://bucket/a/b`, `s3:/bucket/a/b` (after path.join) → the bucket and key `a/b`; null for other paths. */
export function splitS3Path(p: string): { bucket: string; key: string } | null {
  const m = /^s3:\/\/?([^/]+)(?:\/(.*))?$/i.exec(p.replace(/\\/g, '/'));
  if (!m) return null;
  return { bucket: m[1]!, key: (m[2] ?? '').replace(/\/+$/, '') };
}

export const isS3Path = (p: string): boolean => /^s3:\/\/?[^/]/i.test(p);

export class S3Source {
  readonly tree: S3Tree;
  readonly location: S3Location;
  readonly rootUrl: string;
  private refreshed = false;

  constructor(
    readonly objects: S3Objects,
    root: string | S3Location,
    readonly call: CallOptions = {},
  ) {
    this.location = typeof root === 'string' ? parseS3Url(root) : root;
    this.rootUrl = formatS3Url(this.location);
    this.tree = new S3Tree(objects, this.location.prefix);
  }

  /** Re-list the root: the next list/stat calls see objects added and removed since. */
  async refresh(): Promise<void> {
    await this.tree.refresh(this.call);
    this.refreshed = true;
  }

  /** Root-relative path of one of our paths; null when it is not under this root. */
  rel(p: string): string | null {
    const s = splitS3Path(p);
    if (!s || s.bucket !== this.location.bucket) return null;
    const pre = this.location.prefix;
    if (pre === '') return s.key;
    if (s.key === pre) return '';
    return s.key.startsWith(pre + '/') ? s.key.slice(pre.length + 1) : null;
  }

  url(rel: string): string {
    return formatS3Url(this.location, this.tree.key(rel));
  }

  private async ready(): Promise<void> {
    if (!this.refreshed) await this.refresh();
  }

  async list(dir: string): Promise<Array<{ name: string; type: 'file' | 'dir' | 'other'; stat?: { size: number; mtimeMs: number; etag?: string } }> | null> {
    await this.ready();
    const rel = this.rel(dir);
    if (rel === null) return null;
    return this.tree.list(rel)?.map((e: TreeEntry) => ({ name: e.name, type: e.type, ...(e.stat ? { stat: e.stat } : {}) })) ?? null;
  }

  async stat(file: string): Promise<{ size: number; mtimeMs: number; etag?: string } | null> {
    await this.ready();
    const rel = this.rel(file);
    const o = rel === null ? null : this.tree.stat(rel);
    return o ? { size: o.size, mtimeMs: o.lastModifiedMs, etag: o.etag } : null;
  }

  /** One Range GET. Size and ETag are the listing's (the object may have changed since: the next refresh sees it). */
  async readRange(file: string, offset: number, length: number): Promise<{ bytes: Buffer; size: number; mtimeMs: number; etag?: string }> {
    await this.ready();
    const rel = this.rel(file);
    if (rel === null) throw new Error(`not under ${this.rootUrl}: ${file}`);
    const known = this.tree.stat(rel);
    const key = this.tree.key(rel);
    if (known && offset >= known.size) return { bytes: Buffer.alloc(0), size: known.size, mtimeMs: known.lastModifiedMs, etag: known.etag };
    const r = await this.objects.getRange(key, offset, offset + length, this.call);
    const size = r.total >= 0 ? r.total : (known?.size ?? r.bytes.length);
    return { bytes: r.bytes, size, mtimeMs: known?.lastModifiedMs ?? 0, ...(known ? { etag: known.etag } : {}) };
  }

  /** The object (or bytes [start, end) of it) as a stream, for assets and downloads. */
  async stream(file: string, range?: { start: number; end: number }): Promise<{ stream: Readable; length: number; total: number }> {
    const rel = this.rel(file);
    if (rel === null) throw new Error(`not under ${this.rootUrl}: ${file}`);
    return this.objects.getStream(this.tree.key(rel), range, this.call);
  }
}
