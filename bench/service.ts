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

function row(name: string, value: string, baseline: string, ratio: number): string {
  return `| ${name.padEnd(46)} | ${value.padStart(12)} | ${baseline.padStart(12)} | ${ratio.toFixed(2).padStart(6)} |`;
}

export async function run(): Promise<void> {
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

    svc = createInspectorService({ appDataDir: path.join(tmp, 'home'), roots: [root], transport: 'http', scanOnStart: false, watch: false });
    await svc.ready;
    await svc.reindex({});
    const big = (await svc.listPayloads({ tool: 'big_log', limit: 1 })).rows[0]!;
    const small = (await svc.listPayloads({ tool: 'small', limit: 1 })).rows[0]!;

    // Cold first windows: a fresh service each time, so no line index or cache is warm.
    const firstWindow = async (id: string, withDetail: boolean) => {
      const s = createInspectorService({ appDataDir: path.join(tmp, 'home'), transport: 'http', scanOnStart: false, watch: false });
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
      const s = createInspectorService({ appDataDir: path.join(tmp, 'home'), transport: 'http', scanOnStart: false, watch: false });
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

    console.log(`| ${'figure'.padEnd(46)} | ${'value'.padStart(12)} | ${'baseline'.padStart(12)} | ${'ratio'.padStart(6)} |`);
    console.log(`| ${'-'.repeat(46)} | ${'-'.repeat(12)} | ${'-'.repeat(12)} | ${'-'.repeat(6)} |`);
    for (const r of rows) console.log(r);
    console.log(`(exact estimate ${exact.ms.toFixed(0)} ms, analyze ${analyze.ms.toFixed(0)} ms, indexing ${indexing.ms.toFixed(0)} ms in total)`);
  } finally {
    await svc?.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
