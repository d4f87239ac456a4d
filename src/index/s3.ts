/**
 * S3 roots for the index: `s3://bucket/prefix` registered like a folder, read through the
 * pipeline's S3 source (one paged ListObjectsV2 per scan, ETag and size per key, Range GETs),
 * re-scanned by polling because a bucket cannot be watched. The bucket is never written: S3
 * roots are read-only, and nothing here has a write call to make.
 *
 * | part             | does                                                                   |
 * | ---------------- | ---------------------------------------------------------------------- |
 * | `RoutedSource`   | the index's SessionSource: local paths to `localSource`, `s3://` ones to the S3 source of their root |
 * | `S3Poller`       | re-scans each S3 root every `SPILLWAY_S3_POLL_MS` (default S3_POLL_MS) while the index watches |
 * | `refresh`        | per scan: the journal since the cursor, the newest sessions first, or the whole bucket |
 *
 * Paths stay `s3://bucket/key` URLs; `path.join` turns them into `s3:/bucket/key`, which every
 * call here accepts too (isS3Path).
 */
// The S3 front door loads the AWS SDK only when a bucket is first opened (openBucket).
import { S3Source, formatS3Url, isS3Path, openBucket, parseS3Url, splitS3Path } from '../pipeline/store/s3/index.js';
import { type RangeRead, type ReadOptions, type RefreshOptions, type RefreshPlan, type SessionSource, type SourceEntry, type SourceStat, localSource } from './source.js';

export { isS3Path };

/** How often an S3 root is re-listed while the index watches (a bucket sends no events). */
export const S3_POLL_MS = 5_000;
/** Shortest poll interval accepted from the environment. */
export const MIN_S3_POLL_MS = 200;

/**
 * How often an S3 root is listed whole while polled (SPILLWAY_S3_RECONCILE_MS): what finds
 * spills whose journal entry is missing (a writer older than the journal, a journal write that
 * failed) and objects deleted by hand. Polls in between read only the journal.
 */
export const S3_RECONCILE_MS = 60 * 60_000;
/** Sessions listed first when a bucket is opened for the first time. */
export const S3_NEWEST_SESSIONS = 100;

/** SPILLWAY_S3_RECONCILE_MS of the caller's variables (the service passes its own), else S3_RECONCILE_MS. */
export function s3ReconcileMs(env: NodeJS.ProcessEnv): number {
  const v = env.SPILLWAY_S3_RECONCILE_MS;
  const n = v === undefined || v === '' ? NaN : Number(v);
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : S3_RECONCILE_MS;
}

/** `a/b` of `s3://bucket/prefix/a/b` under the root `s3://bucket/prefix`; null when not under it. */
function relOf(rootUrl: string, p: string): string | null {
  const r = splitS3Path(rootUrl);
  const s = splitS3Path(p);
  if (!r || !s || r.bucket !== s.bucket) return null;
  if (r.key === '') return s.key;
  return s.key === r.key ? '' : s.key.startsWith(r.key + '/') ? s.key.slice(r.key.length + 1) : null;
}

/** `s3://bucket/prefix` in one spelling, whatever slashes `path.join` left. */
export function canonicalS3Root(p: string): string {
  const s = splitS3Path(p);
  if (!s) throw new Error(`not an s3:// path: ${p}`);
  return formatS3Url(parseS3Url(`s3://${s.bucket}/${s.key}`));
}

/** SPILLWAY_S3_POLL_MS of the caller's variables (the service passes its own), else S3_POLL_MS. */
export function s3PollMs(env: NodeJS.ProcessEnv): number {
  const v = env.SPILLWAY_S3_POLL_MS;
  if (v === undefined || v === '') return S3_POLL_MS;
  const n = Number(v);
  return Number.isFinite(n) && n >= MIN_S3_POLL_MS ? Math.floor(n) : S3_POLL_MS;
}

/** Local paths to the local file system, `s3://` paths to the S3 source of the root they are under. */
export class RoutedSource implements SessionSource {
  private readonly s3 = new Map<string, Promise<S3Source>>();
  private readonly reconcileMs: number;
  private readonly newestSessions: number;
  private readonly now: () => number;

  constructor(
    private readonly local: SessionSource = localSource,
    o: { reconcileMs?: number; newestSessions?: number; now?: () => number } = {},
  ) {
    this.reconcileMs = o.reconcileMs ?? S3_RECONCILE_MS;
    this.newestSessions = o.newestSessions ?? S3_NEWEST_SESSIONS;
    this.now = o.now ?? Date.now;
  }

