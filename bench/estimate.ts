/**
 * `npm run bench estimate`: accuracy and speed of the cheap strategies on the HOLDOUT corpus
 * (scripts/build-corpus.ts), against the real tokenizers measured in the same run.
 *
 * - Accuracy tables, one per profile: mean |relative error| per category of chars4, craft-density,
 *   calibrated and tokenx (a dev dependency, for comparison only), plus the mixed input (every
 *   holdout sample concatenated) and the category-balanced mean.
 * - Speed table: MB/s (UTF-16 chars) per category and strategy, and the ratio to gpt-tokenizer
 *   o200k_base's countTokens on the same text in the same run. Plus calibrated vs JSON.parse of a JSON
 *   document of the same size (the guard's pass-through budget is <= 0.5x a JSON.parse).
 *
 * BENCH_ESTIMATE_PER_CATEGORY (default 8) sets the holdout size.
 */
import { estimateTokenCount } from 'tokenx';
import { buildCorpus, CATEGORIES, mixedInput, type CorpusSample } from '../scripts/build-corpus.js';
import { calibrated, chars4, countExact, craftDensity, FEATURE_COUNT, FEATURE_NAMES, PROFILES, sampleFeatures, scanFeatures, type Profile } from '../src/pipeline/estimate/internal.js';
import * as referenceScanner from '../test/estimate/reference-features.js';

type Row = 'chars4' | 'craft-density' | 'calibrated' | 'tokenx';
const ROWS: Row[] = ['chars4', 'craft-density', 'calibrated', 'tokenx'];
/** Repeat a measurement until it has run this long, so small inputs are timed fairly. */
const MIN_MEASURE_MS = 150;

const estimators = (profile: Profile): Record<Row, (t: string) => number> => ({
  chars4,
  'craft-density': craftDensity,
  calibrated: (t) => calibrated(t, profile),
  tokenx: (t) => estimateTokenCount(t),
});

