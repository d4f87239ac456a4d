/**
 * Cooperative time slicing for long scans: synchronous file and SQLite work runs in slices of
 * at most SLICE_MS, then the event loop gets a turn (setImmediate), so an Electron main process
 * or the HTTP server keeps answering while a root with 10,000 payloads is indexed.
 */
export const SLICE_MS = 30;

/**
 * Thrown from a yield once the work's owner is closing (`stopping`): the piece of work in hand is
 * dropped, never half-written, and read again at the next open. A closing index thus waits at most
 * one slice, even in the middle of a transcript line of millions of blocks.
 */
export class IndexStopping extends Error {
  constructor() {
    super('the index is closing');
  }
}

export class Yielder {
  private sliceStart = performance.now();
  constructor(
    private readonly sliceMs = SLICE_MS,
    /** Called right before yielding (commit the open transaction, report progress). */
    private readonly beforeYield?: () => void,
    /** True once the work should stop: the next yield throws IndexStopping. */
    private readonly stopping?: () => boolean,
  ) {}

  /** True when the current slice is used up. */
  get due(): boolean {
    return performance.now() - this.sliceStart >= this.sliceMs;
  }

  /** Milliseconds left in the current slice (negative once it is overdue). */
  get left(): number {
    return this.sliceMs - (performance.now() - this.sliceStart);
  }

  /** Yield if the slice is used up; cheap to call often. */
  async maybe(): Promise<void> {
    if (this.due) await this.now();
  }

  async now(): Promise<void> {
    this.beforeYield?.();
    if (this.stopping?.()) throw new IndexStopping();
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.stopping?.()) throw new IndexStopping();
    this.sliceStart = performance.now();
  }
}
