/**
 * Fits the `calibrated` estimator's weights per tokenizer family and writes
 * src/pipeline/estimate/constants.ts.
 *
 *   npx tsx scripts/calibrate.ts [--dry-run]
 *
 * 1. Builds the train corpus (scripts/build-corpus.ts) and counts every sample with the real
 *    tokenizers (o200k_base, cl100k_base, legacy Claude).
 * 2. Computes the one-pass features of each sample (src/pipeline/estimate/features.ts).
 * 3. Fits non-negative weights per profile minimising the squared RELATIVE error, each category
 *    weighted equally (a category with 40 samples counts as much as one with 8), then reweights
 *    iteratively toward the worst samples so no single sample is far off.
 * 4. Measures the result on the holdout (sources the fit never saw) and derives the guard's
 *    exact-count margin from the worst error seen.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCorpus, CATEGORIES, EXTRA_CATEGORIES, type CorpusSample } from './build-corpus.js';
import {
  countExact,
  FEATURE_COUNT,
  FEATURE_NAMES,
  HAN_FIRST,
  HAN_LAST,
  KNOWN_WORDS_BITS,
  knownWordProbes,
  RATIO_MIN_RISK,
  riskTokens,
  scanFeatures,
  setCommonHan,
  setKnownWords,
  setRareBigrams,
  WORD_HASH_SEED,
  wordHashStep,
} from '../src/pipeline/estimate/internal.js';
import { PROFILES, type Profile } from '../src/pipeline/types.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(REPO, 'src/pipeline/estimate/constants.ts');
export const TRAIN_PER_CATEGORY = 40;
/** Same count as the accuracy test uses. */
export const HOLDOUT_PER_CATEGORY = 8;
/** IRLS rounds that push weight toward the worst-fitting samples (an approximation of minimax). */
const REWEIGHT_ROUNDS = Number(process.env.REWEIGHT_ROUNDS ?? 0);
const RIDGE = 1e-9;
const REWEIGHT_STRENGTH = Number(process.env.REWEIGHT_STRENGTH ?? 0.5);

interface Row {
  s: CorpusSample;
  x: Float64Array;
  y: Record<Profile, number>;
}

// Exact counts are slow and the corpus is deterministic: keep them between runs (outside the repo).
const CACHE = path.join(os.tmpdir(), 'spillway-calibrate-counts.json');
const cache: Record<string, number> = fs.existsSync(CACHE) ? JSON.parse(fs.readFileSync(CACHE, 'utf8')) : {};

async function rows(samples: CorpusSample[]): Promise<Row[]> {
  const out: Row[] = [];
  for (const s of samples) {
    const x = new Float64Array(FEATURE_COUNT);
    scanFeatures(s.text, x);
    const y = {} as Record<Profile, number>;
    const key = crypto.createHash('sha1').update(s.text).digest('hex');
    for (const p of PROFILES) y[p] = cache[`${p}:${key}`] ??= await countExact(s.text, p);
    out.push({ s, x, y });
  }
  fs.writeFileSync(CACHE, JSON.stringify(cache));
  return out;
}

/** min ½βᵀAβ − bᵀβ subject to β ≥ 0, by cyclic coordinate descent (A is small: features²). */
function nnls(A: Float64Array[], b: Float64Array, iters = 20_000): Float64Array {
  const n = b.length;
  const beta = new Float64Array(n);
  for (let it = 0; it < iters; it++) {
    let moved = 0;
    for (let j = 0; j < n; j++) {
      const ajj = A[j]![j]!;
      if (ajj <= 0) continue;
      let g = -b[j]!;
      const row = A[j]!;
      for (let k = 0; k < n; k++) g += row[k]! * beta[k]!;
      const next = Math.max(0, beta[j]! - g / ajj);
      moved = Math.max(moved, Math.abs(next - beta[j]!) * Math.sqrt(ajj));
      beta[j] = next;
    }
    if (moved < 1e-10) break;
  }
  return beta;
}

