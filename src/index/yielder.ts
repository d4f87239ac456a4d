/**
 * Cooperative time slicing for long scans: synchronous file and SQLite work runs in slices of
 * at most SLICE_MS, then the event loop gets a turn (setImmediate), so an Electron main process
 * or the HTTP server keeps answering while a root with 10,000 payloads is indexed.
 */
export const SLICE_MS = 30;

export class Yielder {
  private sliceStart = performance.now();
  constructor(
    private readonly sliceMs = SLICE_MS,
    /** Called right before yielding (commit the open transaction, report progress). */
    private readonly beforeYield?: () => void,
  ) {}

  /** True when the current slice is used up. */
  get due(): boolean {
    return performance.now() - this.sliceStart >= this.sliceMs;
  }

  /** Yield if the slice is used up; cheap to call often. */
  async maybe(): Promise<void> {
    if (this.due) await this.now();
  }

  async now(): Promise<void> {
    this.beforeYield?.();
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.sliceStart = performance.now();
  }
}
