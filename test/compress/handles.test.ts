import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { HandleError, HandleStore, HANDLES_DB_FILE } from '../../src/compress/index.js';

const session = () => fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-handles-'));
const stores: HandleStore[] = [];
const open = (dir: string, opts?: { now?: () => number }) => {
  const s = HandleStore.open(dir, opts);
  stores.push(s);
  return s;
};
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

const orders = Array.from({ length: 1_000 }, (_, i) => ({
  id: i + 1,
  status: i === 500 ? 'payment_failed' : i % 10 === 0 ? 'refunded' : 'paid',
  amount: Math.round((i % 97) * 10.5 * 100) / 100,
  region: ['eu', 'us', 'apac'][i % 3],
  customer: { name: `Customer ${i % 25}`, vip: i % 7 === 0 },
  note: i === 777 ? 'Card declined: insufficient funds' : null,
}));

describe('HandleStore', () => {
  it('put: a receipt with handle, row count, columns, a three-row sample and a hint', () => {
    const dir = session();
    const s = open(dir);
    const r = s.put(JSON.stringify({ data: { items: orders }, page: 1 }), { tool: 'orders_api' });
    expect(r.handle).toMatch(/^h_[a-z0-9]{12}$/);
    expect(r.kind).toBe('rows');
    expect(r.rows).toBe(1_000);
    expect(r.source).toBe('$.data.items');
    expect(r.columns).toEqual(['id', 'status', 'amount', 'region', 'customer', 'note']);
    expect(r.sample).toEqual(orders.slice(0, 3));
    expect(r.hint).toContain(`spillway handle query ${r.handle}`);
    expect(fs.existsSync(path.join(dir, HANDLES_DB_FILE))).toBe(true);
  });

  it('filters with =, !=, >, <, ~ (ANDed), projects, sorts, pages, and says when it cut', () => {
    const s = open(session());
    const { handle } = s.put(orders);
    const paid = s.query(handle, { where: ['status=paid', 'region=eu', 'amount>500'], sort: '-amount', limit: 5 });
    const expected = orders.filter((o) => o.status === 'paid' && o.region === 'eu' && o.amount > 500).sort((a, b) => b.amount - a.amount || a.id - b.id);
    expect(paid.total).toBe(expected.length);
    expect(paid.rows).toEqual(expected.slice(0, 5));
    expect(paid.truncated).toBe(true);
    const page2 = s.query(handle, { where: ['status=paid', 'region=eu', 'amount>500'], sort: '-amount', limit: 5, offset: 5 });
    expect(page2.rows).toEqual(expected.slice(5, 10));
    expect(s.query(handle, { where: ['status!=paid', 'status!=refunded'] }).rows.map((r) => r.id)).toEqual([501]);
    expect(s.query(handle, { where: ['amount<10.5'], select: ['id'] }).total).toBe(orders.filter((o) => o.amount < 10.5).length);
    const text = s.query(handle, { where: ['note~INSUFFICIENT'], select: ['id', 'customer.name'] });
    expect(text.rows).toEqual([{ id: 778, 'customer.name': 'Customer 2' }]);
    expect(s.query(handle, { where: ['~declined'] }).rows.map((r) => r.id)).toEqual([778]);
    expect(s.query(handle, { where: ['customer.vip=true'] }).total).toBe(orders.filter((o) => o.customer.vip).length);
    expect(s.query(handle, { where: ['note=null'] }).total).toBe(999);
    expect(s.query(handle, { where: ['id=42'] }).rows).toEqual([orders[41]]);
    const all = s.query(handle, { limit: 100_000 });
    expect(all.rows.length).toBeLessThanOrEqual(1_000);
    expect(all.truncated).toBe(true); // bounded by rows and by result size
  });

  it('group-by with count/sum/avg/min/max, named as given; distinct', () => {
    const s = open(session());
    const { handle } = s.put(orders);
    const g = s.query(handle, { groupBy: 'status', agg: ['count', 'sum:amount', 'avg:amount', 'min:id', 'max:id'] });
    const by = (st: string) => orders.filter((o) => o.status === st);
    expect(g.rows[0]).toMatchObject({ status: 'paid', count: by('paid').length, 'min:id': 2, 'max:id': 1_000 });
    const refunded = g.rows.find((r) => r.status === 'refunded')!;
    expect(refunded['sum:amount']).toBeCloseTo(by('refunded').reduce((a, o) => a + o.amount, 0), 6);
    expect(refunded['avg:amount']).toBeCloseTo(by('refunded').reduce((a, o) => a + o.amount, 0) / by('refunded').length, 6);
    expect(g.total).toBe(3);
    const sorted = s.query(handle, { groupBy: ['region'], agg: 'count', sort: 'region' });
    expect(sorted.rows).toEqual([
      { region: 'apac', count: 333 },
      { region: 'eu', count: 334 },
      { region: 'us', count: 333 },
    ]);
    const d = s.query(handle, { distinct: 'customer.name', limit: 100 });
    expect(d.rows).toHaveLength(25);
    expect(d.total).toBe(25);
  });

  it('clear errors for bad queries, unknown fields and unknown handles', () => {
    const s = open(session());
    const { handle } = s.put(orders);
    expect(() => s.query(handle, { where: ['nosuch=1'] })).toThrow(/unknown field "nosuch"; fields: id, status/);
    expect(() => s.query(handle, { where: ['=1'] })).toThrow(HandleError);
    expect(() => s.query(handle, { groupBy: 'status', agg: 'median:amount' })).toThrow(/bad aggregate/);
    expect(() => s.query('h_doesnotexist', {})).toThrow(/no handle h_doesnotexist/);
    expect(() => s.query("x'; DROP TABLE handles; --", {})).toThrow(HandleError);
    // a field name full of SQL stays a (missing) field name
    expect(() => s.query(handle, { where: ['status"; DROP TABLE handles; --=1'] })).toThrow(/unknown field/);
    expect(s.query(handle, { where: ['status=paid'] }).total).toBeGreaterThan(0);
  });

  it('text becomes numbered lines; grep with context; query lines', async () => {
    const s = open(session());
    const log = Array.from({ length: 5_000 }, (_, i) => (i === 4_321 ? 'ERROR payment failed order=98231' : `INFO ok ${i}`)).join('\n');
    const r = s.put(log);
    expect(r.kind).toBe('lines');
    expect(r.rows).toBe(5_000);
    expect(r.columns).toEqual(['n', 'line']);
    const g = await s.grep(r.handle, 'Payment FAILED', { context: 1 });
    expect(g.total).toBe(1);
    expect(g.matches[0]).toEqual({
      n: 4_322,
      line: 'ERROR payment failed order=98231',
      before: [{ n: 4_321, line: 'INFO ok 4320' }],
      after: [{ n: 4_323, line: 'INFO ok 4322' }],
    });
    const re = await s.grep(r.handle, 'order=\\d+$', { regex: true });
    expect(re.matches.map((m) => m.n)).toEqual([4_322]);
    await expect(s.grep(r.handle, '(a+)+', { regex: true })).rejects.toThrow(/nested quantifiers/);
    const many = await s.grep(r.handle, 'INFO', { maxMatches: 3 });
    expect(many.matches).toHaveLength(3);
    expect(many.truncated).toBe(true);
    expect(many.total).toBe(4_999);
    expect(s.query(r.handle, { where: ['n>4990'], limit: 3 }).rows).toEqual([
      { n: 4_991, line: 'INFO ok 4990' },
      { n: 4_992, line: 'INFO ok 4991' },
      { n: 4_993, line: 'INFO ok 4992' },
    ]);
  });

  it('CSV and NDJSON become rows with typed values', () => {
    const s = open(session());
    const csv = s.put('id,name,amount\n1,"Smith, J",10.5\n2,Lee,7\n3,"O""Brien",\n', { fileName: 'x.csv' });
    expect(csv.source).toBe('csv');
    expect(s.query(csv.handle, { where: ['amount>7'] }).rows).toEqual([{ id: 1, name: 'Smith, J', amount: 10.5 }]);
    expect(s.query(csv.handle, { where: ['name~brien'] }).rows[0]).toEqual({ id: 3, name: 'O"Brien', amount: null });
    const nd = s.put('{"a":1}\n{"a":2,"b":"x"}\n{"a":3}\n');
    expect(nd.source).toBe('ndjson');
    expect(nd.columns).toEqual(['a', 'b']);
    expect(s.query(nd.handle, { groupBy: 'b', agg: ['count', 'sum:a'], sort: '-count' }).rows).toEqual([
      { b: null, count: 2, 'sum:a': 4 },
      { b: 'x', count: 1, 'sum:a': 2 },
    ]);
  });

  it('a dictionary of records (a real package-lock) becomes rows keyed by _key', () => {
    const s = open(session());
    const lock = fs.readFileSync(path.resolve(import.meta.dirname, '../../package-lock.json'), 'utf8');
    const packages = Object.keys(JSON.parse(lock).packages).length;
    const r = s.put(lock);
    expect(r.source).toBe('$.packages.*');
    expect(r.rows).toBe(packages);
    expect(r.columns[0]).toBe('_key');
    const sdk = s.query(r.handle, { where: ['_key=node_modules/@anthropic-ai/sdk'], select: ['version'] });
    expect(sdk.rows).toEqual([{ version: JSON.parse(lock).packages['node_modules/@anthropic-ai/sdk'].version }]);
  });

  it('a payload that cannot be stored is a clear error and leaves nothing behind', () => {
    const s = open(session());
    const deep = JSON.parse('[' + '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000) + ']');
    expect(() => s.put(deep)).toThrow(HandleError);
    expect(s.list()).toEqual([]);
  });

  it('property: hostile query strings give rows or a HandleError, and never touch other tables', () => {
    const s = open(session());
    const { handle } = s.put(orders.slice(0, 50));
    const other = s.put(orders.slice(0, 5));
    const piece = fc.constantFrom('status', 'amount', 'customer.name', '"', "'", ';', '--', 'DROP TABLE handles', ')', '(', '=', '!=', '>', '<', '~', '$', '[0]', '\\', '*', 'null', ' ');
    const text = fc.array(fc.oneof(piece, fc.string({ maxLength: 8 })), { maxLength: 8 }).map((a) => a.join(''));
    fc.assert(
      fc.property(text, fc.array(text, { maxLength: 2 }), text, text, (w, aggs, sort, group) => {
        for (const q of [{ where: [w] }, { groupBy: group || undefined, agg: aggs }, { sort }, { select: [w] }, { distinct: w || undefined }]) {
          try {
            const r = s.query(handle, q);
            expect(Array.isArray(r.rows)).toBe(true);
          } catch (err) {
            expect(err).toBeInstanceOf(HandleError);
          }
        }
      }),
      { numRuns: 300 },
    );
    expect(s.query(other.handle, {}).rows).toHaveLength(5);
    expect(s.list().map((h) => h.handle).sort()).toEqual([handle, other.handle].sort());
  });

  it('large handles get column indexes on first use, with the same answers', () => {
    const dir = session();
    const s = open(dir);
    const rows = Array.from({ length: 60_000 }, (_, i) => ({ id: i, kind: ['a', 'b', 'c'][i % 3], v: (i * 7) % 1000 }));
    const { handle } = s.put(rows);
    const r = s.query(handle, { where: ['kind=b', 'v>990'], sort: '-v', limit: 5 });
    const expected = rows.filter((x) => x.kind === 'b' && x.v > 990).sort((a, b) => b.v - a.v || a.id - b.id);
    expect(r.rows).toEqual(expected.slice(0, 5));
    expect(r.total).toBe(expected.length);
    const db = new Database(path.join(dir, HANDLES_DB_FILE), { readonly: true });
    const idx = db.prepare("SELECT name FROM sqlite_master WHERE type='index' AND name LIKE ?").all(`i_${handle}_%`);
    db.close();
    expect(idx.length).toBe(2); // kind and v
    s.delete(handle);
    const db2 = new Database(path.join(dir, HANDLES_DB_FILE), { readonly: true });
    expect(db2.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type='index' AND name LIKE ?").get(`i_${handle}_%`)).toEqual({ n: 0 });
    db2.close();
  });

  it('survives a restart, in another process too', () => {
    const dir = session();
    const a = open(dir);
    const { handle } = a.put(orders);
    a.close();
    const b = open(dir);
    expect(b.query(handle, { where: ['id=501'] }).rows[0]!.status).toBe('payment_failed');
    b.close();
    // a separate OS process reads the same file
    const out = execFileSync(process.execPath, ['-e', `const D=require('better-sqlite3');const db=new D(${JSON.stringify(path.join(dir, HANDLES_DB_FILE))},{readonly:true});console.log(db.prepare('SELECT rows FROM handles WHERE id=?').get(${JSON.stringify(handle)}).rows)`], {
      cwd: path.resolve(import.meta.dirname, '../..'),
    });
    expect(out.toString().trim()).toBe('1000');
  });

  it('TTL: expired handles refuse queries and are swept; delete is explicit', () => {
    const dir = session();
    let now = Date.UTC(2026, 10, 30);
    const s = open(dir, { now: () => now });
    const short = s.put(orders.slice(0, 10), { ttlMs: 60_000, now: () => now });
    const long = s.put(orders.slice(0, 10), { now: () => now });
    expect(s.query(short.handle, {}, { now }).rows).toHaveLength(10);
    now += 61_000;
    expect(() => s.query(short.handle, {}, { now })).toThrow(/expired/);
    expect(s.sweep(now)).toBe(0); // the failed query already dropped it
    expect(s.query(long.handle, {}, { now }).rows).toHaveLength(10);
    const third = s.put(orders.slice(0, 2), { ttlMs: 1_000, now: () => now });
    now += 2_000;
    expect(s.sweep(now)).toBe(1);
    expect(() => s.query(third.handle, {}, { now })).toThrow(/no handle/);
    expect(s.delete(long.handle)).toBe(true);
    expect(s.delete(long.handle)).toBe(false);
    const db = new Database(path.join(dir, HANDLES_DB_FILE), { readonly: true });
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 't_h_%'").all();
    db.close();
    expect(tables).toEqual([]);
  });
});
