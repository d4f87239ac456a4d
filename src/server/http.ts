/**
 * What every route answers with: the wire's error codes and statuses, the headers each response
 * carries, JSON bodies, and streamed bodies that stop when the client goes away.
 */
import type http from 'node:http';
import type { Readable } from 'node:stream';
import { ServiceError, type ErrorCode } from '../service/contract.js';
import { BodyError } from './body.js';
import { errMessage } from '../pipeline/values.js';

/** Error codes on the wire: the service's, plus the transport's own. */
export type WireErrorCode =
  | ErrorCode
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'METHOD_NOT_ALLOWED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE';

const STATUS: Record<WireErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  FORBIDDEN_PATH: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTERNAL: 500,
  UNAVAILABLE: 503,
};

export function statusForCode(code: string): number {
  return STATUS[code as WireErrorCode] ?? 500;
}

/** API answers are data, never a document: nothing in them may load, run or be framed. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'; sandbox";

export class HttpError extends Error {
  constructor(
    readonly code: WireErrorCode,
    message: string,
    /** Answer, then close the connection without reading what the client still sends. */
    readonly drop = false,
  ) {
    super(message);
  }
}

/** Headers every response carries, set before any route runs. */
export function baseHeaders(res: http.ServerResponse): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  let text: string;
  try {
    text = JSON.stringify(body);
  } catch (err) {
    status = 500;
    text = JSON.stringify({ error: { code: 'INTERNAL', message: `response is not serializable: ${String(err)}` } });
  }
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Security-Policy', API_CSP);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

export function toWireError(err: unknown): { code: WireErrorCode; message: string; drop: boolean } {
  if (err instanceof HttpError) return { code: err.code, message: err.message, drop: err.drop };
  if (err instanceof BodyError) return { code: err.code, message: err.message, drop: true };
  if (err instanceof ServiceError) return { code: err.code, message: err.message, drop: false };
  return { code: 'INTERNAL', message: errMessage(err), drop: false };
}

/** Pipe a stream to `res`; a client that goes away stops (and closes) it. */
export function streamBody(res: http.ServerResponse, stream: Readable): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    stream.on('error', reject);
    res.on('close', () => {
      stream.destroy();
      resolve();
    });
    stream.pipe(res).on('finish', resolve);
  });
}
