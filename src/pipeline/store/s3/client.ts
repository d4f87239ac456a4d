import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { S3_LIST_PAGE_KEYS, S3_MAX_SOCKETS, S3_PART_BYTES, S3_UPLOAD_PARTS_IN_FLIGHT, redactSecrets, type S3Settings } from './config.js';
import { formatS3Url } from './location.js';
import { S3StoreError, type S3ErrorCode } from './errors.js';

export { S3StoreError, md5Hex, type S3ErrorCode } from './errors.js';

/**
 * The S3 calls the store makes, each under a deadline, each failure turned into a typed
 * {@link S3StoreError} whose text is credential-free. This module imports the AWS SDK; everything
 * else reaches it through a dynamic import, so the guard's pass-through path and local use never
 * load the SDK.
 *
 * | call                       | S3 request                                          |
 * | -------------------------- | --------------------------------------------------- |
 * | `putIfAbsent(key, body)`   | PutObject with `If-None-Match: *` (atomic in Ceph 16) |
 * | `putOverwrite(key, body)`  | PutObject (only for content-addressed repairs)       |
 * | `upload(key, pieces)`      | multipart upload, streamed (ignores If-None-Match!)  |
 * | `head` / `get` / `getRange` / `getStream` | HeadObject / GetObject (Range)        |
 * | `list(prefix)`             | ListObjectsV2 pages, with continuation               |
 * | `deleteKeys(keys)`         | DeleteObjects                                        |
 */

export interface ObjectInfo {
  key: string;
  size: number;
  /** Without quotes. */
  etag: string;
  lastModifiedMs: number;
}

export interface HeadInfo extends ObjectInfo {
  metadata: Record<string, string>;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the settings' per-call deadline. */
  timeoutMs?: number;
}

/** A read pinned to one version: `ifMatch` is the ETag (unquoted) the object must still have. */
export type StreamOptions = CallOptions & { ifMatch?: string };

