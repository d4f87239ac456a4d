import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { PayloadMeta, SummaryRun } from './types.js';
import { LONG_RESPONSES_DIR, META_SUFFIX, classifyLongResponseFile, confine } from './layout.js';
import { encodeSpan } from './base64.js';
import { LocalSpillStore, writeFileAtomic } from './store/local.js';
import { isStoreError, type SpillKey, type SpillReader } from './store/seam.js';
import { META_LOCK_STALE_MS, META_LOCK_TIMEOUT_MS } from './limits.js';

/**
 * Reading what the guard saved: the sidecar, summary runs appended later, and the exact
 * original bytes rebuilt from the linked file and its assets (sha256-checked).
 *
 * | call | for |
 * | --- | --- |
 * | {@link restorePayload} / {@link restoreToFile} | the original bytes of a local spill (payload, linked or sidecar path) |
 * | {@link restoreFromStore} | the same through any {@link SpillReader}, by the sidecar's key |
 * | {@link readMeta} | a local sidecar, checked |
 * | {@link appendSummaryRun} | add a run to a local sidecar (locked across processes) |
 */

export class RestoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RestoreError';
  }
}

/** The sidecar path for a payload, meta or linked file path. */
export function metaPathFor(p: string): string {
  const abs = path.resolve(p);
  const c = classifyLongResponseFile(path.basename(abs));
  if (!c) throw new RestoreError(`not a spilled payload file (expected <stem>.<ext> in ${LONG_RESPONSES_DIR}/): ${p}`);
  return path.join(path.dirname(abs), c.stem + META_SUFFIX);
}

/** A sidecar's text, checked: version 1, with a payload file, a sha256 and assets. `where` names it in errors. */
function parseMeta(raw: string, where: string): PayloadMeta {
  let meta: PayloadMeta;
  try {
    meta = JSON.parse(raw) as PayloadMeta;
  } catch (err) {
    throw new RestoreError(`${where} is not valid JSON: ${(err as Error).message}`);
  }
  if (!meta || typeof meta !== 'object' || meta.version !== 1) throw new RestoreError(`${where}: unsupported meta version`);
  if (typeof meta.payloadFile !== 'string' || typeof meta.sha256 !== 'string' || !Array.isArray(meta.assets)) {
    throw new RestoreError(`${where}: missing payloadFile, sha256 or assets`);
  }
  meta.summaryRuns ??= [];
  return meta;
}

export async function readMeta(metaPath: string): Promise<PayloadMeta> {
  let raw: string;
  try {
    raw = await fs.readFile(metaPath, 'utf8');
  } catch (err) {
    throw new RestoreError(`cannot read ${metaPath}: ${(err as Error).message}`);
  }
  return parseMeta(raw, metaPath);
}

/** One object of a store as a Buffer; a key that would lead outside the session is a RestoreError. */
async function readKey(store: SpillReader, key: SpillKey): Promise<Buffer> {
  try {
    const b = await store.read(key);
    return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  } catch (err) {
    if (isStoreError(err, 'REFUSED')) throw new RestoreError(err.message);
    throw err;
  }
}

function sha256(b: Uint8Array): string {
  return crypto.createHash('sha256').update(b).digest('hex');
}

/** The original pieces (in order) that make up the payload whose sidecar is `metaKey`. */
async function originalPieces(store: SpillReader, metaKey: SpillKey): Promise<{ meta: PayloadMeta; pieces: Buffer[] }> {
  const where = store.describe(metaKey);
  let raw: Buffer;
  try {
    raw = await readKey(store, metaKey);
  } catch (err) {
    throw err instanceof RestoreError ? err : new RestoreError(`cannot read ${where}: ${(err as Error).message}`);
  }
  const meta = parseMeta(raw.toString('utf8'), where);
  // The payload is a file of the sidecar's own folder, never a path elsewhere.
  const dir = metaKey.slice(0, metaKey.lastIndexOf('/') + 1);
  confine(dir || '.', meta.payloadFile);
  const payload = await readKey(store, dir + meta.payloadFile);
  if (meta.payloadIsOriginal) return { meta, pieces: [payload] };
  const links = [...(meta.links ?? [])].sort((a, b) => a.start - b.start);
  const assetCache = new Map<number, Buffer>();
  const pieces: Buffer[] = [];
  let pos = 0;
  for (const link of links) {
    const ref = meta.assets[link.asset];
    if (!ref) throw new RestoreError(`${where}: link to missing asset #${link.asset}`);
    if (link.start < pos || link.end < link.start || link.end > payload.length) throw new RestoreError(`${where}: bad link span`);
    let bytes = assetCache.get(link.asset);
    if (!bytes) {
      bytes = await readKey(store, ref.relPath);
      if (sha256(bytes) !== ref.sha256) throw new RestoreError(`asset ${ref.relPath} is damaged (sha256 mismatch)`);
      assetCache.set(link.asset, bytes);
    }
    pieces.push(payload.subarray(pos, link.start));
    const enc = encodeSpan(bytes, link.encoding);
    pieces.push(typeof enc === 'string' ? Buffer.from(enc, 'utf8') : enc);
    pos = link.end;
  }
  pieces.push(payload.subarray(pos));
  return { meta, pieces };
}

