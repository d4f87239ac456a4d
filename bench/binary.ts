/**
 * What binary and base64 detection costs a result that fits the limit (issue 13 §1), against
 * baselines measured in the same run, on FRESH inputs: every input is timed once, by one measure.
 *
 * - `guard`: guardLargeResult on an under-limit result, with the binary check and the base64 run
 *   scan (what ships);
 * - `without`: the guard's pass decision as it was before them (UTF-8 size bound, else
 *   estimateForDecision; for a parsed value the JSON size bound), on the same kind of input;
 * - `check`: the two new checks alone (isBinaryString + hasBase64Run on text; jsonShape on a value);
 * - `JSON.parse`: one JSON.parse of a fresh JSON text of the same size: the yardstick of issue 13.
 *
 * Inputs: prose, JSON text, a parsed JSON value and source code, at 1, 10 and 30 KB, far from
 * any base64 (so each passes). SPILLWAY_BENCH_BINARY_ROUNDS sets the rounds (default 5, median kept).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_LIMIT_TOKENS, estimateForDecision, guardLargeResult, isBinaryString, jsonBytesUpperBound, MIN_INLINE_ASSET_RUN_CHARS } from '../src/pipeline/index.js';
import { hasBase64Run } from '../src/pipeline/base64.js';
import { jsonShape } from '../src/pipeline/serialize.js';

const ROUNDS = Number(process.env.SPILLWAY_BENCH_BINARY_ROUNDS ?? 5);
/** Bytes of input per measure per round: enough for a stable time at 1 KB, bounded memory at 30 KB. */
const POOL_BYTES = 2 * 1024 * 1024;
const MIN_POOL = 48;

function lcg(seed: number) {
  let x = seed >>> 0 || 1;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
}
const WORDS = 'the of and to in is that for on with as by this from at be it are was an or which error request user value data file line time server response config build test run'.split(' ');

function proseOf(size: number, seed: number): string {
  const r = lcg(seed);
  const lines: string[] = [];
  let n = 0;
  while (n < size) {
    const words: string[] = [];
    for (let k = 0; k < 12; k++) words.push(WORDS[r() % WORDS.length]!);
    const line = `${words.join(' ')} ${r() % 100000}.`;
    lines.push(line);
    n += line.length + 1;
  }
  return lines.join('\n').slice(0, size);
}

function jsonValueOf(size: number, seed: number): unknown[] {
  const r = lcg(seed);
  const rows: unknown[] = [];
  let n = 2;
  while (n < size - 120) {
    const row = { id: rows.length + (r() % 1000) * 1000, name: `${WORDS[r() % WORDS.length]}-${r() % 10000}`, ok: r() % 2 === 0, score: (r() % 10000) / 100, tags: [WORDS[r() % WORDS.length], WORDS[r() % WORDS.length]] };
    rows.push(row);
    n += JSON.stringify(row).length + 1;
  }
  return rows;
}

const CODE = fs
  .readdirSync(path.join(import.meta.dirname, '..', 'src', 'pipeline'))
  .filter((f) => f.endsWith('.ts'))
  .sort()
  .map((f) => fs.readFileSync(path.join(import.meta.dirname, '..', 'src', 'pipeline', f), 'utf8'))
  .join('\n');

function codeOf(size: number, seed: number): string {
  // A window of real source at a different place each time, with a comment that makes it unique.
  const at = (seed * 7919) % Math.max(1, CODE.length - size);
  return `// variant ${seed}\n${CODE.slice(at, at + size)}`.slice(0, size);
}

type Kind = 'prose' | 'JSON text' | 'JSON value' | 'code';
const KINDS: Kind[] = ['prose', 'JSON text', 'JSON value', 'code'];

function inputOf(kind: Kind, size: number, seed: number): unknown {
  if (kind === 'prose') return proseOf(size, seed);
  if (kind === 'code') return codeOf(size, seed);
  const v = jsonValueOf(size, seed);
  return kind === 'JSON value' ? v : JSON.stringify(v);
}