export type Body = string | Uint8Array;
export type PutOptions = CallOptions & { contentType?: string; metadata?: Record<string, string> };
export type Pieces = Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);
const DENIED_NAMES = new Set(['AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'ExpiredToken', 'InvalidToken', 'CredentialsProviderError']);

const unquote = (etag: string | undefined) => (etag ?? '').replace(/^W\//, '').replace(/^"|"$/g, '');

export class S3Objects {
  readonly client: S3Client;
  readonly bucket: string;

  constructor(readonly settings: S3Settings) {
    this.bucket = settings.location.bucket;
    this.client = quietly(() => new S3Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      forcePathStyle: settings.forcePathStyle,
      ...(settings.credentials ? { credentials: settings.credentials } : {}),
      ...(settings.profile && !settings.credentials ? { profile: settings.profile } : {}),
      // Ceph 16 answers the SDK's default aws-chunked streaming (with trailing checksums) with 411.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
      requestHandler: {
        connectionTimeout: settings.timeoutMs,
        requestTimeout: settings.timeoutMs,
        // An MCP proxy may spill many results at once; the SDK's default of 50 sockets queues the rest.
        httpAgent: new http.Agent({ keepAlive: true, maxSockets: S3_MAX_SOCKETS }),
        httpsAgent: new https.Agent({ keepAlive: true, maxSockets: S3_MAX_SOCKETS }),
      },
    }));
  }

  /** `s3://bucket/key`: what messages and errors name. */
  url(key: string): string {
    return formatS3Url(this.settings.location, key);
  }

  destroy(): void {
    this.client.destroy();
  }

  /** Run one S3 call under the deadline and the caller's signal; failures become S3StoreError. */
  private async call<T>(what: string, key: string, fn: (signal: AbortSignal) => Promise<T>, opts: CallOptions = {}): Promise<T> {
    const ms = opts.timeoutMs ?? this.settings.timeoutMs;
    const deadline = AbortSignal.timeout(ms);
    const signal = opts.signal ? AbortSignal.any([opts.signal, deadline]) : deadline;
    try {
      return await fn(signal);
    } catch (err) {
      throw this.toError(err, what, key, deadline.aborted ? ms : undefined);
    }
  }

  toError(err: unknown, what: string, key: string, timedOutMs?: number): S3StoreError {
    if (err instanceof S3StoreError) return err;
    const e = err as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number }; Code?: string; cause?: { code?: string } };
    const status = e?.$metadata?.httpStatusCode;
    const name = e?.Code ?? e?.name ?? 'Error';
    const netCode = e?.code ?? e?.cause?.code;
    const where = `${what} ${this.url(key)}`;
    let code: S3ErrorCode;
    let why: string;
    if (timedOutMs !== undefined) {
      code = 'UNAVAILABLE';
      why = `no answer within ${timedOutMs} ms`;
    } else if (status === 412) {
      code = 'EXISTS';
      why = 'the key already exists';
    } else if (status === 404 || name === 'NoSuchKey' || name === 'NotFound' || name === 'NoSuchBucket') {
      code = 'NOT_FOUND';
      why = name === 'NoSuchBucket' ? 'no such bucket' : 'no such key';
    } else if (status === 403 || DENIED_NAMES.has(name)) {
      code = 'DENIED';
      why = `${name} (check the AWS credentials)`;
    } else if (e?.name === 'AbortError') {
      code = 'UNAVAILABLE';
      why = 'aborted';
    } else {
      code = 'UNAVAILABLE';
      why = netCode && NETWORK_CODES.has(netCode) ? netCode : status ? `HTTP ${status} ${name}` : `${name}: ${e?.message ?? String(err)}`;
    }
    return new S3StoreError(code, redactSecrets(`${where}: ${why}`, this.settings.secrets).slice(0, 300), status);
  }

  /** One PutObject; `createOnly` adds `If-None-Match: *`. Returns the ETag. */
  private async put(key: string, body: Body, createOnly: boolean, o: PutOptions): Promise<string> {
    const input = { Bucket: this.bucket, Key: key, Body: body, ContentType: o.contentType, Metadata: o.metadata, ...(createOnly ? { IfNoneMatch: '*' } : {}) };
    const r = await this.call('PUT', key, (abortSignal) => this.client.send(new PutObjectCommand(input), { abortSignal }), o);
    return unquote(r.ETag);
  }

  /** Create-only PUT. True when created, false when the key already existed (412). */
  async putIfAbsent(key: string, body: Body, o: PutOptions = {}): Promise<{ created: boolean; etag: string }> {
    try {
      return { created: true, etag: await this.put(key, body, true, o) };
    } catch (err) {
      if (err instanceof S3StoreError && err.code === 'EXISTS') return { created: false, etag: '' };
      throw err;
    }
  }

  /** Unconditional PUT: only for content-addressed keys, where the right bytes are defined by the name. */
  putOverwrite(key: string, body: Body, o: PutOptions = {}): Promise<string> {
    return this.put(key, body, false, o);
  }

  /**
   * Stream `pieces` into `key` by multipart upload, holding at most about
   * (S3_UPLOAD_PARTS_IN_FLIGHT + 1) × S3_PART_BYTES. The deadline applies to progress: the upload
   * is aborted when no part finishes within it. Ceph 16 ignores If-None-Match here, so the caller
   * must own the name first.
   */
  async upload(key: string, pieces: Pieces, o: PutOptions = {}): Promise<string> {
    const ms = o.timeoutMs ?? this.settings.timeoutMs;
    const controller = new AbortController();
    const body = Readable.from(toBuffers(pieces), { objectMode: false, highWaterMark: 1024 * 1024 });
    const up = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: body, ContentType: o.contentType, Metadata: o.metadata },
      partSize: S3_PART_BYTES,
      queueSize: S3_UPLOAD_PARTS_IN_FLIGHT,
      leavePartsOnError: false,
      abortController: controller,
    });
    let stalled = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      // A part is up to S3_PART_BYTES: the first one may need the deadline twice over (read + send).
      timer = setTimeout(() => {
        stalled = true;
        controller.abort();
      }, ms * 2);
    };
    const onAbort = () => controller.abort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    up.on('httpUploadProgress', arm);
    arm();
    try {
      return unquote((await up.done()).ETag);
    } catch (err) {
      body.destroy();
      throw this.toError(err, 'multipart upload', key, stalled ? ms * 2 : undefined);
    } finally {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
    }
  }

  async head(key: string, o: CallOptions = {}): Promise<HeadInfo | null> {
    try {
      const r = await this.call('HEAD', key, (abortSignal) => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal }), o);
      return {
        key,
        size: r.ContentLength ?? 0,
        etag: unquote(r.ETag),
        lastModifiedMs: r.LastModified?.getTime() ?? 0,
        metadata: r.Metadata ?? {},
      };
    } catch (err) {
      if (err instanceof S3StoreError && err.code === 'NOT_FOUND') return null;
      throw err;
    }
  }

  /** The whole object; null when it does not exist. Only for small objects (sidecars, claims). */
  async get(key: string, o: CallOptions = {}): Promise<Buffer | null> {
    try {
      return await this.call(
        'GET',
        key,
        async (abortSignal) => {
          const r = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal });
          return Buffer.from(await r.Body!.transformToByteArray());
        },
        o,
      );
    } catch (err) {
      if (err instanceof S3StoreError && err.code === 'NOT_FOUND') return null;
      throw err;
    }
  }

  /** Bytes [start, end) of an object; fewer when the object is shorter. */
  async getRange(key: string, start: number, end: number, o: CallOptions = {}): Promise<{ bytes: Buffer; total: number }> {
    if (end <= start) return { bytes: Buffer.alloc(0), total: -1 };
    return this.call(
      'GET',
      key,
      async (abortSignal) => {
        try {
          const r = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: `bytes=${start}-${end - 1}` }), { abortSignal });
          const total = Number(/\/(\d+)$/.exec(r.ContentRange ?? '')?.[1] ?? r.ContentLength ?? -1);
          return { bytes: Buffer.from(await r.Body!.transformToByteArray()), total };
        } catch (err) {
          // A range starting past the end: nothing to read.
          if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 416) return { bytes: Buffer.alloc(0), total: start };
          throw err;
        }
      },
      o,
    );
  }

  /**
   * A stream of the object (or of [start, end)). The deadline covers the answer's headers; the
   * body then flows at the reader's pace (stream consumers apply their own back-pressure).
   */
  async getStream(key: string, range?: { start: number; end: number }, o: StreamOptions = {}): Promise<{ stream: Readable; length: number; total: number }> {
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    const input = {
      Bucket: this.bucket,
      Key: key,
      ...(range ? { Range: `bytes=${range.start}-${range.end - 1}` } : {}),
      ...(o.ifMatch ? { IfMatch: `"${o.ifMatch}"` } : {}),
    };
    const r = await this.call(
      'GET',
      key,
      (deadlineSignal) => {
        const t = () => controller.abort();
        deadlineSignal.addEventListener('abort', t, { once: true });
        return this.client.send(new GetObjectCommand(input), { abortSignal: controller.signal }).finally(() => deadlineSignal.removeEventListener('abort', t));
      },
      o,
    ).catch((err: unknown) => {
      o.signal?.removeEventListener('abort', onAbort);
      // 412 on a read is If-Match failing: the object is not the version the caller checked.
      if (o.ifMatch && err instanceof S3StoreError && err.status === 412) throw new S3StoreError('NOT_FOUND', `GET ${this.url(key)}: changed since it was checked`, 412);
      throw err;
    });
    const stream = r.Body as Readable;
    stream.once('close', () => o.signal?.removeEventListener('abort', onAbort));
    const length = r.ContentLength ?? 0;
    const total = Number(/\/(\d+)$/.exec(r.ContentRange ?? '')?.[1] ?? length);
    return { stream, length, total };
  }

  /** Every object under `prefix`, page by page (ListObjectsV2 with continuation). */
  async *list(prefix: string, o: CallOptions & { startAfter?: string } = {}): AsyncGenerator<ObjectInfo[]> {
    let token: string | undefined;
    do {
      const page = await this.call(
        'LIST',
        prefix,
        (abortSignal) =>
          this.client.send(
            new ListObjectsV2Command({
              Bucket: this.bucket,
              Prefix: prefix,
              MaxKeys: S3_LIST_PAGE_KEYS,
              ...(token ? { ContinuationToken: token } : o.startAfter ? { StartAfter: o.startAfter } : {}),
            }),
            { abortSignal },
          ),
        o,
      );
      yield (page.Contents ?? []).map((c) => ({ key: c.Key!, size: c.Size ?? 0, etag: unquote(c.ETag), lastModifiedMs: c.LastModified?.getTime() ?? 0 }));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /** The next level of "folders" under `prefix` (ListObjectsV2 with Delimiter `/`): their names. */
  async listPrefixes(prefix: string, o: CallOptions = {}): Promise<{ names: string[]; requests: number }> {
    const names: string[] = [];
    let token: string | undefined;
    let requests = 0;
    do {
      const page = await this.call(
        'LIST',
        prefix,
        (abortSignal) =>
          this.client.send(
            new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, Delimiter: '/', MaxKeys: S3_LIST_PAGE_KEYS, ...(token ? { ContinuationToken: token } : {}) }),
            { abortSignal },
          ),
        o,
      );
      requests++;
      for (const p of page.CommonPrefixes ?? []) if (p.Prefix) names.push(p.Prefix.slice(prefix.length).replace(/\/$/, ''));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return { names, requests };
  }

  async deleteKeys(keys: string[], o: CallOptions = {}): Promise<void> {
    for (let i = 0; i < keys.length; i += S3_LIST_PAGE_KEYS) {
      const batch = keys.slice(i, i + S3_LIST_PAGE_KEYS);
      const r = await this.call(
        'DELETE',
        batch[0] ?? '',
        (abortSignal) =>
          this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }), {
            abortSignal,
          }),
        o,
      );
      // A multi-delete answers 200 even when some keys failed: those are listed in Errors.
      const failed = (r.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length) {
        const e = failed[0]!;
        throw new S3StoreError(e.Code === 'AccessDenied' ? 'DENIED' : 'UNAVAILABLE', redactSecrets(`DELETE ${this.url(e.Key ?? '')}: ${e.Code ?? 'error'} (${failed.length} of ${batch.length} keys not deleted)`, this.settings.secrets).slice(0, 300));
      }
    }
  }
}

