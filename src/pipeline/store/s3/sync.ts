import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { PayloadMeta } from '../../types.js';
import { ASSETS_DIR, LONG_RESPONSES_DIR, META_SUFFIX, classifyLongResponseFile, confine, makeStem, parseStem, sessionPaths } from '../../layout.js';
import { appDataDir } from '../../config.js';
import { readMeta } from '../../restore.js';
import { S3StoreError } from './errors.js';
import { formatS3Url, parseS3Url, sessionNameFor } from './location.js';
import type { S3SessionWriter } from './writer.js';

/**
 * `spillway sync`: upload spills that fell back to a local folder while the store was down (or
 * any local session), idempotently, never overwriting a different object.
 *
 * When the store fails mid-spill, the spill is saved locally and a record is queued in
 * `<app data>/pending-sync/`. Sync reads each record (or every sidecar of a session it is given),
 * claims the stem in the bucket with a token derived from the spill itself (session, stem,
 * sha256, time) or the token the failed spill already claimed with, and uploads assets, payload
 * and last the sidecar. Running it again finds its own claims and completes or skips them. A
 * stem taken by another writer moves the upload to the next free sequence number.
 *
 * The local files stay where they are: the model was told their path and may still read them.
 */

export const PENDING_SYNC_DIR = 'pending-sync';
/** Sequence numbers tried after the local stem when its name is taken in the bucket. */
export const MAX_SYNC_NAME_ATTEMPTS = 10_000;

export interface PendingRecord {
  v: 1;
  /** `s3://bucket/prefix` the spill was meant for. */
  store: string;
  /** Absolute local session folder the spill fell back to. */
  session: string;
  /** Local stem (its sidecar is `<session>/long_responses/<stem>.meta.json`). */
  stem: string;
  /** Session name in the bucket. */
  remoteSession: string;
  /** The stem claimed in the bucket before the store failed, and the claim's token. */
  remoteStem?: string;
  token?: string;
  /** Why it fell back (credential-free). */
  reason: string;
  at: string;
}

export function pendingDir(env: NodeJS.ProcessEnv): string {
  return path.join(appDataDir(env), PENDING_SYNC_DIR);
}

function recordName(r: Pick<PendingRecord, 'store' | 'session' | 'stem'>): string {
  return crypto.createHash('sha256').update(`${r.store}\n${r.session}\n${r.stem}`).digest('hex').slice(0, 32) + '.json';
}

