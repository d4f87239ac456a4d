/**
 * A pool of one worker thread for the service's CPU-heavy one-off work (heavy.ts): the offline
 * structural summary and the analysis of a dropped file. A 50 MB input holds a thread for seconds
 * (JSON.parse and the profiler walk cannot yield); on the service's own thread that would freeze
 * every other request and the event stream under `spillway serve` and in Electron's main process.
 *
 * - Started on first use, terminated by close(); unref'd while idle, so it never keeps a process alive.
 * - Tasks run one at a time, in order. Input bytes are transferred (their ArrayBuffer moves to the
 *   worker, nothing is copied) when they fill their buffer; text is decoded in the worker.
 * - Cancellation: a queued task is dropped; a running one stops its thread (worker.terminate),
 *   and the next task starts a fresh worker.
 * - A crash (an uncaught error, the thread exiting) rejects the running task with ServiceError
 *   INTERNAL; the next task starts a fresh worker. No heap limit is set: V8 cannot stop a
 *   JSON.parse that passes one, and the whole process would die instead of the worker.
 * - Inputs up to `inlineMaxBytes` run on the calling thread: a round trip costs more than they do.
 *   If the worker's entry file cannot be found, everything runs inline (with one warning).
 *
 * Where the entry is: next to this module, with this module's own extension. From source (tsx,
 * vitest) that is compute-worker.ts, loaded through tsx's loader, which a worker does not inherit
 * from vitest; from the compiled library dist/lib/service/compute-worker.js; in the Electron
 * bundle (dist/electron/main.mjs) dist/electron/compute-worker.mjs, which
 * scripts/build-electron.mjs bundles next to it.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SummaryOutput } from '../pipeline/types.js';
import { ServiceError, type ErrorCode } from './contract.js';
import { analyzeContent, structuralFile, structuralRun, type AnalyzeContentOptions, type AnalyzeContentResult, type StructuralRequest } from './heavy.js';
import { parseRequestBody } from './json-body.js';
import { scoreSummary, type ScoreInput, type SummaryScores } from '../summarize/index.js';
import type { MethodName } from './contract.js';

/** Inputs up to this size run on the calling thread (a few ms of work; a worker round trip costs about as much). */
export const COMPUTE_INLINE_MAX_BYTES = 1024 * 1024;

/** What the service's thread posts to the worker. `bytes` is transferred. */
export type ComputeTask = { id: number; bytes: ArrayBuffer; byteLength: number } & TaskBody;

export type ComputeReply =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: { name: string; message: string; code?: string } };

export interface ComputePoolOptions {
  /** Inputs up to this many bytes run inline (default COMPUTE_INLINE_MAX_BYTES; 0 sends everything to the worker). */
  inlineMaxBytes?: number;
  /**
   * Where each new worker starts (default: locateWorkerEntry()). Asked again at every start, so a
   * crashed worker's successor may come from elsewhere (tests start a crashing one first).
   */
  workerEntry?: () => { file: string; source: boolean } | null;
  onWarning?: (message: string) => void;
}

export interface RunOptions {
  signal?: AbortSignal;
}

export interface ComputePool {
  /**
   * Offline structural summary of UTF-8 `bytes` (+ `suffix`). The bytes are handed over: when
   * they fill their ArrayBuffer it is transferred, and the caller must not use them afterwards.
   */
  structural(bytes: Buffer, suffix: string, req: StructuralRequest, opts?: RunOptions): Promise<SummaryOutput>;
  /** Offline structural summary of a payload file (a confined, real path), which the worker reads itself. */
  structuralFile(path: string, req: StructuralRequest, opts?: RunOptions): Promise<SummaryOutput>;
  /** analyze's work on dropped bytes (handed over as for `structural`). */
  analyze(bytes: Buffer, opts: AnalyzeContentOptions, run?: RunOptions): Promise<AnalyzeContentResult>;
  /**
   * A summary's scores without a judge (scores.ts), always on the worker whatever the size: an
   * experiment scores item after item, and the anchor pass over a payload costs about as much as
   * its structural summary, which the calling thread is busy with meanwhile.
   */
  score(input: ScoreInput, run?: RunOptions): Promise<SummaryScores>;
  /** A transport's JSON request body, depth-checked, parsed and validated for `method` (json-body.ts); bytes handed over. */
  parseRequest(method: MethodName, bytes: Buffer, run?: RunOptions): Promise<unknown>;
  /** Whether a worker thread is running now. */
  readonly running: boolean;
  /** Whether the worker is working on a task now. */
  readonly busy: boolean;
  /** Stop the worker; running and queued tasks fail with UNAVAILABLE. */
  close(): Promise<void>;
}

