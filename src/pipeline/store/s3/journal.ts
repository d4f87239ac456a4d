import crypto from 'node:crypto';
import type { CallOptions, ObjectInfo, S3Objects } from './client.js';
import { joinKey, type S3Location } from './location.js';

/**
 * The journal: one small key per committed spill, whose name sorts by the writer's clock, so a
 * reader can ask "what is new since I last looked" with one ListObjectsV2 `StartAfter` instead of
 * listing the bucket. No SDK import here.
 *
 * ```
 * <prefix>/.journal/<UTC time, 20261201T200908123Z>/<session>/<stem>
 * ```
 *
 * - Written after the sidecar (the commit marker), create-only, by the spill's own writer: two
 *   writers never coordinate (their keys differ by session and stem, which the claims keep
 *   distinct). Readers skip dot-names, so nothing else sees these keys as sessions.
 * - The body says which files the spill has (size and ETag each, as a listing gives them) and
 *   carries the sidecar itself when it is small: noticing a new spill is then one LIST page for
 *   up to 1,000 of them plus one GET each.
 * - A journal entry that was never written (the store failed right after the sidecar, a writer
 *   older than the journal) costs latency only: the reconciling full listing finds the spill.
 * - Writers' clocks disagree: a reader starts each listing {@link JOURNAL_OVERLAP_MS} before the
 *   newest time it has seen and skips the keys it already read.
 * - `spillway prune` writes a tombstone per group of up to 1,000 pruned spills, after their keys
 *   are gone: `<prefix>/.journal/<UTC time>/.pruned/<random id>`, whose body names them. A reader
 *   that polls drops them from its index without a full listing; a reader older than tombstones
 *   skips the dot-name. A tombstone never written costs latency only: the full listing sees the
 *   spills gone.
 */

export const JOURNAL_DIR = '.journal';
/**
 * How far back each journal listing starts before the newest entry seen: covers writers whose
 * clocks are behind the newest writer's (tested at ±2 min), plus a spill's own write time.
 */
export const JOURNAL_OVERLAP_MS = 5 * 60_000;
/** Sidecars up to this size travel inside their journal entry (the guard's are a few KB). */
export const JOURNAL_SIDECAR_MAX_BYTES = 64 * 1024;
/** Deadline of the journal write: the spill is already committed, and a missing entry costs only latency. */
export const JOURNAL_WRITE_TIMEOUT_MS = 2_000;

export interface JournalFile {
  size: number;
  /** Unquoted; the MD5 of the bytes for a single PUT. */
  etag: string;
}

export interface JournalEntry {
  v: 1;
  session: string;
  stem: string;
  /** The writer's clock, ISO. */
  at: string;
  /** Files of the stem inside `long_responses/`, by name. */
  files: Record<string, JournalFile>;
  /** The sidecar's text, when it is at most JOURNAL_SIDECAR_MAX_BYTES. */
  sidecar?: string;
}

/** `20261201T200908123Z`: fixed width, so keys sort by time. */
export function journalTime(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:.]/g, '');
}

const TIME_RE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z$/;

export function parseJournalTime(s: string): number | null {
  const m = TIME_RE.exec(s);
  if (!m) return null;
  const t = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!, +m[7]!);
  return Number.isFinite(t) ? t : null;
}

/** `<prefix>/.journal/` */
export function journalPrefix(loc: S3Location | string): string {
  const prefix = typeof loc === 'string' ? loc : loc.prefix;
  return joinKey(prefix, JOURNAL_DIR) + '/';
}

export function journalKey(loc: S3Location, timeMs: number, session: string, stem: string): string {
  return `${journalPrefix(loc)}${journalTime(timeMs)}/${session}/${stem}`;
}

/** The listing position just before every entry at or after `timeMs`. */
export function journalFloor(loc: S3Location | string, timeMs: number): string {
  return `${journalPrefix(loc)}${journalTime(Math.max(0, timeMs))}`;
}

/** A journal key's time, session and stem; null for a key that is not one. */
export function parseJournalKey(prefix: string, key: string): { timeMs: number; session: string; stem: string } | null {
  const base = journalPrefix(prefix);
  if (!key.startsWith(base)) return null;
  const segs = key.slice(base.length).split('/');
  if (segs.length !== 3 || !segs[1] || !segs[2] || segs[1].startsWith('.') || segs[1] === '..' || segs[2].startsWith('.')) return null;
  const timeMs = parseJournalTime(segs[0]!);
  return timeMs === null ? null : { timeMs, session: segs[1], stem: segs[2] };
}

/**
 * Write the journal entry of a committed spill. Never throws: the spill is committed, and an
 * entry that failed costs only latency (the reconciling listing finds the spill).
 */
