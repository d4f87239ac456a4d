/**
 * Summary experiments for the CLI (`spillway experiment`) and the service: the engine
 * (src/experiments) handed what it reads of each payload, here where the files are read the
 * service's way: the payload's text (the linked form when assets were cut out), its one token
 * figure, and its read-backs as the lines they read (read-back-evidence.ts).
 */
import path from 'node:path';
import { appPaths } from '../pipeline/index.js';
import { openIndex, type DatasetInfo, type DatasetSpec, type SpillIndex, type StoredResult, type StoredRun } from '../index/index.js';
import {
  compareRuns,
  ExperimentError,
  runExperiment,
  saveDataset,
  specName,
  type Budget,
  type Comparison,
  type ItemSource,
  type RunProgress,
  type RunReport,
  type Variant,
} from '../experiments/index.js';
import type { ScoreInput, SummaryScores } from '../summarize/index.js';
import { createComputePool } from './compute.js';
import { MAX_SCORED_PAYLOAD_CHARS } from './methods/summaries.js';
import { MAX_WHOLE_READ_BYTES, utf8PrefixLength } from './heavy.js';
import { fileSource } from './reader.js';
import { readBackEvidence } from './read-back-evidence.js';
import { checkPrivateDb, ensurePrivateDirSync, preparePrivateDbFile } from './private-files.js';
import { isS3Path } from './s3-read.js';

export { ExperimentError };
export type { Budget, Comparison, DatasetInfo, DatasetSpec, RunProgress, RunReport, StoredResult, StoredRun, Variant };

type WholeText = (id: string) => Promise<{ text: string; totalBytes: number; readBytes: number }>;

/** What the engine reads of a payload, through `readWholeText` (the service's confined reader, or the CLI's). */
export function payloadItemSource(index: SpillIndex, readWholeText: WholeText): ItemSource {
  return {
    async load(payloadId) {
      const d = await index.getPayload(payloadId);
      if (d.binary) throw new Error('a binary payload has nothing to summarize or score');
      const whole = await readWholeText(payloadId);
      if (whole.readBytes < whole.totalBytes || whole.text.length > MAX_SCORED_PAYLOAD_CHARS) {
        throw new Error(`the payload is over ${MAX_SCORED_PAYLOAD_CHARS.toLocaleString('en-US')} chars: not run here`);
      }
      return {
        text: whole.text,
        payloadTokens: d.figure.tokens,
        profile: d.figure.profile,
        readBacks: readBackEvidence(d.readBacks, whole.text),
        tool: d.row.tool,
        toolInput: d.meta?.toolInput ?? d.source?.toolInput,
      };
    },
  };
}

/** The CLI's reader: the file the index names, opened the one safe way (reader.ts), capped like the service's. */
function cliWholeText(index: SpillIndex): WholeText {
  return async (id) => {
    const c = await index.payloadContent(id);
    if (c.type === 'text') return { text: c.text, totalBytes: c.bytes, readBytes: c.bytes };
    if (isS3Path(c.path)) throw new Error('a payload in a bucket is read by the inspector, not by this command');
    const src = await fileSource(c.path);
    try {
      const n = Math.min(src.size, MAX_WHOLE_READ_BYTES);
      const buf = await src.read(0, n);
      const bytes = n < src.size ? buf.subarray(0, utf8PrefixLength(buf)) : buf;
      return { text: bytes.toString('utf8'), totalBytes: src.size, readBytes: buf.length };
    } finally {
      await src.close();
    }
  };
}

/**
 * Scores computed on a worker thread (compute.ts), beside the next item's summary: the anchor pass
 * over a payload costs about what its structural summary does. `close` stops the worker.
 */
export function experimentScorer(): { score: (input: ScoreInput, signal: AbortSignal) => Promise<SummaryScores>; close: () => Promise<void> } {
  const pool = createComputePool();
  return { score: (input, signal) => pool.score(input, { signal }), close: () => pool.close() };
}

export interface ExperimentCliOptions {
  /** Default: the app-data `index.sqlite`. */
  dbPath?: string;
  env: NodeJS.ProcessEnv;
  /** Default: the app-data templates folder. */
  templatesDir?: string;
}

/** Open the index for one command; a database that is not there is an error for reading verbs (nothing indexed yet). */
async function withIndex<T>(o: ExperimentCliOptions, write: boolean, f: (index: SpillIndex) => Promise<T>): Promise<T> {
  const paths = appPaths(o.env);
  const dbPath = path.resolve(o.dbPath ?? paths.db);
  // A database another account owns or can write is refused, not edited (private-files.ts).
  const exists = checkPrivateDb(dbPath);
  if (!exists) throw new ExperimentError('NOT_FOUND', `no index at ${dbPath}: run spillway index DIR first`);
  if (write) {
    ensurePrivateDirSync(paths.root);
    preparePrivateDbFile(dbPath);
  }
  const index = openIndex({ dbPath, backgroundEstimates: false });
  try {
    return await f(index);
  } finally {
    await index.close();
  }
}

