/**
 * Registered roots: the folders (or single files) the index covers, and the agents' own session
 * folders a user has in $HOME, which the inspector opens by default (read-only, marked auto).
 */
import { type AgentEnv, agentHomeFolders } from '../agents/index.js';
import fs from 'node:fs';
import path from 'node:path';
import { type IndexCore, IndexError } from './core.js';
import { detectRootKind } from './discover.js';
import { relink } from './join.js';
import type { RootInfo } from './rows.js';
import { stableId } from './text.js';
import { canonicalS3Root, isS3Path } from './s3.js';

export type RootKind = RootInfo['kind'];

export interface RootRow {
  id: string;
  path: string;
  kind: RootKind;
  added_at: string;
  read_only: number;
  auto: number;
}

export interface AddRootOptions {
  /** Spillway never writes inside it (its sessions are listed read-only). */
  readOnly?: boolean;
  /** Opened by default, not chosen by the user (see syncAuto). */
  auto?: boolean;
}

export function isInsidePath(base: string, candidate: string): boolean {
  const rel = path.relative(base, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

function isDir(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The agents' own session folders under a home folder, where they exist: each adapter's
 * `files.homeRoots` (src/agents), e.g. Claude Code's `projects` under `$CLAUDE_CONFIG_DIR`. Hidden
 * folders are never walked into inside a root; these are roots of their own, so they are.
 */
export function agentHomeRoots(env: AgentEnv & { HOME?: string; USERPROFILE?: string }): string[] {
  const home = env.HOME || env.USERPROFILE;
  if (!home) return [];
  return agentHomeFolders(home, env).filter(isDir);
}

const ROOT_COLUMNS = 'id, path, kind, added_at, read_only, auto';

export class Roots {
  constructor(
    private readonly core: IndexCore,
    /** Called with a root's path when it is registered or forgotten (the watcher follows). */
    private readonly onChange: (event: 'add' | 'remove', rootPath: string) => void,
  ) {}

  /**
   * Register a root: a folder of sessions, one session folder, one file (a payload, a
   * transcript) or a Claude Code `projects` folder; the kind is detected. Adding the same path
   * again returns the existing root (a user adding a default root explicitly makes it theirs).
   * A path inside an existing root is refused (it is already indexed); registering a parent of
   * existing roots replaces them. Does not scan.
   */
  add(p: string, opts: AddRootOptions = {}): RootInfo {
    // A bucket prefix: a folder of sessions (or one session: the walk tells), never written to.
    if (isS3Path(p)) return this.addS3(p, opts);
    let real: string;
    try {
      real = fs.realpathSync.native(path.resolve(p));
    } catch {
      throw new IndexError('NOT_FOUND', `root does not exist: ${p}`);
    }
    let kind: RootKind;
    try {
      kind = detectRootKind(real);
    } catch (err) {
      throw new IndexError('BAD_REQUEST', (err as Error).message);
    }
    const dbPath = this.core.dbPath;
    if (dbPath !== ':memory:' && kind !== 'file' && isInsidePath(real, dbPath)) {
      throw new IndexError('BAD_REQUEST', `the index database ${dbPath} must not live inside a sessions root (${real})`);
    }
    const roots = this.rows();
    const same = roots.find((r) => r.path === real);
    if (same) return this.info(this.adopt(same, opts));
    const covering = roots.find((r) => r.kind !== 'file' && isInsidePath(r.path, real));
    if (covering) throw new IndexError('BAD_REQUEST', `${real} is already indexed as part of root ${covering.path}`);
    const covered = kind === 'file' ? [] : roots.filter((r) => isInsidePath(real, r.path));
    for (const r of covered) this.remove(r.id);
    // A default root that takes over roots the user added is the user's from now on.
    const auto = opts.auto && covered.every((r) => r.auto) ? 1 : 0;
    const row: RootRow = { id: stableId('r', real), path: real, kind, added_at: new Date().toISOString(), read_only: opts.readOnly ? 1 : 0, auto };
    this.core
      .q(`INSERT INTO roots (${ROOT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`)
      .run(row.id, row.path, row.kind, row.added_at, row.read_only, row.auto);
    this.onChange('add', row.path);
    return this.info(row);
  }

  private addS3(p: string, opts: AddRootOptions): RootInfo {
    let url: string;
    try {
      url = canonicalS3Root(p);
    } catch (err) {
      throw new IndexError('BAD_REQUEST', (err as Error).message);
    }
    const roots = this.rows();
    const same = roots.find((r) => r.path === url);
    if (same) return this.info(this.adopt(same, { ...opts, readOnly: true }));
    const covering = roots.find((r) => isS3Path(r.path) && (url + '/').startsWith(r.path + '/'));
    if (covering) throw new IndexError('BAD_REQUEST', `${url} is already indexed as part of root ${covering.path}`);
    for (const r of roots) if (isS3Path(r.path) && (r.path + '/').startsWith(url + '/')) this.remove(r.id);
    const row: RootRow = { id: stableId('r', url), path: url, kind: 'sessions', added_at: new Date().toISOString(), read_only: 1, auto: opts.auto ? 1 : 0 };
    this.core
      .q(`INSERT INTO roots (${ROOT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`)
      .run(row.id, row.path, row.kind, row.added_at, row.read_only, row.auto);
    this.onChange('add', row.path);
    return this.info(row);
  }

  /** A known root added again: read-only sticks once set; an explicit add takes a default root over. */
  private adopt(r: RootRow, opts: AddRootOptions): RootRow {
    const readOnly = r.read_only || (opts.readOnly ? 1 : 0);
    const auto = opts.auto ? r.auto : 0;
    if (readOnly === r.read_only && auto === r.auto) return r;
    this.core.q('UPDATE roots SET read_only = ?, auto = ? WHERE id = ?').run(readOnly, auto, r.id);
    if (readOnly !== r.read_only) this.core.q('UPDATE sessions SET read_only = 1 WHERE root_id = ?').run(r.id);
    return { ...r, read_only: readOnly, auto };
  }

  /** Forget a root and everything indexed under it (the files are not touched). */
  remove(id: string): { ok: true } {
    const root = this.row(id);
    this.core.buildIndexesNow();
    const q = (sql: string) => this.core.q(sql);
    const removed = (q('SELECT count(*) AS n FROM payloads WHERE root_id = ?').get(id) as { n: number }).n;
    const sessionIds = (q('SELECT id FROM sessions WHERE root_id = ?').all(id) as Array<{ id: string }>).map((r) => r.id);
    this.core.db
      .transaction(() => {
        q('DELETE FROM summary_runs WHERE payload_id IN (SELECT id FROM payloads WHERE root_id = ?)').run(id);
        q('DELETE FROM payloads WHERE root_id = ?').run(id);
        q('DELETE FROM sources WHERE root_id = ?').run(id);
        q('DELETE FROM sessions WHERE root_id = ?').run(id);
        q('DELETE FROM roots WHERE id = ?').run(id);
        // The other side of a joined tool call may be in another root: it stands alone again.
        relink(this.core);
      })
      .immediate();
    this.onChange('remove', root.path);
    if (removed || sessionIds.length) this.core.emit({ event: 'onDidIndex', payload: { sessionIds, added: 0, changed: 0, removed } });
    return { ok: true };
  }

  /**
   * Make the default roots exactly `paths` (registered read-only and auto; a path already under
   * another root is left to it), or none (`null`: the user turned defaults off). A default root
   * the user also added explicitly is theirs and stays. Returns the default roots now registered.
   */
  syncAuto(paths: string[] | null): RootInfo[] {
    const wanted = new Set<string>();
    for (const p of paths ?? []) {
      // The user's own root at that path stays as the user made it.
      if (this.rootFor(p)?.auto === false) continue;
      try {
        const r = this.add(p, { readOnly: true, auto: true });
        if (r.auto) wanted.add(r.id);
      } catch (err) {
        if (!(err instanceof IndexError)) throw err;
        this.core.warn(`default root ${p} not opened: ${err.message}`);
      }
    }
    for (const r of this.rows()) if (r.auto && !wanted.has(r.id)) this.remove(r.id);
    return this.list().filter((r) => r.auto);
  }

  /** The registered root that holds `p` (a path inside a folder root, or a file root itself), if any. */
  rootFor(p: string): RootInfo | undefined {
    if (isS3Path(p)) {
      const url = canonicalS3Root(p);
      const hit = this.rows()
        .filter((r) => isS3Path(r.path) && (url + '/').startsWith(r.path + '/'))
        .sort((a, b) => b.path.length - a.path.length)[0];
      return hit ? this.info(hit) : undefined;
    }
    let real: string;
    try {
      real = fs.realpathSync.native(path.resolve(p));
    } catch {
      real = path.resolve(p);
    }
    const hit = this.rows()
      .filter((r) => (r.kind === 'file' ? r.path === real : isInsidePath(r.path, real)))
      .sort((a, b) => b.path.length - a.path.length)[0];
    return hit ? this.info(hit) : undefined;
  }

  list(): RootInfo[] {
    return this.rows().map((r) => this.info(r));
  }

  rows(): RootRow[] {
    return this.core.q(`SELECT ${ROOT_COLUMNS} FROM roots ORDER BY added_at, path`).all() as RootRow[];
  }

  row(id: string): RootRow {
    const r = this.core.q(`SELECT ${ROOT_COLUMNS} FROM roots WHERE id = ?`).get(id) as RootRow | undefined;
    if (!r) throw new IndexError('NOT_FOUND', `no root with id ${JSON.stringify(id)}`);
    return r;
  }

  private info(r: RootRow): RootInfo {
    const c = this.core
      .q('SELECT (SELECT count(*) FROM sessions WHERE root_id = ?) AS s, (SELECT count(*) FROM payloads WHERE root_id = ? AND covered = 0) AS p, (SELECT count(*) FROM payloads WHERE root_id = ? AND covered = 1) AS j')
      .get(r.id, r.id, r.id) as { s: number; p: number; j: number };
    return {
      id: r.id,
      path: r.path,
      kind: r.kind,
      addedAt: r.added_at,
      sessionCount: c.s,
      payloadCount: c.p,
      ...(c.j ? { joinedCount: c.j } : {}),
      readOnly: r.read_only === 1,
      auto: r.auto === 1,
    };
  }
}
