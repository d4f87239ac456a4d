import type { JsonRpcId } from './jsonrpc.js';

/**
 * A server message too long to hold (over MAX_BUFFERED_LINE_BYTES, lines.ts), taken apart as it
 * streams: which message it is, from its first and last bytes; the bytes of its `result` value,
 * handed on in chunks without ever being joined; and a head kept for the preview.
 *
 * | name | for |
 * | --- | --- |
 * | {@link ChunkQueue} | chunks pushed by the pipe reader, pulled by the file writer, with a level for backpressure |
 * | {@link OversizedLine} | one oversized line: its envelope cut off, its value's bytes queued, its id found at either end |
 * | {@link previewText} | the readable start of a result value's head (the first text block's text, else the JSON) |
 */

/** Bytes of the line's end held back until it ends: the envelope members after the value (`,"jsonrpc":"2.0","id":7}`) sit in them. */
const TAIL_HOLD_BYTES = 1024;
/** Bytes of the value's head kept for the preview. */
export const PREVIEW_HEAD_BYTES = 64 * 1024;
/** Bytes of the line's start read for its envelope. */
const ENVELOPE_HEAD_BYTES = 512;

// `{"jsonrpc":"2.0","id":1,"result":` in any order: only the short scalar members may come before the value.
const HEAD_MEMBER_RE = /^\s*[{,]\s*"(jsonrpc|id|method|result|error|params)"\s*:\s*/;
const SCALAR_RE = /^(?:"((?:[^"\\]|\\.){0,200})"|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?))/;
// The end of a response after its value: scalar members (jsonrpc, id) then the closing brace. Nothing inside
// the value can match, as the value's own last byte is a `}` (or `]`, `"`, a digit) before these members.
const TAIL_RE = /(?:\s*,\s*"(?:jsonrpc|id)"\s*:\s*(?:"(?:[^"\\]|\\.){0,200}"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?))*\s*\}\s*$/;
const TAIL_ID_RE = /"id"\s*:\s*(?:"((?:[^"\\]|\\.){0,200})"|(-?\d+))/;

export interface Envelope {
  /** `message`: a request or notification from the server; `response`: a `result` or an `error`; `unknown`: neither could be read. */
  kind: 'message' | 'response' | 'unknown';
  member?: 'result' | 'error';
  id?: JsonRpcId;
  /** Byte offset where the `result`/`error` value starts. */
  valueStart?: number;
}

function idOf(str: string | undefined, num: string | undefined): JsonRpcId | undefined {
  if (str !== undefined) return /[^\x20-\x7e]|\\/.test(str) ? undefined : str;
  return num === undefined ? undefined : Number(num);
}

/** What a line is, from its first bytes (latin1: offsets are byte offsets). */
export function readEnvelope(head: string): Envelope {
  let rest = head;
  let id: JsonRpcId | undefined;
  for (let i = 0; i < 4; i++) {
    const m = HEAD_MEMBER_RE.exec(rest);
    if (!m) break;
    rest = rest.slice(m[0].length);
    const key = m[1];
    if (key === 'method' || key === 'params') return { kind: 'message', ...(id !== undefined ? { id } : {}) };
    if (key === 'result' || key === 'error') return { kind: 'response', member: key, ...(id !== undefined ? { id } : {}), valueStart: head.length - rest.length };
    const v = SCALAR_RE.exec(rest);
    if (!v) break;
    rest = rest.slice(v[0].length);
    if (key === 'id') id = idOf(v[1], v[2]);
  }
  return { kind: 'unknown', ...(id !== undefined ? { id } : {}) };
}

/** Where the value ends in the line's last bytes, and the id said after it. */
export function readTail(tail: string): { valueEnd?: number; id?: JsonRpcId } {
  const m = TAIL_RE.exec(tail);
  if (!m) return {};
  const idm = TAIL_ID_RE.exec(m[0]);
  const id = idm ? idOf(idm[1], idm[2]) : undefined;
  return { valueEnd: m.index, ...(id !== undefined ? { id } : {}) };
}

/**
 * Chunks from a push source (the server's pipe) to a pull reader (the file writer). `onLevel(true)`
 * when more than `highBytes` wait (pause the source), `onLevel(false)` once under `lowBytes`. After
 * {@link fail} (the writer gave up), pushes are dropped: the rest of the line is read and discarded.
 */
export class ChunkQueue implements AsyncIterable<Buffer> {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private ended = false;
  private error?: unknown;
  private dropped = false;
  private high = false;
  private wake?: () => void;

  constructor(
    private readonly onLevel: (high: boolean) => void,
    private readonly highBytes = 16 * 1024 * 1024,
    private readonly lowBytes = 4 * 1024 * 1024,
  ) {}

  get queuedBytes(): number {
    return this.bytes;
  }

  push(chunk: Buffer): void {
    if (this.dropped || this.ended || chunk.length === 0) return;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    if (!this.high && this.bytes > this.highBytes) {
      this.high = true;
      this.onLevel(true);
    }
    this.wake?.();
  }

  /** No more chunks; `error`: the reader throws it (the spill is abandoned). */
  end(error?: unknown): void {
    this.ended = true;
    this.error = error;
    this.wake?.();
  }

  /** The reader is gone: drop what waits and whatever comes. */
  fail(): void {
    this.dropped = true;
    this.chunks = [];
    this.bytes = 0;
    this.setLow();
  }

