import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { FTS_HEAD_BYTES, FTS_TAIL_BYTES, openIndex } from '../../src/index/index.js';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { countExact } from '../../src/pipeline/estimate/internal.js';
import { generateSessionsRoot, spillOne } from '../helpers/gen-sessions.js';
import { REPO, tmpDir, tmpIndex } from './helpers.js';

async function generated(payloads = 45, sessions = 3, extra: { bigPayloadBytes?: number } = {}) {
  const dir = path.join(tmpDir(), 'sessions');
  const gen = await generateSessionsRoot(dir, { sessions, payloads, seed: 42, ...extra });
  return { dir, gen };
}

describe('scanning a Spillway sessions root', () => {
  it('indexes every payload the generator wrote, with meta, estimates and assets', async () => {
    const { dir, gen } = await generated();
    const { index } = tmpIndex();
    const root = index.addRoot(dir);
    expect(root.kind).toBe('sessions');
    const stats = await index.scan();
    expect(stats.sessions).toBe(3);
    expect(stats.payloads).toBe(gen.payloads.length);
    expect(stats.assets).toBe(gen.assets);
    expect(stats.bytes).toBe(gen.payloads.reduce((a, p) => a + p.bytes, 0));
    const sessions = index.listSessions();
    expect(sessions.map((s) => s.name).sort()).toEqual(['session-000', 'session-001', 'session-002']);
    for (const s of sessions) {
      expect(s.kind).toBe('spillway');
      expect(s.payloadCount).toBe(gen.payloads.filter((p) => p.session === s.path).length);
    }
    const withAsset = gen.payloads.find((p) => p.assets > 0);
    if (withAsset) {
      const row = index.listPayloads({ limit: 1000 }).rows.find((r) => r.createdAt && r.assetCount > 0)!;
      const d = await index.getPayload(row.id);
      // The asset lies in that payload's own long_responses/ (rows come newest first, so not necessarily withAsset's).
      expect(d.assets[0]!.path.startsWith(path.dirname(d.path) + path.sep)).toBe(true);
      expect(gen.payloads.some((p) => p.assets > 0 && p.payloadPath === d.path)).toBe(true);
      expect(fs.existsSync(d.assets[0]!.path)).toBe(true);
    }
    const first = gen.payloads[0]!;
    const meta = JSON.parse(fs.readFileSync(first.metaPath, 'utf8'));
    const row = index.listPayloads({ limit: 1000 }).rows.find((r) => r.createdAt === meta.createdAt)!;
    const d = await index.getPayload(row.id);
    expect(d.meta).toEqual(meta);
    expect(d.path).toBe(first.payloadPath);
    expect(d.estimates).toEqual(meta.estimates);
    expect(d.row.tokens).toBe(meta.estimates.calibrated);
    expect(d.totalBytes).toBe(fs.statSync(first.payloadPath).size);
    expect(d.totalLines).toBe(fs.readFileSync(first.payloadPath, 'utf8').split('\n').length - (fs.readFileSync(first.payloadPath, 'utf8').endsWith('\n') ? 1 : 0));
  });

  it('a payload the guard counted exactly shows that count, not the calibrated estimate it corrected', async () => {
    const dir = path.join(tmpDir(), 'sessions');
    const session = path.join(dir, 'greek');
    const greek = JSON.parse(fs.readFileSync(path.join(REPO, 'test', 'estimate', 'fixtures', 'more-scripts.json'), 'utf8')).am as string;
    const text = (greek + '\n').repeat(12);
    const truth = await countExact(text, 'o200k');
    // near the limit, and the fit prices Amharic at ~0.74x: the guard counts it exactly
    const r = (await guardLargeResult(text, { sessionPath: session, limitTokens: Math.floor(truth * 0.9) }))!;
    // counted exactly until the limit was crossed, the rest extrapolated from that count
    expect(Math.abs(r.estimate.tokens / truth - 1)).toBeLessThan(0.01);
    const { index } = tmpIndex();
    index.addRoot(dir);
    await index.scan();
    const row = index.listPayloads({ limit: 10 }).rows[0]!;
    expect(row.tokens).toBe(r.estimate.tokens);
    expect((await index.getPayload(row.id)).estimates.calibrated).toBeLessThan(truth * 0.8);
  });

  it('re-scans incrementally: unchanged skipped, touched-but-same skipped by hash, edits, deletes and additions seen', async () => {
    const { dir, gen } = await generated(30, 2);
    const { index, events } = tmpIndex();
    index.addRoot(dir);
    await index.scan();
    const again = await index.scan();
    expect(again).toMatchObject({ read: 0, added: 0, changed: 0, removed: 0, unchanged: 30 });

    // Same bytes, new mtime: read again, but the hash says nothing changed.
    const p0 = gen.payloads[0]!;
    const future = new Date(Date.now() + 60_000);
    fs.utimesSync(p0.metaPath, future, future);
    events.length = 0;
    const touched = await index.scan();
    expect(touched).toMatchObject({ read: 1, added: 0, changed: 0, removed: 0 });
    expect(events.filter((e) => e.event === 'onDidIndex')).toEqual([]);
    expect((await index.scan()).read).toBe(0);
    // A payload file is written once and never rewritten in place: its sidecar fingerprints the
    // pair, so touching the payload alone costs a re-scan nothing.
    fs.utimesSync(p0.payloadPath, future, future);
    expect((await index.scan()).read).toBe(0);

    // An edit that keeps the sidecar's length (the last digit of its size): the fingerprint moves
    // with the mtime, and the content hash tells the rows must be rewritten.
    const p2 = gen.payloads[2]!;
    const text = fs.readFileSync(p2.metaPath, 'utf8');
    const m = /"bytes": (\d+)/.exec(text)!;
    const last = m.index + m[0].length - 1;
    const swapped = text.slice(0, last) + (text[last] === '1' ? '2' : '1') + text.slice(last + 1);
    expect(swapped.length).toBe(text.length);
    const id = index.listPayloads({ limit: 1000 }).rows.find((r) => r.bytes === Number(m[1]) && r.createdAt === JSON.parse(text).createdAt)!.id;
    fs.writeFileSync(p2.metaPath, swapped);
    const later = new Date(Date.now() + 120_000);
    fs.utimesSync(p2.metaPath, later, later);
    expect(await index.scan()).toMatchObject({ read: 1, changed: 1 });
    expect((await index.getPayload(id)).row.bytes).toBe(JSON.parse(swapped).bytes);

    // An edited sidecar (a summary run appended) is re-read.
    const meta = JSON.parse(fs.readFileSync(p0.metaPath, 'utf8'));
    meta.summaryRuns.push({ id: 'run-1', createdAt: '2026-11-30T09:00:00.000Z', status: 'ok', summary: 'zanzibar quokka summary', provider: 'structural', model: 'none', inputTokens: 1, outputTokens: 1, ms: 1 });
    fs.writeFileSync(p0.metaPath, JSON.stringify(meta));
    const edited = await index.scan();
    expect(edited).toMatchObject({ read: 1, changed: 1, added: 0, removed: 0 });
    const hit = index.listPayloads({ query: 'zanzibar quokka' });
    expect(hit.total).toBe(1);
    expect(hit.rows[0]!.summaryCount).toBe(1);
    expect(hit.rows[0]!.snippet).toContain('quokka');

    // Deleting a payload's files removes it; a new one is added.
    const p1 = gen.payloads[1]!;
    fs.rmSync(p1.payloadPath);
    fs.rmSync(p1.metaPath);
    await spillOne(p1.session, { tool: 'late_tool', text: 'late arrival '.repeat(500), time: new Date() });
    const changed = await index.scan();
    expect(changed).toMatchObject({ added: 1, removed: 1 });
    expect(index.listPayloads({ tool: 'late_tool' }).total).toBe(1);
    expect(index.listPayloads({ limit: 1000 }).total).toBe(30);
  });

  it('notices a renamed session folder, and keeps payload ids stable across a rebuild', async () => {
    const { dir } = await generated(20, 2);
    const dbDir = tmpDir();
    const dbPath = path.join(dbDir, 'index.sqlite');
    const first = openIndex({ dbPath });
    first.addRoot(dir);
    await first.scan();
    const ids = first.listPayloads({ limit: 1000 }).rows.map((r) => r.id).sort();
    fs.renameSync(path.join(dir, 'session-001'), path.join(dir, 'renamed-001'));
    const res = await first.scan();
    expect(res.removed).toBe(10);
    expect(res.added).toBe(10);
    expect(first.listSessions().map((s) => s.name).sort()).toEqual(['renamed-001', 'session-000']);
    const afterRename = first.listPayloads({ limit: 1000 }).rows.map((r) => r.id).sort();
    await first.close();
    // Full-text rows follow their payloads exactly: none lost, none orphaned.
    const raw = new Database(dbPath, { readonly: true });
    expect(raw.prepare('SELECT count(*) AS n FROM payload_fts').get()).toEqual({ n: 20 });
    expect(raw.prepare('SELECT count(*) AS n FROM payload_fts WHERE rowid NOT IN (SELECT rowid FROM payloads)').get()).toEqual({ n: 0 });
    raw.close();

    // Delete the database: a rebuild gives the same ids for the same files.
    for (const f of fs.readdirSync(dbDir)) fs.rmSync(path.join(dbDir, f));
    const second = openIndex({ dbPath });
    second.addRoot(dir);
    const rebuilt = await second.scan();
    expect(rebuilt.payloads).toBe(20);
    expect(second.listPayloads({ limit: 1000 }).rows.map((r) => r.id).sort()).toEqual(afterRename);
    expect(afterRename.filter((id) => ids.includes(id))).toHaveLength(10);
    for (const id of afterRename) expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    await second.close();
  });

  it('bounds full-text search to the head and tail of a big payload', async () => {
    const dir = tmpDir();
    const session = path.join(dir, 'big-session');
    const filler = 'lorem ipsum dolor sit amet '.repeat(200_000); // ~5.4 MB
    const text = `HEADMARKER ${filler.slice(0, 2_000_000)} MIDDLEMARKER ${filler.slice(0, 3_000_000)} TAILMARKER`;
    await spillOne(session, { tool: 'huge', text, time: new Date('2026-11-30T08:00:00Z') });
    const { index, dbPath } = tmpIndex();
    index.addRoot(session);
    await index.scan();
    expect(index.listPayloads({ query: 'HEADMARKER' }).total).toBe(1);
    expect(index.listPayloads({ query: 'TAILMARKER' }).total).toBe(1);
    expect(index.listPayloads({ query: 'MIDDLEMARKER' }).total).toBe(0);
    await index.close();
    const dbBytes = ['', '-wal'].reduce((a, s) => a + (fs.existsSync(dbPath + s) ? fs.statSync(dbPath + s).size : 0), 0);
    // The 5 MB payload adds about head + tail of text to the database, not megabytes.
    expect(dbBytes).toBeLessThan(1_000_000);
    expect(FTS_HEAD_BYTES + FTS_TAIL_BYTES).toBeLessThan(64 * 1024);
  });

  it('indexes a single session folder and a single payload file as roots', async () => {
    const { gen } = await generated(10, 2);
    const { index } = tmpIndex();
    const s = index.addRoot(gen.sessions[0]!);
    expect(s.kind).toBe('session');
    const one = gen.payloads.find((p) => p.session === gen.sessions[1])!;
    const f = index.addRoot(one.payloadPath);
    expect(f.kind).toBe('file');
    await index.scan();
    expect(index.listPayloads({ rootId: s.id }).total).toBe(5);
    expect(index.listPayloads({ rootId: f.id }).total).toBe(1);
    expect(() => index.addRoot(path.join(gen.sessions[0]!, 'long_responses'))).toThrow(/already indexed/);
    expect(index.addRoot(gen.sessions[0]!).id).toBe(s.id);
    index.removeRoot(s.id);
    expect(index.listPayloads({}).total).toBe(1);
    expect(() => index.addRoot(path.join(tmpDir(), 'nope'))).toThrow(/does not exist/);
  });

  it('survives hostile sidecars: bad JSON, escaping asset paths, foreign payload names', async () => {
    const { gen } = await generated(6, 1);
    const [a, b, c] = gen.payloads;
    fs.writeFileSync(a!.metaPath, '{ not json');
    const mb = JSON.parse(fs.readFileSync(b!.metaPath, 'utf8'));
    mb.assets = [{ relPath: '../../../../etc/passwd', sha256: 'a'.repeat(64), mimeType: 'text/plain', bytes: 10 }];
    mb.payloadFile = '../../outside.txt';
    fs.writeFileSync(b!.metaPath, JSON.stringify(mb));
    fs.writeFileSync(c!.metaPath, JSON.stringify({ ...JSON.parse(fs.readFileSync(c!.metaPath, 'utf8')), estimates: 'lots', tool: 42 }));
    const { index } = tmpIndex();
    index.addRoot(gen.sessions[0]!);
    const stats = await index.scan();
    expect(stats.payloads).toBe(6);
    expect(stats.warnings.some((w) => w.includes('not valid JSON'))).toBe(true);
    for (const r of index.listPayloads({ limit: 100 }).rows) {
      const d = await index.getPayload(r.id);
      expect(d.path.startsWith(gen.sessions[0]!)).toBe(true);
      for (const asset of d.assets) expect(asset.path.startsWith(gen.sessions[0]!)).toBe(true);
      expect(r.tokens).toBeGreaterThan(0);
    }
  });

  it('keeps the event loop responsive during a long scan', async () => {
    const { dir } = await generated(200, 4);
    const { index } = tmpIndex();
    index.addRoot(dir);
    let last = performance.now();
    let maxGap = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
    }, 5);
    const progress: number[] = [];
    await index.scan({ onProgress: (p) => progress.push(p.done) });
    clearInterval(timer);
    expect(progress.length).toBeGreaterThan(1);
    // Slices are 30 ms; allow a lot for a loaded CI machine, far below "frozen".
    expect(maxGap).toBeLessThan(500);
  });

  it('indexes a bare payload file without its sidecar, then takes the sidecar when it arrives', async () => {
    const { gen } = await generated(3, 1);
    const p = gen.payloads[1]!;
    const metaText = fs.readFileSync(p.metaPath, 'utf8');
    fs.rmSync(p.metaPath);
    const { index } = tmpIndex();
    index.addRoot(gen.sessions[0]!);
    await index.scan();
    const bare = index.listPayloads({ tool: p.tool, limit: 10 }).rows.find((r) => r.createdAt === new Date(JSON.parse(metaText).createdAt).toISOString());
    expect(bare).toBeDefined();
    const d = await index.getPayload(bare!.id);
    expect(d.meta).toBeNull();
    expect(d.estimates.chars4).toBe(Math.ceil(fs.readFileSync(p.payloadPath, 'utf8').length / 4));
    fs.writeFileSync(p.metaPath, metaText);
    const res = await index.scan();
    expect(res).toMatchObject({ changed: 1, added: 0, removed: 0 });
    const withMeta = await index.getPayload(bare!.id);
    expect(withMeta.meta).toEqual(JSON.parse(metaText));
    expect(withMeta.estimates).toEqual(JSON.parse(metaText).estimates);
  });

  it('does not follow symlinks out of a root', async () => {
    const { gen } = await generated(4, 1);
    const outside = path.dirname(gen.sessions[0]!);
    const root = tmpDir();
    fs.mkdirSync(path.join(root, 'linked-session'));
    fs.symlinkSync(path.join(gen.sessions[0]!, 'long_responses'), path.join(root, 'linked-session', 'long_responses'));
    fs.symlinkSync(gen.sessions[0]!, path.join(root, 'linked-dir'));
    fs.mkdirSync(path.join(root, 'real', 'long_responses'), { recursive: true });
    fs.symlinkSync(gen.payloads[0]!.payloadPath, path.join(root, 'real', 'long_responses', path.basename(gen.payloads[0]!.payloadPath)));
    const { index } = tmpIndex();
    index.addRoot(root);
    const stats = await index.scan();
    expect(stats.payloads).toBe(0);
    expect(outside).not.toBe(root);
  });

  it('indexes payloads whose tool name has dots (server.tool)', async () => {
    const session = path.join(tmpDir(), 's');
    await spillOne(session, { tool: 'github.search_issues', text: 'dotted tool output '.repeat(800), time: new Date('2026-11-30T08:00:00Z') });
    const { index } = tmpIndex();
    index.addRoot(session);
    await index.scan();
    const rows = index.listPayloads({}).rows;
    expect(rows.map((r) => r.tool)).toEqual(['github.search_issues']);
    expect(index.listPayloads({ query: 'dotted' }).total).toBe(1);
  });
});
