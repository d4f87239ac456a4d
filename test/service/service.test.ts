import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardLargeResult, metaPathFor } from '../../src/pipeline/index.js';
import { METHOD_NAMES, ServiceError, type PayloadRow, type SummaryRun } from '../../src/service/contract.js';
import { createInspectorService, pruneScratch, type InspectorService } from '../../src/service/service.js';
import { generateSessionsRoot, type GeneratedRoot } from '../helpers/gen-sessions.js';
import { startFake } from '../summarize/wire.js';

/**
 * Every contract method through the real service: a generated sessions root on disk, a real
 * SQLite index, the real guard, estimators and the offline summarizer.
 */

let tmp: string;
let home: string;
let gen: GeneratedRoot;
let svc: InspectorService;
let rootId: string;

async function until<T>(fn: () => Promise<T | undefined> | T | undefined, ms = 10_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() - t0 > ms) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function expectCode(p: Promise<unknown>, code: string): Promise<ServiceError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, `expected ${code}`).toBeInstanceOf(ServiceError);
  expect((err as ServiceError).code).toBe(code);
  return err as ServiceError;
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-svc-'));
  home = path.join(tmp, 'home');
  gen = await generateSessionsRoot(path.join(tmp, 'root'), { sessions: 3, payloads: 24, seed: 7, imageShare: 0.25 });
  svc = createInspectorService({ env: process.env, appDataDir: home, roots: [gen.root], transport: 'http', scanOnStart: false });
  await svc.ready;
  const roots = await svc.listRoots({});
  rootId = roots.find((r) => r.path === fs.realpathSync(gen.root))!.id;
  await svc.reindex({ rootId });
});

