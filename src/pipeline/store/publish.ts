import { makeStem, payloadKey, sidecarKey } from '../layout.js';
import { LimitError, MAX_NAME_ATTEMPTS, MAX_REMEMBERED_STEM_BASES, MAX_SIDECAR_ATTEMPTS } from '../limits.js';
import { SpillStoreError, isStoreError, type NameCandidate, type SpillKey, type SpillStore, type StoreCallOptions } from './seam.js';

/**
 * Naming and publishing a spill through a {@link SpillStore} (the interface is in seam.ts,
 * the local implementation in local.ts).
 *
 * | call | for |
 * | --- | --- |
 * | {@link nameCandidates} | the names a payload may take, lowest free sequence number first |
 * | {@link commitSpill} | write the sidecar last (the commit marker), moving the payload to a fresh stem if its stem was taken |
 * | {@link withDeadline} | a store whose every call is abandoned, as UNAVAILABLE, after a deadline |
 */

/** What a payload's name is made of; the sequence number is added by {@link nameCandidates}. */
export interface StemParts {
  time: Date;
  tool: string;
  inputHash: string;
}

/** Next sequence number to try per stem base in this process, so concurrent spills rarely race for a name. */
const nextSeqByBase = new Map<string, number>();

function takeSeq(base: string): number {
  const n = nextSeqByBase.get(base) ?? 0;
  if (nextSeqByBase.size > MAX_REMEMBERED_STEM_BASES) nextSeqByBase.clear();
  nextSeqByBase.set(base, n + 1);
  return n;
}

function seenSeq(base: string, seq: number): void {
  const n = nextSeqByBase.get(base) ?? 0;
  if (seq + 1 > n) nextSeqByBase.set(base, seq + 1);
}

/**
 * The names a payload may take, in the order to try them: `long_responses/<time>_<tool>_<input
 * hash>_<seq><suffix>` with the lowest sequence number not yet handed out in this process.
 * Asking for the next one means the last was taken (by another process), which this process then
 * remembers. Throws a {@link LimitError} after MAX_NAME_ATTEMPTS.
 */
export function* nameCandidates(parts: StemParts, suffix: string): Generator<NameCandidate, never> {
  const base = makeStem({ ...parts, seq: 0 }).replace(/_0$/, '');
  for (let tries = 0; tries < MAX_NAME_ATTEMPTS; tries++) {
    const seq = takeSeq(base);
    const stem = makeStem({ ...parts, seq });
    yield { stem, key: payloadKey(stem + suffix) };
    seenSeq(base, seq);
  }
  throw new LimitError('MAX_NAME_ATTEMPTS', MAX_NAME_ATTEMPTS, MAX_NAME_ATTEMPTS);
}

/** How a commit ended: the payload's final name, its message, and the sidecar key, or why there is none. */
export interface Commit {
  payload: NameCandidate;
  message: string;
  metaKey?: SpillKey;
  /** Set when the sidecar could not be written; `payload` is still where the payload is. */
  error?: unknown;
}

/**
 * Write the sidecar last: it is the commit marker, and its name the final claim on the stem. When
 * another writer holds `<stem>.meta.json` (same stem, other extension), the payload moves to a
 * fresh stem and the message and sidecar are rebuilt for it. Never throws: a failure is in `error`.
 */
export async function commitSpill(
  store: SpillStore,
  published: NameCandidate,
  fresh: Iterable<NameCandidate>,
  sidecarFor: (c: NameCandidate) => { message: string; json: string },
  opts?: StoreCallOptions,
): Promise<Commit> {
  let c = published;
  let message = '';
  try {
    for (let attempt = 0; ; attempt++) {
      const record = sidecarFor(c);
      message = record.message;
      const metaKey = sidecarKey(c.stem);
      try {
        await store.putSidecar(metaKey, record.json, opts);
        return { payload: c, message, metaKey };
      } catch (err) {
        if (!isStoreError(err, 'EXISTS')) throw err;
      }
      if (attempt >= MAX_SIDECAR_ATTEMPTS) throw new LimitError('MAX_SIDECAR_ATTEMPTS', MAX_SIDECAR_ATTEMPTS, attempt + 1);
      c = await store.movePayload(c.key, fresh, opts);
    }
  } catch (error) {
    return { payload: c, message: message || sidecarFor(c).message, error };
  }
}

/**
 * Run `fn` with a signal that fires after `ms` (or with the caller's); settle as UNAVAILABLE at the
 * deadline even if `fn` ignores the signal.
 */
function bounded<T>(ms: number, what: string, outer: StoreCallOptions | undefined, fn: (opts: StoreCallOptions) => Promise<T>): Promise<T> {
  const ac = new AbortController();
  const signal = outer?.signal ? AbortSignal.any([outer.signal, ac.signal]) : ac.signal;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const err = new SpillStoreError('UNAVAILABLE', `${what} timed out after ${ms} ms`);
      ac.abort(err);
      reject(err);
    }, ms);
    timer.unref?.();
    Promise.resolve()
      .then(() => fn({ signal }))
      .then(resolve, reject)
      .finally(() => clearTimeout(timer));
  });
}

/**
 * The same store, with every call bounded by `ms`: the store's own work gets the signal, and the
 * call settles as UNAVAILABLE at the deadline whatever the store does.
 */
export function withDeadline(store: SpillStore, ms: number): SpillStore {
  const where = store.location;
  return {
    location: store.location,
    describe: (key) => store.describe(key),
    putPayload: (candidates, body, o) => bounded(ms, `writing a payload to ${where}`, o, (b) => store.putPayload(candidates, body, b)),
    putSidecar: (key, json, o) => bounded(ms, `writing ${key} to ${where}`, o, (b) => store.putSidecar(key, json, b)),
    movePayload: (from, candidates, o) => bounded(ms, `renaming ${from} in ${where}`, o, (b) => store.movePayload(from, candidates, b)),
    putAsset: (key, bytes, sha256, o) => bounded(ms, `writing ${key} to ${where}`, o, (b) => store.putAsset(key, bytes, sha256, b)),
    read: (key, o) => bounded(ms, `reading ${key} from ${where}`, o, (b) => store.read(key, b)),
    stat: (key, o) => bounded(ms, `reading ${key} from ${where}`, o, (b) => store.stat(key, b)),
  };
}
