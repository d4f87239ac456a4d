/**
 * The S3 backend's public face. Nothing here imports the AWS SDK: `openBucket` loads it on first
 * use (about 115 ms and 23 MiB), so the guard's pass-through path, plain local use and `--help`
 * never pay for it.
 *
 * | entry point                         | for                                                        |
 * | ----------------------------------- | ---------------------------------------------------------- |
 * | `isS3Url(s)` / `parseS3Url(s)`      | telling `s3://bucket/prefix` from a folder, and parsing it  |
 * | `resolveS3Settings(url, opts)`      | endpoint, region, credentials, deadline from the AWS variables |
 * | `openBucket(url, opts)`             | the S3 calls, under deadlines (shared per process and settings) |
 * | `syncPending` / `syncSession`       | `spillway sync`                                             |
 * | `S3Source`                          | a prefix read as a folder tree (the index's and inspector's S3 roots) |
 */
import { resolveS3Settings, type S3StoreOptions } from './config.js';
import type { S3Objects } from './client.js';
import type { S3SessionWriter } from './writer.js';
import type { S3Location } from './location.js';
import { s3State } from './state.js';

export { isS3Url, parseS3Url, formatS3Url, sessionNameFor, sessionKeys, S3UrlError, type S3Location } from './location.js';
export { resolveS3Settings, redactSecrets, S3ConfigError, S3_OP_TIMEOUT_MS, type S3Settings, type S3StoreOptions } from './config.js';
export type { ObjectInfo, HeadInfo } from './client.js';
export { S3StoreError, isUnusable, type S3ErrorCode } from './errors.js';
export { S3SpillStore } from './spill-store.js';
export { s3State, createS3State, type S3ProcessState } from './state.js';
export { configuredStores } from './select.js';
export { S3Materializer } from './materialize.js';
export { S3Source, isS3Path, splitS3Path, SIDECAR_READ_AHEAD } from './source.js';
export { pruneBucket, PRUNE_GROUP } from './prune.js';
export { flushJournal } from './writer.js';
export { JOURNAL_DIR, JOURNAL_OVERLAP_MS, journalKey, journalTime, parseJournalKey, type JournalEntry } from './journal.js';
export type { S3ReaderState, S3Changes } from './source.js';
export { syncPending, syncSession, queuePending, listPending, forgetPending, pendingDir, type PendingRecord, type SyncOutcome, type SyncReport } from './sync.js';

/** Why the store is being skipped right now, or undefined when it should be tried. */
export const downReason = (store: string, now?: number): string | undefined => s3State.health.downReason(store, now);

/** Forget that stores failed (tests; a CLI that was told the store is back). */
export const resetStoreHealth = (): void => s3State.health.reset();

/** The bucket's calls under deadlines: one client per distinct settings in a process (connections are reused across spills). */
export async function openBucket(url: string | S3Location, opts: S3StoreOptions = {}): Promise<S3Objects> {
  return s3State.buckets.open(resolveS3Settings(url, opts));
}

export async function openSessionWriter(url: string, session: string, opts: S3StoreOptions = {}): Promise<S3SessionWriter> {
  const settings = resolveS3Settings(url, opts);
  const [objects, { S3SessionWriter }] = await Promise.all([openBucket(url, opts), import('./writer.js')]);
  return new S3SessionWriter(objects, settings.location, session, opts.clock);
}

/** Close every pooled client (tests, and a CLI that wants to exit promptly). */
export async function closeBuckets(): Promise<void> {
  if (s3State.buckets.size) await (await import('./writer.js')).flushJournal();
  const all = s3State.buckets.drain();
  for (const p of all) (await p.catch(() => undefined))?.destroy();
}
