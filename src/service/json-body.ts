/**
 * A request body from a transport, bytes to validated request, in bounded time and memory. The
 * contract's requests nest three levels deep at most; a body that nests deeper is refused before
 * JSON.parse builds it (40 MB of `[[[[` would otherwise become 20 million arrays and 1.4 GB).
 * `spillway serve` runs this in a worker for big bodies (compute.ts, op `parse-request`), so
 * neither the parse nor the validation of a 100 MB upload blocks its event loop.
 */
import { ServiceError, type MethodName, type MethodRequest } from './contract.js';
import { validateRequest } from './validate.js';
import { errMessage } from '../pipeline/values.js';

/** Deepest nesting of objects and arrays a request body may have. */
export const MAX_REQUEST_JSON_DEPTH = 32;

/** Throws BAD_REQUEST when the JSON text in `buf` nests objects/arrays deeper than `maxDepth` (strings are skipped). */
export function checkJsonDepth(buf: Uint8Array, maxDepth = MAX_REQUEST_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!;
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next byte is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) throw new ServiceError('BAD_REQUEST', `request body nests deeper than ${maxDepth} levels`);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}

/** Parse and validate one method's JSON body; an empty body is `{}`. Throws ServiceError('BAD_REQUEST'). */
export function parseRequestBody<M extends MethodName>(method: M, buf: Uint8Array): MethodRequest<M> {
  let body: unknown = {};
  if (buf.length > 0) {
    checkJsonDepth(buf);
    try {
      body = JSON.parse(Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength).toString('utf8'));
    } catch (err) {
      throw new ServiceError('BAD_REQUEST', `request body is not JSON: ${errMessage(err)}`);
    }
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ServiceError('BAD_REQUEST', 'request body must be a JSON object');
  return validateRequest(method, body);
}
