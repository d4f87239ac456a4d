/**
 * `npm run bench service`: the inspector service and `spillway serve`, each figure against a
 * baseline measured in the same run.
 *
 *   - first window of a 100 MB payload      vs the first window of a 1 KB payload (goal: ratio ≈ 1)
 *   - a line window at the END of 100 MB    vs the first window of 100 MB (cold line index)
 *   - getPayload + first window of 100 MB   vs the same for 1 KB (what the viewer does on open)
 *   - POST /api/listPayloads over HTTP      vs calling the service directly
 *   - longest event-loop stall while the service indexes N payloads, estimates 16 MB exactly and
 *     analyzes a 16 MB drop, vs the longest stall of an idle loop over the same time
 *     (goal: under ~50 ms for the service's own work)
 *   - heavy one-off work (offline structural summaries of a 50 MB log and a 50 MB JSON payload,
 *     analyze of a 50 MB dropped file): the longest event-loop stall, the time it takes, and how
 *     long a listPayloads issued meanwhile waits, against reading the same file (fs.readFile)
 *     and an idle loop in the same run. SPILLWAY_BENCH_SERVICE=heavy runs only this part.
 *
 * SPILLWAY_BENCH_SCALE scales the payload counts and the big sizes (default 1).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { handleLargeResponse } from '../src/pipeline/index.js';
import { startServer } from '../src/server/server.js';
import { createInspectorService, type InspectorService } from '../src/service/service.js';
import { generateSessionsRoot } from '../test/helpers/gen-sessions.js';

const SCALE = Number(process.env.SPILLWAY_BENCH_SCALE ?? '1') || 1;
const BIG_BYTES = Math.round(100 * 1024 * 1024 * SCALE);
const INDEX_PAYLOADS = Math.max(50, Math.round(1_000 * SCALE));
const DROP_BYTES = Math.round(16 * 1024 * 1024 * SCALE);
const REPEATS = 15;
const HEAVY_BYTES = Math.round(50 * 1024 * 1024 * SCALE);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** Longest gap between timer ticks while `fn` runs: how long the event loop was held. */
async function longestStall(fn: () => Promise<unknown>): Promise<{ ms: number; stallMs: number }> {
  let last = performance.now();
  let worst = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  const t0 = performance.now();
  await fn();
  const ms = performance.now() - t0;
  clearInterval(tick);
  worst = Math.max(worst, performance.now() - last);
  return { ms, stallMs: worst };
}

/** A spilled payload of `bytes` bytes: written by the guard small, then grown to size on disk. */
async function bigPayload(session: string, bytes: number): Promise<void> {
  const seed = Array.from({ length: 2_000 }, (_, i) => `2026-11-30T08:00:${String(i % 60).padStart(2, '0')}Z INFO request ${i} ${crypto.randomBytes(12).toString('hex')} done in ${i % 997} ms`).join('\n') + '\n';
  const res = await handleLargeResponse({ text: seed, sessionPath: session, context: { toolName: 'big_log', limitTokens: 100 } });
  const fd = fs.openSync(res.payloadPath!, 'a');
  const block = Buffer.from(seed.repeat(Math.max(1, Math.floor((4 * 1024 * 1024) / seed.length))));
  let size = fs.fstatSync(fd).size;
  while (size < bytes) {
    const n = Math.min(block.length, bytes - size);
    fs.writeSync(fd, block, 0, n);
    size += n;
  }
  fs.closeSync(fd);
}

function printTable({ rows, notes }: { rows: string[]; notes: string[] }): void {
  console.log(`| ${'figure'.padEnd(50)} | ${'value'.padStart(12)} | ${'baseline'.padStart(12)} | ${'ratio'.padStart(6)} |`);
  console.log(`| ${'-'.repeat(50)} | ${'-'.repeat(12)} | ${'-'.repeat(12)} | ${'-'.repeat(6)} |`);
  for (const r of rows) console.log(r);
  console.log(`(${notes.join('; ')})`);
}

function row(name: string, value: string, baseline: string, ratio: number): string {
  return `| ${name.padEnd(50)} | ${value.padStart(12)} | ${baseline.padStart(12)} | ${ratio.toFixed(2).padStart(6)} |`;
}