/** Queue a fallen-back spill for `spillway sync` (atomic: temp file, then rename). */
export async function queuePending(r: PendingRecord, env: NodeJS.ProcessEnv): Promise<string> {
  const dir = pendingDir(env);
  // The record names a session and its spill: private, like the spills, whoever creates app data first.
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, recordName(r));
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`);
  await fsp.writeFile(tmp, JSON.stringify(r, null, 2) + '\n', { mode: 0o600 });
  await fsp.rename(tmp, file);
  return file;
}

export async function listPending(env: NodeJS.ProcessEnv): Promise<Array<{ file: string; record: PendingRecord | null; error?: string }>> {
  const dir = pendingDir(env);
  let names: string[];
  try {
    names = (await fsp.readdir(dir)).filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort();
  } catch {
    return [];
  }
  const out: Array<{ file: string; record: PendingRecord | null; error?: string }> = [];
  for (const n of names) {
    const file = path.join(dir, n);
    try {
      const r = JSON.parse(await fsp.readFile(file, 'utf8')) as PendingRecord;
      if (r?.v !== 1 || typeof r.store !== 'string' || typeof r.session !== 'string' || typeof r.stem !== 'string') throw new Error('not a pending-sync record');
      parseS3Url(r.store);
      out.push({ file, record: r });
    } catch (err) {
      out.push({ file, record: null, error: (err as Error).message });
    }
  }
  return out;
}

/**
 * Drop the queue records of spills that `spillway prune` removed locally (`units`: their
 * `<session>/long_responses/<stem>` paths), and of spills queued for `store` that are older than
 * `cutoffMs` (uploading them would put back what the bucket's retention lets go). Without this,
 * `sync` would report a pruned spill incomplete on every run, for ever. The local files are not
 * touched. Returns how many records went (or would go, in a dry run).
 */
export async function forgetPending(o: { units?: Iterable<string>; store?: string; cutoffMs?: number; dryRun?: boolean; env: NodeJS.ProcessEnv }): Promise<number> {
  const units = new Set(o.units ?? []);
  const store = o.store ? formatS3Url(parseS3Url(o.store)) : undefined;
  let n = 0;
  for (const { file, record } of await listPending(o.env)) {
    if (!record) continue;
    const local = units.has(path.join(sessionPaths(record.session).longResponses, record.stem));
    const t = parseStem(record.stem)?.time.getTime();
    const expired = store !== undefined && o.cutoffMs !== undefined && t !== undefined && t < o.cutoffMs && formatS3Url(parseS3Url(record.store)) === store;
    if (!local && !expired) continue;
    if (!o.dryRun) {
      try {
        await fsp.unlink(file);
      } catch {
        continue; // gone meanwhile (a sync uploaded it)
      }
    }
    n++;
  }
  return n;
}

/** `pending`: a dry run's "would upload". */
export type SyncStatus = 'uploaded' | 'renamed' | 'already' | 'incomplete' | 'failed' | 'pending';

export interface SyncOutcome {
  /** Local sidecar (or stem) this outcome is about. */
  local: string;
  status: SyncStatus;
  /** Where the sidecar is in the bucket, when it is there. */
  url?: string;
  stem?: string;
  error?: string;
}

/** A token that is the same for the same spill on every run, and different for any other spill. */
export function syncToken(remoteSession: string, meta: Pick<PayloadMeta, 'id' | 'sha256' | 'createdAt'>): string {
  return 'sync:' + crypto.createHash('sha256').update(`${remoteSession}\n${meta.id}\n${meta.sha256}\n${meta.createdAt}`).digest('hex').slice(0, 40);
}

function* stemsFrom(stem: string, first?: string): Generator<string> {
  if (first) yield first;
  if (stem !== first) yield stem;
  const p = parseStem(stem);
  if (!p) return;
  for (let i = 1; i <= MAX_SYNC_NAME_ATTEMPTS; i++) {
    const s = makeStem({ ...p, seq: p.seq + i });
    if (s !== first) yield s;
  }
}

/** A file named by a local sidecar, confined to the local session (a hostile sidecar cannot name /etc/passwd). */
function localFile(base: string, rel: string): string {
  const p = confine(base, rel);
  const real = fs.realpathSync(p);
  if (!real.startsWith(fs.realpathSync(base) + path.sep)) throw new Error(`${rel} resolves outside ${base}`);
  return p;
}

/** Rename a stem inside a file name (`<old stem>.txt` → `<new stem>.txt`). */
const renamed = (file: string, from: string, to: string) => (file.startsWith(from) ? to + file.slice(from.length) : file);

/**
 * Upload one local spill (its sidecar `metaPath`) through `writer`. Returns what happened; throws
 * only S3StoreError UNAVAILABLE/DENIED (the store is still not usable: stop and retry later).
 */
export async function syncSpill(
  writer: S3SessionWriter,
  metaPath: string,
  o: { remoteStem?: string; token?: string; signal?: AbortSignal } = {},
): Promise<SyncOutcome> {
  const sp = sessionPaths(path.dirname(path.dirname(metaPath)));
  let meta: PayloadMeta;
  try {
    meta = await readMeta(metaPath);
  } catch (err) {
    return { local: metaPath, status: 'incomplete', error: (err as Error).message };
  }
  const localStem = path.basename(metaPath).slice(0, -META_SUFFIX.length);
  const files = new Set([meta.payloadFile, ...(meta.linkedFile ? [meta.linkedFile] : [])]);
  for (const f of files) {
    if (path.basename(f) !== f || classifyLongResponseFile(f)?.stem !== localStem) {
      return { local: metaPath, status: 'failed', error: `the sidecar names ${JSON.stringify(f)}, not a file of ${localStem}` };
    }
    if (!fs.existsSync(path.join(sp.longResponses, f))) return { local: metaPath, status: 'incomplete', error: `${f} is missing` };
  }
  const token = o.token ?? syncToken(writer.session, meta);
  const call = { signal: o.signal };
  let stem: string | undefined;
  let resumed = false;
  for (const candidate of stemsFrom(localStem, o.remoteStem)) {
    const c = await writer.claim(candidate, candidate === o.remoteStem && o.token ? o.token : token, call);
    if (c) {
      stem = candidate;
      resumed = c === 'resumed';
      break;
    }
  }
  if (!stem) return { local: metaPath, status: 'failed', error: 'no free name in the bucket' };
  const metaRel = stem + META_SUFFIX;
  if (resumed && (await writer.objects.head(writer.keys.file(metaRel), call))) {
    return { local: metaPath, status: 'already', url: writer.url(metaRel), stem };
  }

  const assets = [];
  for (const a of meta.assets) {
    const rel = a.relPath.split('/');
    if (rel.length !== 3 || rel[0] !== LONG_RESPONSES_DIR || rel[1] !== ASSETS_DIR) {
      return { local: metaPath, status: 'failed', error: `asset path ${JSON.stringify(a.relPath)} is not in ${LONG_RESPONSES_DIR}/${ASSETS_DIR}/` };
    }
    const bytes = await fsp.readFile(localFile(sp.session, a.relPath));
    if (crypto.createHash('sha256').update(bytes).digest('hex') !== a.sha256) {
      return { local: metaPath, status: 'failed', error: `asset ${a.relPath} is damaged (sha256 mismatch): not uploaded` };
    }
    await writer.putAsset(rel[2]!, bytes, a.sha256, { ...call, contentType: a.mimeType });
    assets.push({ ...a, path: writer.url(`${ASSETS_DIR}/${rel[2]}`) });
  }
  for (const f of files) {
    await writer.putFile(renamed(f, localStem, stem), fs.createReadStream(localFile(sp.longResponses, f), { highWaterMark: 1024 * 1024 }), {
      ...call,
      resumed,
    });
  }
  const remoteMeta: PayloadMeta = {
    ...meta,
    id: stem,
    payloadFile: renamed(meta.payloadFile, localStem, stem),
    ...(meta.linkedFile ? { linkedFile: renamed(meta.linkedFile, localStem, stem) } : {}),
    assets,
    errors: [
      ...(meta.errors ?? []),
      `saved locally to ${path.join(sp.longResponses, meta.payloadFile)} while ${formatS3Url(writer.location)} was unavailable; uploaded by spillway sync`,
    ],
  };
  await writer.putSidecar(metaRel, JSON.stringify(remoteMeta, null, 2) + '\n', { ...call, resumed });
  return { local: metaPath, status: stem === localStem ? 'uploaded' : 'renamed', url: writer.url(metaRel), stem };
}

/** Every sidecar of a local session, oldest first. */
export async function localSidecars(sessionDir: string): Promise<string[]> {
  const lr = sessionPaths(sessionDir).longResponses;
  let names: string[];
  try {
    names = await fsp.readdir(lr);
  } catch {
    return [];
  }
  return names
    .filter((n) => classifyLongResponseFile(n)?.kind === 'meta')
    .sort()
    .map((n) => path.join(lr, n));
}

export interface SyncTarget {
  /** The writer for one session of one store (opened lazily, reused). */
  writer(store: string, remoteSession: string): Promise<S3SessionWriter>;
}

export interface SyncReport {
  outcomes: SyncOutcome[];
  /** Set when the store was still unavailable: the rest stays queued for the next run. */
  stoppedBy?: string;
}

/**
 * Upload every queued fallback. A record is removed only once its sidecar is in the bucket; a
 * store that is still down stops the run (what is left stays queued).
 */
export async function syncPending(target: SyncTarget, o: { env: NodeJS.ProcessEnv; signal?: AbortSignal; store?: string; dryRun?: boolean }): Promise<SyncReport> {
  const outcomes: SyncOutcome[] = [];
  for (const { file, record, error } of await listPending(o.env)) {
    if (!record) {
      outcomes.push({ local: file, status: 'failed', error: `unreadable record: ${error}` });
      continue;
    }
    if (o.store && formatS3Url(parseS3Url(o.store)) !== formatS3Url(parseS3Url(record.store))) continue;
    const metaPath = path.join(sessionPaths(record.session).longResponses, record.stem + META_SUFFIX);
    if (o.dryRun) {
      outcomes.push({ local: metaPath, status: 'pending', error: `would upload to ${record.store}/${record.remoteSession}` });
      continue;
    }
    try {
      const w = await target.writer(record.store, record.remoteSession);
      const r = await syncSpill(w, metaPath, { remoteStem: record.remoteStem, token: record.token, signal: o.signal });
      outcomes.push(r);
      if (r.status === 'uploaded' || r.status === 'renamed' || r.status === 'already') await fsp.unlink(file).catch(() => undefined);
    } catch (err) {
      if (err instanceof S3StoreError && err.code !== 'EXISTS' && err.code !== 'NOT_FOUND') return { outcomes, stoppedBy: err.message };
      outcomes.push({ local: metaPath, status: 'failed', error: (err as Error).message });
    }
  }
  return { outcomes };
}

/** Upload every spill of a local session (whether or not it ever fell back). */
export async function syncSession(
  target: SyncTarget,
  store: string,
  sessionDir: string,
  o: { signal?: AbortSignal; remoteSession?: string; dryRun?: boolean } = {},
): Promise<SyncReport> {
  const outcomes: SyncOutcome[] = [];
  const remote = o.remoteSession ?? sessionNameFor(sessionDir);
  const metas = await localSidecars(sessionDir);
  if (o.dryRun) return { outcomes: metas.map((m) => ({ local: m, status: 'pending' as const, error: `would upload to ${store}/${remote}` })) };
  if (metas.length === 0) return { outcomes };
  const w = await target.writer(store, remote);
  for (const m of metas) {
    try {
      outcomes.push(await syncSpill(w, m, { signal: o.signal }));
    } catch (err) {
      if (err instanceof S3StoreError && err.code !== 'EXISTS' && err.code !== 'NOT_FOUND') return { outcomes, stoppedBy: err.message };
      outcomes.push({ local: m, status: 'failed', error: (err as Error).message });
    }
  }
  return { outcomes };
}
