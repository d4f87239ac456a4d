import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { jsonLine, terminalSafe } from '../../pipeline/terminal.js';
import { CONTENT_KINDS, type ContentKind } from '../../pipeline/vocab.js';
import {
  experimentCompare,
  experimentDataset,
  experimentList,
  experimentRun,
  experimentShow,
  ExperimentError,
  type Comparison,
  type DatasetSpec,
  type RunProgress,
  type RunReport,
  type StoredResult,
  type Variant,
} from '../../service/offline.js';

/**
 * `spillway experiment dataset|run|list|show|compare`: summary experiments for scripts and CI
 * (docs/experiments.md). Exit codes: 0 done, 1 failed or stopped (a budget, a cancel), 2 bad usage.
 */

const FILTER_KEYS = ['tool', 'session', 'kind', 'min-tokens', 'max-tokens', 'read-back', 'ids'] as const;
const VARIANT_KEYS = ['template', 'provider', 'model', 'focus'] as const;

function whole(v: string, what: string, min: number): number {
  const x = Number(v.replace(/[_,]/g, ''));
  if (!Number.isInteger(x) || x < min) throw new InvalidArgumentError(`${what} must be a whole number${min > 0 ? ' above 0' : ''}, not ${JSON.stringify(v)}`);
  return x;
}

/** `--filter key=value` (repeatable): the dataset's selection. */
function parseFilter(v: string, prev: DatasetSpec = {}): DatasetSpec {
  const eq = v.indexOf('=');
  const key = eq > 0 ? v.slice(0, eq) : '';
  const value = eq > 0 ? v.slice(eq + 1) : '';
  if (!(FILTER_KEYS as readonly string[]).includes(key) || value === '') {
    throw new InvalidArgumentError(`not a filter: ${JSON.stringify(v)} (use ${FILTER_KEYS.map((k) => `${k}=…`).join(', ')})`);
  }
  const spec: DatasetSpec = { ...prev };
  if (key === 'ids') {
    spec.ids = [...(spec.ids ?? []), ...value.split(',').map((s) => s.trim()).filter(Boolean)];
    return spec;
  }
  const f = { ...(spec.filter ?? {}) };
  if (key === 'tool') f.tool = value;
  else if (key === 'session') f.sessionId = value;
  else if (key === 'kind') {
    if (!(CONTENT_KINDS as readonly string[]).includes(value)) throw new InvalidArgumentError(`kind must be one of ${CONTENT_KINDS.join(', ')}, not ${JSON.stringify(value)}`);
    f.kind = value as ContentKind;
  } else if (key === 'min-tokens') f.minTokens = whole(value, 'min-tokens', 0);
  else if (key === 'max-tokens') f.maxTokens = whole(value, 'max-tokens', 0);
  else if (key === 'read-back') {
    if (!['yes', 'no'].includes(value)) throw new InvalidArgumentError(`read-back is yes or no, not ${JSON.stringify(value)}`);
    f.readBack = value === 'yes';
  }
  spec.filter = f;
  return spec;
}

/** `--variant template=NAME,provider=NAME[,model=ID][,focus=call|none|fixed:TEXT]` (repeatable); a fixed focus may hold commas. */
function parseVariant(v: string, prev: Variant[] = []): Variant[] {
  const parts = v.split(new RegExp(`,(?=(?:${VARIANT_KEYS.join('|')})=)`));
  const got: Record<string, string> = {};
  for (const p of parts) {
    const eq = p.indexOf('=');
    const key = eq > 0 ? p.slice(0, eq) : '';
    if (!(VARIANT_KEYS as readonly string[]).includes(key)) throw new InvalidArgumentError(`not a variant setting: ${JSON.stringify(p)} (use ${VARIANT_KEYS.map((k) => `${k}=…`).join(',')})`);
    if (key in got) throw new InvalidArgumentError(`${key} given twice in ${JSON.stringify(v)}`);
    got[key] = p.slice(eq + 1);
  }
  if (!got.template) throw new InvalidArgumentError(`a variant needs template=NAME: ${JSON.stringify(v)}`);
  if (!got.provider) throw new InvalidArgumentError(`a variant needs provider=NAME: ${JSON.stringify(v)}`);
  const focus = got.focus ?? 'call';
  if (!(focus === 'call' || focus === 'none' || (focus.startsWith('fixed:') && focus.length > 6))) {
    throw new InvalidArgumentError(`focus is call, none or fixed:TEXT, not ${JSON.stringify(focus)}`);
  }
  return [...prev, { template: got.template, provider: got.provider, ...(got.model ? { model: got.model } : {}), focus: focus as Variant['focus'] }];
}

