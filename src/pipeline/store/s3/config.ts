import { parseS3Url, type S3Location } from './location.js';

/**
 * S3 settings from the `s3://` location, the library's options and the standard AWS variables,
 * plus the one rule about credentials: they never appear in a message, a sidecar, a log or an
 * error text. No SDK import here.
 *
 * | variable                               | meaning                                                    |
 * | -------------------------------------- | ---------------------------------------------------------- |
 * | `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL` | an S3-compatible endpoint (Ceph, MinIO…); path-style keys  |
 * | `AWS_REGION`, `AWS_DEFAULT_REGION`     | region (default us-east-1)                                  |
 * | `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN` | static credentials            |
 * | `AWS_PROFILE`                          | a profile from ~/.aws (SSO, assume-role… via the SDK chain)  |
 * | `SPILLWAY_STORE_TIMEOUT_MS`            | the deadline of one store call                              |
 */

/**
 * Deadline of one store call (a PUT, a GET, one page of a listing, one part of an upload). A
 * healthy gateway answers in milliseconds; this only has to tell "down or hung" from "busy".
 */
export const S3_OP_TIMEOUT_MS = 10_000;
/** Connections per process to one endpoint. */
export const S3_MAX_SOCKETS = 128;
/** Smallest deadline accepted from the environment: below it, a healthy store would look down. */
export const MIN_S3_OP_TIMEOUT_MS = 50;
/** Payloads up to this size go up in one create-only PUT; larger ones stream through multipart upload. */
export const S3_SINGLE_PUT_MAX_BYTES = 16 * 1024 * 1024;
/** Part size of a multipart upload (S3's minimum is 5 MiB). */
export const S3_PART_BYTES = 8 * 1024 * 1024;
/** Parts in flight at once: memory held by an upload is about (this + 1) × S3_PART_BYTES. */
export const S3_UPLOAD_PARTS_IN_FLIGHT = 4;
/** After the store failed, spills go straight to the fallback for this long instead of waiting out another deadline. */
export const S3_DOWN_BACKOFF_MS = 15_000;
/** Keys per page of a listing (S3's maximum). */
export const S3_LIST_PAGE_KEYS = 1_000;

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface S3StoreOptions {
  /** Overrides AWS_ENDPOINT_URL(_S3). */
  endpoint?: string;
  region?: string;
  /** Static credentials; default: the AWS variables, else the SDK's chain (AWS_PROFILE, SSO, …). */
  credentials?: S3Credentials;
  profile?: string;
  /** Deadline of one store call; default SPILLWAY_STORE_TIMEOUT_MS or S3_OP_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Path-style addressing (`endpoint/bucket/key`); default on when an endpoint is set. */
  forcePathStyle?: boolean;
  env?: NodeJS.ProcessEnv;
  /** The writer's clock (journal key times); default Date.now. */
  clock?: () => number;
}

export interface S3Settings {
  location: S3Location;
  endpoint?: string;
  region: string;
  forcePathStyle: boolean;
  timeoutMs: number;
  credentials?: S3Credentials;
  profile?: string;
  /** Values that must never be shown (secret key, session token, access key id). */
  secrets: string[];
}

export class S3ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'S3ConfigError';
  }
}

/**
 * The variables a bucket store is set up from: the caller's, else the process's, as the AWS SDK's
 * own chain would read them. The one place below the edges that falls back to the process: the
 * endpoint, credentials and timeout resolved here and the sync queue a fallen-back spill goes to
 * (SPILLWAY_HOME) must come from the same variables the SDK uses, or a spill is queued where
 * `spillway sync` never looks.
 */
export function s3EnvOf(env: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv {
  return env ?? process.env;
}

export function resolveS3Settings(url: string | S3Location, opts: S3StoreOptions = {}): S3Settings {
  const env = s3EnvOf(opts.env);
  const location = typeof url === 'string' ? parseS3Url(url) : url;
  const endpointRaw = opts.endpoint ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  let endpoint: string | undefined;
  if (endpointRaw) {
    let u: URL;
    try {
      u = new URL(endpointRaw);
    } catch {
      throw new S3ConfigError(`AWS_ENDPOINT_URL is not a URL: ${JSON.stringify(redactUserinfo(endpointRaw))}`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new S3ConfigError(`AWS_ENDPOINT_URL must be http(s): ${u.protocol}`);
    if (u.username || u.password) throw new S3ConfigError('AWS_ENDPOINT_URL must not carry credentials; use AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY');
    endpoint = u.origin + (u.pathname === '/' ? '' : u.pathname.replace(/\/$/, ''));
  }
  let timeoutMs = opts.timeoutMs ?? (env.SPILLWAY_STORE_TIMEOUT_MS ? Number(env.SPILLWAY_STORE_TIMEOUT_MS) : S3_OP_TIMEOUT_MS);
  if (!Number.isFinite(timeoutMs) || timeoutMs < MIN_S3_OP_TIMEOUT_MS) {
    throw new S3ConfigError(`SPILLWAY_STORE_TIMEOUT_MS must be a number of milliseconds ≥ ${MIN_S3_OP_TIMEOUT_MS}`);
  }
  timeoutMs = Math.floor(timeoutMs);
  let credentials = opts.credentials;
  if (!credentials && env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
    credentials = {
      accessKeyId: env.AWS_ACCESS_KEY_ID,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
      ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
    };
  }
  const secrets = [
    credentials?.secretAccessKey,
    credentials?.sessionToken,
    credentials?.accessKeyId,
    env.AWS_SECRET_ACCESS_KEY,
    env.AWS_SESSION_TOKEN,
    env.AWS_ACCESS_KEY_ID,
  ].filter((s): s is string => typeof s === 'string' && s.length >= 4);
  return {
    location,
    endpoint,
    region: opts.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
    forcePathStyle: opts.forcePathStyle ?? endpoint !== undefined,
    timeoutMs,
    credentials,
    profile: opts.profile ?? env.AWS_PROFILE,
    secrets: [...new Set(secrets)],
  };
}

function redactUserinfo(s: string): string {
  return s.replace(/\/\/[^/@]*@/, '//***@');
}

/**
 * Remove anything credential-like from a text bound for a message, a sidecar or a log: the
 * known secret values, signed-URL parameters, Authorization headers and AWS key ids.
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('***');
  return out
    .replace(/(X-Amz-(?:Signature|Credential|Security-Token)=)[^&\s"']+/gi, '$1***')
    .replace(/(Credential=)[^,\s"']+/g, '$1***')
    .replace(/(Signature=)[^,\s"'&]+/g, '$1***')
    .replace(/(authorization["']?\s*[:=]\s*["']?)[^"'\n]+/gi, '$1***')
    .replace(/\b(?:AKIA|ASIA|AROA|AIDA)[A-Z0-9]{12,}\b/g, '***')
    .replace(/\/\/[^/\s@]*:[^/\s@]*@/g, '//***@');
}