afterAll(async () => {
  await svc?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the service implements the whole contract', () => {
  it('has every method of METHOD_NAMES, and invoke refuses other names', async () => {
    for (const m of METHOD_NAMES) expect(typeof svc[m]).toBe('function');
    await expectCode(svc.invoke('constructor', {}), 'NOT_FOUND');
    await expectCode(svc.invoke('__proto__', {}), 'NOT_FOUND');
    await expectCode(svc.invoke('close', {}), 'NOT_FOUND');
  });

  it('getInfo', async () => {
    const info = await svc.getInfo({});
    expect(info.transport).toBe('http');
    expect(info.appDataDir).toBe(path.resolve(home));
    expect(info.dbPath).toBe(path.join(path.resolve(home), 'index.sqlite'));
    expect(fs.existsSync(info.dbPath)).toBe(true);
    expect(info.strategies).toContain('calibrated');
    expect(info.profiles).toEqual(['o200k', 'cl100k', 'claude']);
  });

  it('listRoots / listSessions / listPayloads reflect the files on disk', async () => {
    const roots = await svc.listRoots({});
    const root = roots.find((r) => r.id === rootId)!;
    expect(root.sessionCount).toBe(3);
    expect(root.payloadCount).toBe(24);
    const sessions = await svc.listSessions({ rootId });
    expect(sessions.map((s) => path.basename(s.path)).sort()).toEqual(gen.sessions.map((s) => path.basename(s)).sort());
    const page = await svc.listPayloads({ rootId, sort: { field: 'tokens', dir: 'desc' }, limit: 10 });
    expect(page.total).toBe(24);
    expect(page.rows).toHaveLength(10);
    const tokens = page.rows.map((r) => r.tokens);
    expect(tokens).toEqual([...tokens].sort((a, b) => b - a));
    // A scratch root for dropped files is registered too.
    expect(roots.some((r) => r.path.startsWith(fs.realpathSync(home)))).toBe(true);
  });

  it('getPayload and readPayload (byte and line windows) give the file as written', async () => {
    const { rows } = await svc.listPayloads({ rootId, kind: 'json', limit: 1 });
    const row = rows[0] as PayloadRow;
    const d = await svc.getPayload({ id: row.id });
    const onDisk = fs.readFileSync(d.path);
    expect(d.totalBytes).toBe(onDisk.length);
    const w = await svc.readPayload({ id: row.id, start: 0, end: 200 });
    expect(w.text).toBe(onDisk.subarray(0, w.end).toString('utf8'));
    expect(w.totalBytes).toBe(onDisk.length);
    const lines = await svc.readPayload({ id: row.id, startLine: 1, lineCount: 2 });
    const expected = onDisk.toString('utf8').split('\n').slice(1, 3);
    // A one-line payload has no line 1 (0-based): an empty window, not one empty line.
    const got = lines.text === '' ? [] : lines.text.replace(/\n$/, '').split('\n');
    expect(got).toEqual(expected.filter((_, i) => i < (lines.lineCount ?? 0)));
  });

  it('readPayload rejects bad windows', async () => {
    const { rows } = await svc.listPayloads({ rootId, limit: 1 });
    const id = rows[0]!.id;
    await expectCode(svc.readPayload({ id, start: 10, end: 5 }), 'BAD_REQUEST');
    await expectCode(svc.readPayload({ id, start: -1 }), 'BAD_REQUEST');
    await expectCode(svc.readPayload({ id, start: 0, end: 64 * 1024 * 1024 }), 'BAD_REQUEST');
    await expectCode(svc.readPayload({ id, start: 0, startLine: 3 }), 'BAD_REQUEST');
    await expectCode(svc.readPayload({ id, start: 1.5 }), 'BAD_REQUEST');
    await expectCode(svc.readPayload({ id: 'nope' }), 'NOT_FOUND');
    await expectCode(svc.invoke('readPayload', { id, extra: 1 }), 'BAD_REQUEST');
    await expectCode(svc.invoke('readPayload', null), 'BAD_REQUEST');
  });

  it('readAsset returns the bytes (sha256-checked), openAsset and revealPath the confined file', async () => {
    const { rows } = await svc.listPayloads({ rootId, sort: { field: 'assetCount', dir: 'desc' }, limit: 1 });
    expect(rows[0]!.assetCount).toBeGreaterThan(0);
    const d = await svc.getPayload({ id: rows[0]!.id });
    const a = d.assets[0]!;
    const got = await svc.readAsset({ payloadId: d.row.id, sha256: a.sha256 });
    const bytes = Buffer.from(got.base64!, 'base64');
    expect(crypto.createHash('sha256').update(bytes).digest('hex')).toBe(a.sha256);
    expect(got.mimeType).toBe(a.mimeType);
    // Over the cap: path only.
    const small = await svc.readAsset({ payloadId: d.row.id, sha256: a.sha256, maxBytes: 1 });
    expect(small.base64).toBeUndefined();
    expect(small.bytes).toBe(bytes.length);
    const file = await svc.openAsset({ payloadId: d.row.id, sha256: a.sha256 });
    expect((await file.read()).equals(bytes)).toBe(true);
    expect(file.bytes).toBe(bytes.length);
    expect(fs.readFileSync(file.path).equals(bytes)).toBe(true);
    expect((await svc.revealPath({ payloadId: d.row.id, sha256: a.sha256 })).path).toBe(file.path);
    expect((await svc.revealPath({ payloadId: d.row.id })).path).toBe(fs.realpathSync(d.path));
    await expectCode(svc.readAsset({ payloadId: d.row.id, sha256: 'f'.repeat(64) }), 'NOT_FOUND');
    await expectCode(svc.readAsset({ payloadId: d.row.id, sha256: '../../etc/passwd' }), 'BAD_REQUEST');
  });

  it('readAsset refuses an asset file whose bytes no longer match its hash', async () => {
    const s = path.join(gen.root, 'damaged-session');
    const big = JSON.stringify({ content: [{ type: 'image', mimeType: 'image/png', data: fs.readFileSync(findPng()).toString('base64') }], pad: crypto.randomBytes(30_000).toString('hex') });
    const res = await guardLargeResult(big, { sessionPath: s, toolName: 'screenshot', limitTokens: 1000 });
    expect(res?.assets.length).toBe(1);
    await svc.reindex({ rootId });
    const row = (await svc.listPayloads({ rootId, tool: 'screenshot', limit: 5 })).rows.find((r) => r.assetCount > 0)!;
    const asset = res!.assets[0]!;
    fs.writeFileSync(asset.path, Buffer.from('not the png'));
    await expectCode(svc.readAsset({ payloadId: row.id, sha256: asset.sha256 }), 'NOT_FOUND');
  });

  it('estimate: cheap strategies always, exact tokenizers on request, density shares', async () => {
    const text = JSON.stringify({ id: crypto.randomUUID(), blob: crypto.randomBytes(3000).toString('base64'), note: '日本語のテキスト' });
    const cheap = await svc.estimate({ text });
    expect(cheap.estimates.map((e) => e.strategy)).toEqual(['chars4', 'craft-density', 'calibrated']);
    expect(cheap.bytes).toBe(Buffer.byteLength(text));
    expect(cheap.density.base64).toBeGreaterThan(0.8);
    const exact = await svc.estimate({ text, exact: true });
    const o200k = exact.estimates.find((e) => e.strategy === 'o200k')!;
    expect(o200k.exact).toBe(true);
    const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
    expect(o200k.tokens).toBe(countTokens(text));
    expect(exact.estimates.map((e) => e.strategy)).toEqual(['chars4', 'craft-density', 'calibrated', 'o200k', 'cl100k', 'claude']);
    // A big text is counted in slices; the sum is still the tokenizer's one-shot count.
    const long = Array.from({ length: 3000 }, (_, i) => `{"id":${i},"name":"item ${i}","tags":["x","y"],"blob":"${crypto.randomBytes(24).toString('base64')}"}`).join('\n');
    const longExact = await svc.estimate({ text: long, exact: true });
    expect(longExact.estimates.find((e) => e.strategy === 'o200k')!.tokens).toBe(countTokens(long));
    const { rows } = await svc.listPayloads({ rootId, limit: 1 });
    const byId = await svc.estimate({ payloadId: rows[0]!.id });
    expect(byId.bytes).toBe(rows[0]!.bytes > 0 ? fs.statSync((await svc.getPayload({ id: rows[0]!.id })).path).size : 0);
    await expectCode(svc.estimate({}), 'BAD_REQUEST');
    await expectCode(svc.estimate({ text: 'a', payloadId: rows[0]!.id }), 'BAD_REQUEST');
    await expectCode(svc.estimate({ path: '/etc/passwd' }), 'FORBIDDEN_PATH');
  });

  it("a payload's estimates default to the profile the guard counted it with, so the panel and the listed figure agree", async () => {
    const text = Array.from({ length: 900 }, (_, i) => `line ${i}: the report for region ${i % 17} lists ${i * 13} orders`).join('\n');
    const g = await guardLargeResult(text, { sessionPath: path.join(gen.root, 'claude-profile-session'), toolName: 'ReadClaude', profile: 'claude', limitTokens: 2_000 });
    expect(g?.estimate.profile).toBe('claude');
    await svc.reindex({ rootId });
    const row = (await svc.listPayloads({ rootId, tool: 'ReadClaude' })).rows[0]!;
    const res = await svc.estimate({ payloadId: row.id });
    expect(res.profile).toBe('claude');
    expect(res.estimates.find((e) => e.strategy === g!.estimate.strategy)!.tokens).toBe(row.tokens);
    // asked for another profile, it counts for that one
    expect((await svc.estimate({ payloadId: row.id, profile: 'o200k' })).profile).toBe('o200k');
  });

  it('estimate says how far to trust the calibrated number: little risk for JSON, most of it for Greek', async () => {
    const json = await svc.estimate({ text: JSON.stringify(Array.from({ length: 400 }, (_, i) => ({ id: i, name: `item ${i}` }))) });
    const jsonCalibrated = json.estimates.find((e) => e.strategy === 'calibrated')!.tokens;
    expect(json.trust!.margin).toBeGreaterThan(0.1);
    expect(json.trust!.riskTokens).toBeLessThan(0.05 * jsonCalibrated);
    const greek = 'Το αρχείο δεν υπάρχει στον κατάλογο σελιδοδεικτών\n'.repeat(400);
    const res = await svc.estimate({ text: greek, profile: 'cl100k' });
    expect(res.trust!.parts[0]!.label).toBe('Greek');
    expect(res.trust!.riskTokens).toBeGreaterThan(res.estimates.find((e) => e.strategy === 'calibrated')!.tokens);
    expect(res.trust!.riskTokens).toBe(res.trust!.parts.reduce((a, p) => a + p.tokens, 0));
    // The same risk the guard decides with: an unbroken run puts the whole estimate at risk.
    const run = await svc.estimate({ text: 'getUserAccountSettingsById'.repeat(1_000), profile: 'claude' });
    expect(run.trust!.parts.map((p) => p.label)).toContain('an unbroken run of 2048+ characters');
    expect(run.trust!.riskTokens).toBeGreaterThanOrEqual(run.estimates.find((e) => e.strategy === 'calibrated')!.tokens - 1);
  });

  it('analyze: a big pasted text is spilled into a scratch session and opens in the viewer', async () => {
    const text = JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ i, name: `row ${i}`, tags: ['a', 'b'] })));
    const res = await svc.analyze({ name: 'rows.json', text, limitTokens: 2000 });
    expect(res.kind).toBe('json');
    expect(res.decision.action).toBe('spill');
    expect(res.decision.message).toContain('drop:rows.json');
    expect(res.payloadId).toBeDefined();
    const d = await svc.getPayload({ id: res.payloadId! });
    expect(d.path.startsWith(fs.realpathSync(path.join(home, 'scratch')))).toBe(true);
    expect(fs.readFileSync(d.path, 'utf8')).toBe(text);
    const sessions = await svc.listSessions({});
    expect(sessions.find((s) => s.id === res.sessionId)?.kind).toBe('scratch');
  });

  it('analyze: a small file passes, is never modified, and is still viewable from scratch', async () => {
    const file = path.join(tmp, 'dropped.txt');
    fs.writeFileSync(file, 'hello world\n');
    const before = fs.statSync(file);
    // Over HTTP a path must lie in a root: the temp dir is not one.
    await expectCode(svc.analyze({ name: 'dropped.txt', path: file }), 'FORBIDDEN_PATH');
    const electron = createInspectorService({ env: process.env, appDataDir: path.join(tmp, 'home-e'), transport: 'electron', scanOnStart: false, watch: false });
    try {
      // The desktop window alone cannot vouch for a path: the main process allows what the user dropped.
      await expectCode(electron.analyze({ name: 'dropped.txt', path: file }), 'FORBIDDEN_PATH');
      electron.allowDroppedFile(file);
      const res = await electron.analyze({ name: 'dropped.txt', path: file });
      expect(res.decision).toEqual({ action: 'pass', limitTokens: 12_000, message: null });
      expect(res.bytes).toBe(12);
      expect(res.payloadId).toBeDefined();
      const w = await electron.readPayload({ id: res.payloadId! });
      expect(w.text).toBe('hello world\n');
    } finally {
      await electron.close();
    }
    const after = fs.statSync(file);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(fs.readFileSync(file, 'utf8')).toBe('hello world\n');
  });

  it('old scratch analyses are pruned; nothing else in the scratch folder is touched', async () => {
    const dir = path.join(tmp, 'scratch-prune');
    fs.mkdirSync(path.join(dir, '20250101T000000000Z_old.json_abcdef', 'long_responses'), { recursive: true });
    fs.mkdirSync(path.join(dir, '20261129T000000000Z_new.json_abcdef'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'my-notes'), { recursive: true });
    const removed = await pruneScratch(dir, new Date(Date.UTC(2026, 10, 30)));
    expect(removed).toEqual(['20250101T000000000Z_old.json_abcdef']);
    expect(fs.readdirSync(dir).sort()).toEqual(['20261129T000000000Z_new.json_abcdef', 'my-notes']);
  });

  it('analyze: dropped bytes (base64) with an image inside are typed and their asset extracted', async () => {
    const png = fs.readFileSync(findPng());
    const res = await svc.analyze({ name: 'icon.png', base64: png.toString('base64') });
    expect(res.mimeType).toBe('image/png');
    expect(res.kind).toBe('binary');
    expect(res.bytes).toBe(png.length);
    await expectCode(svc.analyze({ name: 'x', text: 'a', base64: 'YQ==' }), 'BAD_REQUEST');
  });

  it('summarize (offline structural): appends the run to the sidecar and the index, and emits onDidSummarize', async () => {
    const { rows } = await svc.listPayloads({ rootId, kind: 'json', limit: 1 });
    const id = rows[0]!.id;
    const events: Array<{ payloadId: string; run: SummaryRun }> = [];
    const off = svc.on('onDidSummarize', (e) => events.push(e));
    const run = await svc.summarize({ payloadId: id, focus: 'names of the packages' });
    off();
    expect(run.status).toBe('ok');
    expect(run.provider).toBe('structural');
    expect(run.focus).toBe('names of the packages');
    expect(run.summary.length).toBeGreaterThan(0);
    expect(events).toEqual([{ payloadId: id, run }]);
    const d = await svc.getPayload({ id });
    expect(d.summaryRuns.map((r) => r.id)).toContain(run.id);
    const sidecar = JSON.parse(fs.readFileSync(metaPathFor(d.path), 'utf8')) as { summaryRuns: SummaryRun[] };
    expect(sidecar.summaryRuns.map((r) => r.id)).toContain(run.id);
    // A second run with another focus is kept next to the first.
    const run2 = await svc.summarize({ payloadId: id, focus: 'versions', template: 'terse' });
    expect((await svc.getPayload({ id })).summaryRuns.map((r) => r.id)).toEqual(expect.arrayContaining([run.id, run2.id]));
    await expectCode(svc.summarize({ payloadId: id, provider: 'nope' as never }), 'BAD_REQUEST');
    await expectCode(svc.summarize({ payloadId: id, provider: 'anthropic' }), 'UNAVAILABLE');
  });

  it('summarize through a cloud provider (a local server speaking the Anthropic Messages API): ok, error and timeout runs are all kept', async () => {
    const fake = await startFake('anthropic');
    const cloudHome = path.join(tmp, 'home-cloud');
    const cloud = createInspectorService({
      appDataDir: cloudHome,
      roots: [gen.root],
      transport: 'http',
      scanOnStart: false,
      watch: false,
      env: { ...process.env, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url, SPILLWAY_SUMMARY_TIMEOUT_MS: '5000' },
    });
    try {
      await cloud.ready;
      await cloud.reindex({});
      const { rows } = await cloud.listPayloads({ kind: 'json', limit: 1 });
      const id = rows[0]!.id;
      fake.script({ kind: 'ok', text: '- 3 packages, all MIT', inputTokens: 1234, outputTokens: 9, model: 'claude-haiku-4-5' });
      const ok = await cloud.summarize({ payloadId: id, provider: 'anthropic', model: 'claude-haiku-4-5', focus: 'licenses' });
      expect(ok.error).toBeUndefined();
      expect(ok).toMatchObject({ status: 'ok', provider: 'anthropic', summary: '- 3 packages, all MIT', focus: 'licenses' });
      expect(ok.inputTokens).toBe(1234);
      const sent = JSON.stringify(fake.requests.at(-1)!.body);
      expect(sent).toContain('licenses');
      const h = fake.requests.at(-1)!.headers;
      expect(`${h['x-api-key'] ?? ''} ${h.authorization ?? ''}`).toContain('test-key');
      fake.script({ kind: 'error', status: 400, errorType: 'invalid_request_error', message: 'bad model' });
      const bad = await cloud.summarize({ payloadId: id, provider: 'anthropic', model: 'nope' });
      expect(bad.status).toBe('error');
      expect(bad.error).toMatch(/bad model|400/);
      fake.script({ kind: 'hang' });
      const slow = await cloud.summarize({ payloadId: id, provider: 'anthropic' });
      expect(slow.status).toBe('timeout');
      const runs = (await cloud.getPayload({ id })).summaryRuns.map((r) => r.id);
      expect(runs).toEqual(expect.arrayContaining([ok.id, bad.id, slow.id]));
    } finally {
      await cloud.close();
      await fake.close();
    }
  });

  it('listProviders / templates CRUD', async () => {
    const providers = await svc.listProviders({});
    expect(providers.find((p) => p.name === 'structural')?.available).toBe(true);
    const before = await svc.listTemplates({});
    expect(before.some((t) => t.name === 'default' && t.builtIn)).toBe(true);
    const saved = await svc.saveTemplate({ name: 'mine', body: 'Summarize {{payload}} for {{focus}}' });
    expect(saved.path).toBe(path.join(path.resolve(home), 'templates', 'mine.md'));
    expect((await svc.listTemplates({})).find((t) => t.name === 'mine')?.body).toBe('Summarize {{payload}} for {{focus}}');
    expect(await svc.deleteTemplate({ name: 'mine' })).toEqual({ ok: true });
    expect((await svc.listTemplates({})).some((t) => t.name === 'mine')).toBe(false);
    await expectCode(svc.saveTemplate({ name: '../evil', body: 'x' }), 'BAD_REQUEST');
    await expectCode(svc.deleteTemplate({ name: 'nope-not-here' }), 'NOT_FOUND');
  });

  it('limitTuner and wasteReport', async () => {
    const t = await svc.limitTuner({ rootId, limitTokens: 5_000 });
    expect(t.total).toBe((await svc.listPayloads({ rootId, limit: 1 })).total);
    // Spill folders without transcripts: no calls to multiply, their sizes only.
    expect(t.replay.sessionsTotal).toBe(0);
    expect(t.payloadsOnly.overLimit).toBe(t.sizes.filter((s) => s.tokens > 5_000).length);
    const narrowed = await svc.limitTuner({ rootId, limitTokens: 12_000, contextWindowTokens: 32_000 });
    expect(narrowed.limitTokens).toBe(3_200);
    const sessions = await svc.listSessions({ rootId });
    const w = await svc.wasteReport({ sessionId: sessions[0]!.id, limitTokens: 1_000 });
    expect(w.sessionId).toBe(sessions[0]!.id);
    expect(w.basis).toBe('payload-sizes');
    expect(w.byTool.reduce((a, b) => a + b.calls, 0)).toBe(sessions[0]!.payloadCount);
    await expectCode(svc.limitTuner({ rootId } as never), 'BAD_REQUEST');
  });

  it('toolEvidence and compareSessions: a root of spills alone, each spill its own call; requests checked', async () => {
    const e = await svc.toolEvidence({ rootId });
    const rows = (await svc.listPayloads({ rootId, limit: 1000 })).rows;
    // No transcript here: every call is a spill's (spill rate 100% where the guard spilled), none read back.
    expect(e.totals.calls).toBe(rows.length);
    expect(e.totals.spills).toBe(rows.filter((r) => r.action === 'spill').length);
    expect(e.totals.spillsReadBack).toBe(0);
    expect(e.tools.reduce((a, t) => a + t.calls, 0)).toBe(rows.length);
    // No spill read back: a tool with enough spills may only be told to keep its settings.
    expect(e.suggestions.every((x) => x.kind === 'keep' && x.evidence.spills >= e.thresholds.minSpills)).toBe(true);
    const byDate = await svc.compareSessions({ rootId, by: 'date', since: '1970-01-02' });
    expect(byDate.groups.map((g) => g.label)).toEqual(['after']);
    expect(byDate.groups[0]!.sessions).toBe((await svc.listSessions({ rootId })).length);
    await expectCode(svc.invoke('compareSessions', { by: 'date' }), 'BAD_REQUEST');
    await expectCode(svc.invoke('compareSessions', { by: 'date', since: 'yesterday' }), 'BAD_REQUEST');
    await expectCode(svc.invoke('compareSessions', { by: 'week' }), 'BAD_REQUEST');
    await expectCode(svc.invoke('toolEvidence', { rootId: 'a\u0007' }), 'BAD_REQUEST');
  });

  it('wasteReport answers without a limit (a fresh page has none yet): the guard\'s default', async () => {
    const sessions = await svc.listSessions({ rootId });
    const w = await svc.invoke('wasteReport', { sessionId: sessions[0]!.id });
    expect((w as { limitTokens: number }).limitTokens).toBe((await svc.getInfo({})).defaults.limitTokens);
  });

  it('addRoot / removeRoot / reindex', async () => {
    const extra = await generateSessionsRoot(path.join(tmp, 'extra'), { sessions: 1, payloads: 3, seed: 11 });
    // Over HTTP no root can be added; the CLI's (trusted) path can.
    await expectCode(svc.addRoot({ path: extra.root }), 'FORBIDDEN_PATH');
    const root = await svc.addTrustedRoot(extra.root);
    await until(async () => ((await svc.listPayloads({ rootId: root.id, limit: 1 })).total === 3 ? true : undefined));
    const stats = await svc.reindex({ rootId: root.id });
    expect(stats.payloads).toBe(3);
    expect(await svc.removeRoot({ id: root.id })).toEqual({ ok: true });
    expect((await svc.listRoots({})).some((r) => r.id === root.id)).toBe(false);
    await expectCode(svc.addTrustedRoot('relative/dir'), 'BAD_REQUEST');
    await expectCode(svc.addTrustedRoot(path.join(tmp, 'does-not-exist')), 'NOT_FOUND');
    await expectCode(svc.addTrustedRoot('/'), 'FORBIDDEN_PATH');
    await expectCode(svc.removeRoot({ id: 'nope' }), 'NOT_FOUND');
  });

  it('a single transcript as a root: its persisted tool-results file is readable too, nothing else around it', async () => {
    const fixture = path.resolve('..', 'shared', 'fixtures', 'agent-sessions', 'claude-code', 'projects', '-Users-gray-Projects-claude-bug');
    const proj = path.join(tmp, 'claude-one');
    fs.cpSync(fixture, proj, { recursive: true });
    const transcript = path.join(proj, '637ef6e7-e740-4503-8ff8-5780d7c0918f.jsonl');
    const spill = path.join(proj, '637ef6e7-e740-4503-8ff8-5780d7c0918f', 'tool-results', 'toolu_01PRASLbbpSRmj2CjAaB1NP4.txt');
    const root = await svc.addTrustedRoot(transcript);
    expect(root.kind).toBe('file');
    await svc.reindex({ rootId: root.id });
    const { rows } = await svc.listPayloads({ rootId: root.id, limit: 100 });
    expect(rows.length).toBeGreaterThan(10);
    const spillHead = fs.readFileSync(spill).subarray(0, 200).toString('utf8');
    let matched = 0;
    for (const r of rows) {
      const w = await svc.readPayload({ id: r.id, start: 0, end: 200 });
      if (w.text === spillHead) matched++;
    }
    expect(matched).toBeGreaterThanOrEqual(1);
    // The folder beside the transcript is not readable as a whole.
    await expectCode(svc.estimate({ path: path.join(proj, '637ef6e7-e740-4503-8ff8-5780d7c0918f', 'subagents', 'agent-a4d534b.jsonl') }), 'FORBIDDEN_PATH');
    await svc.removeRoot({ id: root.id });
  });

  it('a single spilled payload file as a root: its sidecar, linked form and assets come with it', async () => {
    const s = path.join(tmp, 'single', 'sess');
    const png = fs.readFileSync(findPng());
    const big = JSON.stringify({ content: [{ type: 'image', mimeType: 'image/png', data: png.toString('base64') }], pad: crypto.randomBytes(30_000).toString('hex') });
    const res = await guardLargeResult(big, { sessionPath: s, toolName: 'shot', limitTokens: 1000 });
    const file = res!.payloadPath!;
    const root = await svc.addTrustedRoot(file);
    expect(root.kind).toBe('file');
    await svc.reindex({ rootId: root.id });
    const { rows } = await svc.listPayloads({ rootId: root.id });
    expect(rows).toHaveLength(1);
    const d = await svc.getPayload({ id: rows[0]!.id });
    const a = await svc.readAsset({ payloadId: d.row.id, sha256: d.assets[0]!.sha256 });
    expect(Buffer.from(a.base64!, 'base64').equals(png)).toBe(true);
    const run = await svc.summarize({ payloadId: d.row.id, focus: 'image' });
    expect(JSON.parse(fs.readFileSync(metaPathFor(file), 'utf8')).summaryRuns.map((r: SummaryRun) => r.id)).toContain(run.id);
    await svc.removeRoot({ id: root.id });
  });

  it('a tool name with dots (server.tool) is indexed and readable', async () => {
    const s = gen.sessions[2]!;
    const text = crypto.randomBytes(20_000).toString('hex');
    const res = await guardLargeResult(text, { sessionPath: s, toolName: 'github.search_issues', limitTokens: 1000 });
    expect(path.basename(res!.payloadPath!)).toMatch(/_github\.search_issues_/);
    await svc.reindex({ rootId });
    const { rows } = await svc.listPayloads({ rootId, tool: 'github.search_issues' });
    expect(rows).toHaveLength(1);
    expect((await svc.readPayload({ id: rows[0]!.id, start: 0, end: 64 })).text).toBe(text.slice(0, 64));
  });

  it('onDidIndex arrives when the guard writes a payload into a watched root', async () => {
    const events: unknown[] = [];
    const off = svc.on('onDidIndex', (e) => events.push(e));
    const s = gen.sessions[0]!;
    const big = crypto.randomBytes(40_000).toString('hex');
    const res = await guardLargeResult(big, { sessionPath: s, toolName: 'live_tool', limitTokens: 1000 });
    expect(res?.payloadPath).toBeDefined();
    await until(async () => ((await svc.listPayloads({ rootId, tool: 'live_tool', limit: 1 })).total > 0 ? true : undefined));
    await until(() => (events.length > 0 ? true : undefined));
    off();
  });
});

