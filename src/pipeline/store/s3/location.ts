import path from 'node:path';
import { LONG_RESPONSES_DIR, sanitizeToolName } from '../../layout.js';

/**
 * Where in a bucket sessions live, and how the on-disk layout maps to keys. No SDK here: this is
 * loaded by plain local use too (to tell an `s3://` setting from a folder).
 *
 * ```
 * s3://<bucket>/<prefix>/<session>/long_responses/<stem>.<ext>
 * s3://<bucket>/<prefix>/<session>/long_responses/<stem>.meta.json        (written last: the commit marker)
 * s3://<bucket>/<prefix>/<session>/long_responses/<stem>.linked.json
 * s3://<bucket>/<prefix>/<session>/long_responses/assets/<sha256 prefix><ext>
 * s3://<bucket>/<prefix>/<session>/long_responses/.claims/<stem>          (who owns a stem; readers skip dot-names)
 * ```
 */

export interface S3Location {
  bucket: string;
  /** Key prefix without leading or trailing `/`; '' for the bucket's top. */
  prefix: string;
}

export class S3UrlError extends Error {
  constructor(readonly input: string, why: string) {
    super(`not a usable s3:// location (${why}): ${JSON.stringify(redactUrl(input))}`);
    this.name = 'S3UrlError';
  }
}

/** Longest key prefix accepted (S3 keys are at most 1,024 bytes; the layout needs room after it). */
export const MAX_S3_PREFIX_BYTES = 512;
/** Longest session name kept in a key. */
export const MAX_SESSION_NAME_CHARS = 128;

const BUCKET_RE = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function isS3Url(s: unknown): boolean {
  return typeof s === 'string' && /^s3:\/\//i.test(s.trim());
}

/** Never echo what might be a credential someone pasted into a URL (`s3://KEY:SECRET@bucket`). */
function redactUrl(s: string): string {
  return s.replace(/^(s3:\/\/)[^/@]*@/i, '$1***@');
}

/**
 * `s3://bucket/prefix/…` → bucket and prefix. Refuses user-info (credentials belong in the AWS
 * variables, never in a setting that is echoed), query strings, and `.`/`..`/empty segments.
 */
export function parseS3Url(input: string): S3Location {
  const s = input.trim();
  if (!isS3Url(s)) throw new S3UrlError(input, 'it must start with s3://');
  const rest = s.slice(5);
  if (rest.includes('?') || rest.includes('#')) throw new S3UrlError(input, 'no query or fragment');
  const slash = rest.indexOf('/');
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  if (bucket.includes('@') || bucket.includes(':')) throw new S3UrlError(input, 'credentials go in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, not in the URL');
  if (!BUCKET_RE.test(bucket) || bucket.includes('..')) throw new S3UrlError(input, 'bucket names are 3–63 lowercase letters, digits, dots and hyphens');
  let tail = slash < 0 ? '' : rest.slice(slash + 1);
  if (tail.endsWith('/')) tail = tail.slice(0, -1);
  const segs = tail === '' ? [] : tail.split('/');
  for (const seg of segs) {
    if (seg === '' || seg === '.' || seg === '..') throw new S3UrlError(input, 'the prefix has an empty, "." or ".." segment');
    if (/[\u0000-\u001f\u007f\\]/.test(seg)) throw new S3UrlError(input, 'the prefix has a control character or backslash');
  }
  const prefix = segs.join('/');
  if (Buffer.byteLength(prefix) > MAX_S3_PREFIX_BYTES) throw new S3UrlError(input, `the prefix is over ${MAX_S3_PREFIX_BYTES} bytes`);
  return { bucket, prefix };
}

export function formatS3Url(loc: S3Location, key?: string): string {
  const k = key ?? loc.prefix;
  return `s3://${loc.bucket}${k ? `/${k}` : ''}`;
}

/** `prefix/a/b` with no doubled or leading slash. */
export function joinKey(...parts: string[]): string {
  return parts.filter((p) => p !== '').join('/');
}

/**
 * The session's name in the bucket: the local session folder's name, sanitized like a tool
 * name (so it can never hold `/` or `..`). Agents name sessions `<time>_<server>` or
 * `claude-code_<id>`, which pass unchanged.
 */
export function sessionNameFor(sessionPath: string): string {
  const base = path.basename(path.resolve(sessionPath));
  const s = sanitizeToolName(base);
  return s.length > MAX_SESSION_NAME_CHARS ? s.slice(0, MAX_SESSION_NAME_CHARS) : s;
}

export const CLAIMS_DIR = '.claims';

/** Keys of one session under a location. */
export function sessionKeys(loc: S3Location, session: string) {
  const longResponses = joinKey(loc.prefix, session, LONG_RESPONSES_DIR);
  return {
    session: joinKey(loc.prefix, session),
    longResponses,
    /** Key of a file inside `long_responses/` (a name or `assets/<name>`). */
    file: (rel: string) => joinKey(longResponses, rel),
    claim: (stem: string) => joinKey(longResponses, CLAIMS_DIR, stem),
  };
}
