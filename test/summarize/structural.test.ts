import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { estimateTokens } from '../../src/pipeline/estimate/index.js';
import { detectTextKind } from '../../src/pipeline/index.js';
import { createSummarizer, structuralSummary } from '../../src/summarize/index.js';

const FAILING = '2026-11-30T03:25:33.321Z ERROR payments charge failed for order 98231: card_declined (txn=tx_8f3a2b1c)';

function bigLog(targetBytes: number): string {
  const parts: string[] = [];
  let size = 0;
  const svc = ['auth', 'orders', 'inventory', 'search'];
  for (let i = 0; size < targetBytes; i++) {
    const ts = new Date(Date.UTC(2026, 10, 30) + i * 37).toISOString();
    let l: string;
    if (i === 333_333) l = FAILING;
    else if (i % 997 === 0) l = `${ts} WARN ${svc[i % 4]} slow request took ${100 + (i % 900)}ms path=/api/v1/items/${i}`;
    else if (i % 5003 === 0) l = `${ts} ERROR ${svc[i % 4]} upstream timeout after 30000ms host=10.0.${i % 255}.${i % 7}`;
    else l = `${ts} INFO ${svc[i % 4]} request ok id=${i} user=u${i % 1000} payment status checked in ${i % 50}ms`;
    parts.push(l);
    size += l.length + 1;
  }
  return parts.join('\n');
}

describe('structural summary: logs', () => {
  it('a 50 MB log with focus "payment failures" surfaces the one failing line first, verbatim, within budget', () => {
    const text = bigLog(50 * 1024 * 1024);
    const out = structuralSummary(text, { focus: 'payment failures', maxOutputTokens: 1_000 });
    expect(out.startsWith('Log, ')).toBe(true);
    const lines = out.split('\n');
    const focusAt = lines.findIndex((l) => l.startsWith('Focus "payment failures"'));
    expect(focusAt).toBeGreaterThan(-1);
    // Every INFO line says "payment", so it ranks nothing and is left out (and said so); only one line "failed".
    expect(lines[focusAt]).toMatch(/^Focus "payment failures": 1 matching line; terms used: failures; left out: "payment" \(in [\d,]+ of [\d,]+ lines: too common\)\.$/);
    expect(lines[focusAt + 1]).toMatch(/^ {2}1 line matching:/);
    expect(lines[focusAt + 2]).toBe(`    L333334: ${FAILING}`);
    expect(out).toMatch(/Levels: ERROR \d[\d,]* .*WARN [\d,]+ .*INFO [\d,]+/);
    expect(out).toContain('Time span: 2026-11-30T00:00:00.000Z → ');
    expect(out).toMatch(/Errors: [\d,]+ lines of \d+ kinds/);
    expect(out).toContain('upstream timeout after 30000ms');
    expect(estimateTokens(out).tokens).toBeLessThanOrEqual(1_000);
  });

  it('without a focus: levels, error kinds with counts and verbatim examples, first and last line', () => {
    const text = bigLog(2 * 1024 * 1024);
    const out = structuralSummary(text, {});
    expect(detectTextKind(text)).toBe('log');
    expect(out).toMatch(/^Errors: 4 lines of 4 kinds/m);
    expect(out).toContain('  L5004: 2026-11-30T00:03:05.111Z ERROR search upstream timeout after 30000ms host=10.0.158.5');
    expect(out).toMatch(/^Warnings: [\d,]+ lines of 4 kinds/m);
    expect(out).toMatch(/×\d+ \(L1…L\d+\) e\.g\. 2026-11-30T00:00:00\.000Z WARN auth slow request took 100ms/);
    expect(out).toMatch(/^First line: 2026-11-30T00:00:00\.000Z WARN auth slow request/m);
    expect(out).toMatch(/^Last line \(L[\d]+\): /m);
  });
});

