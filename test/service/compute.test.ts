import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleLargeResponse } from '../../src/pipeline/index.js';
import { ServiceError, type AnalyzeResponse, type SummaryRun } from '../../src/service/contract.js';
import { createComputePool, locateWorkerEntry } from '../../src/service/compute.js';
import { structuralRun } from '../../src/service/heavy.js';
import { createInspectorService, type InspectorService } from '../../src/service/service.js';

/**
 * The service's compute worker (src/service/compute.ts): the offline structural summary and the
 * analysis of a dropped file run in a worker thread for big inputs. Real files, a real index, a
 * real worker thread loading the TypeScript sources.
 */

let tmp: string;
let root: string;
let ids: Record<string, string>;

/** `bytes` of JSON: one array of order records. */
function jsonText(bytes: number): string {
  const parts: string[] = [];
  for (let i = 0, size = 2; size < bytes; i++) {
    const r = JSON.stringify({
      id: `ord_${i}`,
      customer: { id: i % 4_093, tier: ['free', 'pro', 'team'][i % 3] },
      items: [{ sku: `sku-${i % 701}`, qty: 1 + (i % 4), price: (i % 9_973) / 100 }],
      status: i % 17 ? 'paid' : 'failed',
    });
    parts.push(r);
    size += r.length + 1;
  }
  return `[${parts.join(',')}]`;
}

function logText(lines: number): string {
  return Array.from({ length: lines }, (_, i) => {
    const ts = new Date(Date.UTC(2026, 10, 30) + i * 37).toISOString();
    return i % 501 === 0 ? `${ts} ERROR payments charge failed for order ${i}: card_declined` : `${ts} INFO orders request ok id=${i} in ${i % 50}ms`;
  }).join('\n');
}

const TEXTS: Record<string, () => string> = {
  log: () => logText(60_000),
  json: () => jsonText(3 * 1024 * 1024),
  ndjson: () => Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ i, ok: i % 7 !== 0, tag: `t${i % 13}` })).join('\n'),
  csv: () => ['id,name,amount', ...Array.from({ length: 40_000 }, (_, i) => `${i},name ${i % 97},${(i * 13) % 1000}.5`)].join('\n'),
  big: () => jsonText(24 * 1024 * 1024),
};

/** Every service here shares one app-data folder (one index): payload ids stay the same. */
function service(opts: Partial<Parameters<typeof createInspectorService>[0]> = {}): InspectorService {
  return createInspectorService({ env: process.env, appDataDir: path.join(tmp, 'home'), roots: [root], transport: 'electron', scanOnStart: false, watch: false, ...opts });
}

async function payloadIds(svc: InspectorService): Promise<Record<string, string>> {
  await svc.ready;
  await svc.reindex({});
  const out: Record<string, string> = {};
  for (const name of Object.keys(TEXTS)) out[name] = (await svc.listPayloads({ tool: `t_${name}`, limit: 1 })).rows[0]!.id;
  return out;
}

/** A run without what differs between two runs of the same summary (id, time, latency). */
function comparable(run: SummaryRun): Partial<SummaryRun> {
  const { id: _id, createdAt: _c, ms: _ms, ...rest } = run;
  return rest;
}

/** An analysis without what differs between two analyses of the same file (ids, latencies, scratch folder and file names). */
function comparableAnalysis(a: AnalyzeResponse): unknown {
  const { payloadId: _p, sessionId: _s, ...rest } = a;
  const stems = /\d{8}T\d{9}Z_[^\s/)]*/g;
  return {
    ...rest,
    decision: { ...rest.decision, message: rest.decision.message?.replace(stems, '<stem>') },
    estimate: { ...rest.estimate, estimates: rest.estimate.estimates.map(({ ms: _ms, ...e }) => e) },
  };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => null,
    (e: unknown) => e,
  );
}

/** A call in flight: whether it has settled, and how. */
function track<T>(p: Promise<T>): { done: boolean; settled: Promise<{ value?: T; error?: unknown }> } {
  const t = {
    done: false,
    settled: p.then(
      (value) => {
        t.done = true;
        return { value };
      },
      (error: unknown) => {
        t.done = true;
        return { error };
      },
    ),
  };
  return t;
}

