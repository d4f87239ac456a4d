import crypto from 'node:crypto';

/** Typed store failures (no SDK import: sync and the guard's fallback test for them). */
export type S3ErrorCode = 'EXISTS' | 'NOT_FOUND' | 'UNAVAILABLE' | 'DENIED';

export class S3StoreError extends Error {
  constructor(
    readonly code: S3ErrorCode,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'S3StoreError';
  }
}

/** The store cannot be used now (down, slow, or refusing our credentials): fall back, sync later. */
export const isUnusable = (err: unknown): boolean => err instanceof S3StoreError && (err.code === 'UNAVAILABLE' || err.code === 'DENIED');

/** What a single PutObject's ETag is: the MD5 of the body, computed by the gateway. */
export function md5Hex(body: string | Uint8Array): string {
  return crypto.createHash('md5').update(body).digest('hex');
}