export async function writeJournal(
  objects: S3Objects,
  loc: S3Location,
  entry: Omit<JournalEntry, 'v' | 'at'>,
  o: CallOptions & { now?: number } = {},
): Promise<boolean> {
  const now = o.now ?? Date.now();
  const body: JournalEntry = { v: 1, session: entry.session, stem: entry.stem, at: new Date(now).toISOString(), files: entry.files };
  if (entry.sidecar !== undefined && Buffer.byteLength(entry.sidecar) <= JOURNAL_SIDECAR_MAX_BYTES) body.sidecar = entry.sidecar;
  try {
    const r = await objects.putIfAbsent(journalKey(loc, now, entry.session, entry.stem), JSON.stringify(body), {
      ...(o.signal ? { signal: o.signal } : {}),
      timeoutMs: Math.min(o.timeoutMs ?? JOURNAL_WRITE_TIMEOUT_MS, JOURNAL_WRITE_TIMEOUT_MS),
      contentType: 'application/json',
    });
    return r.created;
  } catch {
    return false;
  }
}

/** A journal entry's body, checked; null when it is not one. */
export function parseJournalEntry(bytes: Buffer): JournalEntry | null {
  let j: unknown;
  try {
    j = JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
  const e = j as JournalEntry;
  if (!e || e.v !== 1 || typeof e.session !== 'string' || typeof e.stem !== 'string' || typeof e.files !== 'object' || !e.files) return null;
  for (const [name, f] of Object.entries(e.files)) {
    if (name.includes('/') || name.startsWith('.') || typeof f?.size !== 'number' || typeof f?.etag !== 'string') return null;
  }
  if (e.sidecar !== undefined && typeof e.sidecar !== 'string') return null;
  return e;
}

/** The sidecar a journal entry carries, only when it is byte for byte the object its ETag names. */
export function carriedSidecar(e: JournalEntry, sidecarName: string): Buffer | undefined {
  if (e.sidecar === undefined) return undefined;
  const f = e.files[sidecarName];
  const b = Buffer.from(e.sidecar, 'utf8');
  if (!f || f.size !== b.length || crypto.createHash('md5').update(b).digest('hex') !== f.etag) return undefined;
  return b;
}

/** Journal keys from `startAfter` on, page by page. */
export async function* listJournal(objects: S3Objects, prefix: string, startAfter: string, o: CallOptions = {}): AsyncGenerator<ObjectInfo[]> {
  yield* objects.list(journalPrefix(prefix), { ...o, startAfter });
}

/** The folder, inside a journal time, of prune's tombstones (a dot-name: never a session). */
export const PRUNED_DIR = '.pruned';

export interface PrunedEntry {
  v: 1;
  /** The prune's clock, ISO. */
  at: string;
  /** Spills whose payload, sidecar and journal entry are gone. */
  pruned: Array<{ session: string; stem: string }>;
}

/** A tombstone's key (time and id; two prunes never coordinate: the ids differ). */
export function prunedKey(loc: S3Location | string, timeMs: number, id: string): string {
  return `${journalPrefix(loc)}${journalTime(timeMs)}/${PRUNED_DIR}/${id}`;
}

/** A tombstone key's time; null for a key that is not one. */
export function parsePrunedKey(prefix: string, key: string): { timeMs: number } | null {
  const base = journalPrefix(prefix);
  if (!key.startsWith(base)) return null;
  const segs = key.slice(base.length).split('/');
  if (segs.length !== 3 || segs[1] !== PRUNED_DIR || !segs[2] || segs[2].startsWith('.')) return null;
  const timeMs = parseJournalTime(segs[0]!);
  return timeMs === null ? null : { timeMs };
}

const plainName = (s: unknown): s is string => typeof s === 'string' && s !== '' && !s.startsWith('.') && !s.includes('/') && !s.includes('\\');

/** A tombstone's body, checked (names that could not be a session or stem are left out); null when it is not one. */
export function parsePrunedEntry(bytes: Buffer): PrunedEntry | null {
  let j: unknown;
  try {
    j = JSON.parse(bytes.toString('utf8'));
  } catch {
    return null;
  }
  const e = j as PrunedEntry;
  if (!e || e.v !== 1 || !Array.isArray(e.pruned)) return null;
  return { v: 1, at: typeof e.at === 'string' ? e.at : '', pruned: e.pruned.filter((p) => plainName(p?.session) && plainName(p?.stem)).map((p) => ({ session: p.session, stem: p.stem })) };
}

/** Write one tombstone for spills already deleted. False when it could not be written (the next full listing sees them gone). */
export async function writePruned(objects: S3Objects, loc: S3Location, pruned: PrunedEntry['pruned'], o: CallOptions & { now?: number } = {}): Promise<boolean> {
  if (!pruned.length) return true;
  const now = o.now ?? Date.now();
  const body: PrunedEntry = { v: 1, at: new Date(now).toISOString(), pruned };
  try {
    const r = await objects.putIfAbsent(prunedKey(loc, now, crypto.randomBytes(8).toString('hex')), JSON.stringify(body), {
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
      contentType: 'application/json',
    });
    return r.created;
  } catch {
    return false;
  }
}