const collect = (v: string, prev: string[] = []) => [...prev, v];
const num = (v: number | null | undefined, digits = 3) => (v === null || v === undefined ? '-' : Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(digits));
const signed = (v: number | null | undefined) => (v === null || v === undefined ? '-' : `${v > 0 ? '+' : ''}${v.toFixed(3)}`);
const variantText = (v: unknown) => {
  const x = v as Variant;
  return `template=${x.template},provider=${x.provider}${x.model ? `,model=${x.model}` : ''},focus=${x.focus}`;
};

function progressLine(p: RunProgress): string {
  return `[${p.runId}] ${p.done}/${p.total} done, ${p.failed} failed, ${p.cached} cached, ${p.called} call(s), ${p.spentTokens.toLocaleString('en-US')} tokens, $${p.spentUsd.toFixed(6)}`;
}

function reportLines(r: RunReport): string[] {
  const how = r.status === 'done' ? 'done' : r.status === 'budget' ? `STOPPED by the ${r.stopReason}` : 'CANCELLED';
  return [
    `run ${r.runId} (${variantText(r.variant)}) on ${r.dataset}: ${how}`,
    `  ${r.ok} ok, ${r.failed} failed of ${r.total}${r.resumed ? ` (${r.resumed} finished before this resume)` : ''}; ${r.cached} from the cache, ${r.called} provider call(s); ${r.spentTokens.toLocaleString('en-US')} tokens, $${r.spentUsd.toFixed(6)}`,
  ];
}

function comparisonLines(c: Comparison, items: number): string[] {
  const out: string[] = [`baseline ${c.baseline.runId} (${variantText(c.baseline.variant)})`];
  for (const cand of c.candidates) {
    out.push('', `candidate ${cand.runId} (${variantText(cand.variant)}): ${cand.regressed} item(s) regressed, ${cand.improved} improved; failed ${cand.failed.baseline} → ${cand.failed.candidate}`);
    out.push('  score              pairs  baseline  candidate  mean delta  regressions  improvements');
    for (const [name, a] of Object.entries(cand.aggregate)) {
      out.push(`  ${name.padEnd(17)} ${String(a.pairs).padStart(6)}  ${num(a.baselineMean).padStart(8)}  ${num(a.candidateMean).padStart(9)}  ${signed(a.meanDelta).padStart(10)}  ${String(a.regressions).padStart(11)}  ${String(a.improvements).padStart(12)}`);
    }
    const shown = cand.items.filter((i) => i.worst !== null && i.worst < 0).slice(0, items);
    if (shown.length) out.push(`  largest regressions first (${shown.length} of ${cand.regressed}):`);
    for (const i of shown) {
      const d = i.deltas;
      const failed = i.candidate.status === 'error' ? `  candidate failed: ${i.candidate.error}` : '';
      out.push(`    ${i.payloadId}  worst ${signed(i.worst)}  read-back ${signed(d.readBackRecall)}  anchors ${signed(d.anchorRecall)}  invented ${signed(d.inventedShare)}${failed}`);
    }
  }
  return out;
}

function resultLine(r: StoredResult): string {
  if (r.status === 'error') return `  ${String(r.n).padStart(4)} ${r.payloadId}  FAILED: ${r.error}`;
  const s = r.scores as { readBackRecall: { score: number | null } | null; anchorRecall: { score: number | null }; inventedAnchors: { count: number }; compression: { ratio: number | null } } | undefined;
  return `  ${String(r.n).padStart(4)} ${r.payloadId}  read-back ${num(s?.readBackRecall?.score)}  anchors ${num(s?.anchorRecall.score)}  invented ${num(s?.inventedAnchors.count)}  compression ${num(s?.compression.ratio)}  ${r.cached ? 'cached' : `${num(r.ms)} ms`}`;
}

/** Bad input from the engine is bad usage (exit 2); anything else fails the command (exit 1, main prints it). */
async function guarded(f: () => Promise<void>): Promise<void> {
  try {
    await f();
  } catch (err) {
    if (err instanceof ExperimentError && err.code === 'BAD_REQUEST') {
      process.stderr.write(`spillway: ${terminalSafe(err.message)}\n`);
      process.exitCode = 2;
      return;
    }
    throw err;
  }
}

interface CommonOpts {
  db?: string;
  json?: boolean;
}

