/**
 * Issue 30 item 3: datasets and runs through the job queue, in process, against the provider
 * doubles' real wire protocols. Counts are what the double observed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex, type SpillIndex } from '../../src/index/index.js';
import { runExperiment, saveDataset, sample, selectItems, type Variant } from '../../src/experiments/index.js';
import { payloadItemSource } from '../../src/service/offline.js';
import { startFake, type FakeServer } from '../summarize/wire.js';
import { makeFixture, markerIn, type ExperimentFixture } from './fixture.js';

let fx: ExperimentFixture;
let index: SpillIndex;
let srv: FakeServer;

/** The engine's reader here: the payload file as the index names it (the CLI's reader is tested through the CLI). */
const source = () => payloadItemSource(index, async (id) => {
  const c = await index.payloadContent(id);
  const text = c.type === 'text' ? c.text : fs.readFileSync(c.path, 'utf8');
  return { text, totalBytes: Buffer.byteLength(text), readBytes: Buffer.byteLength(text) };
});

beforeAll(async () => {
  fx = await makeFixture(30, 'spillway-exp-engine-');
  index = openIndex({ dbPath: fx.db, backgroundEstimates: false });
  srv = await startFake('openai');
}, 60_000);
afterAll(async () => {
  await srv.close();
  await index.close();
  fx.cleanup();
});

const env = () => ({ OPENAI_BASE_URL: srv.url, OPENAI_API_KEY: 'test' });
const templatesDir = () => path.join(fx.home, 'templates');

describe('datasets', () => {
  it('a filter selects by tool and size; a sample is the same for the same seed and differs for another', () => {
    const store = index.experiments;
    const bash = selectItems(store, { filter: { tool: 'Bash' } });
    expect(bash).toHaveLength(15);
    expect(selectItems(store, { filter: { tool: 'Bash', maxTokens: 1 } })).toHaveLength(0);
    const a = selectItems(store, { filter: {}, sample: 10, seed: 7 }).map((c) => c.id);
    const b = selectItems(store, { filter: {}, sample: 10, seed: 7 }).map((c) => c.id);
    const c = selectItems(store, { filter: {}, sample: 10, seed: 8 }).map((c) => c.id);
    expect(a).toHaveLength(10);
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
    // The order the candidates come in does not change the sample.
    const all = store.candidates();
    expect(sample([...all].reverse(), 10, 7).map((x) => x.id).sort()).toEqual([...a].sort());
  });

  it('each item keeps the focus its call had; by hand, an unknown id is refused', () => {
    const d = saveDataset(index.experiments, 'all', { filter: {} });
    expect(d.items).toHaveLength(30);
    const withFocus = d.items.filter((i) => i.focus === 'payment errors');
    expect(withFocus).toHaveLength(10);
    expect(() => saveDataset(index.experiments, 'byhand', { ids: [d.items[0]!.payloadId, 'nope'] })).toThrow(/not in the index: nope/);
    expect(() => saveDataset(index.experiments, 'all', { filter: {} })).toThrow(/exists already/);
  });
});

