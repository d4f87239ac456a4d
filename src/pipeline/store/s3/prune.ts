import path from 'node:path';
import { ASSETS_DIR, LONG_RESPONSES_DIR } from '../../layout.js';
import { assetNames, emptyReport, groupStems, stemTime, type PruneOptions, type PruneReport, type StemFiles } from '../../prune.js';
import type { CallOptions, ObjectInfo, S3Objects } from './client.js';
import { JOURNAL_DIR, journalPrefix, parseJournalKey, parsePrunedKey, writePruned } from './journal.js';
import { CLAIMS_DIR, formatS3Url, joinKey, type S3Location } from './location.js';

/**
 * `spillway prune --store s3://…`: the rules of ../../prune.ts over a bucket prefix.
 *
 * | step | requests                                                                          |
 * | ---- | --------------------------------------------------------------------------------- |
 * | 1    | ListObjectsV2 of the prefix, the journal skipped (1 per 1,000 keys)                 |
 * | 2    | per PRUNE_GROUP spills: one DeleteObjects of their sidecars, THEN their payloads, linked forms and claims, then one tombstone naming them (journal.ts) |
 * | 3    | ListObjectsV2 of the journal; DeleteObjects of the entries (and tombstones) older than the cutoff or naming a pruned spill |
 * | 4    | sessions with assets: a GET of each remaining sidecar, DeleteObjects of old assets none names |
 *
 * A prune killed anywhere leaves at worst payloads without sidecars (incomplete spills, which the
 * next prune removes), assets nothing names, or journal entries of spills that are gone (a
 * reader skips an entry whose sidecar is missing): never a sidecar without its payload.
 */

/** Spills whose sidecars go in one DeleteObjects (S3's maximum keys per request). */
export const PRUNE_GROUP = 1_000;

interface Session {
  name: string;
  stems: Map<string, StemFiles>;
  claims: ObjectInfo[];
  assets: ObjectInfo[];
}