/** `fixed`: weights set from outside the corpus (feature index -> tokens per unit); the fit prices the rest. */
function fit(data: Row[], profile: Profile, fixed: ReadonlyMap<number, number> = new Map()): Float64Array {
  const perCat = new Map<string, number>();
  for (const r of data) perCat.set(r.s.category, (perCat.get(r.s.category) ?? 0) + 1);
  let extra = data.map(() => 1);
  let beta: Float64Array = new Float64Array(FEATURE_COUNT);
  for (let round = 0; round <= REWEIGHT_ROUNDS; round++) {
    const A = Array.from({ length: FEATURE_COUNT }, () => new Float64Array(FEATURE_COUNT));
    const b = new Float64Array(FEATURE_COUNT);
    data.forEach((r, i) => {
      const y = r.y[profile];
      if (y <= 0) return;
      let yFree = y;
      for (const [j, v] of fixed) yFree -= v * r.x[j]!;
      // relative error: divide the row by y; balance categories; emphasise the worst samples
      const w = ((extra[i]! * categoryWeight(r.s.category)) / perCat.get(r.s.category)!) / (y * y);
      for (let j = 0; j < FEATURE_COUNT; j++) {
        const xj = r.x[j]!;
        if (xj === 0 || fixed.has(j)) continue;
        b[j] = b[j]! + w * xj * yFree;
        const Aj = A[j]!;
        for (let k = 0; k < FEATURE_COUNT; k++) if (!fixed.has(k)) Aj[k] = Aj[k]! + w * xj * r.x[k]!;
      }
    });
    for (let j = 0; j < FEATURE_COUNT; j++) A[j]![j] = A[j]![j]! * (1 + RIDGE) + RIDGE;
    beta = nnls(A, b);
    for (const [j, v] of fixed) beta[j] = v;
    const errs = data.map((r) => Math.abs(predict(r.x, beta) / r.y[profile] - 1));
    const mean = errs.reduce((a, e) => a + e, 0) / errs.length;
    // fresh weights each round (not compounding): samples far above the mean error count more
    extra = errs.map((e) => 1 + REWEIGHT_STRENGTH * (e / (mean + 1e-9)) ** 2);
  }
  return beta;
}

/**
 * ASCII-only categories (code, JSON, logs...) weigh more in the fit: no risk bound covers them, so their
 * error sets the guard's margin, while the scripts' is bounded by riskTokens as well.
 */
const ASCII_CATEGORY_WEIGHT = Number(process.env.ASCII_CATEGORY_WEIGHT ?? 3);
const NON_ASCII_CATEGORIES = new Set(['cjk', 'cyrillic', 'european', ...EXTRA_CATEGORIES.filter((c) => c !== 'tool-output')]);
const categoryWeight = (c: string) => (NON_ASCII_CATEGORIES.has(c) ? 1 : ASCII_CATEGORY_WEIGHT);

function predict(x: Float64Array, beta: ArrayLike<number>): number {
  let t = 0;
  for (let j = 0; j < FEATURE_COUNT; j++) t += x[j]! * beta[j]!;
  return t;
}

export interface Accuracy {
  /** Category-balanced mean absolute relative error. */
  balancedMae: number;
  maxAbs: number;
  worst: string;
  perCategory: Record<string, { mae: number; max: number; n: number; bias: number }>;
}

export function accuracy(samples: Array<{ category: string; id: string; est: number; exact: number }>): Accuracy {
  const perCategory: Accuracy['perCategory'] = {};
  let maxAbs = 0;
  let worst = '';
  for (const s of samples) {
    const e = s.exact === 0 ? (s.est === 0 ? 0 : 1) : s.est / s.exact - 1;
    const c = (perCategory[s.category] ??= { mae: 0, max: 0, n: 0, bias: 0 });
    c.mae += Math.abs(e);
    c.bias += e;
    c.n++;
    c.max = Math.max(c.max, Math.abs(e));
    if (Math.abs(e) > maxAbs) {
      maxAbs = Math.abs(e);
      worst = s.id;
    }
  }
  for (const c of Object.values(perCategory)) {
    c.mae /= c.n;
    c.bias /= c.n;
  }
  const cats = Object.values(perCategory);
  return { balancedMae: cats.reduce((a, c) => a + c.mae, 0) / cats.length, maxAbs, worst, perCategory };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** Letter pairs are rare when below this share of all pairs inside words of the train split's prose and code. */
const RARE_BIGRAM_SHARE = 1 / 5000;
const BIGRAM_CATEGORIES = new Set(['prose', 'markdown', 'code-js', 'typescript']);

function rareBigramTable(samples: CorpusSample[]): string {
  const counts = new Float64Array(676);
  let total = 0;
  for (const s of samples) {
    if (!BIGRAM_CATEGORIES.has(s.category)) continue;
    let prev = -1;
    for (let i = 0; i < s.text.length; i++) {
      const c = s.text.charCodeAt(i);
      const l = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) ? (c | 32) - 97 : -1;
      if (l >= 0 && prev >= 0) {
        counts[prev * 26 + l] = counts[prev * 26 + l]! + 1;
        total++;
      }
      prev = l;
    }
  }
  return Array.from(counts, (n) => (n < total * RARE_BIGRAM_SHARE ? '1' : '0')).join('');
}