function findPng(): string {
  const candidates = [
    'node_modules/playwright-core/lib/vite/traceViewer/playwright-logo.svg',
  ];
  void candidates;
  const stack = [path.resolve('node_modules')];
  while (stack.length) {
    const d = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isFile() && e.name.endsWith('.png') && fs.statSync(p).size > 500 && fs.statSync(p).size < 50_000) return p;
      if (e.isDirectory()) stack.push(p);
    }
  }
  throw new Error('no png in node_modules');
}

describe('summary runs on read-only imported sessions', () => {
  it('survive deleting and rebuilding the database (kept in app data, not only in SQLite)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-svc-runs-'));
    const appData = path.join(dir, 'home');
    const projects = path.join(dir, 'projects');
    const fixture = path.resolve('..', 'shared', 'fixtures', 'agent-sessions', 'claude-code', 'projects', 'sample-project');
    fs.cpSync(fixture, path.join(projects, 'sample-project'), { recursive: true });
    const open = async () => {
      const s = createInspectorService({ env: process.env, appDataDir: appData, roots: [projects], transport: 'http', watch: false });
      await s.ready;
      return s;
    };
    let s = await open();
    try {
      const rootId = (await s.listRoots({})).find((r) => r.path === fs.realpathSync(projects))!.id;
      await s.reindex({ rootId });
      const { rows } = await s.listPayloads({ rootId, sort: { field: 'tokens', dir: 'desc' }, limit: 1 });
      const id = rows[0]!.id;
      expect((await s.getPayload({ id })).meta).toBeNull(); // imported: no sidecar to write the run into
      const run = await s.summarize({ payloadId: id, focus: 'errors', provider: 'structural' });
      expect(run.status).toBe('ok');
      const dbPath = s.dbPath;
      await s.close();
      for (const f of fs.readdirSync(path.dirname(dbPath))) if (f.startsWith(path.basename(dbPath))) fs.rmSync(path.join(path.dirname(dbPath), f));
      s = await open();
      const again = await until(async () => {
        const d = await s.getPayload({ id }).catch(() => undefined);
        return d && d.summaryRuns.length > 0 ? d : undefined;
      }, 30_000);
      expect(again.summaryRuns.map((r) => [r.id, r.summary, r.focus])).toEqual([[run.id, run.summary, 'errors']]);
      expect(again.row.summaryCount).toBe(1);
      // a second rebuild does not duplicate it
      await s.reindex({ rootId });
      expect((await s.getPayload({ id })).summaryRuns).toHaveLength(1);
    } finally {
      await s.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
