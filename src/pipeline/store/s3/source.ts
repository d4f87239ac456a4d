import { Readable } from 'node:stream';
import type { CallOptions, ObjectInfo, S3Objects } from './client.js';
import { formatS3Url, parseS3Url, type S3Location } from './location.js';
import { S3Tree, type TreeEntry } from './tree.js';
import { JOURNAL_DIR, JOURNAL_OVERLAP_MS, carriedSidecar, journalFloor, journalPrefix, parseJournalEntry, parseJournalKey, parsePrunedEntry, parsePrunedKey } from './journal.js';
import { LONG_RESPONSES_DIR, META_SUFFIX, classifyLongResponseFile } from '../../layout.js';

/**
 * A bucket prefix as a read-only tree of sessions, for the index and the inspector. Paths are
 * `s3://bucket/<key>` URLs (a `path.join`ed `s3:/bucket/<key>` is accepted too), so the index
 * keeps them apart from local paths without knowing about S3.
 *
 * | call                              | S3 requests                                                   |
 * | --------------------------------- | ------------------------------------------------------------- |
 * | `refresh()` / `reconcile()`       | ListObjectsV2 of the whole root but its journal, 1 per 1,000 keys |
 * | `poll()`                          | one ListObjectsV2 of the journal from the cursor, + 1 GET per new spill and per prune tombstone |
 * | `newest(n)`                       | journal pages, newest range first (the n newest sessions, in order)  |
 * | `relist(sessions)`                | one ListObjectsV2 per session                                    |
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

/** What a reader of the bucket remembers between runs (the index keeps it with the root). */
export interface S3ReaderState {
  v: 1;
  /** Journal entries from this time on (minus the overlap) may be new: the cursor. */
  newestMs: number;
  /** When the last full listing started. */
  reconciledAt: number;
}

/** Sessions a refresh found new spills in, relative to the root. */
export interface S3Changes {
  sessions: string[];
  /** Spills pruned since (from prune's tombstones), as `<session>/long_responses/<stem>`, relative to the root. */
  gone?: string[];
  /** Requests made. */
  requests: number;
}

/** Journal entries read at once when a poll finds many new spills. */
const JOURNAL_READ_AHEAD = 16;
/** Session listings in flight at once. */
const RELIST_CONCURRENCY = 8;
/** Sessions of the newest-first order listed ahead of the ones asked for. */
const RELIST_AHEAD = 16;
/** The newest-first search starts with the journal's last 15 minutes and doubles the span... */
const NEWEST_FIRST_SPAN_MS = 15 * 60_000;
/** ...up to about two years, then reads the rest of it. */
const NEWEST_LAST_SPAN_MS = 2 * 366 * 86_400_000;

