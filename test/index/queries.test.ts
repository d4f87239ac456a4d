import path from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { type SpillIndex, openIndex } from '../../src/index/index.js';
import { type Timelines, logHistogram, openTimelines } from '../../src/timeline/index.js';
import type { SummaryRun } from '../../src/pipeline/types.js';
import { type GeneratedRoot, generateSessionsRoot } from '../helpers/gen-sessions.js';
import { CLAUDE_PROJECTS } from './helpers.js';
import fs from 'node:fs';
import os from 'node:os';

let index: SpillIndex;
/** The limit tuner and the waste report are the timeline layer's (src/timeline/reports.ts), over this index. */
let timelines: Timelines;
let gen: GeneratedRoot;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-q-'));
  gen = await generateSessionsRoot(path.join(dir, 'sessions'), { sessions: 3, payloads: 60, seed: 77, imageShare: 0.2 });
  index = openIndex({ dbPath: path.join(dir, 'index.sqlite') });
  timelines = openTimelines(index);
  index.addRoot(gen.root);
  index.addRoot(path.join(CLAUDE_PROJECTS, '-Users-gray-Projects-claude-bug'));
  await index.scan();
  return async () => {
    await index.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
});

describe('listPayloads', () => {
  it('pages through a stable sort without gaps or repeats', () => {
    const all = index.listPayloads({ sort: { field: 'tokens', dir: 'desc' }, limit: 1000 });
    expect(all.total).toBe(60 + 26);
    const tokens = all.rows.map((r) => r.tokens);
    expect(tokens).toEqual([...tokens].sort((a, b) => b - a));
    const paged: string[] = [];
    for (let offset = 0; offset < all.total; offset += 7) {
      const page = index.listPayloads({ sort: { field: 'tokens', dir: 'desc' }, offset, limit: 7 });
      expect(page.total).toBe(all.total);
      paged.push(...page.rows.map((r) => r.id));
    }
    expect(paged).toEqual(all.rows.map((r) => r.id));
  });

  it('filters by session, tool, kind and token range', () => {
    const s = index.listSessions().find((x) => x.name === 'session-001')!;
    const rows = index.listPayloads({ sessionId: s.id, limit: 1000 }).rows;
    expect(rows).toHaveLength(20);
    expect(rows.every((r) => r.sessionId === s.id)).toBe(true);
    const grep = index.listPayloads({ tool: 'Grep', limit: 1000 });
    expect(grep.total).toBe(4);
    const mid = index.listPayloads({ minTokens: 1000, maxTokens: 5000, limit: 1000 }).rows;
    expect(mid.every((r) => r.tokens >= 1000 && r.tokens <= 5000)).toBe(true);
    const json = index.listPayloads({ kind: 'json', limit: 1000 }).rows;
    expect(json.length).toBeGreaterThan(0);
    expect(json.every((r) => r.kind === 'json')).toBe(true);
  });

  it('never throws on hostile query text, and snippets are plain text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (q) => {
        const res = index.listPayloads({ query: q, limit: 5 });
        for (const r of res.rows) if (r.snippet) expect(r.snippet).not.toMatch(/<\/?(b|mark|em)>/);
      }),
      { numRuns: 300 },
    );
    for (const q of ['"', 'a OR', 'NEAR(', '*', '-x', 'col:val', ')(', "'; DROP TABLE payloads; --"]) {
      expect(() => index.listPayloads({ query: q })).not.toThrow();
    }
    expect(index.listPayloads({}).total).toBe(86);
  });

  it('finds text, prefixes, tools and summaries added later', () => {
    const hit = index.listPayloads({ query: 'collect_wsd_files' });
    expect(hit.total).toBeGreaterThan(0);
    expect(hit.rows.every((r) => typeof r.snippet === 'string')).toBe(true);
    expect(index.listPayloads({ query: 'collect_wsd*' }).total).toBeGreaterThanOrEqual(hit.total);
    const target = index.listPayloads({ tool: 'Grep', limit: 1 }).rows[0]!;
    const run: SummaryRun = {
      id: 'r-later',
      createdAt: '2026-11-30T09:30:00.000Z',
      status: 'ok',
      summary: 'The grep shows xylophonic duplication in the wsd scripts.',
      provider: 'structural',
      model: 'none',
      inputTokens: 10,
      outputTokens: 5,
      ms: 3,
    };
    index.addSummaryRun(target.id, run);
    const found = index.listPayloads({ query: 'xylophonic' });
    expect(found.rows.map((r) => r.id)).toEqual([target.id]);
    expect(found.rows[0]!.summaryCount).toBe(1);
    expect(found.rows[0]!.snippet).toContain('xylophonic');
    expect(index.summaryRuns(target.id)).toEqual([run]);
  });
});

