/**
 * The store of summary experiments, in the index's database (better-sqlite3 lives in src/index only):
 * datasets, runs, each item's result and the results cache. The engine that fills them is
 * src/experiments; this module only reads and writes rows. docs/experiments.md describes the model.
 *
 * | call | for |
 * | --- | --- |
 * | `candidates(filter)` | the indexed payloads a dataset filter selects (id, focus, size), oldest first |
 * | `saveDataset`, `dataset`, `datasets` | a named, saved selection and its items |
 * | `createRun`, `run`, `runs`, `finishRun` | one variant over a dataset, and how it ended |
 * | `results`, `putResult` | each item's result, written as it finishes (a killed run keeps what finished) |
 * | `cached`, `putCache` | results by (payload hash, template hash, provider, model, focus) |
 *
 * These rows are not derived from the files, unlike the rest of the index: a scan never touches
 * them. They name payloads by id, which survives a rebuild.
 */
import type { ContentKind } from '../pipeline/vocab.js';
import type { IndexCore } from './core.js';

/** Which payloads a dataset takes: every field narrows; none set selects every payload. */
export interface DatasetFilter {
  tool?: string;
  sessionId?: string;
  kind?: ContentKind;
  /** The payload's one token figure (the table's `tokens`), inclusive. */
  minTokens?: number;
  maxTokens?: number;
  /** true: only payloads some later call read back; false: only those none did. */
  readBack?: boolean;
}

/** How a dataset was made, kept with it so it can be told and made again. */
export interface DatasetSpec {
  filter?: DatasetFilter;
  /** By hand: these payload ids, in this order (a filter is then not used). */
  ids?: string[];
  /** Take at most this many (a deterministic sample with `seed`); absent: all. */
  sample?: number;
  seed?: number;
}

export interface DatasetItem {
  n: number;
  payloadId: string;
  /** The focus the call had (the agent's intent when it spilled); absent when it gave none. */
  focus?: string;
}

export interface Dataset {
  name: string;
  spec: DatasetSpec;
  createdAt: string;
  items: DatasetItem[];
}

export interface DatasetInfo {
  name: string;
  spec: DatasetSpec;
  createdAt: string;
  items: number;
}

export interface Candidate {
  id: string;
  focus?: string;
  tokens: number;
}

/** How a run ended: `running` also for a run whose process was killed (resume it). */
export type RunStatus = 'running' | 'done' | 'cancelled' | 'budget';

export interface StoredRun {
  id: string;
  dataset: string;
  /** The variant, as the engine wrote it. */
  variant: unknown;
  budget: unknown;
  status: RunStatus;
  /** Why it stopped before the end (a budget's limit, a cancel). */
  stopReason?: string;
  createdAt: string;
  finishedAt?: string;
}

export interface StoredResult {
  n: number;
  payloadId: string;
  focus?: string;
  status: 'ok' | 'error';
  error?: string;
  /** Taken from the cache: no provider call was made for it in this run. */
  cached: boolean;
  cacheKey?: string;
  summary?: string;
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  costUsd?: number;
  ms?: number;
  /** The scores, as the engine computed them. */
  scores?: unknown;
  finishedAt: string;
}

export interface CachedSummary {
  summary: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  costUsd?: number;
  ms: number;
}

const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

interface ResultRow {
  n: number;
  payload_id: string;
  focus: string | null;
  status: 'ok' | 'error';
  error: string | null;
  cached: number;
  cache_key: string | null;
  summary: string | null;
  model: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
  ms: number | null;
  scores_json: string | null;
  finished_at: string;
}

interface RunRow {
  id: string;
  dataset: string;
  variant_json: string;
  budget_json: string;
  status: RunStatus;
  stop_reason: string | null;
  created_at: string;
  finished_at: string | null;
}

const runOf = (r: RunRow): StoredRun => ({
  id: r.id,
  dataset: r.dataset,
  variant: JSON.parse(r.variant_json),
  budget: JSON.parse(r.budget_json),
  status: r.status,
  stopReason: opt(r.stop_reason),
  createdAt: r.created_at,
  finishedAt: opt(r.finished_at),
});

export class ExperimentStore {
  constructor(private readonly core: IndexCore) {}

