import type { CallOptions, ObjectInfo, S3Objects } from './client.js';

/**
 * A bucket prefix seen as folders, from one flat ListObjectsV2 pass (a page per 1,000 keys,
 * with continuation): the index's walker asks for one folder at a time, and answering from the
 * snapshot costs no request per folder. ETag and size come with every key, so an unchanged
 * object is recognised without reading it.
 *
 * Keys are relative to the root prefix and use `/`. A key holding `.`, `..` or an empty segment
 * (legal in S3) is left out: it could never have been written by Spillway and would not map to
 * a folder.
 */

export interface TreeEntry {
  name: string;
  type: 'file' | 'dir';
  stat?: { size: number; mtimeMs: number; etag: string };
}

export class S3Tree {
  private dirs = new Map<string, Map<string, TreeEntry>>();
  private files = new Map<string, ObjectInfo>();
  /** Keys left out because they do not map to a folder tree. */
  skipped = 0;
  /** Requests the last refresh made. */
  pages = 0;

  constructor(
    readonly objects: S3Objects,
    /** Root prefix: '' or `a/b` (no trailing slash). */
    readonly prefix: string,
  ) {}

  /** Re-list everything under the root. */
  async refresh(o: CallOptions = {}): Promise<void> {
    const dirs = new Map<string, Map<string, TreeEntry>>([['', new Map()]]);
    const files = new Map<string, ObjectInfo>();
    let skipped = 0;
    let pages = 0;
    const base = this.prefix ? this.prefix + '/' : '';
    for await (const page of this.objects.list(base, o)) {
      pages++;
      for (const obj of page) {
        const rel = obj.key.slice(base.length);
        const segs = rel.split('/');
        if (segs.some((s) => s === '' || s === '.' || s === '..')) {
          skipped++;
          continue;
        }
        let dir = '';
        for (let i = 0; i < segs.length - 1; i++) {
          const child = dir ? `${dir}/${segs[i]}` : segs[i]!;
          const entries = dirs.get(dir)!;
          if (!entries.has(segs[i]!)) entries.set(segs[i]!, { name: segs[i]!, type: 'dir' });
          if (!dirs.has(child)) dirs.set(child, new Map());
          dir = child;
        }
        const name = segs[segs.length - 1]!;
        const entries = dirs.get(dir)!;
        // A key that is also a "folder" (`a` and `a/b`): the folder wins, as it would on disk.
        if (entries.get(name)?.type === 'dir') {
          skipped++;
          continue;
        }
        entries.set(name, { name, type: 'file', stat: { size: obj.size, mtimeMs: obj.lastModifiedMs, etag: obj.etag } });
        files.set(rel, obj);
      }
    }
    // A file shadowed later by a folder of the same name.
    for (const [dir, entries] of dirs) {
      for (const [name, e] of entries) {
        if (e.type === 'file' && dirs.has(dir ? `${dir}/${name}` : name)) {
          entries.set(name, { name, type: 'dir' });
          files.delete(dir ? `${dir}/${name}` : name);
          skipped++;
        }
      }
    }
    this.dirs = dirs;
    this.files = files;
    this.skipped = skipped;
    this.pages = pages;
  }

  list(rel: string): TreeEntry[] | null {
    const d = this.dirs.get(rel);
    return d ? [...d.values()] : null;
  }

  stat(rel: string): ObjectInfo | null {
    return this.files.get(rel) ?? null;
  }

  /** Full key of a root-relative path. */
  key(rel: string): string {
    return this.prefix ? `${this.prefix}/${rel}` : rel;
  }

  /** Every file's root-relative path, in key order. */
  keys(): string[] {
    return [...this.files.keys()];
  }

  get size(): number {
    return this.files.size;
  }
}