/** The pass decision before binary and base64 detection: size bounds, then the estimator. */
async function without(input: unknown): Promise<boolean> {
  if (typeof input !== 'string') {
    if (jsonBytesUpperBound(input, DEFAULT_LIMIT_TOKENS) <= DEFAULT_LIMIT_TOKENS) return true;
    return without(JSON.stringify(input));
  }
  if (input.length * 3 <= DEFAULT_LIMIT_TOKENS) return true;
  const bytes = Buffer.byteLength(input, 'utf8');
  if (bytes <= DEFAULT_LIMIT_TOKENS) return true;
  return (await estimateForDecision(input, DEFAULT_LIMIT_TOKENS, { utf8Bytes: bytes })).tokens <= DEFAULT_LIMIT_TOKENS;
}

/** The two checks the pass path gained, alone. */
function check(input: unknown): boolean {
  if (typeof input === 'string') return !isBinaryString(input) && !hasBase64Run(input, MIN_INLINE_ASSET_RUN_CHARS);
  return !jsonShape(input, DEFAULT_LIMIT_TOKENS, MIN_INLINE_ASSET_RUN_CHARS).longRun;
}

/** µs per call of `fn` over a pool of fresh inputs, each used once. */
async function perCall(pool: unknown[], fn: (x: unknown) => unknown): Promise<number> {
  const t0 = process.hrtime.bigint();
  for (const x of pool) await fn(x);
  return Number(process.hrtime.bigint() - t0) / 1e3 / pool.length;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(): Promise<void> {
  const session = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-binary-'));
  const opts = { sessionPath: session };
  console.log(`\nunder-limit pass-through with binary/base64 detection vs without, fresh inputs (median of ${ROUNDS} rounds), ratios to one JSON.parse of a JSON text of the same size`);
  console.log('size   input          JSON.parse µs   without µs   guard µs   check µs   without/parse   guard/parse   check/parse   guard/without');
  let seed = 1;
  for (const kb of [1, 10, 30]) {
    const size = kb * 1024;
    const poolSize = Math.max(MIN_POOL, Math.floor(POOL_BYTES / size));
    for (const kind of KINDS) {
      const t = { parse: [] as number[], without: [] as number[], guard: [] as number[], check: [] as number[] };
      for (let round = 0; round < ROUNDS; round++) {
        const fresh = () => Array.from({ length: poolSize }, () => inputOf(kind, size, seed++));
        const jsonTexts = Array.from({ length: poolSize }, () => JSON.stringify(jsonValueOf(size, seed++)));
        const a = fresh();
        const b = fresh();
        const c = fresh();
        // Every input must pass, or the bench times a spill.
        for (const x of [a[0], b[0], c[0]]) if ((await guardLargeResult(x, opts)) !== null) throw new Error(`${kind} ${kb} KB was spilled; the bench wants results that pass`);
        // Alternate the order of the measures from round to round: the machine is shared.
        const order = round % 2 === 0 ? (['without', 'guard', 'check', 'parse'] as const) : (['parse', 'check', 'guard', 'without'] as const);
        for (const m of order) {
          if (m === 'parse') t.parse.push(await perCall(jsonTexts, (x) => JSON.parse(x as string)));
          else if (m === 'without') t.without.push(await perCall(a, without));
          else if (m === 'guard') t.guard.push(await perCall(b, (x) => guardLargeResult(x, opts)));
          else t.check.push(await perCall(c, check));
        }
      }
      const [p, w, g, k] = [median(t.parse), median(t.without), median(t.guard), median(t.check)];
      const f = (x: number, width: number) => x.toFixed(2).padStart(width);
      console.log(`${String(kb).padStart(2)} KB  ${kind.padEnd(12)} ${f(p, 15)} ${f(w, 12)} ${f(g, 10)} ${f(k, 10)} ${f(w / p, 15)} ${f(g / p, 13)} ${f(k / p, 13)} ${f(g / w, 15)}`);
    }
  }
  fs.rmSync(session, { recursive: true, force: true });
}