function mbPerSec(fn: (t: string) => unknown, text: string): number {
  fn(text); // warm up
  let runs = 0;
  const t0 = performance.now();
  let ms = 0;
  do {
    fn(text);
    runs++;
    ms = performance.now() - t0;
  } while (ms < MIN_MEASURE_MS);
  return (text.length * runs) / 1e6 / (ms / 1000);
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const pad = (s: string, n: number, left = false) => (left ? s.padEnd(n) : s.padStart(n));

function printTable(title: string, head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  console.log(`\n${title}`);
  console.log(head.map((h, i) => pad(h, widths[i]!, i === 0)).join('  '));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(r.map((c, i) => pad(c, widths[i]!, i === 0)).join('  '));
}

export async function run(): Promise<void> {
  const perCategory = Number(process.env.BENCH_ESTIMATE_PER_CATEGORY ?? 8);
  const samples = await buildCorpus({ split: 'holdout', perCategory });
  // deterministic interleave of every category: the mixed input
  const mixed = mixedInput(samples);
  console.log(`holdout: ${samples.length} samples, ${CATEGORIES.length} categories, mixed input ${(mixed.length / 1e6).toFixed(2)} M chars`);

  const byCat = new Map<string, CorpusSample[]>();
  for (const s of samples) byCat.set(s.category, [...(byCat.get(s.category) ?? []), s]);

  // ---- accuracy per profile
  for (const profile of PROFILES) {
    const est = estimators(profile);
    const rows: string[][] = [];
    const balanced: Record<Row, number> = { chars4: 0, 'craft-density': 0, calibrated: 0, tokenx: 0 };
    const worst: Record<Row, number> = { chars4: 0, 'craft-density': 0, calibrated: 0, tokenx: 0 };
    for (const cat of CATEGORIES) {
      const list = byCat.get(cat) ?? [];
      if (!list.length) continue;
      const truth = await Promise.all(list.map((s) => countExact(s.text, profile)));
      const cells = ROWS.map((r) => {
        const errs = list.map((s, i) => est[r](s.text) / truth[i]! - 1);
        const mae = errs.reduce((a, e) => a + Math.abs(e), 0) / errs.length;
        const bias = errs.reduce((a, e) => a + e, 0) / errs.length;
        balanced[r] += mae / byCat.size;
        worst[r] = Math.max(worst[r], ...errs.map(Math.abs));
        return `${pct(mae)} (${bias >= 0 ? '+' : ''}${pct(bias)})`;
      });
      rows.push([cat, String(list.length), ...cells]);
    }
    const mixedTruth = await countExact(mixed, profile);
    rows.push(['mixed', '1', ...ROWS.map((r) => { const e = est[r](mixed) / mixedTruth - 1; return `${pct(Math.abs(e))} (${e >= 0 ? '+' : ''}${pct(e)})`; })]);
    rows.push(['balanced MAE', String(samples.length), ...ROWS.map((r) => pct(balanced[r]))]);
    rows.push(['worst sample', '', ...ROWS.map((r) => pct(worst[r]))]);
    printTable(`accuracy vs ${profile} (exact tokenizer): mean |error| (mean signed error)`, ['category', 'n', ...ROWS], rows);
  }

  // ---- speed, against gpt-tokenizer o200k on the same text in the same run
  const o200k = await import('gpt-tokenizer/encoding/o200k_base');
  const baseline = (t: string) => o200k.countTokens(t, { disallowedSpecial: new Set() });
  const est = estimators('o200k');
  const speedRows: string[][] = [];
  const inputs: Array<[string, string]> = [...CATEGORIES.filter((c) => byCat.has(c)).map((c) => [c, byCat.get(c)!.map((s) => s.text).join('\n')] as [string, string]), ['mixed', mixed]];
  for (const [name, text] of inputs) {
    const base = mbPerSec(baseline, text);
    speedRows.push([name, base.toFixed(1), ...ROWS.map((r) => { const s = mbPerSec(est[r], text); return `${s.toFixed(0)} (${(s / base).toFixed(0)}x)`; })]);
  }
  printTable('speed: MB/s (ratio to gpt-tokenizer o200k countTokens, same text, same run)', ['input', 'gpt-tokenizer', ...ROWS], speedRows);
  const info = sampleFeatures(mixed, new Float64Array(FEATURE_NAMES.length));
  console.log(
    `calibrated on the mixed input ${info.full ? 'read all of it' : `read ${((info.scanned / mixed.length) * 100).toFixed(1)}% of it in stratified windows (relative standard error ${(info.relStdErr * 100).toFixed(2)}%)`}; texts up to 64 K chars are always read whole`,
  );

  // ---- the scanner itself, before (charCodeAt, test/estimate/reference-features.ts) and after (block buffer)
  const scratch = new Float64Array(FEATURE_COUNT);
  const plainLoop = (t: string) => {
    let x = 0;
    for (let i = 0; i < t.length; i++) x += t.charCodeAt(i);
    return x;
  };
  const scanRows: string[][] = [];
  for (const [name, text] of [...inputs.filter(([c]) => ['prose', 'code-js', 'json-min', 'cyrillic', 'cjk'].includes(c)), ['mixed', mixed] as [string, string]]) {
    const before = mbPerSec((t) => referenceScanner.scanFeatures(t, scratch), text);
    const after = mbPerSec((t) => scanFeatures(t, scratch), text);
    scanRows.push([name, before.toFixed(0), after.toFixed(0), (after / before).toFixed(2), mbPerSec(plainLoop, text).toFixed(0)]);
  }
  printTable('feature scan, full pass: MB/s (UTF-16 chars) before and after, same text, same run; and a bare charCodeAt loop', ['input', 'before', 'after', 'after/before', 'charCodeAt loop'], scanRows);

  // ---- the guard's budget: the calibrated pass vs JSON.parse of a same-size JSON document
  const json = JSON.stringify(samples.map((s) => ({ id: s.id, category: s.category, text: s.text })));
  const parse = mbPerSec((t) => JSON.parse(t), json);
  const cal = mbPerSec((t) => calibrated(t, 'o200k'), json);
  console.log(`\ncalibrated on a ${(json.length / 1e6).toFixed(2)} M-char JSON document: ${cal.toFixed(0)} MB/s; JSON.parse: ${parse.toFixed(0)} MB/s; calibrated takes ${(parse / cal).toFixed(2)}x the time of JSON.parse (budget <= 0.5x)`);
}