  /**
   * The payloads a filter selects, oldest first. A transcript's row joined with its spill is left out:
   * the spill's own row is the same result (and the one its read-backs point at).
   */
  candidates(f: DatasetFilter = {}): Candidate[] {
    const where = ['p.spill_id IS NULL', 'p.binary = 0'];
    const args: Array<string | number> = [];
    if (f.tool !== undefined) (where.push('p.tool = ?'), args.push(f.tool));
    if (f.sessionId !== undefined) (where.push('p.session_id = ?'), args.push(f.sessionId));
    if (f.kind !== undefined) (where.push('p.kind = ?'), args.push(f.kind));
    if (f.minTokens !== undefined) (where.push('p.tokens >= ?'), args.push(f.minTokens));
    if (f.maxTokens !== undefined) (where.push('p.tokens <= ?'), args.push(f.maxTokens));
    if (f.readBack !== undefined) where.push(`${f.readBack ? '' : 'NOT '}EXISTS (SELECT 1 FROM read_backs rb WHERE rb.spill_id = p.id)`);
    const rows = this.core.db
      .prepare(`SELECT p.id, p.intent, p.tokens FROM payloads p WHERE ${where.join(' AND ')} ORDER BY p.created_at, p.id`)
      .all(...args) as Array<{ id: string; intent: string | null; tokens: number }>;
    return rows.map((r) => ({ id: r.id, focus: opt(r.intent) || undefined, tokens: r.tokens }));
  }

  /** Payload ids given by hand, with the focus their call had; ids the index does not hold are returned apart. */
  byIds(ids: readonly string[]): { found: Candidate[]; missing: string[] } {
    const q = this.core.q('SELECT id, intent, tokens FROM payloads WHERE id = ?');
    const found: Candidate[] = [];
    const missing: string[] = [];
    for (const id of ids) {
      const r = q.get(id) as { id: string; intent: string | null; tokens: number } | undefined;
      if (r) found.push({ id: r.id, focus: opt(r.intent) || undefined, tokens: r.tokens });
      else missing.push(id);
    }
    return { found, missing };
  }

  /** Save (or replace, when `replace`) a dataset. An existing name is refused otherwise: its runs point at it. */
  saveDataset(name: string, spec: DatasetSpec, items: ReadonlyArray<Omit<DatasetItem, 'n'>>, o: { replace?: boolean } = {}): Dataset {
    const createdAt = new Date().toISOString();
    this.core.db.transaction(() => {
      const exists = this.core.q('SELECT 1 FROM experiment_datasets WHERE name = ?').get(name);
      if (exists && !o.replace) throw new ExperimentStoreError('EXISTS', `dataset ${JSON.stringify(name)} exists already`);
      if (exists) this.core.q('DELETE FROM experiment_datasets WHERE name = ?').run(name);
      this.core.q('INSERT INTO experiment_datasets (name, spec_json, created_at) VALUES (?, ?, ?)').run(name, JSON.stringify(spec), createdAt);
      const ins = this.core.q('INSERT INTO experiment_items (dataset, n, payload_id, focus) VALUES (?, ?, ?, ?)');
      items.forEach((it, n) => ins.run(name, n, it.payloadId, it.focus ?? null));
    })();
    return { name, spec, createdAt, items: items.map((it, n) => ({ n, ...it })) };
  }

  dataset(name: string): Dataset | undefined {
    const d = this.core.q('SELECT name, spec_json, created_at FROM experiment_datasets WHERE name = ?').get(name) as
      | { name: string; spec_json: string; created_at: string }
      | undefined;
    if (!d) return undefined;
    const items = this.core.q('SELECT n, payload_id, focus FROM experiment_items WHERE dataset = ? ORDER BY n').all(name) as Array<{ n: number; payload_id: string; focus: string | null }>;
    return { name: d.name, spec: JSON.parse(d.spec_json), createdAt: d.created_at, items: items.map((i) => ({ n: i.n, payloadId: i.payload_id, focus: opt(i.focus) })) };
  }

  datasets(): DatasetInfo[] {
    const rows = this.core.db
      .prepare('SELECT d.name, d.spec_json, d.created_at, (SELECT count(*) FROM experiment_items i WHERE i.dataset = d.name) AS items FROM experiment_datasets d ORDER BY d.created_at, d.name')
      .all() as Array<{ name: string; spec_json: string; created_at: string; items: number }>;
    return rows.map((r) => ({ name: r.name, spec: JSON.parse(r.spec_json), createdAt: r.created_at, items: r.items }));
  }

  createRun(r: { id: string; dataset: string; variant: unknown; budget: unknown }): StoredRun {
    const createdAt = new Date().toISOString();
    this.core.q('INSERT INTO experiment_runs (id, dataset, variant_json, budget_json, status, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(
      r.id,
      r.dataset,
      JSON.stringify(r.variant),
      JSON.stringify(r.budget),
      'running',
      createdAt,
    );
    return { ...r, status: 'running', createdAt };
  }

