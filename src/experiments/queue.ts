/**
 * A small job queue: at most `concurrency` jobs at once, in order; a job may stop the queue (a
 * budget reached), and an abort signal cancels it (jobs in flight are aborted; none start after).
 * A job that throws after the queue was stopped or cancelled is dropped; any other throw ends the
 * queue and is rethrown once the jobs in flight have settled.
 */
export interface QueueControl {
  /** Start no further job; jobs in flight finish. The first reason given is kept. */
  stop(reason: string): void;
  readonly stopped: string | undefined;
}

export interface QueueOptions<T> {
  concurrency: number;
  signal?: AbortSignal;
  work(item: T, signal: AbortSignal, control: QueueControl): Promise<void>;
}

export interface QueueOutcome {
  /** `cancelled` when the signal fired; else the reason a job stopped it, or undefined when every job ran. */
  stopped?: string;
  cancelled: boolean;
  started: number;
}

export async function runQueue<T>(items: readonly T[], o: QueueOptions<T>): Promise<QueueOutcome> {
  const limit = Math.max(1, Math.floor(o.concurrency) || 1);
  const ac = new AbortController();
  const onAbort = () => ac.abort(o.signal?.reason);
  if (o.signal?.aborted) return { cancelled: true, stopped: 'cancelled', started: 0 };
  o.signal?.addEventListener('abort', onAbort, { once: true });
  let stopReason: string | undefined;
  const control: QueueControl = {
    stop(reason) {
      stopReason ??= reason;
    },
    get stopped() {
      return stopReason;
    },
  };
  let next = 0;
  let started = 0;
  let failure: { err: unknown } | undefined;
  const lane = async (): Promise<void> => {
    while (next < items.length && !stopReason && !ac.signal.aborted && !failure) {
      const item = items[next++]!;
      started++;
      try {
        await o.work(item, ac.signal, control);
      } catch (err) {
        if (ac.signal.aborted || stopReason) continue;
        failure = { err };
        ac.abort(err);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
  }
  if (failure) throw failure.err;
  const cancelled = Boolean(o.signal?.aborted);
  return { cancelled, stopped: cancelled ? 'cancelled' : stopReason, started };
}