describe('structural summary: JSON', () => {
  const records = Array.from({ length: 1_200 }, (_, i) => ({
    id: 1_000 + i,
    status: i === 777 ? 'payment_failed' : i % 10 === 0 ? 'refunded' : 'paid',
    amount: Math.round(i * 1.25 * 100) / 100,
    customer: { name: `Customer ${i % 40}`, tier: i % 3 === 0 ? 'gold' : null },
    url: `https://shop.example.com/orders/${1_000 + i}`,
    description: 'Lorem ipsum dolor sit amet, '.repeat(12) + i,
    tags: i % 2 ? ['a', 'b'] : [],
  }));
  const text = JSON.stringify({ total: records.length, orders: records });

  it('reports schema, types, array lengths, distinct counts, ranges and where the tokens go', () => {
    const out = structuralSummary(text, { maxOutputTokens: 1_500 });
    expect(out).toMatch(/^JSON object, [\d,]+ bytes/);
    expect(out).toContain('$.orders: array, 1,200 items');
    expect(out).toMatch(/\$\.orders\[\*\]\.id: number ×1,200, 1,000 … 2,199; ≥?[\d,]+ distinct/);
    expect(out).toMatch(/\$\.orders\[\*\]\.status: string ×1,200, .*3 distinct: "paid" ×1,079, "refunded" ×120, "payment_failed" ×1/);
    expect(out).toMatch(/\$\.orders\[\*\]\.customer\.tier: null ×800 \| string ×400.*2 distinct: null ×800, "gold" ×400/);
    expect(out).toMatch(/\$\.orders\[\*\]\.tags: array ×1,200, 0–2 items/);
    expect(out).toMatch(/Where the tokens go: \$\.orders\[\*\]\.description \d+%/);
    expect(out).toContain('$.total: 1200');
  });

  it('focus finds the one record and quotes it with its ids and URL verbatim', () => {
    const out = structuralSummary(text, { focus: 'payment failures', maxOutputTokens: 800 });
    expect(out).toContain('$.orders[777].status = "payment_failed"');
    expect(out).toMatch(/in \{"id":1777,"status":"payment_failed","amount":971\.25,.*"url":"https:\/\/shop\.example\.com\/orders\/1777"/);
    expect(estimateTokens(out).tokens).toBeLessThanOrEqual(800);
  });

  it('dictionaries (package-lock) fold into path.* instead of one path per key', () => {
    const lock = fs.readFileSync(path.resolve(import.meta.dirname, '../../package-lock.json'), 'utf8');
    const out = structuralSummary(lock, { maxOutputTokens: 1_500 });
    expect(out).toContain('$.packages.*.version');
    expect(out).not.toContain('$.packages["node_modules/');
  });

  it('NDJSON is profiled record by record', () => {
    const nd = records.slice(0, 300).map((r) => JSON.stringify(r)).join('\n');
    expect(detectTextKind(nd)).toBe('ndjson');
    const out = structuralSummary(nd, {});
    expect(out).toMatch(/^NDJSON: 300 records/);
    expect(out).toContain('$[*].amount: number ×300');
  });

  it('a focus made of a Bash description: command verbs, terms that match nearly every line and terms that match none are left out, and the summary says which terms were used', () => {
    // "Grep the big folder" over a listing where every path holds "bigdir" (issue: 2,075 lines "matching").
    const listing = Array.from({ length: 2_075 }, (_, i) => `/srv/bigdir/part-${i % 40}/file-${i}.dat${i === 1234 ? ' folder-index' : ''}`).join('\n');
    const out = structuralSummary(listing, { focus: 'Grep the big folder', kind: 'text' });
    const line = out.split('\n').find((l) => l.startsWith('Focus '));
    expect(line).toBe('Focus "Grep the big folder": 1 matching line; terms used: folder; left out: "big" (in 2,075 of 2,075 lines: too common).');
    expect(out).not.toMatch(/2,075 lines? matching/);
    expect(out).toContain('/srv/bigdir/part-34/file-1234.dat folder-index');
    // "Print the server log" over output that holds none of its words: not used, and said so.
    const none = structuralSummary(Array.from({ length: 50 }, (_, i) => `row ${i}: ok`).join('\n'), { focus: 'Print the server log', kind: 'text' });
    expect(none).toContain('Focus "Print the server log": not used; left out: "server" (no match), "log" (no match).');
    expect(none).not.toContain('"print"');
  });

  it('invalid JSON is still summarized, as text', () => {
    const out = structuralSummary('{"a": 1, "b": [1, 2,, 3]}', { kind: 'json' });
    expect(out).toMatch(/JSON that does not parse/);
  });

  it('JSON cut short (a Read stopped at the token cap) is JSON by its content, and gets the schema of the part shown', () => {
    const whole = JSON.stringify({ orders: records }, null, 2);
    const cut = whole.split('\n').slice(0, 3509).join('\n') + '\n';
    expect(() => JSON.parse(cut)).toThrow();
    expect(detectTextKind(cut)).toBe('json');
    const out = structuralSummary(cut, {});
    expect(out).toMatch(/^JSON object, [\d,]+ bytes, 3,509 lines, ~[\d,]+ tokens \([^)]*of this text\); cut short after 3,50\d lines: the schema below is of the part shown/);
    expect(out).toContain('$.orders[*].amount: number');
    expect(out).not.toMatch(/^Code, /);
    // Not every text that opens with a bracket is JSON cut short.
    expect(detectTextKind('[INFO] started\n[INFO] listening on :8080\n[WARN] slow\n[INFO] done\n')).not.toBe('json');
  });
});

