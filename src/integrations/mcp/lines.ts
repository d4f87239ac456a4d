import type { Writable } from 'node:stream';

/**
 * Newline framing for MCP's stdio transport, in linear time.
 *
 * The SDK's `ReadBuffer` concatenates every chunk onto the pending buffer (quadratic for a line
 * spread over many chunks) and refuses lines over 10 MiB. Here a partial line is a list of chunk
 * slices, joined once when its newline arrives, so a 32 MB line costs one copy.
 *
 * A line longer than {@link MAX_BUFFERED_LINE_BYTES} is not held in memory at all: it is streamed
 * through as it arrives (see {@link LineSplitterHandlers.onOversizedStart}).
 */

/**
 * Longest line held in memory for inspection. A longer line is streamed through the splitter in
 * chunks (onOversized*): from the server the proxy writes it to a spill and never forwards it; from
 * the client it is forwarded as it comes (docs/security.md, "The proxy's size limits").
 */
export const MAX_BUFFERED_LINE_BYTES = 256 * 1024 * 1024;

const NL = 0x0a;

export interface LineSplitterHandlers {
  /** One complete line, without its `\n` (a trailing `\r` is kept: callers forward bytes as received). */
  onLine(line: Buffer): void;
  /**
   * Called once when a line grows past the buffering limit, with what was buffered so far; the
   * rest of the line follows through {@link onOversizedChunk} and ends with {@link onOversizedEnd}.
   * Without these handlers the oversized line is still delivered whole through {@link onLine}.
   */
  onOversizedStart?(head: Buffer[]): void;
  onOversizedChunk?(chunk: Buffer): void;
  onOversizedEnd?(): void;
}

export class LineSplitter {
  private parts: Buffer[] = [];
  private partsBytes = 0;
  private streaming = false;

  constructor(
    private readonly handlers: LineSplitterHandlers,
    private readonly maxBufferedBytes = MAX_BUFFERED_LINE_BYTES,
  ) {}

  /** Bytes of the line still waiting for its newline. */
  get pendingBytes(): number {
    return this.partsBytes;
  }

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NL, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.streaming) {
        if (piece.length) this.handlers.onOversizedChunk!(piece);
        this.streaming = false;
        this.handlers.onOversizedEnd!();
        continue;
      }
      let line: Buffer;
      if (this.parts.length === 0) line = piece;
      else {
        this.parts.push(piece);
        line = Buffer.concat(this.parts, this.partsBytes + piece.length);
        this.parts = [];
        this.partsBytes = 0;
      }
      if (line.length) this.handlers.onLine(line);
    }
    if (start >= chunk.length) return;
    const rest = chunk.subarray(start);
    if (this.streaming) {
      this.handlers.onOversizedChunk!(rest);
      return;
    }
    this.parts.push(rest);
    this.partsBytes += rest.length;
    if (this.partsBytes > this.maxBufferedBytes && this.handlers.onOversizedStart) {
      this.streaming = true;
      const head = this.parts;
      this.parts = [];
      this.partsBytes = 0;
      this.handlers.onOversizedStart(head);
    }
  }

  /** End of input: a last line without a newline is still a line. */
  end(): void {
    if (this.streaming) {
      this.streaming = false;
      this.handlers.onOversizedEnd!();
      return;
    }
    if (this.partsBytes > 0) {
      const line = Buffer.concat(this.parts, this.partsBytes);
      this.parts = [];
      this.partsBytes = 0;
      this.handlers.onLine(line);
    }
  }
}

const NEWLINE = Buffer.from('\n');

/**
 * Writes whole lines to a stream in order. Lines written while an oversized line is being streamed
 * wait until it ends, so framing is never interleaved. Reports backpressure so the reader of the
 * other side can pause.
 */
export class LineWriter {
  private streamingLine = false;
  private queued: Buffer[] = [];
  private closed = false;

  constructor(
    private readonly out: Writable,
    private readonly onBackpressure: (full: boolean) => void = () => {},
  ) {
    out.on('drain', () => this.onBackpressure(false));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    this.closed = true;
  }

  /** Write one line (a trailing newline is added). */
  writeLine(line: Buffer | string): void {
    if (this.closed) return;
    const buf = typeof line === 'string' ? Buffer.from(line, 'utf8') : line;
    if (this.streamingLine) {
      this.queued.push(buf);
      return;
    }
    this.raw(buf);
    this.raw(NEWLINE);
  }

  beginStreamedLine(head: Buffer[]): void {
    this.streamingLine = true;
    for (const b of head) this.raw(b);
  }

  streamChunk(chunk: Buffer): void {
    this.raw(chunk);
  }

  endStreamedLine(): void {
    this.raw(NEWLINE);
    this.streamingLine = false;
    const queued = this.queued;
    this.queued = [];
    for (const q of queued) this.writeLine(q);
  }

  private raw(buf: Buffer): void {
    if (this.closed || buf.length === 0) return;
    let ok = true;
    try {
      ok = this.out.write(buf);
    } catch {
      // EPIPE and friends surface as 'error' events on the stream; the owner handles them.
      return;
    }
    if (!ok) this.onBackpressure(true);
  }
}
