/**
 * Summary experiments' queue overhead (docs/experiments.md): 500 indexed payloads × 2 variants with
 * the offline structural summarizer, in the same run:
 * - a plain loop: each payload read as the queue reads it, then `summarize`; and the same loop that
 *   also scores each summary (scoreSummary), the work a run does per item;
 * - `runExperiment` (the job queue: reads, cache keys and lookups, scores, one SQLite commit per
 *   item), with the scores inline, and on the compute worker as the CLI runs it.
 * Goal: the queue keeps at least 0.8× the throughput of the loop doing the same work. The ratio
 * against `summarize` alone is printed too: the scores cost more than a structural summary.
 *
 * Each repetition uses templates of its own, so no item comes from the cache of an earlier one
 * (the structural summarizer does not read the template; its hash is still part of the cache key).
 * Sizes: SPILLWAY_BENCH_EXPERIMENT_PAYLOADS (default 500), SPILLWAY_BENCH_EXPERIMENT_REPS (default 3).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openIndex, type SpillIndex } from '../src/index/index.js';
import { runExperiment, saveDataset, type ItemSource, type Variant } from '../src/experiments/index.js';
import { createSummarizer, scoreSummary } from '../src/summarize/index.js';
import { experimentScorer, indexFolders, payloadItemSource } from '../src/service/offline.js';
import { generateSessionsRoot } from '../test/helpers/gen-sessions.js';

const PAYLOADS = Number(process.env.SPILLWAY_BENCH_EXPERIMENT_PAYLOADS ?? 500);
const REPS = Number(process.env.SPILLWAY_BENCH_EXPERIMENT_REPS ?? 3);
const GOAL_RATIO = 0.8;
/** The mean size of a generated payload: a tool result a guard would spill (about 2,000 tokens and up). */
const MEAN_PAYLOAD_BYTES = 16 * 1024;

const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function reader(index: SpillIndex): ItemSource {
  return payloadItemSource(index, async (id) => {
    const c = await index.payloadContent(id);
    const text = c.type === 'text' ? c.text : await fs.promises.readFile(c.path, 'utf8');
    return { text, totalBytes: Buffer.byteLength(text), readBytes: Buffer.byteLength(text) };
  });
}