describe('structural summary: tables, prose, code, HTML', () => {
  it('CSV: columns with stats, and the focus row verbatim', () => {
    const csv =
      'id,name,amount,status\n' +
      Array.from({ length: 5_000 }, (_, i) => `${i},"cust, ${i % 50}",${(i * 1.5).toFixed(2)},${i === 4321 ? 'chargeback' : i % 3 ? 'paid' : 'refunded'}`).join('\n');
    expect(detectTextKind(csv)).toBe('csv');
    const out = structuralSummary(csv, { focus: 'chargeback' });
    expect(out).toContain('Table: 5,000 rows × 4 columns');
    expect(out).toContain('L4323: 4321,"cust, 21",6481.50,chargeback');
    expect(out).toMatch(/amount: 5,000 filled; numeric 0 … 7,498\.5, mean 3,749\.25/);
    expect(out).toMatch(/status: .*3 distinct: "paid" ×3,332, "refunded" ×1,667, "chargeback" ×1/);
    expect(out).toMatch(/name: 5,000 filled; 50 distinct/);
  });

  it('prose: extractive, focus first, numbers and URLs verbatim', () => {
    const filler = Array.from({ length: 400 }, (_, i) => `The committee met on day ${i} and discussed routine matters about the budget and the schedule.`).join(' ');
    const text = `Quarterly report. Revenue grew 12.5% to $4,210,000 in Q3. ${filler} The data center migration failed twice, costing 37 hours of downtime; see https://status.example.com/incidents/8812 for details. ${filler}`;
    const out = structuralSummary(text, { focus: 'migration downtime', maxOutputTokens: 400 });
    expect(out).toContain('The data center migration failed twice, costing 37 hours of downtime; see https://status.example.com/incidents/8812 for details.');
    expect(estimateTokens(out).tokens).toBeLessThanOrEqual(400);
  });

  it('code: declarations with line numbers', () => {
    const src = fs.readFileSync(path.resolve(import.meta.dirname, '../../src/summarize/summarizer.ts'), 'utf8');
    const out = structuralSummary(src, { maxOutputTokens: 800 });
    expect(out).toMatch(/^Code, /);
    expect(out).toMatch(/L\d+: export function createSummarizer\(opts: SummarizerOptions\): Summarizer \{/);
  });

  it('HTML (a real manual): title, element counts, focus lines from the visible text, never markup', () => {
    const candidates = ['/usr/share/doc/nettle-dev/nettle.html', '/usr/share/doc/libjs-underscore/index.html'];
    const file = candidates.find((f) => fs.existsSync(f));
    const html = file ? fs.readFileSync(file, 'utf8') : `<html><head><title>T</title><script>var x = "<b>";</script></head><body><h1>Intro</h1><p>The digest size is 32 bytes.</p></body></html>`;
    const out = structuralSummary(html, { focus: 'digest size' });
    expect(out).toMatch(/^HTML, [\d,]+ bytes/);
    expect(out).toMatch(/Elements: /);
    expect(out).toMatch(/Focus "digest size": [\d,]+ matching lines/);
    expect(out).not.toMatch(/<script|<\/p>|<td/i);
  });
});

describe('structural summary: bounds', () => {
  it('property: any input, any budget ≥ 64 tokens, output stays within the budget and never throws', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 3_000 }), fc.string({ unit: 'grapheme', maxLength: 3_000 }), fc.json({ maxDepth: 4 })),
        fc.integer({ min: 64, max: 2_000 }),
        fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
        (text, budget, focus) => {
          const out = structuralSummary(text, { maxOutputTokens: budget, focus });
          expect(typeof out).toBe('string');
          expect(estimateTokens(out).tokens).toBeLessThanOrEqual(budget);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('the structural Summarizer records provider, model, focus, tokens and latency', async () => {
    const s = createSummarizer({ provider: 'structural' });
    const out = await s.summarize({ text: bigLog(200_000), focus: 'payment failures', maxOutputTokens: 500 }, { signal: new AbortController().signal });
    expect(out).toMatchObject({ provider: 'structural', model: 'structural', focus: 'payment failures', costUsd: 0 });
    expect(out.inputTokens).toBeGreaterThan(10_000);
    expect(out.outputTokens).toBeGreaterThan(10);
    expect(out.outputTokens).toBeLessThanOrEqual(500);
    expect(out.ms).toBeGreaterThanOrEqual(0);
  });

  it('hostile nesting (100,000 levels) is summarized, not a stack overflow', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const out = structuralSummary(deep, { maxOutputTokens: 300 });
    expect(out).toMatch(/nested deeper than 200 levels were not profiled/);
  });

  it('bytes read as text are called binary, not summarized as prose', () => {
    const png = fs.readFileSync(path.resolve(import.meta.dirname, '../pipeline/fixtures/sample.png')).toString('utf8');
    expect(structuralSummary(png, {})).toMatch(/^Binary content, [\d,]+ bytes/);
  });

  it('writes nothing to disk', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-struct-'));
    const before = fs.readdirSync(dir);
    structuralSummary('x', {});
    expect(fs.readdirSync(dir)).toEqual(before);
  });
});
