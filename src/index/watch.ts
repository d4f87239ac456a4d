import path from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import { DATABASE_NAMES } from '../agents/index.js';
import { ASSETS_DIR, LONG_RESPONSES_DIR } from '../pipeline/index.js';
import { MAX_WALK_DEPTH } from './discover.js';

/**
 * Under a steady stream of writes, re-scan at least this often (the debounce would otherwise
 * keep postponing), so a new payload never waits longer than this plus one scoped scan.
 */
export const WATCH_MAX_WAIT_MS = 300;
/** More distinct scopes than this in one batch: re-scan the whole root instead. */
const MAX_SCOPES = 64;

export interface WatcherOptions {
  debounceMs: number;
  /** The index database (and its -wal/-shm): never a reason to re-scan. */
  ignorePath?: string;
  /** Called with a root and the folders/files under it that changed (null: the whole root). */
  onChange: (rootPath: string, scopes: string[] | null) => Promise<void>;
}

function inside(base: string, p: string): boolean {
  const rel = path.relative(base, p);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** Watches every root with one chokidar instance and turns raw events into scoped re-scans. */
export class Watcher {
  private fsw?: FSWatcher;
  private readonly roots = new Set<string>();
  private pending = new Map<string, Set<string> | null>();
  private timer?: NodeJS.Timeout;
  private firstPendingAt = 0;
  private running: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly o: WatcherOptions) {}

  private rootOf(p: string): string | undefined {
    let best: string | undefined;
    for (const r of this.roots) if (inside(r, p) && (!best || r.length > best.length)) best = r;
    return best;
  }

  private ignored = (p: string): boolean => {
    const ig = this.o.ignorePath;
    if (ig && (p === ig || p === `${ig}-wal` || p === `${ig}-shm` || p === `${ig}-journal`)) return true;
    const root = this.rootOf(p);
    if (!root) return false;
    const segs = path.relative(root, p).split(path.sep).filter(Boolean);
    // Temp files (the guard writes `.<name>.<pid>.<rand>.tmp` then renames) and hidden folders.
    return segs.some((s) => s.startsWith('.') || s === 'node_modules');
  };

  async start(roots: string[]): Promise<void> {
    for (const r of roots) this.roots.add(r);
    this.fsw = watch([...this.roots], {
      ignoreInitial: true,
      followSymlinks: false,
      depth: MAX_WALK_DEPTH + 3,
      ignored: this.ignored,
    });
    this.fsw.on('all', (event, p) => this.onEvent(event, p));
    this.fsw.on('error', () => {
      /* an unreadable folder: the next full scan reports it */
    });
    // chokidar never says 'ready' for an empty path list; roots added later are watched via add().
    if (this.roots.size) await new Promise<void>((resolve) => this.fsw!.once('ready', () => resolve()));
  }

  add(root: string): void {
    if (this.closed || this.roots.has(root)) return;
    this.roots.add(root);
    this.fsw?.add(root);
  }

  remove(root: string): void {
    this.roots.delete(root);
    this.fsw?.unwatch(root);
    this.pending.delete(root);
  }

  /** The smallest folder (or file) whose re-scan picks up this change; null = the whole root, undefined = nothing to do. */
  private scopeFor(root: string, event: string, p: string): string | null | undefined {
    const segs = path.relative(root, p).split(path.sep).filter(Boolean);
    const lr = segs.indexOf(LONG_RESPONSES_DIR);
    if (lr !== -1) {
      if (segs[lr + 1] === ASSETS_DIR) return undefined; // asset files never change rows
      return lr === 0 ? null : path.join(root, ...segs.slice(0, lr));
    }
    const side = segs.findIndex((s) => s === 'tool-results' || s === 'subagents');
    if (side !== -1) {
      // <project>/<session id>/{tool-results,subagents}/…: the project holds the transcript.
      return side <= 1 ? null : path.join(root, ...segs.slice(0, side - 1));
    }
    // A client's database of sessions (`opencode.db`) changes in its write-ahead log first: a change there
    // is a change to the database. Its `-shm` is the readers' lock index (ours too): never a reason.
    const sqlite = /^(.*)-(wal|shm|journal)$/.exec(segs[segs.length - 1] ?? '');
    if (sqlite && DATABASE_NAMES.has(sqlite[1]!)) return sqlite[2] === 'shm' ? undefined : path.join(path.dirname(p), sqlite[1]!);
    if (event === 'add' || event === 'change' || event === 'unlink') return segs.length ? p : null;
    // A folder appeared or went (a rename is both): its parent shows which.
    return segs.length <= 1 ? null : path.dirname(p);
  }

  private onEvent(event: string, p: string): void {
    if (this.closed) return;
    const root = this.rootOf(p);
    if (!root) return;
    const scope = this.scopeFor(root, event, p);
    if (scope === undefined) return;
    const cur = this.pending.get(root);
    if (scope === null || cur === null) this.pending.set(root, null);
    else {
      const set = cur ?? new Set<string>();
      set.add(scope);
      this.pending.set(root, set.size > MAX_SCOPES ? null : set);
    }
    const now = Date.now();
    if (!this.timer) this.firstPendingAt = now;
    clearTimeout(this.timer);
    const wait = Math.max(0, Math.min(this.o.debounceMs, this.firstPendingAt + WATCH_MAX_WAIT_MS - now));
    this.timer = setTimeout(() => this.flush(), wait);
  }

  private flush(): void {
    this.timer = undefined;
    const batch = this.pending;
    this.pending = new Map();
    this.running = this.running.then(async () => {
      for (const [root, scopes] of batch) {
        if (this.closed) return;
        let list = scopes ? [...scopes] : null;
        // Drop scopes nested in others.
        if (list) list = list.filter((s) => !list!.some((o) => o !== s && inside(o, s)));
        await this.o.onChange(root, list).catch(() => undefined);
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.fsw?.close();
    await this.running.catch(() => undefined);
  }
}