export async function run(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-experiment-'));
  const home = path.join(tmp, 'home');
  const templatesDir = path.join(home, 'templates');
  fs.mkdirSync(templatesDir, { recursive: true });
  const db = path.join(tmp, 'index.sqlite');
  try {
    const gen = await generateSessionsRoot(path.join(tmp, 'sessions'), { seed: 30, sessions: 10, payloads: PAYLOADS, meanPayloadBytes: MEAN_PAYLOAD_BYTES, imageShare: 0 });
    await indexFolders({ dirs: [gen.root], dbPath: db, env: { SPILLWAY_HOME: home } });
    const index = openIndex({ dbPath: db, backgroundEstimates: false });
    try {
      const d = saveDataset(index.experiments, 'bench', { filter: {} });
      const items = d.items;
      const source = reader(index);
      const summarizer = createSummarizer({ provider: 'structural' });
      // As the CLI runs it: scores on the compute worker.
      const scorer = experimentScorer();
      const focusOf = (v: Variant, callFocus?: string) => (v.focus === 'none' ? undefined : v.focus === 'call' ? callFocus : v.focus.slice(6));
      const variants = (rep: number): Variant[] => {
        const out: Variant[] = [];
        for (const [k, focus] of (['call', 'fixed:error timeout'] as const).entries()) {
          const name = `bench-${rep}-${k}`;
          fs.writeFileSync(path.join(templatesDir, `${name}.md`), `Summarize {{tool}} (${name}). Focus: {{focus}}. {{part}}\n`);
          out.push({ template: name, provider: 'structural', model: 'structural', focus });
        }
        return out;
      };

      /** The plain loop: each item read as the queue reads it, then summarized (and, with `score`, scored here); nothing else. */
      const loop = async (vs: Variant[], score: boolean): Promise<number> => {
        const t0 = performance.now();
        const signal = new AbortController().signal;
        for (const v of vs) {
          for (const it of items) {
            const input = await source.load(it.payloadId);
            const out = await summarizer.summarize({ text: input.text, toolName: input.tool, toolInput: input.toolInput, focus: focusOf(v, it.focus), template: v.template, maxOutputTokens: 1_500 }, { signal });
            if (score) scoreSummary({ payload: input.text, summary: out.summary, focus: it.focus, readBacks: input.readBacks, profile: input.profile, payloadTokens: input.payloadTokens, run: out });
          }
        }
        return performance.now() - t0;
      };
      const queue = async (vs: Variant[], worker: boolean): Promise<{ ms: number; called: number; cached: number }> => {
        const t0 = performance.now();
        let called = 0;
        let cached = 0;
        for (const v of vs) {
          const r = await runExperiment({ store: index.experiments, source, dataset: 'bench', variant: v, env: {}, templatesDir, summarizer, ...(worker ? { score: scorer.score } : {}) });
          if (r.status !== 'done' || r.ok !== items.length) throw new Error(`run ended ${r.status} with ${r.ok}/${items.length} ok`);
          called += r.called;
          cached += r.cached;
        }
        return { ms: performance.now() - t0, called, cached };
      };

      // Warm every path (the JIT, the page cache, the worker) on one variant before timing.
      await loop(variants(0).slice(0, 1), true);
      await queue(variants(0).slice(0, 1), false);
      await queue(variants(-1).slice(0, 1), true);
      const series = { loop: [] as number[], loopScored: [] as number[], queue: [] as number[], queueWorker: [] as number[] };
      let calls = 0;
      let cacheHits = 0;
      for (let rep = 1; rep <= REPS; rep++) {
        // Each series in turn, starting one later each repetition, so none always runs on a warmer (or busier) machine.
        const steps: Array<() => Promise<void>> = [
          async () => void series.loop.push(await loop(variants(rep), false)),
          async () => void series.loopScored.push(await loop(variants(rep), true)),
          async () => {
            const q = await queue(variants(rep), false);
            series.queue.push(q.ms);
            calls += q.called;
            cacheHits += q.cached;
          },
          async () => {
            const q = await queue(variants(100 + rep), true);
            series.queueWorker.push(q.ms);
            calls += q.called;
            cacheHits += q.cached;
          },
        ];
        for (let k = 0; k < steps.length; k++) await steps[(k + rep) % steps.length]!();
      }
      const n = items.length * 2;
      const m = Object.fromEntries(Object.entries(series).map(([k, v]) => [k, median(v)])) as Record<keyof typeof series, number>;
      const rate = (ms: number) => `${fmt(ms)} ms, ${fmt((n / ms) * 1000, 1)} items/s`;
      const mb = gen.payloads.reduce((a, p) => a + p.bytes, 0) / 1048576;
      console.log(`${fmt(items.length)} payloads (${fmt(mb, 1)} MB) × 2 variants, structural summarizer, ${REPS} repetitions (median)`);
      console.log(`plain loop: read + summarize:                 ${rate(m.loop)}`);
      console.log(`plain loop: read + summarize + score:         ${rate(m.loopScored)}`);
      console.log(`experiment queue, scores inline:              ${rate(m.queue)}`);
      console.log(`experiment queue, scores on the worker (CLI): ${rate(m.queueWorker)}`);
      console.log(`(${fmt(calls)} summaries through the queue, ${fmt(cacheHits)} from the cache)`);
      const overhead = m.loopScored / m.queue;
      console.log(`the queue's overhead, same work (queue inline ÷ loop with scores): ${overhead.toFixed(2)} (goal ≥ ${GOAL_RATIO}) ${overhead >= GOAL_RATIO ? 'OK' : 'BELOW GOAL'}`);
      console.log(`against summarize alone (the scores included in the queue): inline ${(m.loop / m.queue).toFixed(2)}, on the worker ${(m.loop / m.queueWorker).toFixed(2)}`);
      await scorer.close();
    } finally {
      await index.close();
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
