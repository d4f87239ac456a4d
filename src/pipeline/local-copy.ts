import path from 'node:path';
import type { NameCandidate, SpillBody, SpillKey, SpillStore, StoreCallOptions } from './store/seam.js';
import { errText } from './errors.js';

/**
 * An object store that also keeps a local copy of each payload and asset, for an agent that reads
 * files (Claude Code's Read and Bash cannot open `s3://…`). The bucket stays the durable copy and
 * the only one with the sidecar; the copy lives in `<session>/.local-copy/`, under the same keys,
 * where the indexer and `spillway sync` never look (a dot-folder), so the spill is neither listed
 * twice nor uploaded again.
 *
 * | call | for |
 * | --- | --- |
 * | {@link withLocalCopy} | the store to spill through: writes the bucket first, then the copy |
 * | {@link localCopyOf} | the local path of a key's copy, if it was made |
 *
 * A copy that cannot be made never fails the spill: the message then names the bucket URL only
 * and says why there is no local copy.
 */

/** Folder of the session that holds local copies of a bucket's payloads. */
export const LOCAL_COPY_DIR = '.local-copy';

export interface LocalCopying extends SpillStore {
  /** The local path of `key`'s copy, or undefined when none was made (and why, in `copyError`). */
  localCopy(key: SpillKey): string | undefined;
  copyError(key: SpillKey): string | undefined;
}

export function localCopyDir(sessionPath: string): string {
  return path.join(path.resolve(sessionPath), LOCAL_COPY_DIR);
}

export function isLocalCopying(s: SpillStore): s is LocalCopying {
  return typeof (s as Partial<LocalCopying>).localCopy === 'function';
}

/** The local path of a key's copy when `store` keeps copies and made this one. */
export function localCopyOf(store: SpillStore, key: SpillKey): string | undefined {
  return isLocalCopying(store) ? store.localCopy(key) : undefined;
}

export function withLocalCopy(primary: SpillStore, copy: SpillStore): LocalCopying {
  const made = new Map<SpillKey, string>();
  const failed = new Map<SpillKey, string>();
  const keep = async (key: SpillKey, write: () => Promise<unknown>) => {
    try {
      await write();
      made.set(key, copy.describe(key));
      failed.delete(key);
    } catch (err) {
      failed.set(key, errText(err));
    }
  };
  return {
    location: primary.location,
    describe: (key) => primary.describe(key),
    localCopy: (key) => made.get(key),
    copyError: (key) => failed.get(key),
    async putPayload(candidates: Iterable<NameCandidate>, body: () => SpillBody, o?: StoreCallOptions) {
      const c = await primary.putPayload(candidates, body, o);
      // Same key as in the bucket: the copy's folder is this store's alone, so the name is free.
      await keep(c.key, () => copy.putPayload([c], body, o));
      return c;
    },
    putSidecar: (key, json, o) => primary.putSidecar(key, json, o),
    async movePayload(from, candidates, o) {
      const c = await primary.movePayload(from, candidates, o);
      if (made.has(from)) {
        made.delete(from);
        await keep(c.key, () => copy.movePayload(from, [c], o));
      }
      return c;
    },
    async putAsset(key, bytes, sha256, o) {
      const r = await primary.putAsset(key, bytes, sha256, o);
      await keep(key, () => copy.putAsset(key, bytes, sha256, o));
      return r;
    },
    read: (key, o) => primary.read(key, o),
    stat: (key, o) => primary.stat(key, o),
  };
}
