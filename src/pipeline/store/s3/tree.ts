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
  private dirs = new Map<string, Map<string, TreeEntry>>([['', new Map()]]);
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

  /**
   * Re-list everything under the root. `skip` is a key range left out of the listing (the
   * journal, which has a reader of its own): the listing stops where it begins and starts again
   * after it, so a bucket's journal keys are never paged through here.
   */
  async refresh(o: CallOptions = {}, skip?: { from: string; after: string }): Promise<void> {
    // Built aside and swapped in: readers meanwhile see the previous listing, whole.
    const next = new S3Tree(this.objects, this.prefix);
    const base = this.prefix ? this.prefix + '/' : '';
    let startAfter: string | undefined;
    for (let pass = 0; pass < 2; pass++) {
      let jumped = false;
      for await (const page of this.objects.list(base, { ...o, ...(startAfter ? { startAfter } : {}) })) {
        next.pages++;
        for (const obj of page) {
          if (skip && pass === 0 && obj.key >= skip.from) {
            jumped = true;
            break;
          }
          next.insert(obj);
        }
        if (jumped) break;
      }
      if (!jumped || !skip) break;
      startAfter = skip.after;
    }
    next.unshadow();
    this.dirs = next.dirs;
    this.files = next.files;
    this.skipped = next.skipped;
    this.pages = next.pages;
  }

  /** Add or update objects (journal entries, a session listed again) without listing the root. */
  merge(objs: Iterable<ObjectInfo>): void {
    for (const obj of objs) this.insert(obj, true);
  }

  /** Forget these files (deleted on purpose: prune's tombstones); their folders stay. */
  remove(rels: Iterable<string>): void {
    for (const rel of rels) {
      if (!this.files.delete(rel)) continue;
      const cut = rel.lastIndexOf('/');
      this.dirs.get(cut < 0 ? '' : rel.slice(0, cut))?.delete(rel.slice(cut + 1));
    }
  }

  /** Forget every file under `relDir` (before it is listed again). */
  clear(relDir: string): void {
    const under = relDir + '/';
    for (const k of [...this.files.keys()]) if (k.startsWith(under)) this.files.delete(k);
    for (const d of [...this.dirs.keys()]) if (d === relDir || d.startsWith(under)) this.dirs.set(d, new Map([...this.dirs.get(d)!].filter(([, e]) => e.type === 'dir')));
  }

  /** `exact`: settle a file/folder clash now (merges); a full listing settles them all at its end instead. */
  private insert(obj: ObjectInfo, exact = false): void {
    const base = this.prefix ? this.prefix + '/' : '';
    if (!obj.key.startsWith(base)) return;
    const rel = obj.key.slice(base.length);
    const segs = rel.split('/');
    if (segs.some((s) => s === '' || s === '.' || s === '..')) {
      this.skipped++;
      return;
    }
    let dir = '';
    for (let i = 0; i < segs.length - 1; i++) {
      const child = dir ? `${dir}/${segs[i]}` : segs[i]!;
      const entries = this.dirs.get(dir)!;
      const had = entries.get(segs[i]!);
      if (!had) entries.set(segs[i]!, { name: segs[i]!, type: 'dir' });
      else if (exact && had.type === 'file') {
        // A folder where a file of that name was: the folder wins, as unshadow() settles it after a full listing.
        this.files.delete(child);
        this.skipped++;
        entries.set(segs[i]!, { name: segs[i]!, type: 'dir' });
      }
      if (!this.dirs.has(child)) this.dirs.set(child, new Map());
      dir = child;
    }
    const name = segs[segs.length - 1]!;
    const entries = this.dirs.get(dir)!;
    // A key that is also a "folder" (`a` and `a/b`): the folder wins, as it would on disk.
    if (entries.get(name)?.type === 'dir') {
      this.skipped++;
      return;
    }
    entries.set(name, { name, type: 'file', stat: { size: obj.size, mtimeMs: obj.lastModifiedMs, etag: obj.etag } });
    this.files.set(rel, obj);
  }

  /** A file shadowed later by a folder of the same name. */
  private unshadow(): void {
    for (const [dir, entries] of this.dirs) {
      for (const [name, e] of entries) {
        if (e.type === 'file' && this.dirs.has(dir ? `${dir}/${name}` : name)) {
          entries.set(name, { name, type: 'dir' });
          this.files.delete(dir ? `${dir}/${name}` : name);
          this.skipped++;
        }
      }
    }
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
