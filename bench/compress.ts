/**
 * Compression layers on real payloads, each against a baseline measured in the same run:
 * 1. tokens before/after per layer (projection, structural summary, handle receipt, the guard's
 *    2,000-char preview as the baseline) on a real registry API reply (`npm view typescript --json`,
 *    else the repo's package-lock.json), a large real log (/var/log/dpkg.log repeated to ~50 MB) and
 *    a large real HTML manual;
 * 2. structural summarizer throughput (MB/s) vs a naive line scan (split + lowercase + includes);
 * 3. handle query latency on a 1,000,000-row result vs the same query in plain JS over an in-memory array.
 * Sizes: SPILLWAY_BENCH_LOG_MB (default 50), SPILLWAY_BENCH_ROWS (default 1,000,000).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HandleStore, project, suggestProjection } from '../src/compress/index.js';
import { estimateTokens, PREVIEW_CHARS } from '../src/pipeline/index.js';
import { structuralSummary } from '../src/summarize/index.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const LOG_MB = Number(process.env.SPILLWAY_BENCH_LOG_MB ?? 50);
const ROWS = Number(process.env.SPILLWAY_BENCH_ROWS ?? 1_000_000);

const tok = (s: string) => estimateTokens(s).tokens;
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const fmt = (n: number, d = 0) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

function table(head: string[], rows: Array<Array<string | number>>): void {
  const cells = [head, ...rows.map((r) => r.map(String))];
  const w = head.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  for (const [k, r] of cells.entries()) {
    console.log(r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  '));
    if (k === 0) console.log(w.map((x) => '-'.repeat(x)).join('  '));
  }
}

function apiJson(): { name: string; text: string } {
  try {
    const text = execFileSync('npm', ['view', 'typescript', '--json'], { timeout: 30_000, stdio: ['ignore', 'pipe', 'ignore'] }).toString('utf8');
    JSON.parse(text);
    return { name: 'npm view typescript --json', text };
  } catch {
    return { name: 'package-lock.json', text: fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8') };
  }
}

function bigLog(): { name: string; text: string } {
  const src = ['/var/log/dpkg.log', '/var/log/alternatives.log'].find((f) => fs.existsSync(f) && fs.statSync(f).size > 10_000);
  const base = src ? fs.readFileSync(src, 'utf8') : fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8');
  const want = LOG_MB * 1024 * 1024;
  const parts: string[] = [];
  let size = 0;
  while (size < want) {
    parts.push(base);
    size += base.length;
  }
  // one needle to find, as an agent would ask
  const text = parts.join('');
  const mid = text.indexOf('\n', Math.floor(text.length * 0.61)) + 1;
  const needle = '2026-11-30 12:34:56 status failed libssl3:amd64 3.0.15 (dependency problems: post-install script returned error exit status 1)\n';
  return { name: `${src ? path.basename(src) : 'package-lock.json'} ×${parts.length} (${fmt(text.length / 1048576, 1)} MB)`, text: text.slice(0, mid) + needle + text.slice(mid) };
}

function bigHtml(): { name: string; text: string } {
  const candidates = [
    '/root/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/share/doc/rust/html/book/print.html',
    '/usr/share/doc/nettle-dev/nettle.html',
    '/usr/share/doc/libxslt1-dev/html/xslt.html',
  ].filter((f) => fs.existsSync(f));
  const best = candidates.sort((a, b) => fs.statSync(b).size - fs.statSync(a).size)[0];
  if (!best) return { name: 'README.md', text: fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8') };
  return { name: path.basename(path.dirname(best)) + '/' + path.basename(best), text: fs.readFileSync(best, 'utf8') };
}

export async function run(): Promise<void> {
  const session = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-compress-'));
  const store = HandleStore.open(session);
  try {
    // ---------------------------------------------------------------- 1. tokens per layer
    const payloads = [
      { ...apiJson(), focus: 'license repository', json: true },
      { ...bigLog(), focus: 'status failed error', json: false },
      { ...bigHtml(), focus: 'ownership borrowing', json: false },
    ];
    console.log('\nTokens before/after per layer (calibrated estimate; ratio = before / after; baseline = the guard\'s 2,000-char preview)');
    const rows: Array<Array<string | number>> = [];
    for (const p of payloads) {
      const before = tok(p.text);
      const preview = tok(p.text.slice(0, PREVIEW_CHARS));
      rows.push([p.name, 'raw', fmt(before), '1.0', '']);
      rows.push(['', 'baseline: preview', fmt(preview), fmt(before / preview, 1), 'first 2,000 chars, focus ignored']);
      if (p.json) {
        const s = suggestProjection(p.text);
        const out = JSON.stringify(project(p.text, s.spec));
        rows.push(['', 'L1 projection (suggested)', fmt(tok(out)), fmt(before / tok(out), 1), `${s.spec.keep?.length ?? 'all'} paths kept`]);
      } else rows.push(['', 'L1 projection', '-', '-', 'not JSON']);
      for (const focus of [undefined, p.focus]) {
        const t0 = process.hrtime.bigint();
        const sum = structuralSummary(p.text, { focus, maxOutputTokens: 1_500 });
        const took = ms(t0);
        const hit = focus ? (p.json ? '' : sum.includes('status failed libssl3') ? ', needle found' : p.text.includes('libssl3:amd64 3.0.15 (dependency') ? ', needle MISSED' : '') : '';
        rows.push(['', `L2 structural${focus ? ` + focus "${focus}"` : ''}`, fmt(tok(sum)), fmt(before / tok(sum), 1), `${fmt(took)} ms${hit}`]);
      }
      const t0 = process.hrtime.bigint();
      const r = store.put(p.text);
      const putMs = ms(t0);
      const receipt = JSON.stringify({ handle: r.handle, rows: r.rows, columns: r.columns, sample: r.sample, hint: r.hint });
      rows.push(['', `L3 handle receipt (${r.kind})`, fmt(tok(receipt)), fmt(before / tok(receipt), 1), `${fmt(r.rows)} ${r.kind}, put ${fmt(putMs)} ms`]);
    }
    table(['payload', 'layer', 'tokens', 'ratio', 'note'], rows);

    // ---------------------------------------------------------------- 2. throughput
    console.log('\nStructural summarizer throughput (best of 2) vs a naive line scan over the same text');
    const log = payloads[1]!.text;
    const mb = Buffer.byteLength(log) / 1048576;
    const best = (f: () => void) => {
      let m = Infinity;
      for (let i = 0; i < 2; i++) {
        const t0 = process.hrtime.bigint();
        f();
        m = Math.min(m, ms(t0));
      }
      return m;
    };
    let sink = 0;
    const naive = best(() => {
      for (const l of log.split('\n')) if (l.toLowerCase().includes('failed')) sink++;
    });
    const structural = best(() => void structuralSummary(log, { focus: 'status failed error' }));
    const noFocus = best(() => void structuralSummary(log, {}));
    table(
      ['what', 'MB', 'ms', 'MB/s', 'vs naive'],
      [
        ['baseline: split + lowercase + includes', fmt(mb, 1), fmt(naive), fmt(mb / (naive / 1000), 1), '1.00'],
        ['structuralSummary, focus', fmt(mb, 1), fmt(structural), fmt(mb / (structural / 1000), 1), fmt(naive / structural, 2)],
        ['structuralSummary, no focus', fmt(mb, 1), fmt(noFocus), fmt(mb / (noFocus / 1000), 1), fmt(naive / noFocus, 2)],
      ],
    );
    void sink;

    // ---------------------------------------------------------------- 3. handle queries on 1M rows
    console.log(`\nHandle queries on a ${fmt(ROWS)}-row result (SQLite, ${path.basename(store.file)}) vs the same query in plain JS over an in-memory array`);
    const statuses = ['paid', 'paid', 'paid', 'refunded', 'pending', 'payment_failed'];
    const regions = ['eu', 'us', 'apac', 'latam'];
    const data = Array.from({ length: ROWS }, (_, i) => ({
      id: i + 1,
      status: statuses[(i * 7919) % statuses.length]!,
      amount: ((i * 7919) % 100_000) / 100,
      region: regions[i % regions.length]!,
      customer: `c${(i * 31) % 50_000}`,
      note: i === Math.floor(ROWS * 0.7) ? 'card declined: insufficient funds' : 'ok',
    }));
    const t0 = process.hrtime.bigint();
    const { handle } = store.put(data, { tool: 'bench_orders' });
    const putMs = ms(t0);
    const timeIt = (f: () => unknown) => {
      const t = process.hrtime.bigint();
      f();
      return ms(t);
    };
    const qrows: Array<Array<string | number>> = [];
    const cases: Array<[string, () => unknown, () => unknown]> = [
      [
        'where status=payment_failed, amount>900, sort -amount, limit 20',
        () => store.query(handle, { where: ['status=payment_failed', 'amount>900'], sort: '-amount', limit: 20 }),
        () => data.filter((r) => r.status === 'payment_failed' && r.amount > 900).sort((a, b) => b.amount - a.amount).slice(0, 20),
      ],
      [
        'group-by region, count + sum:amount + avg:amount',
        () => store.query(handle, { groupBy: 'region', agg: ['count', 'sum:amount', 'avg:amount'] }),
        () => {
          const m = new Map<string, { count: number; sum: number }>();
          for (const r of data) {
            const g = m.get(r.region) ?? { count: 0, sum: 0 };
            g.count++;
            g.sum += r.amount;
            m.set(r.region, g);
          }
          return [...m.entries()].map(([k, g]) => ({ region: k, count: g.count, sum: g.sum, avg: g.sum / g.count }));
        },
      ],
      ['text match note~declined', () => store.query(handle, { where: ['note~declined'] }), () => data.filter((r) => r.note.toLowerCase().includes('declined'))],
      ['page: offset 500,000, limit 50', () => store.query(handle, { offset: Math.floor(ROWS / 2), limit: 50 }), () => data.slice(Math.floor(ROWS / 2), Math.floor(ROWS / 2) + 50)],
      ['distinct customer (50,000), limit 50', () => store.query(handle, { distinct: 'customer', limit: 50 }), () => [...new Set(data.map((r) => r.customer))].sort().slice(0, 50)],
    ];
    for (const [name, sql, js] of cases) {
      const first = timeIt(sql); // builds the column index on first use
      const again = timeIt(sql);
      timeIt(js);
      const b = timeIt(js);
      qrows.push([name, fmt(first, 1), fmt(again, 1), fmt(b, 1), fmt(again / b, 2)]);
    }
    const t1 = process.hrtime.bigint();
    await store.grep(handle, 'insufficient funds', { context: 1 });
    qrows.push(['grep "insufficient funds" -C 1 (rows as JSON)', fmt(ms(t1), 1), '-', '-', '-']);
    console.log(`put: ${fmt(ROWS)} rows in ${fmt(putMs)} ms (${fmt(ROWS / (putMs / 1000))} rows/s), ${fmt(fs.statSync(store.file).size / 1048576, 1)} MB on disk`);
    table(['query', 'sqlite first ms', 'sqlite again ms', 'plain JS ms', 'again / JS'], qrows);
    console.log('(total counts are computed on every query; the JS baseline holds the whole array in memory and survives no restart)');
  } finally {
    store.close();
    fs.rmSync(session, { recursive: true, force: true });
  }
}