/** `bytes` of log lines like a service's: timestamps, levels, ids; a few errors and warnings. */
function logText(bytes: number): string {
  const parts: string[] = [];
  const svcs = ['auth', 'orders', 'inventory', 'search'];
  for (let i = 0, size = 0; size < bytes; i++) {
    const ts = new Date(Date.UTC(2026, 10, 30) + i * 37).toISOString();
    const l =
      i % 997 === 0
        ? `${ts} WARN ${svcs[i % 4]} slow request took ${100 + (i % 900)}ms path=/api/v1/items/${i}`
        : i % 5003 === 0
          ? `${ts} ERROR ${svcs[i % 4]} upstream timeout after 30000ms host=10.0.${i % 255}.${i % 7}`
          : `${ts} INFO ${svcs[i % 4]} request ok id=${i} user=u${i % 1000} payment status checked in ${i % 50}ms`;
    parts.push(l);
    size += l.length + 1;
  }
  return parts.join('\n') + '\n';
}

/** `bytes` of JSON: one array of API records (ids, numbers, nested objects, a little base64). */
function jsonText(bytes: number): string {
  const parts: string[] = [];
  for (let i = 0, size = 2; size < bytes; i++) {
    const r = JSON.stringify({
      id: `ord_${i.toString(36).padStart(8, '0')}`,
      at: new Date(Date.UTC(2026, 10, 30, 8, 0, i % 60)).toISOString(),
      customer: { id: i % 4_093, name: `Customer ${i % 4_093}`, tier: ['free', 'pro', 'team'][i % 3] },
      items: [{ sku: `sku-${i % 701}`, qty: 1 + (i % 4), price: (i % 9_973) / 100 }],
      status: i % 17 ? 'paid' : 'failed',
      note: i % 97 ? null : crypto.createHash('sha256').update(String(i)).digest('base64'),
    });
    parts.push(r);
    size += r.length + 1;
  }
  return `[${parts.join(',')}]`;
}

/**
 * While `fn` runs, a cheap request (listPayloads) is issued every 100 ms; its worst wait says
 * what another pane of the UI would feel.
 */
async function stallWithProbe(svc: InspectorService, fn: () => Promise<unknown>): Promise<{ ms: number; stallMs: number; probeMs: number }> {
  let stop = false;
  let probeMs = 0;
  const probes = (async () => {
    while (!stop) {
      // Counted from when the request was due: a held loop delays the timer as much as the answer.
      const due = performance.now() + 100;
      await new Promise((r) => setTimeout(r, 100));
      if (stop) break;
      await svc.listPayloads({ limit: 20 });
      probeMs = Math.max(probeMs, performance.now() - due);
    }
  })();
  try {
    const r = await longestStall(fn);
    return { ...r, probeMs };
  } finally {
    stop = true;
    await probes;
  }
}

/** The heavy one-off work of the service, each against reading the same file in the same run. */
async function heavyRows(tmp: string): Promise<{ rows: string[]; notes: string[] }> {
  const rows: string[] = [];
  const notes: string[] = [];
  const root = path.join(tmp, 'heavy');
  const session = path.join(root, 'session');
  const log = logText(HEAVY_BYTES);
  const json = jsonText(HEAVY_BYTES);
  await handleLargeResponse({ text: log, sessionPath: session, context: { toolName: 'heavy_log', limitTokens: 100 } });
  await handleLargeResponse({ text: json, sessionPath: session, context: { toolName: 'heavy_json', limitTokens: 100 } });
  const dropPath = path.join(tmp, 'drop.json');
  fs.writeFileSync(dropPath, json);
  const mb = (HEAVY_BYTES / 1e6).toFixed(0);
  const svc = createInspectorService({ env: process.env, appDataDir: path.join(tmp, 'heavy-home'), roots: [root], transport: 'http', scanOnStart: false, watch: false });
  svc.allowDroppedFile(dropPath);
  try {
    await svc.ready;
    await svc.reindex({});
    const logRow = (await svc.listPayloads({ tool: 'heavy_log', limit: 1 })).rows[0]!;
    const jsonRow = (await svc.listPayloads({ tool: 'heavy_json', limit: 1 })).rows[0]!;
    const logPath = (await svc.getPayload({ id: logRow.id })).path;
    // Warm what every run loads once (tokenizer tables, the structural code, a worker if any).
    await svc.summarize({ payloadId: (await svc.listPayloads({ limit: 1, sort: { field: 'tokens', dir: 'asc' } })).rows[0]!.id });
    await svc.analyze({ name: 'warm.txt', text: 'warm up' });
    const idle = await stallWithProbe(svc, () => new Promise((r) => setTimeout(r, 1_000)));
    const read = await stallWithProbe(svc, () => fs.promises.readFile(logPath));
    const base = Math.max(read.stallMs, 1);
    rows.push(row('max stall, idle loop (ms)', idle.stallMs.toFixed(1), read.stallMs.toFixed(1), idle.stallMs / base));
    const cases: Array<[string, () => Promise<unknown>]> = [
      [`structural summary, ${mb} MB log`, () => svc.summarize({ payloadId: logRow.id, focus: 'payment failures' })],
      [`structural summary, ${mb} MB JSON`, () => svc.summarize({ payloadId: jsonRow.id })],
      [`analyze ${mb} MB dropped JSON file`, () => svc.analyze({ name: 'drop.json', path: dropPath })],
    ];
    for (const [name, fn] of cases) {
      const r = await stallWithProbe(svc, fn);
      rows.push(row(`max stall, ${name} (ms)`, r.stallMs.toFixed(1), read.stallMs.toFixed(1), r.stallMs / base));
      rows.push(row('  worst listPayloads wait meanwhile (ms)', r.probeMs.toFixed(1), idle.probeMs.toFixed(1), r.probeMs / Math.max(idle.probeMs, 0.1)));
      notes.push(`${name}: ${r.ms.toFixed(0)} ms`);
    }
    notes.push(`baseline: fs.readFile of the ${mb} MB log ${read.ms.toFixed(0)} ms`);
  } finally {
    await svc.close();
  }
  return { rows, notes };
}