  private setLow(): void {
    if (this.high && this.bytes < this.lowBytes) {
      this.high = false;
      this.onLevel(false);
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Buffer> {
    for (;;) {
      const c = this.chunks.shift();
      if (c) {
        this.bytes -= c.length;
        this.setLow();
        yield c;
        continue;
      }
      if (this.ended) {
        if (this.error !== undefined) throw this.error;
        return;
      }
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
  }
}

/**
 * One oversized line as it streams. Bytes before the `result` value (`{"jsonrpc":"2.0","id":1,"result":`)
 * and after it (`,"jsonrpc":"2.0","id":1}` or `}`) are cut off, so what is queued is the value's bytes
 * exactly as the server wrote them: what a spill of a smaller result saves (there, re-serialized).
 * A line whose envelope cannot be read is queued whole, and {@link OversizedLine.finish} says so.
 */
/**
 * How a streamed line ended. `exact`: the queued bytes are the `result` value, exactly. Otherwise
 * `saved` says what they are: the whole line (its envelope could not be read, or it is an `error`),
 * or the value's bytes to the end of the line (the line did not close as a response should).
 */
export interface Finished {
  id?: JsonRpcId;
  exact: boolean;
  saved: 'value' | 'whole line' | 'value, unterminated';
}

export class OversizedLine {
  readonly envelope: Envelope;
  /** The first bytes of what is queued, for the preview. */
  readonly previewHead: Buffer;
  private held: Buffer = Buffer.alloc(0);
  private skip: number;
  private readonly cut: boolean;
  /** Set by {@link finish}. */
  finished?: Finished;

  constructor(
    head: readonly Buffer[],
    private readonly out: (chunk: Buffer) => void,
  ) {
    const first = firstBytes(head, 0, ENVELOPE_HEAD_BYTES);
    // Anything after the sample could not be read here: a non-JSON byte stops the member scan at the cut.
    this.envelope = readEnvelope(first.toString('latin1'));
    this.cut = this.envelope.kind === 'response' && this.envelope.member === 'result' && this.envelope.valueStart !== undefined;
    this.skip = this.cut ? this.envelope.valueStart! : 0;
    // A copy: the head chunks are freed as they are written.
    this.previewHead = firstBytes(head, this.skip, PREVIEW_HEAD_BYTES);
    for (const b of head) this.push(b);
  }

  push(chunk: Buffer): void {
    if (this.skip > 0) {
      const n = Math.min(this.skip, chunk.length);
      this.skip -= n;
      chunk = chunk.subarray(n);
      if (chunk.length === 0) return;
    }
    // Hold back the last TAIL_HOLD_BYTES: the envelope's end may be in them.
    if (chunk.length >= TAIL_HOLD_BYTES) {
      if (this.held.length) this.out(this.held);
      this.out(chunk.subarray(0, chunk.length - TAIL_HOLD_BYTES));
      this.held = Buffer.from(chunk.subarray(chunk.length - TAIL_HOLD_BYTES));
      return;
    }
    const joined = Buffer.concat([this.held, chunk]);
    if (joined.length > TAIL_HOLD_BYTES) {
      this.out(joined.subarray(0, joined.length - TAIL_HOLD_BYTES));
      this.held = joined.subarray(joined.length - TAIL_HOLD_BYTES);
    } else this.held = joined;
  }

  /**
   * The line ended: queue the held bytes up to the value's end. Returns the id (from either end of
   * the line) and whether the queued bytes are exactly the `result` value.
   */
  finish(): Finished {
    if (this.finished) return this.finished;
    // The id is looked for at the end even when the head could not be read: a client waits for it.
    const tail = readTail(this.held.toString('latin1'));
    const end = this.cut ? (tail.valueEnd ?? this.held.length) : this.held.length;
    if (end > 0) this.out(this.held.subarray(0, end));
    const id = this.envelope.id ?? tail.id;
    const exact = this.cut && tail.valueEnd !== undefined;
    this.finished = { ...(id !== undefined ? { id } : {}), exact, saved: exact ? 'value' : this.cut ? 'value, unterminated' : 'whole line' };
    return this.finished;
  }
}

/** Bytes `from` … `from + n` of a list of chunks, copied. */
function firstBytes(chunks: readonly Buffer[], from: number, n: number): Buffer {
  const parts: Buffer[] = [];
  let need = from + n;
  for (const c of chunks) {
    if (need <= 0) break;
    parts.push(c.subarray(0, need));
    need -= Math.min(need, c.length);
  }
  return Buffer.from(Buffer.concat(parts).subarray(from));
}

const TEXT_BLOCK_RE = /^\s*\{\s*"content"\s*:\s*\[\s*\{\s*(?:"type"\s*:\s*"text"\s*,\s*"text"|"text"\s*:)\s*:?\s*"/;

/**
 * The readable start of a result value from its first bytes: the first text block's text, decoded
 * as far as it goes (that is what the model would have read), else the JSON itself.
 */
export function previewText(head: Buffer): { text: string; json: boolean } {
  const s = head.toString('utf8');
  const m = TEXT_BLOCK_RE.exec(s);
  if (!m) return { text: s, json: true };
  let out = '';
  let i = m[0].length;
  const ESC: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
  while (i < s.length) {
    const c = s[i]!;
    if (c === '"') break;
    if (c !== '\\') {
      out += c;
      i++;
      continue;
    }
    const e = s[i + 1];
    if (e === undefined) break;
    if (e === 'u') {
      const hex = s.slice(i + 2, i + 6);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) break;
      out += String.fromCharCode(parseInt(hex, 16));
      i += 6;
    } else {
      out += ESC[e] ?? e;
      i += 2;
    }
  }
  return { text: out, json: false };
}
