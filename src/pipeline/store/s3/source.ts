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

/**
 * Sidecars fetched ahead, in parallel, once a scan reads them in listing order (a first index
 * reads thousands one after the other; an incremental one reads a few, and gets no read-ahead).
 */
export const SIDECAR_READ_AHEAD = 16;
/** Sidecars larger than this are not read ahead (the guard's are a few KB). */
const READ_AHEAD_MAX_BYTES = 1024 * 1024;

export class S3Source {
  readonly tree: S3Tree;
  readonly location: S3Location;
  readonly rootUrl: string;
  private refreshed = false;
  /** Sidecar paths (root-relative) in listing order, and where each is in it. */
  private sidecars: string[] = [];
  private sidecarAt = new Map<string, number>();
  private ahead = new Map<string, Promise<{ bytes: Buffer; total: number }>>();
  private lastSidecar = -1;

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
    this.sidecars = this.tree.keys().filter((k) => k.endsWith('.meta.json'));
    this.sidecarAt = new Map(this.sidecars.map((k, i) => [k, i]));
    this.ahead.clear();
    this.lastSidecar = -1;
  }

  /** A whole sidecar: from the read-ahead when it is there; reading in order starts the read-ahead. */
  private sidecar(rel: string, size: number): Promise<{ bytes: Buffer; total: number }> | undefined {
    const i = this.sidecarAt.get(rel);
    if (i === undefined || size > READ_AHEAD_MAX_BYTES) return undefined;
    const sequential = i === this.lastSidecar + 1;
    this.lastSidecar = i;
    const got = this.ahead.get(rel);
    this.ahead.delete(rel);
    // Sidecars fetched ahead but skipped by the reader (units it already knew) are dropped.
    if (this.ahead.size > 4 * SIDECAR_READ_AHEAD) for (const k of this.ahead.keys()) if (this.sidecarAt.get(k)! < i) this.ahead.delete(k);
    if (sequential) {
      for (let j = i + 1; j <= i + SIDECAR_READ_AHEAD && j < this.sidecars.length; j++) {
        const next = this.sidecars[j]!;
        const st = this.tree.stat(next);
        if (this.ahead.has(next) || !st || st.size > READ_AHEAD_MAX_BYTES) continue;
        const p = this.objects.getRange(this.tree.key(next), 0, st.size, this.call);
        p.catch(() => undefined); // read again, and reported, when asked for
        this.ahead.set(next, p);
      }
    }
    return got;
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
    const pre = known && offset === 0 && length >= known.size ? this.sidecar(rel, known.size) : undefined;
    const r = (await pre?.catch(() => undefined)) ?? (await this.objects.getRange(key, offset, offset + length, this.call));
    const size = r.total >= 0 ? r.total : (known?.size ?? r.bytes.length);
    return { bytes: r.bytes, size, mtimeMs: known?.lastModifiedMs ?? 0, ...(known ? { etag: known.etag } : {}) };
  }

  /** The object (or bytes [start, end) of it) as a stream, for assets and downloads; `ifMatch` pins the ETag. */
  async stream(file: string, range?: { start: number; end: number }, o: { ifMatch?: string } = {}): Promise<{ stream: Readable; length: number; total: number }> {
    const rel = this.rel(file);
    if (rel === null) throw new Error(`not under ${this.rootUrl}: ${file}`);
    return this.objects.getStream(this.tree.key(rel), range, { ...this.call, ...o });
  }
}
