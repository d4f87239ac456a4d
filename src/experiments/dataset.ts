/** Datasets: a saved selection of indexed payloads, by filter or by hand, with a deterministic sample. */
import crypto from 'node:crypto';
import type { Candidate, Dataset, DatasetSpec, ExperimentStore } from '../index/index.js';

/** A dataset's name: what a person types on a command line. */
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Seed when a sample names none: the same spec gives the same items. */
export const DEFAULT_SAMPLE_SEED = 1;

export class ExperimentError extends Error {
  constructor(
    readonly code: 'BAD_REQUEST' | 'NOT_FOUND' | 'EXISTS',
    message: string,
  ) {
    super(message);
    this.name = 'ExperimentError';
  }
}

export function checkDatasetName(name: string): string {
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw new ExperimentError('BAD_REQUEST', `bad dataset name ${JSON.stringify(name)}: letters, digits, '.', '_' or '-', at most 64, starting with a letter or digit`);
  }
  return name;
}

/**
 * At most `n` of the candidates, the same for the same seed whatever order they come in: each is
 * ranked by sha256(seed, id) and the lowest `n` are kept, then put back in their given order. A
 * payload added later enters the sample only if it ranks among the lowest, so a sample is stable.
 */
export function sample<T extends { id: string }>(candidates: readonly T[], n: number | undefined, seed = DEFAULT_SAMPLE_SEED): T[] {
  if (n === undefined || n >= candidates.length) return [...candidates];
  const rank = (id: string) => crypto.createHash('sha256').update(`${seed}\0${id}`).digest('hex');
  const keep = new Set(
    candidates
      .map((c) => ({ id: c.id, r: rank(c.id) }))
      .sort((a, b) => (a.r < b.r ? -1 : a.r > b.r ? 1 : 0))
      .slice(0, Math.max(0, n))
      .map((x) => x.id),
  );
  return candidates.filter((c) => keep.has(c.id));
}

function checkSpec(spec: DatasetSpec): void {
  const s = spec.sample;
  if (s !== undefined && (!Number.isInteger(s) || s < 1)) throw new ExperimentError('BAD_REQUEST', `sample size must be a whole number above 0, not ${s}`);
  if (spec.seed !== undefined && !Number.isInteger(spec.seed)) throw new ExperimentError('BAD_REQUEST', `seed must be a whole number, not ${spec.seed}`);
  const f = spec.filter ?? {};
  for (const k of ['minTokens', 'maxTokens'] as const) {
    const v = f[k];
    if (v !== undefined && (!Number.isFinite(v) || v < 0)) throw new ExperimentError('BAD_REQUEST', `${k} must be a number of tokens, not ${v}`);
  }
  if (f.minTokens !== undefined && f.maxTokens !== undefined && f.minTokens > f.maxTokens) {
    throw new ExperimentError('BAD_REQUEST', `the size range is empty: minTokens ${f.minTokens} > maxTokens ${f.maxTokens}`);
  }
  if (spec.ids && spec.filter) throw new ExperimentError('BAD_REQUEST', 'a dataset is made by filter or by payload ids, not both');
}

/** The items a spec selects now (nothing saved). Ids given by hand that the index does not hold are an error. */
export function selectItems(store: ExperimentStore, spec: DatasetSpec): Candidate[] {
  checkSpec(spec);
  let found: Candidate[];
  if (spec.ids) {
    const ids = [...new Set(spec.ids)];
    if (ids.length === 0) throw new ExperimentError('BAD_REQUEST', 'no payload ids given');
    const r = store.byIds(ids);
    if (r.missing.length) throw new ExperimentError('NOT_FOUND', `not in the index: ${r.missing.slice(0, 5).join(', ')}${r.missing.length > 5 ? ` and ${r.missing.length - 5} more` : ''}`);
    found = r.found;
  } else {
    found = store.candidates(spec.filter ?? {});
  }
  return sample(found, spec.sample, spec.seed);
}

/** Select and save a dataset. An empty selection is refused (a run over nothing says nothing). */
export function saveDataset(store: ExperimentStore, name: string, spec: DatasetSpec, o: { replace?: boolean } = {}): Dataset {
  checkDatasetName(name);
  const items = selectItems(store, spec);
  if (items.length === 0) throw new ExperimentError('NOT_FOUND', `no indexed payload matches ${JSON.stringify(spec.filter ?? {})}: nothing to save`);
  if (!o.replace && store.dataset(name)) throw new ExperimentError('EXISTS', `dataset ${JSON.stringify(name)} exists already (pick another name)`);
  return store.saveDataset(name, spec, items.map((c) => ({ payloadId: c.id, focus: c.focus })), o);
}

/**
 * The name of a dataset made on the fly from a spec (`experiment run --filter ...`): the same spec
 * gives the same name, so running it again reuses it.
 */
export function specName(spec: DatasetSpec): string {
  return `filter-${crypto.createHash('sha256').update(JSON.stringify(spec)).digest('hex').slice(0, 10)}`;
}
