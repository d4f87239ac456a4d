/**
 * Just enough JSON-RPC to route lines without parsing them: a proxy that parsed every line would
 * spend its time in JSON.parse on results it only forwards.
 */

export type JsonRpcId = string | number;

export type PeekKind = 'message' | 'response' | 'unknown';

export interface Peek {
  /** `message`: a request or notification (has `method`); `response`: has `result` or `error`. */
  kind: PeekKind;
  /** The id, when found without a full parse. */
  id?: JsonRpcId;
}

/** Bytes looked at from each end of a line. Ids and member names sit in the first or last few bytes. */
const PEEK_BYTES = 256;

// Head: `{"method"`, `{"jsonrpc":"2.0","method"`, `{"jsonrpc":"2.0","id":1,"method"`, `{"id":1,"jsonrpc":"2.0","result"`…
// Only members with short scalar values (jsonrpc, id) are skipped, so nothing nested can be mistaken for top level.
const HEAD_MEMBER_RE = /^\s*[{,]\s*"(jsonrpc|id|method|result|error|params)"\s*:\s*/;
const SCALAR_RE = /^(?:"((?:[^"\\]|\\.){0,200})"|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?))/;
// Tail: `…,"jsonrpc":"2.0","id":7}` as JSON.stringify writes the SDK's `{ result, jsonrpc, id }`. The final `}`
// closes the top-level object, so the member right before it is a top-level member.
const TAIL_ID_RE = /[{,]\s*"id"\s*:\s*(?:"((?:[^"\\]|\\.){0,200})"|(-?\d+))\s*\}\s*$/;

/** Classify a line from its first and last bytes; `unknown` means "parse it to find out". */
export function peekLine(line: Buffer): Peek {
  const head = line.toString('latin1', 0, Math.min(line.length, PEEK_BYTES));
  let rest = head;
  let id: JsonRpcId | undefined;
  for (let i = 0; i < 3; i++) {
    const m = HEAD_MEMBER_RE.exec(rest);
    if (!m) break;
    const key = m[1];
    rest = rest.slice(m[0].length);
    if (key === 'method') return { kind: 'message', ...(id !== undefined ? { id } : {}) };
    if (key === 'params') return { kind: 'message' };
    if (key === 'result' || key === 'error') {
      if (id !== undefined) return { kind: 'response', id };
      const tailId = peekTailId(line);
      return tailId === undefined ? { kind: 'response' } : { kind: 'response', id: tailId };
    }
    const v = SCALAR_RE.exec(rest);
    if (!v) break;
    rest = rest.slice(v[0].length);
    if (key === 'id') {
      if (v[1] !== undefined) {
        // Non-ASCII ids would be mangled by latin1 decoding: leave those to a full parse.
        if (/[^\x20-\x7e]|\\/.test(v[1])) return { kind: 'unknown' };
        id = v[1];
      } else id = Number(v[2]);
    }
  }
  return { kind: 'unknown' };
}

function peekTailId(line: Buffer): JsonRpcId | undefined {
  const from = Math.max(0, line.length - PEEK_BYTES);
  const tail = line.toString('latin1', from);
  const m = TAIL_ID_RE.exec(tail);
  if (!m) return undefined;
  if (m[1] !== undefined) return /[^\x20-\x7e]|\\/.test(m[1]) ? undefined : m[1];
  return Number(m[2]);
}

/** Map key for an id: `1` and `"1"` are different ids. */
export function idKey(id: unknown): string | undefined {
  if (typeof id === 'number') return `n:${id}`;
  if (typeof id === 'string') return `s:${id}`;
  return undefined;
}

export interface JsonRpcMessage {
  jsonrpc?: string;
  id?: JsonRpcId | null;
  method?: string;
  params?: Record<string, unknown> & { _meta?: Record<string, unknown> };
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** JSON-RPC error codes used by the proxy. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** MCP SDK's "connection closed". */
  ConnectionClosed: -32000,
} as const;

export function errorResponse(id: JsonRpcId | null, code: number, message: string, data?: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message, ...(data !== undefined ? { data } : {}) } });
}

export function resultResponse(id: JsonRpcId, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result });
}

export function tryParse(line: Buffer | string): JsonRpcMessage | undefined {
  try {
    const v = JSON.parse(typeof line === 'string' ? line : line.toString('utf8')) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as JsonRpcMessage) : undefined;
  } catch {
    return undefined;
  }
}
