/**
 * The storage seam: every write the guard makes goes through one {@link SpillStore}, and
 * `restore` reads through it. Keys are session-relative and '/'-separated, in the layout of
 * layout.ts, never file-system paths:
 *
 * ```
 * long_responses/<stem>.<ext>            payload (original bytes, or the linked form)
 * long_responses/<stem>.meta.json        sidecar: written LAST, the commit marker of a spill
 * long_responses/<stem>.linked.json      linked JSON (when assets were cut out)
 * long_responses/assets/<sha256…><ext>   asset, content-addressed
 * ```
 *
 * | to … | call | contract |
 * | --- | --- | --- |
 * | save a payload under a new name | `putPayload(candidates, body)` | create-only; tries the candidate names in order, returns the one it took; `body()` may be called again for another attempt and may be async, so nothing is held twice |
 * | commit a spill | `putSidecar(key, json)` | create-only; `EXISTS` when another writer holds the key |
 * | give a payload a fresh name | `movePayload(from, candidates)` | when its stem's sidecar was taken; the old key is gone after |
 * | save an asset | `putAsset(key, bytes, sha256)` | kept when an object with that key, size and sha256 is there; absent, truncated or damaged ones are (re)written |
 * | read for restore | `read(key)`, `stat(key)` | `NOT_FOUND` when absent; `stat` gives null instead |
 * | tell a person where | `location`, `describe(key)` | an absolute path locally, `s3://bucket/key` for objects; never credentials |
 *
 * Every call takes `{ signal }`: a store stops as soon as it can when it fires and throws
 * `UNAVAILABLE`. The guard also enforces its own deadline around each call, so a store that
 * ignores the signal cannot hold a tool result back. Errors are {@link SpillStoreError}s:
 * `UNAVAILABLE` (down, unreachable, slow, full, read-only: the guard then tries its fallback
 * store), `EXISTS`, `NOT_FOUND`, `REFUSED` (a key or folder that would lead outside the
 * session), `FAILED` (anything else). local.ts is the local implementation.
 *
 * This module holds types and the error class only, so the renderer's type-check can see
 * `GuardOptions` without Node's types.
 */

/** A session-relative, '/'-separated key, e.g. `long_responses/assets/3f9a….png`. */
export type SpillKey = string;

/** Bytes to store: a string (as UTF-8), bytes, or chunks of either, produced synchronously or not. */
export type SpillBody = string | Uint8Array | Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;

export interface StoreCallOptions {
  /** Fires when the call must stop (the guard's deadline). */
  signal?: AbortSignal;
}

/** One name a payload may take: its stem and the payload key `long_responses/<stem><suffix>`. */
export interface NameCandidate {
  stem: string;
  key: SpillKey;
}

export interface SpillStore {
  /** Where this store keeps the session, for messages: an absolute folder, or `s3://bucket/prefix/session`. */
  readonly location: string;
  /** Where one key is, for messages and tools: an absolute path, or `s3://bucket/prefix/session/<key>`. */
  describe(key: SpillKey): string;
  /** Create-only write under the first free candidate name; the candidate taken. */
  putPayload(candidates: Iterable<NameCandidate>, body: () => SpillBody, opts?: StoreCallOptions): Promise<NameCandidate>;
  /** Create-only write of a sidecar; `EXISTS` when the key is taken. */
  putSidecar(key: SpillKey, json: string, opts?: StoreCallOptions): Promise<void>;
  /** Move a payload to the first free candidate name; the candidate taken. */
  movePayload(from: SpillKey, candidates: Iterable<NameCandidate>, opts?: StoreCallOptions): Promise<NameCandidate>;
  /** Content-addressed write, verified: `reused` when an intact copy was already there. */
  putAsset(key: SpillKey, bytes: Uint8Array, sha256: string, opts?: StoreCallOptions): Promise<{ reused: boolean }>;
  /** The whole object; `NOT_FOUND` when absent. */
  read(key: SpillKey, opts?: StoreCallOptions): Promise<Uint8Array>;
  /** Its size, or null when absent. */
  stat(key: SpillKey, opts?: StoreCallOptions): Promise<{ bytes: number } | null>;
}

/** What `restore` needs of a store. */
export type SpillReader = Pick<SpillStore, 'describe' | 'read' | 'stat'>;

export type SpillStoreErrorCode = 'EXISTS' | 'UNAVAILABLE' | 'NOT_FOUND' | 'REFUSED' | 'FAILED';

export class SpillStoreError extends Error {
  constructor(
    readonly code: SpillStoreErrorCode,
    message: string,
    readonly key?: SpillKey,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SpillStoreError';
  }
}

/** True for a {@link SpillStoreError} with one of `codes`. */
export function isStoreError(err: unknown, ...codes: SpillStoreErrorCode[]): err is SpillStoreError {
  return err instanceof SpillStoreError && codes.includes(err.code);
}