describe('runs', () => {
  const variant: Variant = { template: 'default', provider: 'openai', model: 'gpt-5-mini', focus: 'call' };

  it('a cancel aborts the calls in flight and starts no more; the run says cancelled and resumes later', async () => {
    saveDataset(index.experiments, 'cancel', { filter: {}, sample: 20, seed: 3 });
    srv.script({ kind: 'ok', text: 'a summary', delayMs: 100 });
    const before = srv.requests.length;
    const ac = new AbortController();
    const report = await runExperiment({
      store: index.experiments,
      source: source(),
      dataset: 'cancel',
      variant,
      concurrency: 2,
      env: env(),
      templatesDir: templatesDir(),
      signal: ac.signal,
      onProgress: (p) => {
        if (p.done >= 4) ac.abort();
      },
    });
    expect(report.status).toBe('cancelled');
    const sent = srv.requests.length - before;
    await new Promise((r) => setTimeout(r, 400));
    // Nothing sent after the cancel.
    expect(srv.requests.length - before).toBe(sent);
    expect(report.done).toBeGreaterThanOrEqual(4);
    expect(report.done).toBeLessThan(20);
    expect(index.experiments.run(report.runId)!.status).toBe('cancelled');
    const finished = index.experiments.results(report.runId);
    expect(finished).toHaveLength(report.done);
    // Resumed: only the items without a result reach the provider, once each.
    srv.script({ kind: 'ok', text: 'a summary' });
    const finishedMarkers = new Set(await Promise.all(finished.map((r) => markerOf(r.payloadId))));
    const mark = srv.requests.length;
    const resumed = await runExperiment({ store: index.experiments, source: source(), resume: report.runId, env: env(), templatesDir: templatesDir() });
    const again = srv.requests.slice(mark).map((r) => markerIn(r.body));
    expect(resumed).toMatchObject({ status: 'done', done: 20, ok: 20, resumed: report.done, called: 20 - report.done });
    expect(again).toHaveLength(20 - report.done);
    expect(again.filter((m) => finishedMarkers.has(m!))).toEqual([]);
    expect(new Set(again).size).toBe(again.length);
  });

  it('a token budget stops the run before it passes the limit, and says which limit', async () => {
    saveDataset(index.experiments, 'budget', { filter: {}, sample: 20, seed: 4 });
    // Counts like a real model's for these payloads (each about 10,000 tokens): the first item is projected from its text.
    srv.script({ kind: 'ok', text: 'summary within budget', inputTokens: 12_000, outputTokens: 100 });
    const before = srv.requests.length;
    const report = await runExperiment({
      store: index.experiments,
      source: source(),
      dataset: 'budget',
      variant: { ...variant, template: 'terse' },
      budget: { tokens: 100_000 },
      concurrency: 1,
      env: env(),
      templatesDir: templatesDir(),
    });
    const calls = srv.requests.length - before;
    expect(report.status).toBe('budget');
    expect(report.stopReason).toMatch(/^token budget 100,000: 96,800 spent, the next item would take about 12,100/);
    // 12,100 tokens a call at the double: eight calls fit in 100,000, a ninth would not.
    expect(calls).toBe(8);
    expect(report.spentTokens).toBe(96_800);
    expect(index.experiments.results(report.runId)).toHaveLength(8);
  });

  it('a dollar budget needs a priced model, and stops like the token one', async () => {
    await expect(
      runExperiment({ store: index.experiments, source: source(), dataset: 'budget', variant: { ...variant, model: 'no-such-model' }, budget: { usd: 1 }, env: env(), templatesDir: templatesDir() }),
    ).rejects.toThrow(/no price here/);
    srv.script({ kind: 'ok', text: 'priced summary', inputTokens: 1_000_000, outputTokens: 0 });
    const before = srv.requests.length;
    // gpt-5-mini: $0.25 per million input tokens; $1 pays four such calls.
    const report = await runExperiment({ store: index.experiments, source: source(), dataset: 'budget', variant: { ...variant, template: 'errors' }, budget: { usd: 1 }, concurrency: 1, env: env(), templatesDir: templatesDir() });
    expect(report.status).toBe('budget');
    expect(report.stopReason).toMatch(/^dollar budget \$1: \$1\.000000 spent/);
    expect(srv.requests.length - before).toBe(4);
  });

  it('a provider that fails a third of the calls: each failure is that item\'s result, with its error, and the run goes on', async () => {
    const d = saveDataset(index.experiments, 'flaky', { filter: {} });
    const failing = new Set(d.items.filter((_, k) => k % 3 === 0).map((i) => i.payloadId));
    const failingMarkers = new Set<string>();
    for (const id of failing) failingMarkers.add(await markerOf(id));
    srv.script({
      kind: 'fn',
      f: (body: unknown) =>
        failingMarkers.has(markerIn(body) ?? '') ? { kind: 'error', status: 400, message: 'model refused this one' } : { kind: 'ok', text: 'fine' },
    });
    const before = srv.requests.length;
    const report = await runExperiment({ store: index.experiments, source: source(), dataset: 'flaky', variant: { ...variant, model: 'gpt-5-nano', template: 'errors', focus: 'none' }, concurrency: 3, env: env(), templatesDir: templatesDir() });
    const sent = srv.requests.slice(before);
    expect(report.status).toBe('done');
    expect(report.cached).toBe(0);
    expect(sent).toHaveLength(30);
    expect(sent.filter((r) => failingMarkers.has(markerIn(r.body) ?? ''))).toHaveLength(10);
    expect(report.failed).toBe(10);
    expect(report.ok).toBe(20);
    const results = index.experiments.results(report.runId);
    const failed = results.filter((r) => r.status === 'error');
    expect(new Set(failed.map((r) => r.payloadId))).toEqual(failing);
    for (const r of failed) expect(r.error).toMatch(/^provider HTTP 400: .*model refused this one/);
  });

  async function markerOf(payloadId: string): Promise<string> {
    const c = await index.payloadContent(payloadId);
    const text = c.type === 'text' ? c.text : fs.readFileSync(c.path, 'utf8');
    return text.match(/PAYLOAD-\d{3}/)![0];
  }
});