export type TaskBody =
  | { op: 'structural'; suffix: string; req: StructuralRequest }
  | { op: 'structural-file'; path: string; req: StructuralRequest }
  | { op: 'analyze'; opts: AnalyzeContentOptions }
  | { op: 'parse-request'; method: MethodName }
  | { op: 'score'; input: Omit<ScoreInput, 'payload'> };

interface Job {
  task: ComputeTask;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

const ERROR_CODES: readonly ErrorCode[] = ['BAD_REQUEST', 'NOT_FOUND', 'FORBIDDEN_PATH', 'UNAVAILABLE', 'INTERNAL'];

function cancelled(signal: AbortSignal): unknown {
  const r: unknown = signal.reason;
  return r instanceof Error ? r : new ServiceError('UNAVAILABLE', 'the work was cancelled');
}

/** One task, on whichever thread calls this (the worker's, or the service's for small inputs). */
export function runTask(bytes: Buffer, body: TaskBody): Promise<unknown> {
  if (body.op === 'structural') return structuralRun(bytes, body.suffix, body.req);
  if (body.op === 'structural-file') return structuralFile(body.path, body.req);
  if (body.op === 'parse-request') return Promise.resolve().then(() => parseRequestBody(body.method, bytes));
  if (body.op === 'score') return Promise.resolve().then(() => scoreSummary({ ...body.input, payload: bytes.toString('utf8') }));
  return analyzeContent(bytes, body.opts);
}

/** The worker's answer to a failed task, as the error the contract promises. */
function fromReply(e: { name: string; message: string; code?: string }): ServiceError {
  if (e.code && (ERROR_CODES as readonly string[]).includes(e.code)) return new ServiceError(e.code as ErrorCode, e.message);
  if (e.code === 'ENOENT') return new ServiceError('NOT_FOUND', e.message);
  if (e.code === 'EACCES' || e.code === 'EPERM') return new ServiceError('FORBIDDEN_PATH', e.message);
  return new ServiceError('INTERNAL', e.message);
}

/** The bytes as an ArrayBuffer to transfer: the Buffer's own when it fills it, else one copy. */
function transferable(bytes: Buffer): ArrayBuffer {
  const ab = bytes.buffer;
  if (ab instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === ab.byteLength) return ab;
  const copy = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(copy).set(bytes);
  return copy;
}

/** The worker's entry next to this module (see the header), or null when it is not there. */
export function locateWorkerEntry(moduleUrl: string = import.meta.url): { file: string; source: boolean } | null {
  const here = fileURLToPath(moduleUrl);
  const ext = path.extname(here);
  const file = path.join(path.dirname(here), `compute-worker${ext}`);
  if (!fs.existsSync(file)) return null;
  return { file, source: ext === '.ts' || ext === '.mts' };
}

/**
 * A TypeScript entry needs tsx's loader in the worker's own thread (vitest's transform does not
 * reach worker threads): a tiny CommonJS bootstrap registers it, then imports the entry.
 */
const TSX_BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
import(workerData.tsxApi).then((m) => { m.register(); return import(workerData.entry); });
`;

/** tsx's ESM register() API (require.resolve would give its CommonJS build, which cannot register ESM hooks). */
function tsxEsmApi(): string {
  const pkgFile = createRequire(import.meta.url).resolve('tsx/package.json');
  const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
  return path.join(path.dirname(pkgFile), pkg.exports['./esm/api']!.import.default);
}

function spawn(entry: { file: string; source: boolean }): Worker {
  if (!entry.source) return new Worker(entry.file);
  const tsxApi = pathToFileURL(tsxEsmApi()).href;
  return new Worker(TSX_BOOTSTRAP, {
    eval: true,
    // The worker's modules resolve by relative paths only: no custom conditions needed.
    execArgv: [],
    workerData: { tsxApi, entry: pathToFileURL(entry.file).href },
  });
}

export function createComputePool(opts: ComputePoolOptions = {}): ComputePool {
  const inlineMaxBytes = opts.inlineMaxBytes ?? COMPUTE_INLINE_MAX_BYTES;
  const warn = opts.onWarning ?? (() => undefined);
  let available: boolean | undefined;
  let worker: Worker | undefined;
  let current: Job | undefined;
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;

  const settle = (job: Job) => {
    job.signal?.removeEventListener('abort', job.onAbort!);
    if (current === job) current = undefined;
    const i = queue.indexOf(job);
    if (i !== -1) queue.splice(i, 1);
  };

  /** Forget a worker (it stopped, crashed or was stopped); its late events are ignored. */
  const drop = (w: Worker) => {
    if (worker !== w) return;
    worker = undefined;
    void w.terminate().catch(() => undefined);
  };

  const failCurrent = (w: Worker, err: unknown) => {
    if (worker !== w) return;
    const job = current;
    drop(w);
    if (job) {
      settle(job);
      job.reject(err);
    }
    pump();
  };

  const locate = opts.workerEntry ?? (() => locateWorkerEntry());

  const start = (): Worker => {
    const e = locate();
    if (!e) throw new ServiceError('INTERNAL', "the compute worker's entry file is missing");
    const w = spawn(e);
    w.on('message', (reply: ComputeReply) => {
      if (worker !== w || !current || reply.id !== current.task.id) return;
      const job = current;
      settle(job);
      w.unref();
      if (reply.ok) job.resolve(reply.result);
      else job.reject(fromReply(reply.error));
      pump();
    });
    w.on('error', (err) => failCurrent(w, new ServiceError('INTERNAL', `the service's compute worker failed: ${err.message}`)));
    w.on('exit', (code) => failCurrent(w, new ServiceError('INTERNAL', `the service's compute worker stopped (exit code ${code})`)));
    w.unref();
    return w;
  };

  function pump(): void {
    if (current || closed) return;
    const job = queue.shift();
    if (!job) return;
    if (!worker) {
      try {
        worker = start();
      } catch (err) {
        settle(job);
        job.reject(err instanceof ServiceError ? err : new ServiceError('INTERNAL', `the compute worker could not start: ${(err as Error).message}`));
        pump();
        return;
      }
    }
    current = job;
    worker.ref();
    worker.postMessage(job.task, [job.task.bytes]);
  }

  const run = (bytes: Buffer, body: TaskBody, signal: AbortSignal | undefined, size = bytes.byteLength): Promise<unknown> => {
    if (closed) return Promise.reject(new ServiceError('UNAVAILABLE', 'the service is closed'));
    if (signal?.aborted) return Promise.reject(cancelled(signal));
    if (size <= inlineMaxBytes) return runTask(bytes, body);
    if (available === undefined) {
      available = opts.workerEntry !== undefined || locateWorkerEntry() !== null;
      if (!available) warn(`the compute worker's entry is missing next to ${fileURLToPath(import.meta.url)}; heavy work runs on the service's thread`);
    }
    if (!available) return runTask(bytes, body);
    return new Promise((resolve, reject) => {
      const task = { ...body, id: nextId++, bytes: transferable(bytes), byteLength: bytes.byteLength } as ComputeTask;
      const job: Job = { task, resolve, reject, signal };
      job.onAbort = () => {
        const running = current === job;
        settle(job);
        // A task cannot be interrupted inside its thread (JSON.parse does not yield): stop the thread.
        if (running && worker) drop(worker);
        reject(cancelled(signal!));
        pump();
      };
      signal?.addEventListener('abort', job.onAbort, { once: true });
      queue.push(job);
      pump();
    });
  };

  return {
    structural: (bytes, suffix, req, o) => run(bytes, { op: 'structural', suffix, req }, o?.signal) as Promise<SummaryOutput>,
    structuralFile: async (p, req, o) => {
      const size = (await fs.promises.stat(p)).size;
      return run(Buffer.alloc(0), { op: 'structural-file', path: p, req }, o?.signal, size) as Promise<SummaryOutput>;
    },
    analyze: (bytes, aopts, o) => run(bytes, { op: 'analyze', opts: aopts }, o?.signal) as Promise<AnalyzeContentResult>,
    parseRequest: (method, bytes, o) => run(bytes, { op: 'parse-request', method }, o?.signal),
    score: ({ payload, ...input }, o) => run(Buffer.from(payload, 'utf8'), { op: 'score', input }, o?.signal, Number.POSITIVE_INFINITY) as Promise<SummaryScores>,
    get running() {
      return worker !== undefined;
    },
    get busy() {
      return current !== undefined;
    },
    async close() {
      if (closed) return;
      closed = true;
      const err = new ServiceError('UNAVAILABLE', 'the service is closed');
      for (const job of [...(current ? [current] : []), ...queue]) {
        settle(job);
        job.reject(err);
      }
      const w = worker;
      worker = undefined;
      await w?.terminate().catch(() => undefined);
    },
  };
}
