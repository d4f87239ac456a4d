import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { type IndexEvent, openIndex } from '../../src/index/index.js';
import type { IndexProgressEvent } from '../../src/index/rows.js';
import { generateSessionsRoot } from '../helpers/gen-sessions.js';
import { tmpDir } from './helpers.js';

async function root(payloads: number) {
  const dir = path.join(tmpDir(), 'sessions');
  const gen = await generateSessionsRoot(dir, { sessions: 3, payloads, seed: 12 });
  return { dir, gen };
}

function rawCounts(dbPath: string) {
  const db = new Database(dbPath, { readonly: true });
  try {
    return {
      payloads: (db.prepare('SELECT count(*) AS n FROM payloads').get() as { n: number }).n,
      pending: (db.prepare('SELECT count(*) AS n FROM payloads WHERE fts_pending > 0').get() as { n: number }).n,
      fts: (db.prepare('SELECT count(*) AS n FROM payload_fts').get() as { n: number }).n,
    };
  } finally {
    db.close();
  }
}

describe('two-phase scans', () => {
  it('lists every payload (sortable, openable) before full-text search fills in; a search meanwhile says it is partial', async () => {
    const { dir, gen } = await root(120);
    const dbPath = path.join(tmpDir('spillway-db-'), 'index.sqlite');
    const events: IndexEvent[] = [];
    // bulkMinRows Infinity: the filler writes on this thread in batches, so there is a "meanwhile" to look at.
    const index = openIndex({ dbPath, onEvent: (e) => events.push(e), bulkMinRows: Infinity });
    index.addRoot(dir);
    let during: { total: number; page: number; bytes: number; unsearched: number; hits: number } | undefined;
    const seen: IndexProgressEvent[] = [];
    let opened: Promise<unknown> | undefined;
    const scan = index.scan({
      onProgress: (p) => {
        seen.push(p);
        if (p.phase !== 'fulltext' || during) return;
        const page = index.listPayloads({ sort: { field: 'tokens', dir: 'desc' }, limit: 10 });
        const search = index.listPayloads({ query: 'the' });
        during = { total: page.total, page: page.rows.length, bytes: 0, unsearched: search.partial?.unsearched ?? 0, hits: search.total };
        opened = index.getPayload(page.rows[0]!.id).then((d) => (during!.bytes = d.totalBytes));
      },
    });
    const res = await scan;
    await opened;
    expect(res.listSeconds).toBeGreaterThan(0);
    expect(res.listSeconds).toBeLessThanOrEqual(res.seconds);
    expect(during).toMatchObject({ total: gen.payloads.length, page: 10, unsearched: gen.payloads.length });
    expect(during!.bytes).toBeGreaterThan(0);
    // The listing's progress comes first, then the full text's, which counts up to every payload.
    const phases = seen.map((p) => p.phase);
    expect(phases.indexOf('fulltext')).toBeGreaterThan(phases.lastIndexOf('list'));
    const ft = seen.filter((p) => p.phase === 'fulltext');
    expect(ft.at(-1)).toMatchObject({ done: gen.payloads.length, total: gen.payloads.length });
    expect(ft.map((p) => p.done)).toEqual([...ft.map((p) => p.done)].sort((a, b) => a - b));
    // The same events reach the index's listeners (the UI), and the rows were announced at listing.
    expect(events.filter((e) => e.event === 'onIndexProgress' && e.payload.phase === 'fulltext').length).toBe(ft.length);
    expect(events.findIndex((e) => e.event === 'onDidIndex')).toBeLessThan(events.findIndex((e) => e.event === 'onIndexProgress' && e.payload.phase === 'fulltext'));
    const after = index.listPayloads({ query: 'the' });
    expect(after.partial).toBeUndefined();
    expect(after.total).toBeGreaterThan(during!.hits);
    await index.close();
    expect(rawCounts(dbPath)).toEqual({ payloads: gen.payloads.length, pending: 0, fts: gen.payloads.length });
  });

  it('full text written on the main thread yields inside a batch: another connection sees rows arrive between its 256-row batches', async () => {
    // Payloads that fill a full-text window (head and tail) each: a batch of 256 rows is far more than a 30 ms slice writes.
    const dir = path.join(tmpDir(), 'sessions');
    await generateSessionsRoot(dir, { sessions: 3, payloads: 300, seed: 7, meanPayloadBytes: 24 * 1024, uniquePayloads: 40, imageShare: 0 });
    const dbPath = path.join(tmpDir('spillway-db-'), 'index.sqlite');
    const index = openIndex({ dbPath, bulkWriter: 'never' });
    index.addRoot(dir);
    const seen = new Set<number>();
    let reader: Database.Database | undefined;
    let watching = true;
    const watch = () => {
      if (!watching) return;
      reader ??= new Database(dbPath, { readonly: true });
      seen.add((reader.prepare('SELECT count(*) AS n FROM payloads WHERE fts_pending = 0').get() as { n: number }).n);
      setImmediate(watch);
    };
    await index.scan({
      onProgress: (p) => {
        if (p.phase === 'fulltext' && p.done === 0) setImmediate(watch);
      },
    });
    watching = false;
    reader?.close();
    await index.close();
    // Written a batch at a time, only 0, 256 and 300 rows could ever be seen done.
    expect([...seen].filter((n) => n !== 0 && n !== 256 && n !== 300).length).toBeGreaterThan(0);
  });

  it('full text a closed index left unfinished fills in at its next open', async () => {
    const { dir, gen } = await root(300);
    const dbPath = path.join(tmpDir('spillway-db-'), 'index.sqlite');
    const first = openIndex({ dbPath, bulkMinRows: Infinity });
    first.addRoot(dir);
    let closing: Promise<void> | undefined;
    await first.scan({
      onProgress: (p) => {
        if (p.phase === 'fulltext' && p.done > 0 && !closing) closing = first.close();
      },
    });
    await closing;
    const left = rawCounts(dbPath);
    expect(left.payloads).toBe(gen.payloads.length);
    expect(left.pending).toBeGreaterThan(0);
    expect(left.fts + left.pending).toBe(gen.payloads.length);

    // Opened and closed again at once: the filler its open scheduled finds the index closed and
    // touches nothing (it used to reach for the closed connection).
    const failures: unknown[] = [];
    const onRejection = (err: unknown) => failures.push(err);
    process.on('unhandledRejection', onRejection);
    try {
      await openIndex({ dbPath }).close();
      for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    } finally {
      process.off('unhandledRejection', onRejection);
    }
    expect(failures).toEqual([]);
    expect(rawCounts(dbPath).pending).toBe(left.pending);

    const second = openIndex({ dbPath });
    expect(second.listPayloads({ query: 'the' }).partial?.unsearched).toBe(left.pending);
    await second.idle();
    expect(second.listPayloads({ query: 'the' }).partial).toBeUndefined();
    await second.close();
    expect(rawCounts(dbPath)).toEqual({ payloads: gen.payloads.length, pending: 0, fts: gen.payloads.length });
  });
});