export async function run(): Promise<void> {
  if (process.env.SPILLWAY_BENCH_SERVICE === 'heavy') {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-service-'));
    try {
      printTable(await heavyRows(tmp));
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
    return;
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-service-'));
  const rows: string[] = [];
  let svc: InspectorService | undefined;
  try {
    const root = path.join(tmp, 'root');
    const bigSession = path.join(root, 'big');
    const smallSession = path.join(root, 'small');
    await bigPayload(bigSession, BIG_BYTES);
    await handleLargeResponse({ text: 'x'.repeat(1024), sessionPath: smallSession, context: { toolName: 'small', limitTokens: 1 } });
    const gen = await generateSessionsRoot(path.join(tmp, 'many'), { sessions: 10, payloads: INDEX_PAYLOADS, seed: 1 });

    svc = createInspectorService({ env: process.env, appDataDir: path.join(tmp, 'home'), roots: [root], transport: 'http', scanOnStart: false, watch: false });
    await svc.ready;
    await svc.reindex({});
    const big = (await svc.listPayloads({ tool: 'big_log', limit: 1 })).rows[0]!;
    const small = (await svc.listPayloads({ tool: 'small', limit: 1 })).rows[0]!;

    // Cold first windows: a fresh service each time, so no line index or cache is warm.
    const firstWindow = async (id: string, withDetail: boolean) => {
      const s = createInspectorService({ env: process.env, appDataDir: path.join(tmp, 'home'), transport: 'http', scanOnStart: false, watch: false });
      await s.ready;
      try {
        return await time(async () => {
          if (withDetail) await s.getPayload({ id });
          await s.readPayload({ id, startLine: 0, lineCount: 200 });
        });
      } finally {
        await s.close();
      }
    };
    // The very first open of the big payload: the index has never counted its lines.
    const coldSmall = await firstWindow(small.id, true);
    const coldBig = await firstWindow(big.id, true);
    const firstBig: number[] = [];
    const firstSmall: number[] = [];
    const openBig: number[] = [];
    const openSmall: number[] = [];
    for (let i = 0; i < 5; i++) {
      firstSmall.push(await firstWindow(small.id, false));
      firstBig.push(await firstWindow(big.id, false));
      openSmall.push(await firstWindow(small.id, true));
      openBig.push(await firstWindow(big.id, true));
    }
    rows.push(row(`first line window, ${(BIG_BYTES / 1e6).toFixed(0)} MB vs 1 KB (ms)`, median(firstBig).toFixed(1), median(firstSmall).toFixed(1), median(firstBig) / median(firstSmall)));
    rows.push(row(`getPayload + first window, ${(BIG_BYTES / 1e6).toFixed(0)} MB vs 1 KB`, median(openBig).toFixed(1), median(openSmall).toFixed(1), median(openBig) / median(openSmall)));
    rows.push(row(`  the same, very first open (ms)`, coldBig.toFixed(1), coldSmall.toFixed(1), coldBig / coldSmall));

    const endCold = await (async () => {
      const s = createInspectorService({ env: process.env, appDataDir: path.join(tmp, 'home'), transport: 'http', scanOnStart: false, watch: false });
      await s.ready;
      try {
        const totalLines = (await s.getPayload({ id: big.id })).totalLines;
        return await time(() => s.readPayload({ id: big.id, startLine: Math.max(0, totalLines - 200), lineCount: 200 }));
      } finally {
        await s.close();
      }
    })();
    rows.push(row('line window at the end of 100 MB, cold (ms)', endCold.toFixed(1), median(firstBig).toFixed(1), endCold / median(firstBig)));

    // HTTP overhead on a page of 100 rows.
    const server = await startServer({ service: svc, port: 0, staticDir: null });
    try {
      const req = { limit: 100, sort: { field: 'tokens', dir: 'desc' } } as const;
      const direct: number[] = [];
      const http: number[] = [];
      for (let i = 0; i < REPEATS; i++) {
        direct.push(await time(() => svc!.listPayloads(req)));
        http.push(
          await time(async () => {
            const r = await fetch(`${server.origin}/api/listPayloads`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` },
              body: JSON.stringify(req),
            });
            await r.json();
          }),
        );
      }
      rows.push(row('listPayloads page of 100: HTTP vs direct (ms)', median(http).toFixed(2), median(direct).toFixed(2), median(http) / median(direct)));
    } finally {
      await server.close();
    }

    // Event-loop stalls while the service works.
    const idle = await longestStall(() => new Promise((r) => setTimeout(r, 1_000)));
    const added = await svc.addRoot({ path: gen.root });
    const indexing = await longestStall(() => svc!.reindex({ rootId: added.id }));
    rows.push(row(`max stall, indexing ${INDEX_PAYLOADS} payloads (ms)`, indexing.stallMs.toFixed(1), idle.stallMs.toFixed(1), indexing.stallMs / idle.stallMs));
    // A realistic drop: JSON lines of an API log (ids, numbers, words, a little base64).
    const lines: string[] = [];
    for (let size = 0, i = 0; size < DROP_BYTES; i++) {
      const l = JSON.stringify({ i, at: new Date(Date.UTC(2026, 10, 30, 8, 0, i % 60)).toISOString(), user: `user-${i % 317}`, path: `/api/v2/items/${i * 7919}`, status: i % 13 ? 200 : 500, ms: (i * 37) % 1000, note: i % 50 ? 'ok' : crypto.randomBytes(48).toString('base64') });
      lines.push(l);
      size += l.length + 1;
    }
    const text = lines.join('\n');
    // Loading the three tokenizers is a one-time, synchronous module evaluation: measured apart.
    const load = await longestStall(() => svc!.estimate({ text: 'warm up', exact: true }));
    rows.push(row('max stall, first exact estimate (tokenizer load)', load.stallMs.toFixed(1), idle.stallMs.toFixed(1), load.stallMs / idle.stallMs));
    const exact = await longestStall(() => svc!.estimate({ text, exact: true }));
    rows.push(row(`max stall, exact estimate of ${(DROP_BYTES / 1e6).toFixed(0)} MB JSON (ms)`, exact.stallMs.toFixed(1), idle.stallMs.toFixed(1), exact.stallMs / idle.stallMs));
    // Adversarial for BPE: one long run with no whitespace or punctuation.
    const hex = crypto.randomBytes(256 * 1024).toString('hex');
    const exactHex = await longestStall(() => svc!.estimate({ text: hex, exact: true }));
    rows.push(row('max stall, exact estimate of 512 KB of hex (ms)', exactHex.stallMs.toFixed(1), idle.stallMs.toFixed(1), exactHex.stallMs / idle.stallMs));
    const window = await longestStall(() => svc!.readPayload({ id: big.id, startLine: 500_000, lineCount: 1_000 }));
    rows.push(row('max stall, line window deep in 100 MB (ms)', window.stallMs.toFixed(1), idle.stallMs.toFixed(1), window.stallMs / idle.stallMs));
    const analyze = await longestStall(() => svc!.analyze({ name: 'drop.txt', text }));
    rows.push(row(`max stall, analyze ${(DROP_BYTES / 1e6).toFixed(0)} MB drop (guard) (ms)`, analyze.stallMs.toFixed(1), idle.stallMs.toFixed(1), analyze.stallMs / idle.stallMs));

    const heavy = await heavyRows(tmp);
    printTable({
      rows: [...rows, ...heavy.rows],
      notes: [`exact estimate ${exact.ms.toFixed(0)} ms, analyze ${analyze.ms.toFixed(0)} ms, indexing ${indexing.ms.toFixed(0)} ms in total`, ...heavy.notes],
    });
  } finally {
    await svc?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