export class S3Source {
  readonly tree: S3Tree;
  readonly location: S3Location;
  readonly rootUrl: string;
  private refreshed = false;
  /** The tree holds a whole listing (not just what journal entries and single sessions added). */
  private complete = false;
  /** Sessions listed on their own since the last full listing. */
  private listedSessions = new Set<string>();
  /** The journal's cursor (see S3ReaderState). */
  newestMs = 0;
  reconciledAt = 0;
  /** Journal keys whose body was unusable: not fetched again. */
  private readonly badEntries = new Set<string>();
  /** Tombstones already applied, and the spills they named (`<session>/<stem>`): an entry of one is not read again. */
  private readonly tombstones = new Set<string>();
  private readonly pruned = new Set<string>();
  /** Sidecars that came inside journal entries, by root-relative path (checked against their ETag). */
  private readonly carried = new Map<string, Buffer>();
  /** Sidecar paths (root-relative) in listing order, and where each is in it. */
  private sidecars: string[] = [];
  private sidecarAt = new Map<string, number>();
  private ahead = new Map<string, Promise<{ bytes: Buffer; total: number }>>();
  private lastSidecar = -1;
  /** Sessions of the last newest() order not listed yet, newest first. */
  private upcoming: string[] = [];
  /** Session listings in flight or done ahead, not merged yet. */
  private readonly listing = new Map<string, Promise<ObjectInfo[]>>();
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];
  /** Session listing requests made (relist's count). */
  private requests = 0;

  constructor(
    readonly objects: S3Objects,
    root: string | S3Location,
    readonly call: CallOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.location = typeof root === 'string' ? parseS3Url(root) : root;
    this.rootUrl = formatS3Url(this.location);
    this.tree = new S3Tree(objects, this.location.prefix);
  }

  get state(): S3ReaderState {
    return { v: 1, newestMs: this.newestMs, reconciledAt: this.reconciledAt };
  }

  /** Take up a state saved by an earlier run (ignored unless it is one). */
  restore(state: unknown): boolean {
    const s = state as S3ReaderState;
    if (!s || s.v !== 1 || !Number.isFinite(s.newestMs) || !Number.isFinite(s.reconciledAt)) return false;
    this.newestMs = Math.max(this.newestMs, s.newestMs);
    this.reconciledAt = Math.max(this.reconciledAt, s.reconciledAt);
    return true;
  }

  /** Re-list the root: the next list/stat calls see objects added and removed since. */
  async refresh(): Promise<void> {
    await this.reconcile();
  }

  /**
   * The full, reconciling listing (everything but the journal). Afterwards the journal only has
   * to be read from its start time, minus the overlap, on.
   */
  async reconcile(): Promise<void> {
    const started = this.now();
    const base = this.tree.prefix ? this.tree.prefix + '/' : '';
    await this.tree.refresh(this.call, { from: `${base}${JOURNAL_DIR}/`, after: `${base}${JOURNAL_DIR}0` });
    this.refreshed = true;
    this.complete = true;
    this.listedSessions.clear();
    this.upcoming = [];
    this.listing.clear();
    this.carried.clear();
    this.newestMs = Math.max(this.newestMs, started);
    this.reconciledAt = started;
    this.indexSidecars();
  }

  private indexSidecars(): void {
    // Sorted: merged sessions come in listing-completion order, and the scanner reads in key order.
    this.sidecars = this.tree.keys().filter((k) => k.endsWith(META_SUFFIX)).sort();
    this.sidecarAt = new Map(this.sidecars.map((k, i) => [k, i]));
    this.ahead.clear();
    this.lastSidecar = -1;
  }

  /**
   * What is new since the cursor: one listing of the journal from the newest time seen minus
   * JOURNAL_OVERLAP_MS (one page per 1,000 entries in that window), and one GET per entry whose
   * spill is not known yet. Returns the sessions that gained spills.
   */
  async poll(): Promise<S3Changes> {
    this.refreshed = true;
    const touched = new Set<string>();
    const want: Array<{ key: string; session: string; stem: string; lastModifiedMs: number }> = [];
    const graves: string[] = [];
    let requests = 0;
    let newest = this.newestMs;
    const cap = this.now();
    for await (const page of this.objects.list(journalPrefix(this.location), { ...this.call, startAfter: journalFloor(this.location, this.newestMs - JOURNAL_OVERLAP_MS) })) {
      requests++;
      for (const o of page) {
        const t = parsePrunedKey(this.location.prefix, o.key);
        if (t) {
          if (!this.tombstones.has(o.key)) graves.push(o.key);
          continue;
        }
        const j = parseJournalKey(this.location.prefix, o.key);
        if (!j) continue;
        // A writer whose clock runs ahead must not move the cursor past everyone else's entries.
        newest = Math.max(newest, Math.min(j.timeMs, cap));
        if (this.badEntries.has(o.key) || this.pruned.has(`${j.session}/${j.stem}`) || this.tree.stat(`${j.session}/${LONG_RESPONSES_DIR}/${j.stem}${META_SUFFIX}`)) continue;
        want.push({ key: o.key, session: j.session, stem: j.stem, lastModifiedMs: o.lastModifiedMs });
      }
    }
    requests += await this.readEntries(want, touched);
    // Tombstones last: an entry read above for a spill pruned since is taken out again.
    const gone: string[] = [];
    for (const key of graves) {
      requests++;
      const bytes = await this.objects.get(key, this.call);
      const e = bytes ? parsePrunedEntry(bytes) : null;
      this.tombstones.add(key);
      if (e) gone.push(...this.forget(e.pruned));
    }
    // The read-ahead index is left as it is: what a poll found is read from the sidecars its entries carried.
    this.newestMs = newest;
    return { sessions: [...touched], requests, ...(gone.length ? { gone } : {}) };
  }

  /** Take pruned spills out of the tree; their unit paths (`<session>/long_responses/<stem>`). */
  private forget(pruned: Array<{ session: string; stem: string }>): string[] {
    const out: string[] = [];
    for (const { session, stem } of pruned) {
      this.pruned.add(`${session}/${stem}`);
      const dir = `${session}/${LONG_RESPONSES_DIR}`;
      const files = (this.tree.list(dir) ?? []).filter((e) => e.type === 'file' && classifyLongResponseFile(e.name)?.stem === stem).map((e) => `${dir}/${e.name}`);
      this.tree.remove(files);
      for (const f of files) this.carried.delete(f);
      out.push(`${dir}/${stem}`);
    }
    return out;
  }

  /** GET journal entries (JOURNAL_READ_AHEAD at a time) and put their files into the tree. */
  private async readEntries(want: Array<{ key: string; session: string; stem: string; lastModifiedMs: number }>, touched: Set<string>): Promise<number> {
    let i = 0;
    let requests = 0;
    const base = this.tree.prefix ? this.tree.prefix + '/' : '';
    await Promise.all(
      Array.from({ length: Math.min(JOURNAL_READ_AHEAD, want.length) }, async () => {
        while (i < want.length) {
          const w = want[i++]!;
          requests++;
          const bytes = await this.objects.get(w.key, this.call);
          const e = bytes ? parseJournalEntry(bytes) : null;
          if (!e || e.session !== w.session || e.stem !== w.stem) {
            // Deleted since it was listed (pruned), or not an entry this version understands.
            if (bytes) this.badEntries.add(w.key);
            continue;
          }
          const dir = `${w.session}/${LONG_RESPONSES_DIR}`;
          const metaName = `${w.stem}${META_SUFFIX}`;
          const objs = Object.entries(e.files)
            .filter(([name]) => name === metaName || name.startsWith(w.stem + '.'))
            .map(([name, f]) => ({ key: `${base}${dir}/${name}`, size: f.size, etag: f.etag, lastModifiedMs: w.lastModifiedMs }));
          if (!objs.some((o) => o.key.endsWith('/' + metaName))) {
            this.badEntries.add(w.key);
            continue;
          }
          this.tree.merge(objs);
          const sc = carriedSidecar(e, metaName);
          if (sc) this.carried.set(`${dir}/${metaName}`, sc);
          touched.add(w.session);
        }
      }),
    );
    return requests;
  }

  /**
   * On a first open: the `n` newest sessions, newest first, found from the journal's newest range
   * backwards (the last 15 minutes, then twice as far back each time, then all of it), so the
   * journal pages read grow with the spills of those sessions, not with the bucket. Nothing is
   * listed here beyond the journal: the caller lists the sessions a few at a time (`relist`), and
   * each call starts listing the next ones in this order behind it. A bucket without a journal
   * (written before it) falls back to session names that start with a UTC time (the MCP proxy's
   * `<time>_<server>`), newest name first, from one delimited listing of the sessions.
   */
  async newest(n: number): Promise<S3Changes> {
    this.refreshed = true;
    const now = this.now();
    let requests = 0;
    const order: string[] = [];
    const seen = new Set<string>();
    let upTo = Infinity;
    for (let span = NEWEST_FIRST_SPAN_MS; ; span *= 2) {
      const from = span > NEWEST_LAST_SPAN_MS ? 0 : now - span;
      const found: Array<{ t: number; session: string }> = [];
      for await (const page of this.objects.list(journalPrefix(this.location), { ...this.call, startAfter: journalFloor(this.location, from) })) {
        requests++;
        let past = false;
        for (const o of page) {
          const j = parseJournalKey(this.location.prefix, o.key);
          if (!j) continue;
          if (j.timeMs >= upTo) {
            past = true;
            break;
          }
          found.push({ t: j.timeMs, session: j.session });
        }
        if (past) break;
      }
      found.sort((a, b) => b.t - a.t);
      for (const f of found) {
        if (!seen.has(f.session)) {
          seen.add(f.session);
          order.push(f.session);
        }
      }
      upTo = from;
      if (order.length >= n || from === 0) break;
    }
    if (order.length === 0) {
      const r = await this.sessionsByName();
      requests += r.requests;
      order.push(...r.sessions);
    }
    const pick = order.slice(0, n);
    this.upcoming = pick.filter((s) => !this.listedSessions.has(s));
    this.newestMs = Math.max(this.newestMs, now);
    return { sessions: pick, requests };
  }

  /** Session names (one delimited listing), those that start with a UTC time newest first. */
  private async sessionsByName(): Promise<{ sessions: string[]; requests: number }> {
    const base = this.tree.prefix ? this.tree.prefix + '/' : '';
    const { names, requests } = await this.objects.listPrefixes(base, this.call);
    const timed = names.filter((s) => /^\d{8}T\d{6}/.test(s) || /^\d{4}-\d{2}-\d{2}T/.test(s)).sort().reverse();
    return { sessions: timed.filter((s) => !s.startsWith('.')), requests };
  }

  /**
   * List these sessions again, one ListObjectsV2 each (RELIST_CONCURRENCY at a time); their tree
   * is then exact. After a `newest()`, the next RELIST_AHEAD sessions of its order are listed
   * behind, while the caller reads these: they are merged when asked for.
   */
  async relist(sessions: string[]): Promise<number> {
    this.refreshed = true;
    const before = this.requests;
    const want = [...new Set(sessions)];
    const listed = await Promise.all(want.map((s) => this.listSession(s, true)));
    for (const [i, s] of want.entries()) {
      this.tree.clear(s);
      this.tree.merge(listed[i]!);
      this.listedSessions.add(s);
    }
    this.upcoming = this.upcoming.filter((s) => !this.listedSessions.has(s));
    for (const s of this.upcoming.slice(0, RELIST_AHEAD)) void this.listSession(s, false).catch(() => undefined);
    this.indexSidecars();
    return this.requests - before;
  }

  /** One session's objects. `take`: handed over (a later call lists again); else kept, listed ahead, for the one that takes it. */
  private listSession(session: string, take: boolean): Promise<ObjectInfo[]> {
    const list = () =>
      this.slot(async () => {
        const base = this.tree.prefix ? this.tree.prefix + '/' : '';
        const objs: ObjectInfo[] = [];
        for await (const page of this.objects.list(`${base}${session}/`, this.call)) {
          this.requests++;
          objs.push(...page);
        }
        return objs;
      });
    const ahead = this.listing.get(session);
    if (!take) {
      if (!ahead) this.listing.set(session, list());
      return this.listing.get(session)!;
    }
    this.listing.delete(session);
    // A listing made ahead that failed is made again, now that it is wanted.
    return ahead ? ahead.catch(list) : list();
  }

  /** Runs `fn` when fewer than RELIST_CONCURRENCY session listings are in flight. */
  private async slot<T>(fn: () => Promise<T>): Promise<T> {
    while (this.inFlight >= RELIST_CONCURRENCY) await new Promise<void>((r) => this.waiting.push(r));
    this.inFlight++;
    try {
      return await fn();
    } finally {
      this.inFlight--;
      this.waiting.shift()?.();
    }
  }

  /** A stat or read of a session the tree does not hold whole: that session is listed first. */
  private async ensureSession(rel: string): Promise<void> {
    if (this.complete) return;
    const session = rel.split('/')[0]!;
    if (!session || session.startsWith('.') || this.listedSessions.has(session)) return;
    await this.relist([session]);
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
    if (!this.refreshed) await this.reconcile();
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
    if (rel !== null && !this.tree.stat(rel)) await this.ensureSession(rel);
    const o = rel === null ? null : this.tree.stat(rel);
    return o ? { size: o.size, mtimeMs: o.lastModifiedMs, etag: o.etag } : null;
  }

  /** One Range GET. Size and ETag are the listing's (the object may have changed since: the next refresh sees it). */
  async readRange(file: string, offset: number, length: number): Promise<{ bytes: Buffer; size: number; mtimeMs: number; etag?: string }> {
    await this.ready();
    const rel = this.rel(file);
    if (rel === null) throw new Error(`not under ${this.rootUrl}: ${file}`);
    if (!this.tree.stat(rel)) await this.ensureSession(rel);
    const known = this.tree.stat(rel);
    const key = this.tree.key(rel);
    const carried = this.carried.get(rel);
    if (carried && known && carried.length === known.size) {
      return { bytes: carried.subarray(offset, offset + length), size: known.size, mtimeMs: known.lastModifiedMs, etag: known.etag };
    }
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
