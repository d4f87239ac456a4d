import { ASSETS_DIR, LONG_RESPONSES_DIR, META_SUFFIX } from '../../layout.js';
import type { CallOptions, S3Objects } from './client.js';
import { S3_DOWN_BACKOFF_MS } from './config.js';
import { S3StoreError, isUnusable } from './errors.js';
import { formatS3Url, sessionKeys, type S3Location } from './location.js';
import { S3SessionWriter, newClaimToken, type WriteData } from './writer.js';

/**
 * One spill's writes into a bucket, in the order the guard makes them: assets (content-addressed),
 * then the payload under the first free stem (claimed first), then the sidecar (the commit
 * marker). Every call runs under the store's deadline; a store that failed is skipped for
 * S3_DOWN_BACKOFF_MS, so a burst of spills while it is down falls back at once instead of each
 * waiting out a deadline.
 */

export interface NameCandidate {
  stem: string;
  fileName: string;
}

/** When each store (by URL) last failed; spills skip it until then + S3_DOWN_BACKOFF_MS. */
const downSince = new Map<string, { at: number; why: string }>();

export function markDown(store: string, why: string, now = Date.now()): void {
  downSince.set(store, { at: now, why });
}

export function markUp(store: string): void {
  downSince.delete(store);
}

/** Why the store is being skipped right now, or undefined when it should be tried. */
export function downReason(store: string, now = Date.now()): string | undefined {
  const d = downSince.get(store);
  if (!d) return undefined;
  if (now - d.at >= S3_DOWN_BACKOFF_MS) {
    downSince.delete(store);
    return undefined;
  }
  return `${d.why} (not retried for ${Math.ceil((d.at + S3_DOWN_BACKOFF_MS - now) / 1000)} s)`;
}

export class S3SpillTarget {
  readonly writer: S3SessionWriter;
  /** The claim token of this spill: one per spill, so a sync after a failure can resume it. */
  readonly token = newClaimToken();
  /** The stem claimed so far (set once the payload's name is owned). */
  claimedStem?: string;
  readonly storeUrl: string;

  constructor(
    objects: S3Objects,
    readonly location: S3Location,
    readonly session: string,
    readonly call: CallOptions = {},
  ) {
    this.writer = new S3SessionWriter(objects, location, session);
    this.storeUrl = formatS3Url(location);
  }

  /** `s3://bucket/prefix/session`: where the spill goes, for the message. */
  describe(): string {
    return formatS3Url(this.location, sessionKeys(this.location, this.session).session);
  }

  /** Run a store call; an unusable store is remembered so the next spills skip it. */
  private async guarded<T>(fn: () => Promise<T>): Promise<T> {
    const skip = downReason(this.storeUrl);
    if (skip) throw new S3StoreError('UNAVAILABLE', `${this.storeUrl} was unavailable: ${skip}`);
    try {
      return await fn();
    } catch (err) {
      if (isUnusable(err)) markDown(this.storeUrl, (err as Error).message);
      throw err;
    }
  }

  /** Save an asset; returns its URL and its session-relative path (`long_responses/assets/<name>`). */
  saveAsset(bytes: Uint8Array, fileName: string, sha256: string, contentType?: string): Promise<{ path: string; relPath: string; reused: boolean }> {
    return this.guarded(async () => {
      const r = await this.writer.putAsset(fileName, bytes, sha256, { ...this.call, contentType });
      return { path: this.writer.url(`${ASSETS_DIR}/${fileName}`), relPath: `${LONG_RESPONSES_DIR}/${ASSETS_DIR}/${fileName}`, reused: r.reused };
    });
  }

  /** Claim the first free candidate, then write the payload under it. */
  publish(candidates: Iterable<NameCandidate>, data: WriteData): Promise<NameCandidate & { path: string }> {
    return this.guarded(async () => {
      for (const c of candidates) {
        if (!(await this.writer.claim(c.stem, this.token, this.call))) continue;
        this.claimedStem = c.stem;
        await this.writer.putFile(c.fileName, data, this.call);
        return { ...c, path: this.writer.url(c.fileName) };
      }
      throw new Error('no free name');
    });
  }

  /** The sidecar, last. The stem is ours (claimed), so its name is free unless the bucket was written by hand. */
  commitSidecar(stem: string, json: string): Promise<string> {
    return this.guarded(async () => {
      await this.writer.putSidecar(stem + META_SUFFIX, json, this.call);
      markUp(this.storeUrl);
      return this.writer.url(stem + META_SUFFIX);
    });
  }
}