/** Wait until the service's compute worker has a task (the work has left the service's thread). */
async function untilBusy(svc: InspectorService, call: { done: boolean }): Promise<void> {
  while (!svc.computeBusy) {
    if (call.done) throw new Error('the work finished without ever reaching the compute worker');
    await new Promise((r) => setTimeout(r, 2));
  }
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-compute-'));
  root = path.join(tmp, 'root');
  for (const [name, make] of Object.entries(TEXTS)) {
    await handleLargeResponse({ text: make(), sessionPath: path.join(root, 'session'), context: { toolName: `t_${name}`, limitTokens: 100 } });
  }
  const svc = service();
  try {
    ids = await payloadIds(svc);
  } finally {
    await svc.close();
  }
}, 180_000);

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the compute worker', () => {
  it('is found next to its module: the TypeScript source here, compute-worker.js beside a compiled compute.js', () => {
    const here = locateWorkerEntry();
    expect(here?.source).toBe(true);
    expect(here?.file).toBe(path.resolve(import.meta.dirname, '../../src/service/compute-worker.ts'));
    const dist = fs.mkdtempSync(path.join(tmp, 'dist-'));
    fs.writeFileSync(path.join(dist, 'compute-worker.js'), '');
    expect(locateWorkerEntry(`file://${path.join(dist, 'compute.js')}`)).toEqual({ file: path.join(dist, 'compute-worker.js'), source: false });
    // The Electron bundle: main.mjs with compute-worker.mjs beside it; a missing entry means "run inline".
    expect(locateWorkerEntry(`file://${path.join(dist, 'main.mjs')}`)).toBeNull();
  });

  it('gives the same structural summary as the service thread, and transfers the input instead of copying it', async () => {
    const pool = createComputePool({ inlineMaxBytes: 0 });
    try {
      const text = TEXTS.log!();
      const inline = await structuralRun(Buffer.from(text), '\n[… 10 more bytes not read]', { focus: 'payment failures', maxOutputTokens: 800 });
      const bytes = Buffer.from(text);
      const size = bytes.byteLength;
      const viaWorker = await pool.structural(bytes, '\n[… 10 more bytes not read]', { focus: 'payment failures', maxOutputTokens: 800 });
      expect(pool.running).toBe(true);
      expect({ ...viaWorker, ms: 0 }).toEqual({ ...inline, ms: 0 });
      expect(viaWorker.summary).toContain('card_declined');
      expect(viaWorker.summary).toContain('more bytes not read');
      // The buffer's memory moved to the worker: nothing was cloned.
      expect(size).toBeGreaterThan(0);
      expect(bytes.buffer.byteLength).toBe(0);
    } finally {
      await pool.close();
    }
    expect(pool.running).toBe(false);
  });

  it('service: summaries and analyses through the worker equal those on the service thread', async () => {
    const worker = service({ computeInlineMaxBytes: 0 });
    const inline = service({ computeInlineMaxBytes: Number.POSITIVE_INFINITY });
    try {
      const [wIds, iIds] = [ids, ids];
      for (const name of ['log', 'json', 'ndjson', 'csv']) {
        const a = await worker.summarize({ payloadId: wIds[name]!, focus: 'failed' });
        const b = await inline.summarize({ payloadId: iIds[name]!, focus: 'failed' });
        expect(a.status, `${name}: ${a.error ?? ''}`).toBe('ok');
        expect(comparable(a), name).toEqual(comparable(b));
      }
      expect(worker.computeBusy).toBe(false);
      const drop = path.join(tmp, 'drop.csv');
      fs.writeFileSync(drop, TEXTS.csv!());
      const before = fs.readFileSync(drop);
      worker.allowDroppedFile(drop);
      inline.allowDroppedFile(drop);
      const a = await worker.analyze({ name: 'drop.csv', path: drop, limitTokens: 2_000 });
      const b = await inline.analyze({ name: 'drop.csv', path: drop, limitTokens: 2_000 });
      expect(a.decision.action).toBe('spill');
      expect(comparableAnalysis(a)).toEqual(comparableAnalysis(b));
      expect(fs.readFileSync(drop).equals(before)).toBe(true);
      // The worker's scratch save is indexed and opens in the viewer like any payload.
      const opened = await worker.readPayload({ id: a.payloadId!, start: 0, end: 40 });
      expect(opened.text).toBe(before.subarray(0, 40).toString('utf8'));
      const small = await worker.analyze({ name: 'pasted.txt', text: 'hello world', limitTokens: 2_000 });
      expect(small.decision.action).toBe('pass');
      expect(small.kind).toBe('text');
    } finally {
      await worker.close();
      await inline.close();
    }
  });

  it('answers a cheap request while a big summary runs, then records the summary', async () => {
    const svc = service();
    try {
      await svc.ready;
      const summary = track(svc.summarize({ payloadId: ids.big! }));
      await untilBusy(svc, summary);
      const page = await svc.listPayloads({ limit: 5 });
      // Answered while the worker still held the summary.
      expect(page.rows.length).toBeGreaterThan(0);
      expect(svc.computeBusy).toBe(true);
      expect(summary.done).toBe(false);
      const run = (await summary.settled).value!;
      expect(run.status).toBe('ok');
      expect(run.summary).toMatch(/^JSON array of [\d,]+ items/);
      expect((await svc.getPayload({ id: ids.big! })).summaryRuns.map((r) => r.id)).toContain(run.id);
    } finally {
      await svc.close();
    }
  });

  it('cancels: an aborted summary stops the worker and records nothing; an aborted analysis leaves no scratch session; the next call works', async () => {
    const svc = service({ computeInlineMaxBytes: 0 });
    try {
      await svc.ready;
      const runsBefore = (await svc.getPayload({ id: ids.big! })).summaryRuns.length;
      const ac = new AbortController();
      const p = track(svc.summarize({ payloadId: ids.big! }, { signal: ac.signal }));
      await untilBusy(svc, p);
      ac.abort();
      const err = (await p.settled).error;
      expect(err).toBeInstanceOf(ServiceError);
      expect((err as ServiceError).code).toBe('UNAVAILABLE');
      expect(svc.computeBusy).toBe(false);
      expect((await svc.getPayload({ id: ids.big! })).summaryRuns.length).toBe(runsBefore);

      const drop = path.join(tmp, 'big-drop.json');
      fs.writeFileSync(drop, TEXTS.big!());
      const scratch = path.join(svc.appDataDir, 'scratch');
      const before = fs.readdirSync(scratch);
      const ac2 = new AbortController();
      svc.allowDroppedFile(drop);
      const a = track(svc.analyze({ name: 'big-drop.json', path: drop }, { signal: ac2.signal }));
      await untilBusy(svc, a);
      ac2.abort(new ServiceError('UNAVAILABLE', 'the client went away'));
      const err2 = (await a.settled).error;
      expect((err2 as ServiceError).message).toBe('the client went away');
      expect(fs.readdirSync(scratch)).toEqual(before);
      // An already aborted signal never starts the work.
      expect(await rejection(svc.analyze({ name: 'x.txt', text: 'x' }, { signal: AbortSignal.abort() }))).toBeInstanceOf(ServiceError);

      const again = await svc.summarize({ payloadId: ids.log!, focus: 'card_declined' });
      expect(again.status).toBe('ok');
      expect(again.summary).toContain('card_declined');
    } finally {
      await svc.close();
    }
  });

  it('a worker that crashes (an uncaught error, or the thread exiting) gives a clean INTERNAL error; the next worker serves the next call', async () => {
    // Stand-ins for a worker that dies mid-task; every later start gets the real entry.
    const throwing = path.join(tmp, 'throwing-worker.mjs');
    fs.writeFileSync(throwing, "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => { throw new Error('boom in the worker'); });\n");
    const exiting = path.join(tmp, 'exiting-worker.mjs');
    fs.writeFileSync(exiting, "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => process.exit(70));\n");
    const entries = [{ file: throwing, source: false }, locateWorkerEntry(), { file: exiting, source: false }, locateWorkerEntry()];
    const pool = createComputePool({ inlineMaxBytes: 0, workerEntry: () => entries.shift() ?? locateWorkerEntry() });
    const text = TEXTS.csv!();
    const expected = await structuralRun(Buffer.from(text), '', { maxOutputTokens: 500 });
    try {
      const e1 = await rejection(pool.structural(Buffer.from(text), '', { maxOutputTokens: 500 }));
      expect(e1).toBeInstanceOf(ServiceError);
      expect((e1 as ServiceError).code).toBe('INTERNAL');
      expect((e1 as ServiceError).message).toMatch(/compute worker failed: boom in the worker/);
      expect({ ...(await pool.structural(Buffer.from(text), '', { maxOutputTokens: 500 })), ms: 0 }).toEqual({ ...expected, ms: 0 });
      // The next worker is the exiting one: started for the next task after the real one is dropped.
      const exitingPool = createComputePool({ inlineMaxBytes: 0, workerEntry: () => entries.shift() ?? locateWorkerEntry() });
      try {
        const e2 = await rejection(exitingPool.structural(Buffer.from(text), '', { maxOutputTokens: 500 }));
        expect((e2 as ServiceError).code).toBe('INTERNAL');
        expect((e2 as ServiceError).message).toMatch(/exit code 70/);
        expect((await exitingPool.structural(Buffer.from(text), '', { maxOutputTokens: 500 })).summary).toBe(expected.summary);
      } finally {
        await exitingPool.close();
      }
    } finally {
      await pool.close();
    }
  });

  it('close() fails the running task with UNAVAILABLE and stops the thread', async () => {
    const svc = service({ computeInlineMaxBytes: 0 });
    await svc.ready;
    const p = track(svc.summarize({ payloadId: ids.big! }));
    await untilBusy(svc, p);
    await svc.close();
    const r = await p.settled;
    // The run fails (recorded as an error run where the index is still open, else the request fails); nothing hangs.
    if (r.error) expect((r.error as ServiceError).code).toBe('UNAVAILABLE');
    else expect(r.value!.status).toBe('error');
    expect(svc.computeBusy).toBe(false);
  });
});