/** The SDK's own switch for its Node-version notice (read once, in the first client's constructor). */
export const SDK_NODE_WARNING_SWITCH = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';

/**
 * Construct an SDK client without its "NodeVersionSupportWarning" (under Node 20 it announces
 * that releases after January 2027 need Node 22; this pinned version supports Node 20), which
 * would land on the stderr of every CLI call and hook run, and Claude Code records a hook's
 * stderr. The SDK's own switch is set only while the constructor runs: child processes (the MCP
 * proxy's server) do not inherit it, and every other warning still shows.
 */
export function quietly<T>(make: () => T): T {
  const had = Object.prototype.hasOwnProperty.call(process.env, SDK_NODE_WARNING_SWITCH);
  const before = process.env[SDK_NODE_WARNING_SWITCH];
  if (!had) process.env[SDK_NODE_WARNING_SWITCH] = 'true';
  try {
    return make();
  } finally {
    if (!had) delete process.env[SDK_NODE_WARNING_SWITCH];
    else process.env[SDK_NODE_WARNING_SWITCH] = before;
  }
}

async function* toBuffers(pieces: Pieces): AsyncGenerator<Buffer> {
  for await (const p of pieces as AsyncIterable<string | Uint8Array>) {
    yield typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.isBuffer(p) ? p : Buffer.from(p.buffer, p.byteOffset, p.byteLength);
  }
}