  /** The S3 source for a root URL (created on first use; the SDK loads then). */
  sourceFor(root: string): Promise<S3Source> {
    const url = canonicalS3Root(root);
    let p = this.s3.get(url);
    if (!p) {
      p = openBucket(url).then((objects) => new S3Source(objects, url));
      p.catch(() => this.s3.delete(url));
      this.s3.set(url, p);
    }
    return p;
  }

  /** The registered S3 root that holds `p`: the longest one. */
  private async of(p: string): Promise<S3Source> {
    const s = splitS3Path(p)!;
    let best: string | undefined;
    for (const url of this.s3.keys()) {
      const r = splitS3Path(url)!;
      if (r.bucket === s.bucket && (r.key === '' || s.key === r.key || s.key.startsWith(r.key + '/')) && (!best || url.length > best.length)) best = url;
    }
    // A path under no known root: it is a root being scanned for the first time.
    return this.sourceFor(best ?? p);
  }

  /**
   * Called by the scanner at the start of each root's scan. An S3 root says what to list:
   *
   * - asked for in full (a reindex), or its last full listing is S3_RECONCILE_MS old: the whole
   *   bucket, which also finds spills whose journal entry is missing, and what was deleted;
   * - opened for the first time (nothing saved for it): its newest S3_NEWEST_SESSIONS sessions,
   *   newest first (the scanner lists and shows them a few at a time, each batch listed through
   *   `scopes`), then the whole bucket;
   * - otherwise: the journal from the saved cursor on, and only the sessions it names (and the
   *   spills prune's tombstones name, which leave the index).
   */
  async refresh(root: string, o: RefreshOptions = {}): Promise<void | RefreshPlan> {
    if (!isS3Path(root)) return;
    const src = await this.sourceFor(root);
    let saved = false;
    if (o.state) {
      try {
        saved = src.restore(JSON.parse(o.state));
      } catch {
        /* an unreadable state: as if none */
      }
    }
    const state = () => JSON.stringify(src.state);
    if (o.scopes) {
      const base = canonicalS3Root(root);
      const sessions = [...new Set(o.scopes.map((p) => relOf(base, p)?.split('/')[0]).filter((s): s is string => !!s))];
      await src.relist(sessions);
      return {};
    }
    if (o.full || (saved && this.now() - src.reconciledAt >= this.reconcileMs)) {
      await src.reconcile();
      return { state: state() };
    }
    if (!saved && src.reconciledAt === 0) {
      const first = await src.newest(this.newestSessions);
      return { sessions: first.sessions, additive: true, more: true, inOrder: true };
    }
    const changes = await src.poll();
    return { sessions: changes.sessions, additive: true, state: state(), ...(changes.gone ? { gone: changes.gone } : {}) };
  }

  list(dir: string): SourceEntry[] | null | Promise<SourceEntry[] | null> {
    if (!isS3Path(dir)) return this.local.list(dir);
    return this.of(dir).then((s) => s.list(dir));
  }

  stat(file: string): SourceStat | null | Promise<SourceStat | null> {
    if (!isS3Path(file)) return this.local.stat(file);
    return this.of(file).then((s) => s.stat(file));
  }

  readRange(file: string, offset: number, length: number, into?: Buffer, o?: ReadOptions): RangeRead | Promise<RangeRead> {
    if (!isS3Path(file)) return this.local.readRange(file, offset, length, into, o);
    return this.of(file).then((s) => s.readRange(file, offset, length));
  }

  /** An S3 object as a stream (assets, downloads); `range` is [start, end), `ifMatch` the ETag it must still have. */
  async stream(file: string, range?: { start: number; end: number }, o: { ifMatch?: string } = {}) {
    return (await this.of(file)).stream(file, range, o);
  }
}

/** Re-scans S3 roots on a timer (one scan at a time per root; a slow bucket never piles up scans). */
export class S3Poller {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly busy = new Set<string>();
  private closed = false;

  constructor(
    private readonly intervalMs: number,
    private readonly rescan: (rootPath: string) => Promise<void>,
  ) {}

  add(rootPath: string): void {
    if (this.closed || this.timers.has(rootPath) || !isS3Path(rootPath)) return;
    const t = setInterval(() => {
      if (this.busy.has(rootPath)) return;
      this.busy.add(rootPath);
      void this.rescan(rootPath).finally(() => this.busy.delete(rootPath));
    }, this.intervalMs);
    t.unref();
    this.timers.set(rootPath, t);
  }

  remove(rootPath: string): void {
    clearInterval(this.timers.get(rootPath));
    this.timers.delete(rootPath);
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearInterval(t);
    this.timers.clear();
  }
}
