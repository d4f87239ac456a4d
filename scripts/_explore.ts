// scratch analysis (not committed)
import crypto from 'node:crypto'; import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
import { buildCorpus } from './build-corpus.js';
import { FEATURE_COUNT, FEATURE_NAMES, scanFeatures } from '../src/pipeline/estimate/features.js';
import { WEIGHTS } from '../src/pipeline/estimate/constants.js';
const cache = JSON.parse(fs.readFileSync(path.join(os.tmpdir(), 'spillway-calibrate-counts.json'), 'utf8'));
const p = (process.argv[2] ?? 'o200k') as 'o200k';
const cat = process.argv[3];
const all = [...await buildCorpus({ split: 'train', perCategory: 40 }), ...await buildCorpus({ split: 'holdout', perCategory: 8 })];
const rows = all.filter(s => !cat || s.category === cat).map(s => {
  const x = new Float64Array(FEATURE_COUNT); scanFeatures(s.text, x);
  const y = cache[`${p}:${crypto.createHash('sha1').update(s.text).digest('hex')}`];
  let est = 0; for (let j = 0; j < FEATURE_COUNT; j++) est += x[j]! * WEIGHTS[p][j]!;
  return { s, x, y, e: est / y - 1 };
}).sort((a, b) => Math.abs(b.e) - Math.abs(a.e));
for (const r of rows.slice(0, Number(process.argv[4] ?? 12))) {
  console.log(`${(r.e * 100).toFixed(1)}% ${r.s.split} ${r.s.id} chars/tok=${(r.s.text.length / r.y).toFixed(2)} :: ${JSON.stringify(r.s.text.slice(0, 160))}`);
}