/**
 * Words (ASCII and accented Latin letters, 2+) that are one token, with or without a leading space, in both o200k_base
 * and cl100k_base, as a 2-probe Bloom filter of 2^KNOWN_WORDS_BITS bits, base64.
 */
async function knownWordFilter(): Promise<{ base64: string; words: number }> {
  const vocabWords = async (m: { decode: (t: number[]) => string }, size: number) => {
    const set = new Set<string>();
    for (let i = 0; i < size; i++) {
      let t: string;
      try {
        t = m.decode([i]);
      } catch {
        continue;
      }
      const w = /^ ?([A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]{2,})$/.exec(t)?.[1];
      if (w) set.add(w);
    }
    return set;
  };
  const o = await vocabWords(await import('gpt-tokenizer/encoding/o200k_base'), 200_000);
  const c = await vocabWords(await import('gpt-tokenizer/encoding/cl100k_base'), 100_256);
  const bits = new Uint8Array(1 << (KNOWN_WORDS_BITS - 3));
  let words = 0;
  for (const w of o) {
    if (!c.has(w)) continue;
    let h = WORD_HASH_SEED;
    for (let i = 0; i < w.length; i++) h = wordHashStep(h, w.charCodeAt(i));
    for (const p of knownWordProbes(h)) bits[p >>> 3] = bits[p >>> 3]! | (1 << (p & 7));
    words++;
  }
  return { base64: Buffer.from(bits).toString('base64'), words };
}

/** Bitmap of the CJK ideographs U+4E00..U+9FFF that cl100k_base encodes as one token, base64. */
async function commonHanBitmap(): Promise<{ base64: string; count: number }> {
  const c = await import('gpt-tokenizer/encoding/cl100k_base');
  const bits = new Uint8Array((HAN_LAST - HAN_FIRST + 8) >>> 3);
  let count = 0;
  for (let cp = HAN_FIRST; cp <= HAN_LAST; cp++) {
    if (c.encode(String.fromCharCode(cp)).length === 1) {
      const o = cp - HAN_FIRST;
      bits[o >>> 3] = bits[o >>> 3]! | (1 << (o & 7));
      count++;
    }
  }
  return { base64: Buffer.from(bits).toString('base64'), count };
}

const ALPHABETS = FEATURE_NAMES.indexOf('alphabets');
const OTHER3 = FEATURE_NAMES.indexOf('other3');
/**
 * Price of an `other3` char (rare BMP blocks, compatibility forms, lone surrogates): the corpus holds too
 * few for a fit, which priced them at 0 to 46 tokens each. A rare char costs up to its 3 UTF-8 bytes as
 * tokens (U+2FFF: 3 in every profile) and a run of one repeated far less (lone surrogates: 0.03-0.25), so 2
 * is a deliberately cautious middle: an overestimate spills a little early, an underestimate lets a result through.
 */
const OTHER3_TOKENS_PER_CHAR = 2;
/** Price of a feature no train sample has (a script the corpus lacks): about half a 3-byte char's bytes. */
const UNSEEN_FEATURE_TOKENS = 1.5;
/** Real UI translations in scripts node_modules has no text for (see test/estimate/fixtures/SOURCES.md). */
export const OTHER_SCRIPTS_FILE = path.join(REPO, 'test', 'estimate', 'fixtures', 'other-scripts.json');
/** The rate used: the median language's (the others are off by up to ~1.5x either way). */
const OTHER_SCRIPT_QUANTILE = 0.5;

/**
 * Tokens per `alphabets` char (Indic, Thai, Khmer, Sinhala, Georgian, Burmese...), measured per language as
 * (exact count - estimate without them) / their chars, and the OTHER_SCRIPT_QUANTILE of those. The corpus
 * has no text in these scripts, so the fit alone would price them by accident.
 */
