/**
 * Request bodies of `spillway serve`, bounded: a size cap per method, an idle cut for a client that
 * stops sending, at most MAX_LARGE_BODIES_IN_FLIGHT big ones at a time (each may hold 140 MiB), and
 * big ones parsed and validated in a worker (src/service/json-body.ts), so the event loop keeps
 * answering everyone else. Bodies are read only after the request is authenticated.
 */
import type http from 'node:http';
import type { MethodName } from '../service/contract.js';
import { createComputePool, parseRequestBody, type ComputePool } from '../service/service.js';

/** Largest body of any method not listed in MAX_BODY_BYTES_BY_METHOD. */
export const MAX_SMALL_BODY_BYTES = 1024 * 1024;
/** Largest JSON request body: a 100 MiB dropped file, base64-encoded, plus slack. */
export const MAX_REQUEST_BODY_BYTES = 140 * 1024 * 1024;
/** Methods whose requests carry content. */
export const MAX_BODY_BYTES_BY_METHOD: Readonly<Partial<Record<MethodName, number>>> = {
  analyze: MAX_REQUEST_BODY_BYTES,
  estimate: MAX_REQUEST_BODY_BYTES,
  saveTemplate: 2 * 1024 * 1024,
};
/** Bodies up to this size are parsed on the event loop (microseconds); bigger ones in the worker. */
export const INLINE_PARSE_MAX_BYTES = 64 * 1024;
/** Bodies bigger than INLINE_PARSE_MAX_BYTES read or parsed at once; one more is answered 503. */
export const MAX_LARGE_BODIES_IN_FLIGHT = 2;
/** A body that receives no byte for this long is cut. */
export const BODY_IDLE_TIMEOUT_MS = 15_000;

export class BodyError extends Error {
  constructor(
    readonly code: 'PAYLOAD_TOO_LARGE' | 'UNAVAILABLE' | 'BAD_REQUEST',
    message: string,
  ) {
    super(message);
  }
}

export function maxBodyBytes(method: MethodName): number {
  return MAX_BODY_BYTES_BY_METHOD[method] ?? MAX_SMALL_BODY_BYTES;
}

export interface BodyReaderOptions {
  idleTimeoutMs?: number;
  maxLargeInFlight?: number;
}

export interface BodyReader {
  /** Read, parse and validate the body of `method`; throws BodyError or ServiceError. */
  read(req: http.IncomingMessage, method: MethodName, signal: AbortSignal): Promise<unknown>;
  close(): Promise<void>;
}

export function createBodyReader(opts: BodyReaderOptions = {}): BodyReader {
  const idleMs = opts.idleTimeoutMs ?? BODY_IDLE_TIMEOUT_MS;
  const maxLarge = opts.maxLargeInFlight ?? MAX_LARGE_BODIES_IN_FLIGHT;
  // Its own worker, not the service's: parsing an upload never waits behind a 50 MB summary.
  let parser: ComputePool | undefined;
  let largeInFlight = 0;

  const collect = (req: http.IncomingMessage, limit: number, onLarge: () => void): Promise<Buffer> =>
    new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let timer: NodeJS.Timeout | undefined;
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => fail(new BodyError('BAD_REQUEST', `no request body byte for ${idleMs} ms`)), idleMs);
      };
      const cleanup = () => {
        clearTimeout(timer);
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', fail);
      };
      function fail(err: unknown) {
        cleanup();
        chunks.length = 0;
        reject(err);
      }
      function onEnd() {
        cleanup();
        resolve(Buffer.concat(chunks, size));
      }
      function onData(chunk: Buffer) {
        const before = size;
        size += chunk.length;
        if (size > limit) return fail(new BodyError('PAYLOAD_TOO_LARGE', `request body is larger than ${limit} bytes`));
        if (before <= INLINE_PARSE_MAX_BYTES && size > INLINE_PARSE_MAX_BYTES) {
          try {
            onLarge();
          } catch (err) {
            return fail(err);
          }
        }
        chunks.push(chunk);
        arm();
      }
      req.on('data', onData);
      req.once('end', onEnd);
      req.once('error', fail);
      arm();
    });

  return {
    async read(req, method, signal) {
      const limit = maxBodyBytes(method);
      const declared = Number(req.headers['content-length'] ?? NaN);
      if (Number.isFinite(declared) && declared > limit) throw new BodyError('PAYLOAD_TOO_LARGE', `request body is larger than ${limit} bytes`);
      let large = false;
      const takeSlot = () => {
        if (large) return;
        if (largeInFlight >= maxLarge) throw new BodyError('UNAVAILABLE', `${maxLarge} large requests are already being received; try again shortly`);
        largeInFlight++;
        large = true;
      };
      try {
        if (Number.isFinite(declared) && declared > INLINE_PARSE_MAX_BYTES) takeSlot();
        const raw = await collect(req, limit, takeSlot);
        if (raw.length <= INLINE_PARSE_MAX_BYTES) return parseRequestBody(method, raw);
        parser ??= createComputePool({ inlineMaxBytes: INLINE_PARSE_MAX_BYTES });
        return await parser.parseRequest(method, raw, { signal });
      } finally {
        if (large) largeInFlight--;
      }
    },
    async close() {
      await parser?.close();
    },
  };
}
