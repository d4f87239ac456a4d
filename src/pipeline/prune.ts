import fs from 'node:fs';
import path from 'node:path';
import { ASSETS_DIR, LONG_RESPONSES_DIR, classifyLongResponseFile, parseStem } from './layout.js';

/**
 * Retention: remove spills older than a cutoff, from a local session folder (here) or a bucket
 * (store/s3/prune.ts), with the same rules.
 *
 * - A spill's age is the UTC time its stem starts with (the guard's clock when it spilled); a
 *   stem without one is dated by its newest file.
 * - Delete order, per spill: the sidecar FIRST (it is the commit marker), then the linked form
 *   and the payload. A prune killed midway can leave a payload without its sidecar, never a
 *   sidecar without its payload; such a payload is an incomplete spill to the index, and the next
 *   prune removes it like any old spill (an old stem with no sidecar is pruned whole).
 * - Assets are shared by content within a session: an asset goes only when no remaining sidecar
 *   of that session names it, and only when it is itself older than the cutoff (a young one may
 *   belong to a spill being written, whose sidecar does not exist yet).
 */

/** `30d`, `12h`, `90m`, `45s`, `2w` → milliseconds; null when it is not a duration. */
export function parseDuration(s: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$/i.exec(s);
  if (!m) return null;
  const n = Number(m[1]);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 }[m[2]!.toLowerCase() as 'ms'];
  const v = n * unit;
  return Number.isFinite(v) && v > 0 ? Math.round(v) : null;
}

export interface PruneReport {
  /** Spills removed (or, in a dry run, that would be). */
  spills: number;
  /** Of those, stems that had no sidecar (left by a writer that died, or by a killed prune). */
  orphans: number;
  assets: number;
  /** Journal entries removed (buckets). */
  journal: number;
  /** Objects or files deleted in all. */
  deleted: number;
  bytes: number;
  /** Index unit keys of the removed spills (`<session>/long_responses/<stem>`), for the index to drop. */
  units: string[];
  kept: number;
  warnings: string[];
}

export const emptyReport = (): PruneReport => ({ spills: 0, orphans: 0, assets: 0, journal: 0, deleted: 0, bytes: 0, units: [], kept: 0, warnings: [] });

/** One stem's files, grouped from a listing of `long_responses/`. */
export interface StemFiles {
  stem: string;
  sidecar?: string;
  /** Payload and linked form. */
  others: string[];
  /** Newest modification time of its files. */
  mtimeMs: number;
  bytes: number;
}

/** Group the names of `long_responses/` by stem (dot-names and folders are not spills). */
export function groupStems(entries: Iterable<{ name: string; mtimeMs: number; size: number }>): Map<string, StemFiles> {
  const out = new Map<string, StemFiles>();
  for (const e of entries) {
    const c = classifyLongResponseFile(e.name);
    if (!c) continue;
    let g = out.get(c.stem);
    if (!g) out.set(c.stem, (g = { stem: c.stem, others: [], mtimeMs: 0, bytes: 0 }));
    if (c.kind === 'meta') g.sidecar = e.name;
    else g.others.push(e.name);
    g.mtimeMs = Math.max(g.mtimeMs, e.mtimeMs);
    g.bytes += e.size;
  }
  return out;
}

/** When a stem was spilled: its UTC time, else its newest file's time. */
export function stemTime(g: StemFiles): number {
  return parseStem(g.stem)?.time.getTime() ?? g.mtimeMs;
}

/** Asset file names a sidecar names (its `assets[].relPath`). */
export function assetNames(sidecar: Buffer | string): string[] {
  try {
    const j = JSON.parse(typeof sidecar === 'string' ? sidecar : sidecar.toString('utf8')) as { assets?: Array<{ relPath?: unknown; path?: unknown }> };
    const out: string[] = [];
    for (const a of Array.isArray(j.assets) ? j.assets : []) {
      const p = typeof a?.relPath === 'string' ? a.relPath : typeof a?.path === 'string' ? a.path : '';
      const name = p.split(/[\\/]/).pop();
      if (name) out.push(name);
    }
    return out;
  } catch {
    return [];
  }
}

export interface PruneOptions {
  olderThanMs: number;
  dryRun?: boolean;
  now?: number;
}

/** Prune one local session folder (the one holding `long_responses/`). */
export function pruneLocalSession(sessionDir: string, o: PruneOptions): PruneReport {
  const r = emptyReport();
  const cutoff = (o.now ?? Date.now()) - o.olderThanMs;
  const lr = path.join(sessionDir, LONG_RESPONSES_DIR);
  let names: fs.Dirent[];
  try {
    if (!fs.lstatSync(lr).isDirectory()) throw new Error('not a folder');
    names = fs.readdirSync(lr, { withFileTypes: true });
  } catch (err) {
    r.warnings.push(`${lr}: ${(err as Error).message}`);
    return r;
  }
  const entries: Array<{ name: string; mtimeMs: number; size: number }> = [];
  for (const d of names) {
    // Only regular files are spills: a symlink or folder under a spill's name is left alone.
    if (!d.isFile()) continue;
    try {
      const st = fs.lstatSync(path.join(lr, d.name));
      entries.push({ name: d.name, mtimeMs: st.mtimeMs, size: st.size });
    } catch {
      /* gone meanwhile */
    }
  }
  const stems = groupStems(entries);
  const unlink = (p: string): boolean => {
    if (o.dryRun) return true;
    try {
      fs.unlinkSync(p);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
  };
  for (const g of stems.values()) {
    if (stemTime(g) >= cutoff) {
      r.kept++;
      continue;
    }
    // The sidecar first: from here on the spill is incomplete, never a sidecar without its payload.
    if (g.sidecar && unlink(path.join(lr, g.sidecar))) r.deleted++;
    for (const f of g.others) if (unlink(path.join(lr, f))) r.deleted++;
    r.spills++;
    if (!g.sidecar) r.orphans++;
    r.bytes += g.bytes;
    r.units.push(path.join(lr, g.stem));
  }
  // Assets no remaining sidecar names, and old enough not to belong to a spill being written.
  const assetsDir = path.join(lr, ASSETS_DIR);
  let assets: fs.Dirent[] = [];
  try {
    if (fs.lstatSync(assetsDir).isDirectory()) assets = fs.readdirSync(assetsDir, { withFileTypes: true });
  } catch {
    /* no assets */
  }
  if (assets.length) {
    const referenced = new Set<string>();
    for (const g of stems.values()) {
      if (!g.sidecar || stemTime(g) < cutoff) continue;
      try {
        for (const n of assetNames(fs.readFileSync(path.join(lr, g.sidecar)))) referenced.add(n);
      } catch {
        /* unreadable sidecar: it names nothing we could keep for it */
      }
    }
    for (const d of assets) {
      if (!d.isFile() || d.name.startsWith('.') || referenced.has(d.name)) continue;
      const p = path.join(assetsDir, d.name);
      try {
        const st = fs.lstatSync(p);
        if (st.mtimeMs >= cutoff) continue;
        if (unlink(p)) {
          r.assets++;
          r.deleted++;
          r.bytes += st.size;
        }
      } catch {
        /* gone meanwhile */
      }
    }
  }
  return r;
}