async function otherScriptRate(w: readonly number[], profile: Profile): Promise<number> {
  const texts = Object.values(JSON.parse(fs.readFileSync(OTHER_SCRIPTS_FILE, 'utf8')) as Record<string, string>);
  const rates: number[] = [];
  for (const text of texts) {
    const x = new Float64Array(FEATURE_COUNT);
    scanFeatures(text, x);
    // only the languages still written in the `alphabets` rest (Khmer, Myanmar...) say what it costs
    if (x[ALPHABETS]! < 0.3 * text.length) continue;
    const rest = predict(x, w.map((v, j) => (j === ALPHABETS ? 0 : v)));
    rates.push(((await countExact(text, profile)) - rest) / x[ALPHABETS]!);
  }
  rates.sort((a, b) => a - b);
  // the lower median: with few languages, the cheaper one (the risk bound covers the rest)
  const q = rates[Math.max(0, Math.ceil(OTHER_SCRIPT_QUANTILE * rates.length) - 1)]!;
  console.log(`${profile}: alphabets tokens/char by language ${rates.map((r) => r.toFixed(2)).join(' ')}; priced at ${q.toFixed(3)}`);
  return Number(Math.max(0, q).toPrecision(5));
}

async function main() {
  const dry = process.argv.includes('--dry-run');
  const t0 = performance.now();
  const trainSamples = await buildCorpus({ split: 'train', perCategory: TRAIN_PER_CATEGORY });
  const bigrams = rareBigramTable(trainSamples);
  setRareBigrams(bigrams);
  const known = await knownWordFilter();
  setKnownWords(known.base64);
  console.log(`known words: ${known.words}`);
  const han = await commonHanBitmap();
  setCommonHan(han.base64);
  console.log(`common han: ${han.count}`);
  console.log(`rare letter pairs: ${[...bigrams].filter((b) => b === '1').length} of 676`);
  const train = await rows(trainSamples);
  const holdout = await rows(await buildCorpus({ split: 'holdout', perCategory: HOLDOUT_PER_CATEGORY }));
  console.log(`corpus: ${train.length} train, ${holdout.length} holdout samples (${((performance.now() - t0) / 1000).toFixed(1)} s with exact counts)`);

  const weights = {} as Record<Profile, number[]>;
  const report = {} as Record<Profile, { train: Accuracy; holdout: Accuracy; margin: number; trustedMax: number }>;
  for (const p of PROFILES) {
    // Scripts the corpus has no text for are priced from real translations instead (a few stray chars in
    // minified files would otherwise decide their weight); the fit prices everything else around them.
    const alphabets = await otherScriptRate(Array.from(fit(train, p)), p);
    const fixed = new Map([[ALPHABETS, alphabets], [OTHER3, OTHER3_TOKENS_PER_CHAR]]);
    // A feature the train split never shows would be priced at 0 (the old U+0800..U+1FFF bug): price it
    // cautiously instead, and leave it to the risk bound (risk.ts).
    for (let j = 0; j < FEATURE_COUNT; j++) if (!fixed.has(j) && train.every((r) => r.x[j] === 0)) fixed.set(j, UNSEEN_FEATURE_TOKENS);
    const beta = fit(train, p, fixed);
    // round the published constants; measure with the rounded ones
    weights[p] = Array.from(beta, (v) => Number(v.toPrecision(5)));
    const acc = (data: Row[]) =>
      accuracy(data.map((r) => ({ category: r.s.category, id: r.s.id, est: Math.ceil(predict(r.x, weights[p])), exact: r.y[p] })));
    const tr = acc(train);
    const ho = acc(holdout);
    // The guard counts exactly when the limit lies within this share of the estimate, widened by the
    // text's risk. So the margin is set by the samples with (almost) no risk: the content the fit is
    // trusted on. The others' errors must lie within margin + risk (test/estimate/accuracy.test.ts).
    const trusted = [...train, ...holdout].filter((r) => riskTokens(r.x, p, r.s.text.length, undefined, weights[p]) < RATIO_MIN_RISK * predict(r.x, weights[p]));
    const worstTrusted = Math.max(...trusted.map((r) => Math.abs(Math.ceil(predict(r.x, weights[p])) / r.y[p] - 1)));
    const margin = Math.min(0.5, Math.max(0.1, Math.ceil(worstTrusted * 1.25 * 100 + 2) / 100));
    console.log(`${p}: ${trusted.length} of ${train.length + holdout.length} samples carry < ${RATIO_MIN_RISK * 100}% risk; their worst error ${pct(worstTrusted)}`);
    report[p] = { train: tr, holdout: ho, margin, trustedMax: worstTrusted };
    console.log(`\n${p}: train balanced MAE ${pct(tr.balancedMae)} max ${pct(tr.maxAbs)} (${tr.worst}); holdout balanced MAE ${pct(ho.balancedMae)} max ${pct(ho.maxAbs)} (${ho.worst}); margin ${pct(margin)}`);
    for (const c of CATEGORIES) {
      const a = tr.perCategory[c];
      const b = ho.perCategory[c];
      console.log(
        `  ${c.padEnd(14)} train ${a ? `${pct(a.mae).padStart(6)} max ${pct(a.max).padStart(6)} bias ${pct(a.bias).padStart(6)}` : '-'}   holdout ${b ? `${pct(b.mae).padStart(6)} max ${pct(b.max).padStart(6)} bias ${pct(b.bias).padStart(6)}` : '-'}`,
      );
    }
  }
  if (dry) return;

  const lines: string[] = [];
  lines.push('// GENERATED by `npx tsx scripts/calibrate.ts` (do not edit by hand).');
  lines.push('// Weights of the `calibrated` estimator per tokenizer family, fitted on the train split of the corpus');
  lines.push('// that scripts/build-corpus.ts builds from node_modules (real files nobody on the team wrote) plus the');
  lines.push('// Debian text in test/estimate/fixtures/corpus-extra.json.gz (man pages, catalogues, emoji, tool output), with');
  lines.push('// exact counts from gpt-tokenizer (o200k_base, cl100k_base) and @anthropic-ai/tokenizer (legacy Claude).');
  lines.push('// Accuracy is measured on the holdout split: sources (packages, files, translations) the fit never saw.');
  lines.push("import type { Profile } from '../types.js';");
  lines.push('');
  lines.push(`export const CORPUS = { trainSamples: ${train.length}, holdoutSamples: ${holdout.length}, categories: ${CATEGORIES.length} } as const;`);
  lines.push('');
  lines.push('/** Letter pairs (a-z x a-z, case folded) rare in real prose and code: 1 = rare. */');
  lines.push(`export const RARE_BIGRAMS = '${bigrams}';`);
  lines.push('');
  lines.push(`/** Bloom filter (2 probes, 2^${KNOWN_WORDS_BITS} bits) of the ${known.words} ASCII words that are one token in both o200k_base and cl100k_base. */`);
  lines.push(`export const KNOWN_WORDS = '${known.base64}';`);
  lines.push('');
  lines.push(`/** Bitmap over U+4E00..U+9FFF of the ${han.count} ideographs that are one token in cl100k_base. */`);
  lines.push(`export const COMMON_HAN = '${han.base64}';`);
  lines.push('');
  lines.push('/** Tokens per unit of each feature, in FEATURE_NAMES order (features.ts). */');
  lines.push('export const WEIGHTS: Record<Profile, readonly number[]> = {');
  for (const p of PROFILES) {
    lines.push(`  ${p}: [`);
    weights[p].forEach((w, j) => lines.push(`    ${w}, // ${FEATURE_NAMES[j]}`));
    lines.push('  ],');
  }
  lines.push('};');
  lines.push('');
  lines.push('/** Measured relative error of `calibrated` (category-balanced mean absolute, and worst sample). */');
  lines.push('/** trustedMax: the worst error among samples with under RATIO_MIN_RISK risk (what the margin covers). */');
  lines.push('export const MEASURED_ERROR: Record<Profile, { trainMae: number; trainMax: number; holdoutMae: number; holdoutMax: number; trustedMax: number }> = {');
  for (const p of PROFILES) {
    const r = report[p];
    lines.push(
      `  ${p}: { trainMae: ${r.train.balancedMae.toFixed(4)}, trainMax: ${r.train.maxAbs.toFixed(4)}, holdoutMae: ${r.holdout.balancedMae.toFixed(4)}, holdoutMax: ${r.holdout.maxAbs.toFixed(4)}, trustedMax: ${r.trustedMax.toFixed(4)} },`,
    );
  }
  lines.push('};');
  lines.push('');
  lines.push('/**');
  lines.push(' * Share of the estimate within which the guard counts exactly before deciding: 1.25x the worst');
  lines.push(' * relative error seen on train or holdout among samples with under RATIO_MIN_RISK risk (the rest');
  lines.push(' * are bounded by riskTokens on top), plus 2 points, at least 10%.');
  lines.push(' */');
  lines.push(`export const EXACT_MARGIN: Record<Profile, number> = { ${PROFILES.map((p) => `${p}: ${report[p].margin}`).join(', ')} };`);
  lines.push('');
  fs.writeFileSync(OUT + '.tmp', lines.join('\n'));
  fs.renameSync(OUT + '.tmp', OUT);
  console.log(`\nwrote ${path.relative(REPO, OUT)}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