export function register(program: Command): void {
  const cmd = program.command('experiment').description('summary experiments: a dataset of payloads, variants run over it, compared with a baseline (docs/experiments.md)');
  const out = (s: string) => process.stdout.write(terminalSafe(s) + '\n');

  cmd
    .command('dataset')
    .description('save a dataset: the indexed payloads a filter selects (or ids), sampled with a seed')
    .argument('<name>', 'the dataset\'s name')
    .option('--filter <key=value>', `select by ${FILTER_KEYS.join(', ')} (repeatable)`, parseFilter)
    .option('--sample <n>', 'keep at most n, a deterministic sample', (v) => whole(v, '--sample', 1))
    .option('--seed <n>', 'the sample\'s seed (default 1)', (v) => whole(v, '--seed', 0))
    .option('--replace', 'replace a dataset of that name')
    .option('--db <file>', "index database (default: the app-data folder's index.sqlite)")
    .option('--json', 'print the dataset as JSON')
    .action((name: string, o: CommonOpts & { filter?: DatasetSpec; sample?: number; seed?: number; replace?: boolean }) =>
      guarded(async () => {
        const spec: DatasetSpec = { ...(o.filter ?? {}), ...(o.sample !== undefined ? { sample: o.sample } : {}), ...(o.seed !== undefined ? { seed: o.seed } : {}) };
        const d = await experimentDataset({ dbPath: o.db, env: process.env, name, spec, replace: o.replace });
        if (o.json) process.stdout.write(jsonLine(d) + '\n');
        else out(`dataset ${d.name}: ${d.items} payload(s)`);
      }),
    );

  cmd
    .command('run')
    .description('run each variant over a dataset (saved, or made from --filter), then compare with a baseline')
    .option('--dataset <name>', 'a saved dataset (with --filter: the name to save the selection under)')
    .option('--filter <key=value>', `select by ${FILTER_KEYS.join(', ')} (repeatable)`, parseFilter)
    .option('--sample <n>', 'with --filter: keep at most n, a deterministic sample', (v) => whole(v, '--sample', 1))
    .option('--seed <n>', 'with --filter: the sample\'s seed (default 1)', (v) => whole(v, '--seed', 0))
    .option('--variant <spec>', 'template=NAME,provider=NAME[,model=ID][,focus=call|none|fixed:TEXT] (repeatable: one run each)', parseVariant)
    .option('--baseline <run>', 'compare the runs with this run (default: with several variants, the first)')
    .option('--resume <run>', 'resume a run that was killed, cancelled or stopped (repeatable); finished items are not run again', collect)
    .option('--budget-usd <dollars>', 'stop before a run spends more than this', (v) => {
      const x = Number(v);
      if (!Number.isFinite(x) || x <= 0) throw new InvalidArgumentError(`--budget-usd must be a number above 0, not ${JSON.stringify(v)}`);
      return x;
    })
    .option('--budget-tokens <n>', 'stop before a run spends more provider tokens (input + output) than this', (v) => whole(v, '--budget-tokens', 1))
    .option('--concurrency <n>', 'items summarized at once (default 4)', (v) => whole(v, '--concurrency', 1))
    .option('--templates-dir <dir>', 'templates folder (default: the app-data templates/ folder)')
    .option('--items <n>', 'regressions listed per candidate (default 10)', (v) => whole(v, '--items', 0))
    .option('--db <file>', "index database (default: the app-data folder's index.sqlite)")
    .option('--json', 'print {dataset, runs, comparison} as JSON')
    .action(
      (
        o: CommonOpts & {
          dataset?: string;
          filter?: DatasetSpec;
          sample?: number;
          seed?: number;
          variant?: Variant[];
          baseline?: string;
          resume?: string[];
          budgetUsd?: number;
          budgetTokens?: number;
          concurrency?: number;
          templatesDir?: string;
          items?: number;
        },
      ) =>
        guarded(async () => {
          if (o.resume?.length && (o.variant || o.filter || o.dataset)) throw new ExperimentError('BAD_REQUEST', '--resume takes the run\'s own dataset and variant: leave out --dataset, --filter and --variant');
          if (!o.resume?.length && !o.dataset && !o.filter) throw new ExperimentError('BAD_REQUEST', 'give --dataset NAME or --filter key=value (or --resume RUN)');
          if (!o.filter && (o.sample !== undefined || o.seed !== undefined)) throw new ExperimentError('BAD_REQUEST', '--sample and --seed go with --filter (a saved dataset is sampled already)');
          const spec = o.filter ? { ...o.filter, ...(o.sample !== undefined ? { sample: o.sample } : {}), ...(o.seed !== undefined ? { seed: o.seed } : {}) } : undefined;
          const ac = new AbortController();
          const onSigint = () => ac.abort(new Error('interrupted'));
          process.once('SIGINT', onSigint);
          let last = 0;
          try {
            const res = await experimentRun({
              dbPath: o.db,
              env: process.env,
              templatesDir: o.templatesDir,
              dataset: o.dataset,
              spec,
              variants: o.variant,
              resume: o.resume,
              baseline: o.baseline,
              budget: { ...(o.budgetUsd !== undefined ? { usd: o.budgetUsd } : {}), ...(o.budgetTokens !== undefined ? { tokens: o.budgetTokens } : {}) },
              concurrency: o.concurrency,
              signal: ac.signal,
              onStart: (r) => process.stderr.write(`run ${r.id} started\n`),
              onProgress: (p) => {
                // A line per item when piped (a script follows it); at most ten a second on a terminal.
                const now = Date.now();
                if (process.stderr.isTTY && now - last < 100 && p.done < p.total) return;
                last = now;
                process.stderr.write(progressLine(p) + '\n');
              },
            });
            if (o.json) process.stdout.write(jsonLine(res) + '\n');
            else {
              if (res.dataset) out(`dataset ${res.dataset.name}: ${res.dataset.items} payload(s)`);
              for (const r of res.runs) for (const l of reportLines(r)) out(l);
              if (res.comparison) for (const l of ['', ...comparisonLines(res.comparison, o.items ?? 10)]) out(l);
            }
            const stopped = res.runs.filter((r) => r.status !== 'done');
            if (stopped.length) {
              for (const r of stopped) process.stderr.write(`spillway: run ${r.runId} ${r.status === 'budget' ? `stopped by the ${r.stopReason}` : 'was cancelled'}; continue it with --resume ${r.runId}\n`);
              process.exitCode = 1;
            }
          } finally {
            process.off('SIGINT', onSigint);
          }
        }),
    );

  cmd
    .command('list')
    .description('the saved datasets and the runs, newest first')
    .option('--db <file>', "index database (default: the app-data folder's index.sqlite)")
    .option('--json', 'print {datasets, runs} as JSON')
    .action((o: CommonOpts) =>
      guarded(async () => {
        const l = await experimentList({ dbPath: o.db, env: process.env });
        if (o.json) return void process.stdout.write(jsonLine(l) + '\n');
        out(`datasets (${l.datasets.length}):`);
        for (const d of l.datasets) out(`  ${d.name.padEnd(24)} ${String(d.items).padStart(6)} payload(s)  ${d.createdAt}`);
        out(`runs (${l.runs.length}):`);
        for (const r of l.runs) out(`  ${r.id}  ${r.status.padEnd(9)} ${r.results}/${r.items} (${r.failed} failed)  ${r.dataset}  ${variantText(r.variant)}${r.stopReason ? `  (${r.stopReason})` : ''}`);
      }),
    );

  cmd
    .command('show')
    .description("one run: its variant, how it ended, and each item's scores")
    .argument('<run>', 'the run id')
    .option('--db <file>', "index database (default: the app-data folder's index.sqlite)")
    .option('--json', 'print {run, items, results} as JSON (summaries and scores included)')
    .action((runId: string, o: CommonOpts) =>
      guarded(async () => {
        const s = await experimentShow({ dbPath: o.db, env: process.env, runId });
        if (o.json) return void process.stdout.write(jsonLine(s) + '\n');
        const failed = s.results.filter((r) => r.status === 'error').length;
        out(`run ${s.run.id} (${variantText(s.run.variant)}) on ${s.run.dataset}: ${s.run.status}${s.run.stopReason ? ` (${s.run.stopReason})` : ''}`);
        out(`  ${s.results.length}/${s.items} item(s) with a result, ${failed} failed`);
        for (const r of s.results) out(resultLine(r));
      }),
    );

  cmd
    .command('compare')
    .description('a baseline run against candidate runs: per item deltas and aggregates, largest regression first')
    .argument('<baseline>', 'the baseline run id')
    .argument('<candidates...>', 'candidate run ids')
    .option('--items <n>', 'regressions listed per candidate (default 10)', (v) => whole(v, '--items', 0))
    .option('--db <file>', "index database (default: the app-data folder's index.sqlite)")
    .option('--json', 'print the comparison as JSON (every item)')
    .action((baseline: string, candidates: string[], o: CommonOpts & { items?: number }) =>
      guarded(async () => {
        const c = await experimentCompare({ dbPath: o.db, env: process.env, baseline, candidates });
        if (o.json) return void process.stdout.write(jsonLine(c) + '\n');
        for (const l of comparisonLines(c, o.items ?? 10)) out(l);
      }),
    );
}