export async function experimentDataset(o: ExperimentCliOptions & { name: string; spec: DatasetSpec; replace?: boolean }): Promise<DatasetInfo> {
  return withIndex(o, true, async (index) => {
    const d = saveDataset(index.experiments, o.name, o.spec, { replace: o.replace });
    return { name: d.name, spec: d.spec, createdAt: d.createdAt, items: d.items.length };
  });
}

export interface ExperimentRunOptions extends ExperimentCliOptions {
  /** A saved dataset's name; with `spec`, the name to save that selection under. */
  dataset?: string;
  spec?: DatasetSpec;
  variants?: Variant[];
  /** Resume these runs (their dataset, variant and budget are stored). */
  resume?: string[];
  budget?: Budget;
  concurrency?: number;
  /** Compare the runs against this run; without it, several runs are compared against the first. */
  baseline?: string;
  signal?: AbortSignal;
  onStart?: (run: StoredRun) => void;
  onProgress?: (p: RunProgress) => void;
}

/**
 * `spillway experiment run`: the dataset (saved, or made from a filter: saved under its name, or one
 * derived from the filter so the same filter reuses it), then each variant in turn, then the comparison.
 */
export async function experimentRun(o: ExperimentRunOptions): Promise<{ dataset?: DatasetInfo; runs: RunReport[]; comparison?: Comparison }> {
  const templatesDir = o.templatesDir ?? appPaths(o.env).templates;
  return withIndex(o, true, async (index) => {
    const store = index.experiments;
    const source = payloadItemSource(index, cliWholeText(index));
    if (o.baseline && !store.run(o.baseline)) throw new ExperimentError('NOT_FOUND', `no baseline run ${JSON.stringify(o.baseline)}`);
    let dataset: DatasetInfo | undefined;
    if (!o.resume?.length) {
      if (!o.variants?.length) throw new ExperimentError('BAD_REQUEST', 'no variant given: --variant template=NAME,provider=NAME[,model=ID][,focus=call|none|fixed:TEXT]');
      let name = o.dataset;
      if (o.spec) {
        name ??= specName(o.spec);
        const have = store.dataset(name);
        if (have && JSON.stringify(have.spec) !== JSON.stringify(o.spec)) {
          throw new ExperimentError('EXISTS', `dataset ${JSON.stringify(name)} exists with another selection: pick another name`);
        }
        if (!have) saveDataset(store, name, o.spec);
      }
      if (!name) throw new ExperimentError('BAD_REQUEST', 'no dataset: give --dataset NAME or --filter');
      const d = store.dataset(name);
      if (!d) throw new ExperimentError('NOT_FOUND', `no dataset ${JSON.stringify(name)} (spillway experiment list shows them)`);
      dataset = { name: d.name, spec: d.spec, createdAt: d.createdAt, items: d.items.length };
    }
    const runs: RunReport[] = [];
    const scorer = experimentScorer();
    const common = { store, source, env: o.env, templatesDir, signal: o.signal, onStart: o.onStart, onProgress: o.onProgress, concurrency: o.concurrency, score: scorer.score };
    try {
      if (o.resume?.length) {
        for (const id of o.resume) {
          runs.push(await runExperiment({ ...common, resume: id, budget: o.budget }));
          if (o.signal?.aborted) break;
        }
      } else {
        for (const variant of o.variants!) {
          runs.push(await runExperiment({ ...common, dataset: dataset!.name, variant, budget: o.budget }));
          if (o.signal?.aborted) break;
        }
      }
    } finally {
      await scorer.close();
    }
    const baseline = o.baseline ?? (runs.length > 1 ? runs[0]!.runId : undefined);
    const candidates = runs.map((r) => r.runId).filter((id) => id !== baseline);
    const comparison = baseline && candidates.length ? compare(index, baseline, candidates) : undefined;
    return { dataset, runs, comparison };
  });
}

function runResults(index: SpillIndex, id: string) {
  const run = index.experiments.run(id);
  if (!run) throw new ExperimentError('NOT_FOUND', `no run ${JSON.stringify(id)} (spillway experiment list shows them)`);
  return { run, results: index.experiments.results(id) };
}

function compare(index: SpillIndex, baseline: string, candidates: string[]): Comparison {
  return compareRuns(runResults(index, baseline), candidates.map((c) => runResults(index, c)));
}

export async function experimentList(o: ExperimentCliOptions): Promise<{ datasets: DatasetInfo[]; runs: ReturnType<SpillIndex['experiments']['runs']> }> {
  return withIndex(o, false, async (index) => ({ datasets: index.experiments.datasets(), runs: index.experiments.runs() }));
}

export async function experimentShow(o: ExperimentCliOptions & { runId: string }): Promise<{ run: StoredRun; items: number; results: StoredResult[] }> {
  return withIndex(o, false, async (index) => {
    const { run, results } = runResults(index, o.runId);
    return { run, items: index.experiments.dataset(run.dataset)?.items.length ?? 0, results };
  });
}

export async function experimentCompare(o: ExperimentCliOptions & { baseline: string; candidates: string[] }): Promise<Comparison> {
  if (!o.candidates.length) throw new ExperimentError('BAD_REQUEST', 'no candidate run to compare with the baseline');
  return withIndex(o, false, async (index) => compare(index, o.baseline, o.candidates));
}
