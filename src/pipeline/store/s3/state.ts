/**
 * The S3 backend's process-wide state, in one place and owned here: which stores are down, the
 * claims failed spills left behind, and the pooled clients. Everything else in `store/s3/` is
 * made per call or per store; this is what outlives one spill, on purpose:
 *
 * - health: a store found down is skipped for S3_DOWN_BACKOFF_MS, so a burst of spills does not
 *   wait out one deadline each;
 * - claims: a spill that failed after claiming its stem hands the claim to the local fallback's
 *   sync record, so `spillway sync` resumes it instead of uploading under another name;
 * - buckets: one client per distinct settings, so connections are reused across spills.
 *
 * A leaf: it imports only settings and types, and the client (with the AWS SDK) on first open.
 * `reset()` forgets all of it, for tests.
 */
import crypto from 'node:crypto';
import type { S3Objects } from './client.js';
import { S3_DOWN_BACKOFF_MS, type S3Settings } from './config.js';

/** A spill's claim that was left when the store failed: `spillway sync` resumes it. */
export interface AbandonedClaim {
  stem: string;
  token: string;
}

export interface S3ProcessState {
  health: {
    markDown(store: string, why: string, now?: number): void;
    markUp(store: string): void;
    /** Why the store is being skipped right now, or undefined when it should be tried. */
    downReason(store: string, now?: number): string | undefined;
    /** Forget that stores failed (tests; a CLI that was told the store is back). */
    reset(): void;
  };
  claims: {
    /** Keep a claim a failed spill left, under its store, session and stem base. */
    leave(key: string, claim: AbandonedClaim): void;
    /** The oldest claim left under `key`, taken (each is resumed once). */
    take(key: string): AbandonedClaim | undefined;
  };
  buckets: {
    /** The pooled client for these settings, made (and the SDK loaded) on first use. */
    open(settings: S3Settings): Promise<S3Objects>;
    readonly size: number;
    /** Take every pooled client out of the pool, to be destroyed by the caller. */
    drain(): Array<Promise<S3Objects>>;
  };
  /** Forget everything above (tests). Pooled clients are dropped, not destroyed: use closeBuckets. */
  reset(): void;
}

/** One client per distinct settings; credentials are part of the key only as a hash. */
function poolKey(s: S3Settings): string {
  const creds = s.credentials ? crypto.createHash('sha256').update(`${s.credentials.accessKeyId}\n${s.credentials.secretAccessKey}\n${s.credentials.sessionToken ?? ''}`).digest('hex') : '';
  return JSON.stringify([s.location.bucket, s.endpoint, s.region, s.forcePathStyle, s.timeoutMs, s.profile, creds]);
}

export function createS3State(): S3ProcessState {
  const downSince = new Map<string, { at: number; why: string }>();
  const abandoned = new Map<string, AbandonedClaim[]>();
  const pool = new Map<string, Promise<S3Objects>>();
  const health: S3ProcessState['health'] = {
    markDown(store, why, now = Date.now()) {
      downSince.set(store, { at: now, why });
    },
    markUp(store) {
      downSince.delete(store);
    },
    downReason(store, now = Date.now()) {
      const d = downSince.get(store);
      if (!d) return undefined;
      if (now - d.at >= S3_DOWN_BACKOFF_MS) {
        downSince.delete(store);
        return undefined;
      }
      return `${d.why} (not retried for ${Math.ceil((d.at + S3_DOWN_BACKOFF_MS - now) / 1000)} s)`;
    },
    reset() {
      downSince.clear();
    },
  };
  return {
    health,
    claims: {
      leave(key, claim) {
        abandoned.set(key, [...(abandoned.get(key) ?? []), claim]);
      },
      take(key) {
        const list = abandoned.get(key);
        const claim = list?.shift();
        if (list && list.length === 0) abandoned.delete(key);
        return claim;
      },
    },
    buckets: {
      open(settings) {
        const key = poolKey(settings);
        let p = pool.get(key);
        if (!p) {
          p = import('./client.js').then(({ S3Objects }) => new S3Objects(settings));
          p.catch(() => pool.delete(key));
          pool.set(key, p);
        }
        return p;
      },
      get size() {
        return pool.size;
      },
      drain() {
        const all = [...pool.values()];
        pool.clear();
        return all;
      },
    },
    reset() {
      health.reset();
      abandoned.clear();
      pool.clear();
    },
  };
}

/** This process's S3 state (the one instance; tests reset it between cases). */
export const s3State: S3ProcessState = createS3State();
