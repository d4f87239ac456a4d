/**
 * Entry of the service's compute worker (compute.ts starts it). Runs one task at a time from the
 * service's thread and answers with its result, or with the error's name, message and code.
 * Imports only heavy.ts (pipeline + summarize): no index, no SQLite connection in this thread.
 */
import { parentPort } from 'node:worker_threads';
import { analyzeContent, structuralRun } from './heavy.js';
import type { ComputeReply, ComputeTask } from './compute.js';

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

async function runTask(t: ComputeTask): Promise<unknown> {
  const bytes = Buffer.from(t.bytes, 0, t.byteLength);
  if (t.op === 'structural') return structuralRun(bytes, t.suffix, t.req);
  return analyzeContent(bytes, t.opts);
}

parentPort!.on('message', (t: ComputeTask) => {
  runTask(t).then(
    (result) => parentPort!.postMessage({ id: t.id, ok: true, result } satisfies ComputeReply),
    (err: unknown) => parentPort!.postMessage({ ...describe(err), id: t.id } satisfies ComputeReply),
  );
});