describe('limit tuner and waste report', () => {
  it('gives a histogram and sizes that agree with each other, and payload sizes only for sessions without calls', async () => {
    const limit = 4_000;
    const t = await timelines.limitTunerData({ limitTokens: limit, buckets: 16 });
    expect(t.total).toBe(86);
    expect(t.sizes).toHaveLength(86);
    expect(t.histogram.reduce((a, b) => a + b.count, 0)).toBe(86);
    for (const b of t.histogram) {
      const inBucket = t.sizes.filter((s) => s.tokens >= b.from && s.tokens < b.to).length;
      expect(inBucket).toBe(b.count);
    }
    // Sessions without model calls are counted by size only, each payload once, and say so.
    const bare = index.listSessions().filter((s) => s.kind === 'spillway');
    const bareIds = new Set(bare.map((s) => s.id));
    const bareSizes = t.sizes.filter((s) => bareIds.has(index.listPayloads({ limit: 1000 }).rows.find((r) => r.id === s.id)!.sessionId));
    expect(t.payloadsOnly.payloads).toBeGreaterThanOrEqual(bareSizes.length);
    expect(t.assumptions.join(' ')).toMatch(/no calls to multiply/);
    // A context window narrows the limit: 10% of 20,000.
    expect((await timelines.limitTunerData({ limitTokens: 12_000, contextWindowTokens: 20_000 })).limitTokens).toBe(2_000);
    const chars4 = await timelines.limitTunerData({ limitTokens: limit, strategy: 'chars4' });
    expect(chars4.strategy).toBe('chars4');
    expect(chars4.sizes.map((s) => s.tokens)).not.toEqual(t.sizes.map((s) => s.tokens));
    // Cheap strategies have a figure for every payload; an exact one only where it was counted.
    expect([t.fallbacks, chars4.fallbacks]).toEqual([0, 0]);
    const claude = await timelines.limitTunerData({ limitTokens: limit, strategy: 'claude' });
    let never = 0;
    for (const r of index.listPayloads({ limit: 1000 }).rows) if ((await index.getPayload(r.id)).estimates.claude === undefined) never++;
    expect(never).toBeGreaterThan(0);
    expect(claude.fallbacks).toBe(never);
  });

  it('reports a real Claude Code session: tokens per tool, costliest calls with their arguments', async () => {
    const s = index.listSessions().find((x) => x.name === '637ef6e7-e740-4503-8ff8-5780d7c0918f')!;
    const w = await timelines.wasteReport({ sessionId: s.id, limitTokens: 5_000 });
    const rows = index.listPayloads({ sessionId: s.id, limit: 1000 }).rows;
    expect(w.byTool.find((t) => t.tool === 'Grep')!.calls).toBe(4);
    expect(w.byTool.reduce((a, t) => a + t.calls, 0)).toBe(19);
    for (const b of w.biggest) {
      expect(rows.some((r) => r.id === b.payloadId)).toBe(true);
      expect(b.args).toBe(rows.find((r) => r.id === b.payloadId)!.inputExcerpt);
    }
    await expect(timelines.wasteReport({ sessionId: 'nope' })).rejects.toThrow(/no session/);
  });

  it('counts inline base64 the guard cut out of screenshots', async () => {
    const s = index.listSessions().find((x) => x.kind === 'spillway' && x.assetCount > 0)!;
    const w = await timelines.wasteReport({ sessionId: s.id });
    expect(w.basis).toBe('payload-sizes');
    expect(w.inlineBase64.payloads).toBeGreaterThan(0);
    expect(w.inlineBase64.bytes).toBeGreaterThan(1_000);
    expect(w.inlineBase64.tokens).toBeGreaterThan(0);
  });

  it('log histogram: every value in exactly one increasing bucket', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5_000_000 }), { maxLength: 200 }), fc.integer({ min: 1, max: 40 }), (vals, buckets) => {
        const sorted = [...vals].sort((a, b) => a - b);
        const h = logHistogram(sorted, buckets, sorted.at(-1) ?? 0);
        expect(h.reduce((a, b) => a + b.count, 0)).toBe(vals.length);
        for (let i = 1; i < h.length; i++) expect(h[i]!.from).toBe(h[i - 1]!.to);
        for (const b of h) expect(b.to).toBeGreaterThan(b.from);
        if (sorted.length) expect(h.at(-1)!.to).toBeGreaterThan(sorted.at(-1)!);
      }),
    );
  });
});