export async function pruneBucket(objects: S3Objects, loc: S3Location, o: PruneOptions & { call?: CallOptions; onProgress?: (done: number, total: number) => void }): Promise<PruneReport> {
  const r = emptyReport();
  const call = o.call ?? {};
  const cutoff = (o.now ?? Date.now()) - o.olderThanMs;
  const base = loc.prefix ? loc.prefix + '/' : '';
  const sessions = new Map<string, Session>();
  const lr = new Map<string, Array<{ name: string; mtimeMs: number; size: number }>>();
  const sessionOf = (name: string): Session => {
    let s = sessions.get(name);
    if (!s) sessions.set(name, (s = { name, stems: new Map(), claims: [], assets: [] }));
    return s;
  };
  // 1. The listing, without the journal (it has its own pass, step 3).
  const journalFrom = `${base}${JOURNAL_DIR}/`;
  for (const startAfter of [undefined, `${base}${JOURNAL_DIR}0`]) {
    let stop = false;
    for await (const page of objects.list(base, { ...call, ...(startAfter ? { startAfter } : {}) })) {
      for (const obj of page) {
        if (!startAfter && obj.key >= journalFrom) {
          stop = true;
          break;
        }
        const segs = obj.key.slice(base.length).split('/');
        if (segs.length < 3 || segs[1] !== LONG_RESPONSES_DIR || segs.some((x) => x === '' || x === '.' || x === '..')) continue;
        const s = sessionOf(segs[0]!);
        if (segs.length === 3) {
          const list = lr.get(s.name) ?? [];
          list.push({ name: segs[2]!, mtimeMs: obj.lastModifiedMs, size: obj.size });
          lr.set(s.name, list);
        } else if (segs.length === 4 && segs[2] === CLAIMS_DIR) s.claims.push(obj);
        else if (segs.length === 4 && segs[2] === ASSETS_DIR) s.assets.push(obj);
      }
      if (stop) break;
    }
    if (!stop) break;
  }
  for (const [name, list] of lr) sessionOf(name).stems = groupStems(list);

  // 2. Old spills: sidecars first, a group at a time, then the rest of each group's keys.
  const doomed: Array<{ session: Session; g: StemFiles }> = [];
  const prunedStems = new Set<string>();
  for (const s of sessions.values()) {
    for (const g of s.stems.values()) {
      if (stemTime(g) < cutoff) {
        doomed.push({ session: s, g });
        prunedStems.add(`${s.name}/${g.stem}`);
      } else r.kept++;
    }
  }
  const keyOf = (s: Session, name: string) => joinKey(loc.prefix, s.name, LONG_RESPONSES_DIR, name);
  const claimsOf = new Map<string, string>();
  for (const s of sessions.values()) {
    for (const c of s.claims) {
      const stem = c.key.slice(c.key.lastIndexOf('/') + 1);
      // Claims of old spills go with them; a claim with no files left and old enough is a writer that died.
      if (prunedStems.has(`${s.name}/${stem}`) || (!s.stems.has(stem) && c.lastModifiedMs < cutoff)) claimsOf.set(c.key, `${s.name}/${stem}`);
    }
  }
  const del = async (keys: string[]) => {
    if (!keys.length) return;
    if (!o.dryRun) await objects.deleteKeys(keys, call);
    r.deleted += keys.length;
  };
  for (let i = 0; i < doomed.length; i += PRUNE_GROUP) {
    const group = doomed.slice(i, i + PRUNE_GROUP);
    await del(group.filter((d) => d.g.sidecar).map((d) => keyOf(d.session, d.g.sidecar!)));
    const rest: string[] = [];
    for (const d of group) {
      for (const f of d.g.others) rest.push(keyOf(d.session, f));
      const claim = joinKey(loc.prefix, d.session.name, LONG_RESPONSES_DIR, CLAIMS_DIR, d.g.stem);
      if (claimsOf.delete(claim)) rest.push(claim);
      r.spills++;
      if (!d.g.sidecar) r.orphans++;
      r.bytes += d.g.bytes;
      // The index's key for the unit: its paths are `path.join`ed, which turns `s3://` into `s3:/`.
      r.units.push(path.join(formatS3Url(loc, joinKey(loc.prefix, d.session.name, LONG_RESPONSES_DIR)), d.g.stem));
    }
    await del(rest);
    // After the deletes: a reader that sees the tombstone finds the spills gone, never still there.
    if (!o.dryRun && !(await writePruned(objects, loc, group.map((d) => ({ session: d.session.name, stem: d.g.stem })), call))) {
      r.warnings.push(`${formatS3Url(loc)}: the journal tombstone of ${group.length} pruned spill(s) could not be written; other indexes see them gone at their next full listing`);
    }
    o.onProgress?.(Math.min(i + PRUNE_GROUP, doomed.length), doomed.length);
  }
  // Claims of writers that died before writing anything.
  await del([...claimsOf.keys()]);

  // 3. Journal entries of what went, and every entry older than the cutoff (readers start at the cursor).
  const stale: string[] = [];
  for await (const page of objects.list(journalPrefix(loc), call)) {
    for (const obj of page) {
      const t = parsePrunedKey(loc.prefix, obj.key);
      if (t) {
        if (t.timeMs < cutoff) stale.push(obj.key);
        continue;
      }
      const j = parseJournalKey(loc.prefix, obj.key);
      if (!j) continue;
      if (j.timeMs < cutoff || prunedStems.has(`${j.session}/${j.stem}`)) stale.push(obj.key);
    }
  }
  await del(stale);
  r.journal = stale.length;

  // 4. Assets no remaining sidecar of their session names, and old enough not to be a spill in progress.
  for (const s of sessions.values()) {
    const old = s.assets.filter((a) => a.lastModifiedMs < cutoff);
    if (!old.length) continue;
    const referenced = new Set<string>();
    for (const g of s.stems.values()) {
      if (!g.sidecar || prunedStems.has(`${s.name}/${g.stem}`)) continue;
      const b = await objects.get(keyOf(s, g.sidecar), call);
      if (b) for (const n of assetNames(b)) referenced.add(n);
    }
    const gone = old.filter((a) => !referenced.has(a.key.slice(a.key.lastIndexOf('/') + 1)));
    await del(gone.map((a) => a.key));
    r.assets += gone.length;
    for (const a of gone) r.bytes += a.size;
  }
  return r;
}
