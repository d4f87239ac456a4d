/**
 * Entry of the service's compute worker (compute.ts starts it). Runs one task at a time from the
 * service's thread and answers with its result, or with the error's name, message and code.
 * Runs heavy.ts (pipeline + summarize) through compute.ts's runTask: no index, no SQLite
 * connection in this thread.
 */
import { parentPort } from 'node:worker_threads';
import { runTask, type ComputeReply, type ComputeTask } from './compute.js';

function describe(err: unknown): ComputeReply & { ok: false } {
  const e = err as { name?: unknown; message?: unknown; code?: unknown };
  return {
    id: -1,
    ok: false,
    error: {
      name: typeof e?.name === 'string' ? e.name : 'Error',
      message: typeof e?.message === 'string' ? e.message : String(err),
      ...(typeof e?.code === 'string' ? { code: e.code } : {}),
    },
  };
}

parentPort!.on('message', (t: ComputeTask) => {
  runTask(Buffer.from(t.bytes, 0, t.byteLength), t).then(
    (result) => parentPort!.postMessage({ id: t.id, ok: true, result } satisfies ComputeReply),
    (err: unknown) => parentPort!.postMessage({ ...describe(err), id: t.id } satisfies ComputeReply),
  );
});