  /** A run resumed: running again, its earlier stop forgotten. */
  reopenRun(id: string): void {
    this.core.q("UPDATE experiment_runs SET status = 'running', stop_reason = NULL, finished_at = NULL WHERE id = ?").run(id);
  }

  finishRun(id: string, status: Exclude<RunStatus, 'running'>, stopReason?: string): void {
    this.core.q('UPDATE experiment_runs SET status = ?, stop_reason = ?, finished_at = ? WHERE id = ?').run(status, stopReason ?? null, new Date().toISOString(), id);
  }

  run(id: string): StoredRun | undefined {
    const r = this.core.q('SELECT * FROM experiment_runs WHERE id = ?').get(id) as RunRow | undefined;
    return r && runOf(r);
  }

  /** Every run, newest first, with how many results each holds. */
  runs(): Array<StoredRun & { items: number; results: number; failed: number }> {
    const rows = this.core.db
      .prepare(
        `SELECT r.*, (SELECT count(*) FROM experiment_items i WHERE i.dataset = r.dataset) AS items,
           (SELECT count(*) FROM experiment_results x WHERE x.run_id = r.id) AS results,
           (SELECT count(*) FROM experiment_results x WHERE x.run_id = r.id AND x.status = 'error') AS failed
         FROM experiment_runs r ORDER BY r.created_at DESC, r.id DESC`,
      )
      .all() as Array<RunRow & { items: number; results: number; failed: number }>;
    return rows.map((r) => ({ ...runOf(r), items: r.items, results: r.results, failed: r.failed }));
  }

  results(runId: string): StoredResult[] {
    const rows = this.core.q('SELECT * FROM experiment_results WHERE run_id = ? ORDER BY n').all(runId) as ResultRow[];
    return rows.map((r) => ({
      n: r.n,
      payloadId: r.payload_id,
      focus: opt(r.focus),
      status: r.status,
      error: opt(r.error),
      cached: r.cached === 1,
      cacheKey: opt(r.cache_key),
      summary: opt(r.summary),
      model: opt(r.model),
      inputTokens: opt(r.input_tokens),
      outputTokens: opt(r.output_tokens),
      costUsd: opt(r.cost_usd),
      ms: opt(r.ms),
      scores: r.scores_json ? JSON.parse(r.scores_json) : undefined,
      finishedAt: r.finished_at,
    }));
  }

  /**
   * One item's result, committed at once: a run killed right after keeps it. A result for the same
   * item replaces the earlier one (a retried failure). With `cache`, the summary is cached in the same commit.
   */
  putResult(runId: string, r: StoredResult, cache?: { key: string; value: CachedSummary }): void {
    if (cache) {
      this.core.db.transaction(() => {
        this.putCache(cache.key, cache.value);
        this.putResult(runId, r);
      })();
      return;
    }
    this.core
      .q(
        `INSERT OR REPLACE INTO experiment_results (run_id, n, payload_id, focus, status, error, cached, cache_key, summary, model,
           input_tokens, output_tokens, cost_usd, ms, scores_json, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        runId,
        r.n,
        r.payloadId,
        r.focus ?? null,
        r.status,
        r.error ?? null,
        r.cached ? 1 : 0,
        r.cacheKey ?? null,
        r.summary ?? null,
        r.model ?? null,
        r.inputTokens ?? null,
        r.outputTokens ?? null,
        r.costUsd ?? null,
        r.ms ?? null,
        r.scores === undefined ? null : JSON.stringify(r.scores),
        r.finishedAt,
      );
  }

  cached(key: string): CachedSummary | undefined {
    const r = this.core.q('SELECT summary, model, input_tokens, output_tokens, cost_usd, ms FROM experiment_cache WHERE key = ?').get(key) as
      | { summary: string; model: string; input_tokens: number; output_tokens: number; cost_usd: number | null; ms: number }
      | undefined;
    return r && { summary: r.summary, model: r.model, inputTokens: r.input_tokens, outputTokens: r.output_tokens, costUsd: opt(r.cost_usd), ms: r.ms };
  }

  putCache(key: string, c: CachedSummary): void {
    this.core
      .q('INSERT OR REPLACE INTO experiment_cache (key, summary, model, input_tokens, output_tokens, cost_usd, ms, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(key, c.summary, c.model, c.inputTokens, c.outputTokens, c.costUsd ?? null, c.ms, new Date().toISOString());
  }
}

export type ExperimentStoreErrorCode = 'EXISTS';

export class ExperimentStoreError extends Error {
  constructor(
    readonly code: ExperimentStoreErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ExperimentStoreError';
  }
}