function verify(meta: PayloadMeta, pieces: Buffer[]): void {
  const h = crypto.createHash('sha256');
  for (const p of pieces) h.update(p);
  if (h.digest('hex') !== meta.sha256) throw new RestoreError(`restored bytes do not match the recorded sha256 of ${meta.id}`);
}

/** A local payload, linked or sidecar path as a store (its session folder) and the key of its sidecar. */
function locate(p: string): { store: LocalSpillStore; metaKey: SpillKey } {
  const metaPath = metaPathFor(p);
  const dir = path.dirname(metaPath);
  return { store: new LocalSpillStore(path.dirname(dir)), metaKey: `${path.basename(dir)}/${path.basename(metaPath)}` };
}

/** The exact original bytes of a spill in any store, from its sidecar's key (`long_responses/<stem>.meta.json`). */
export async function restoreFromStore(store: SpillReader, metaKey: SpillKey): Promise<Buffer> {
  const { meta, pieces } = await originalPieces(store, metaKey);
  verify(meta, pieces);
  return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
}

/** The exact original bytes of a spilled result (path = payload, meta or linked file). */
export async function restorePayload(p: string): Promise<Buffer> {
  const { store, metaKey } = locate(p);
  return restoreFromStore(store, metaKey);
}

/** Restore into a file (atomic replace). Returns the bytes written. */
export async function restoreToFile(p: string, out: string): Promise<number> {
  const { store, metaKey } = locate(p);
  const { meta, pieces } = await originalPieces(store, metaKey);
  verify(meta, pieces);
  // A file the user asked for, where they asked: the usual mode (their umask applies), not a session's.
  return writeFileAtomic(path.resolve(out), pieces, { mode: 0o666 });
}

const metaQueues = new Map<string, Promise<unknown>>();

/** Run `fn` after every earlier call for the same file has finished (in this process). */
function serialized<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = metaQueues.get(key) ?? Promise.resolve();
  const next = prev.then(fn, fn);
  const tail = next.catch(() => undefined);
  metaQueues.set(key, tail);
  void tail.then(() => {
    if (metaQueues.get(key) === tail) metaQueues.delete(key);
  });
  return next;
}

/**
 * Hold `<dir>/.<name>.lock` (created exclusively) while `fn` runs, so read-modify-write of one
 * sidecar is serialized across processes too (the inspector, a CLI and an agent may all add runs).
 * The lock is a dot-file, which the indexer and watchers skip. A lock left by a crashed process is
 * broken once it is older than META_LOCK_STALE_MS.
 */
async function withFileLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(path.dirname(file), `.${path.basename(file)}.lock`);
  const deadline = Date.now() + META_LOCK_TIMEOUT_MS;
  for (let wait = 2; ; wait = Math.min(wait * 2, 100)) {
    try {
      const fh = await fs.open(lock, 'wx');
      await fh.writeFile(`${process.pid}\n`).finally(() => fh.close());
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const st = await fs.stat(lock).catch(() => null);
      if (st && Date.now() - st.mtimeMs > META_LOCK_STALE_MS) {
        await fs.unlink(lock).catch(() => undefined);
        continue;
      }
      if (Date.now() > deadline) throw new RestoreError(`${file} is locked by another process (${lock}); try again`);
      await new Promise((r) => setTimeout(r, wait + Math.random() * wait));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.unlink(lock).catch(() => undefined);
  }
}

/** Append a summary run to a sidecar: atomic rewrite, serialized per file within and across processes. */
export function appendSummaryRun(metaPath: string, run: SummaryRun): Promise<void> {
  const abs = path.resolve(metaPath);
  if (!abs.endsWith(META_SUFFIX)) return Promise.reject(new RestoreError(`not a ${META_SUFFIX} file: ${metaPath}`));
  return serialized(abs, () =>
    withFileLock(abs, async () => {
      const meta = await readMeta(abs);
      meta.summaryRuns.push(run);
      await writeFileAtomic(abs, JSON.stringify(meta, null, 2) + '\n');
    }),
  );
}
