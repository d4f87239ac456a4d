/**
 * Issue 30 items 3 and 7: `spillway experiment` for scripts and CI, through the real CLI and the
 * provider doubles' wire protocols (Anthropic Messages, an Ollama-style OpenAI-compatible server).
 * Every count is what the double observed.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex } from '../../src/index/index.js';
import { startFake, type FakeServer } from '../summarize/wire.js';
import { makeFixture, markerIn, type ExperimentFixture } from './fixture.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const CLI = path.join(ROOT, 'src/cli/main.ts');
const TSX = pathToFileURL(path.join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(ANTHROPIC_|OPENAI_|SPILLWAY_)/.test(k)));
const NODE_ARGS = ['--import', TSX, '--conditions=source', CLI];

let fx: ExperimentFixture;
let anthropic: FakeServer;
let local: FakeServer;
const envOf = () => ({ ...clean, SPILLWAY_HOME: fx.home, ANTHROPIC_BASE_URL: anthropic.url, ANTHROPIC_API_KEY: 'test', SPILLWAY_LOCAL_BASE_URL: local.url });
const spillway = (args: string[]) => run(process.execPath, [...NODE_ARGS, ...args], { cwd: fx.dir, env: envOf(), maxBuffer: 64 * 1024 * 1024 });
const errorLine = (body: unknown) => JSON.stringify(body).match(/ERROR order=\d+ payment declined code=E\d+/)?.[0];

beforeAll(async () => {
  fx = await makeFixture(50, 'spillway-exp-cli-');
  anthropic = await startFake('anthropic');
  local = await startFake('openai', { models: ['qwen3:4b'] });
  await spillway(['experiment', 'dataset', 'd50', '--db', fx.db]);
}, 120_000);
afterAll(async () => {
  await anthropic.close();
  await local.close();
  fx.cleanup();
});

describe('spillway experiment', () => {
  it('two templates over 50 payloads against a baseline: per item deltas, aggregates, the regressions first', async () => {
    // The summaries a model would write for each template: the default keeps the error line, terse drops it,
    // errors keeps it and makes up a code (a faithfulness regression).
    anthropic.script({
      kind: 'fn',
      f: (body) => {
        const s = JSON.stringify(body);
        const m = markerIn(body)!;
        if (s.includes('In at most 5 bullet points')) return { kind: 'ok', text: `${m}: a build log of 400 steps.` };
        if (s.includes('List every error, failure')) return { kind: 'ok', text: `${m}: ${errorLine(body)} (also code=E9999 at 10:00:00)` };
        return { kind: 'ok', text: `${m}: ${errorLine(body)}` };
      },
    });
    const base = JSON.parse((await spillway(['experiment', 'run', '--dataset', 'd50', '--variant', 'template=default,provider=anthropic,model=claude-haiku-5-5', '--db', fx.db, '--json'])).stdout);
    expect(base.runs).toHaveLength(1);
    const baseId = base.runs[0].runId;
    expect(base.runs[0]).toMatchObject({ status: 'done', ok: 50, failed: 0, called: 50, total: 50 });
    const mark = anthropic.requests.length;
    const r = await spillway([
      'experiment', 'run', '--dataset', 'd50', '--db', fx.db, '--json', '--baseline', baseId,
      '--variant', 'template=terse,provider=anthropic,model=claude-haiku-5-5',
      '--variant', 'template=errors,provider=anthropic,model=claude-haiku-5-5',
    ]);
    const out = JSON.parse(r.stdout);
    const sent = anthropic.requests.slice(mark);
    expect(sent).toHaveLength(100);
    expect(sent.filter((q) => JSON.stringify(q.body).includes('In at most 5 bullet points'))).toHaveLength(50);
    expect(sent.filter((q) => JSON.stringify(q.body).includes('List every error, failure'))).toHaveLength(50);
    expect(out.runs.map((x: { status: string }) => x.status)).toEqual(['done', 'done']);
    const [terse, errors] = out.comparison.candidates;
    expect(out.comparison.baseline.runId).toBe(baseId);
    // terse lost the error line's anchors on every item: each a regression in anchor recall.
    expect(terse.aggregate.anchorRecall.pairs).toBe(50);
    expect(terse.aggregate.anchorRecall.regressions).toBe(50);
    expect(terse.aggregate.anchorRecall.meanDelta).toBeLessThan(0);
    expect(terse.regressed).toBe(50);
    // errors kept them and invented E9999 on every item.
    expect(errors.aggregate.anchorRecall.regressions).toBe(0);
    expect(errors.aggregate.inventedAnchors.regressions).toBe(50);
    expect(errors.aggregate.inventedAnchors.meanDelta).toBeGreaterThan(0);
    for (const c of [terse, errors]) {
      expect(c.items).toHaveLength(50);
      const worst = c.items.map((i: { worst: number }) => i.worst);
      expect(worst).toEqual([...worst].sort((a, b) => a - b));
    }
    // The same, compared later from the store, and as a person reads it.
    const again = JSON.parse((await spillway(['experiment', 'compare', baseId, terse.runId, '--db', fx.db, '--json'])).stdout);
    expect(again.candidates[0].aggregate).toEqual(terse.aggregate);
    const text = (await spillway(['experiment', 'compare', baseId, terse.runId, errors.runId, '--db', fx.db, '--items', '3'])).stdout;
    expect(text).toMatch(/candidate exp_\S+ \(template=terse,provider=anthropic,model=claude-haiku-5-5,focus=call\): 50 item\(s\) regressed/);
    expect(text).toMatch(/largest regressions first \(3 of 50\)/);
    const list = JSON.parse((await spillway(['experiment', 'list', '--db', fx.db, '--json'])).stdout);
    expect(list.datasets.map((d: { name: string; items: number }) => [d.name, d.items])).toEqual([['d50', 50]]);
    expect(list.runs.filter((x: { dataset: string }) => x.dataset === 'd50')).toHaveLength(3);
    // A run of the same variant again: every item from the cache, no request.
    const mark2 = anthropic.requests.length;
    const cached = JSON.parse((await spillway(['experiment', 'run', '--dataset', 'd50', '--variant', 'template=terse,provider=anthropic,model=claude-haiku-5-5', '--db', fx.db, '--json'])).stdout);
    expect(cached.runs[0]).toMatchObject({ status: 'done', ok: 50, cached: 50, called: 0 });
    expect(anthropic.requests.length).toBe(mark2);
  }, 180_000);

  it('a run killed with SIGKILL mid-run resumes without calling the provider again for finished items', async () => {
    local.script({ kind: 'fn', f: (body) => ({ kind: 'ok', text: `${markerIn(body)} summary`, delayMs: 60 }) });
    const before = local.requests.length;
    const child = spawn(process.execPath, [...NODE_ARGS, 'experiment', 'run', '--dataset', 'd50', '--variant', 'template=default,provider=local,model=qwen3:4b', '--concurrency', '2', '--db', fx.db], {
      cwd: fx.dir,
      env: envOf(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let runId = '';
    let err = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        runId ||= err.match(/run (exp_\S+) started/)?.[1] ?? '';
        const done = [...err.matchAll(/\] (\d+)\/50 done/g)].map((m) => Number(m[1]));
        if (done.length && done.at(-1)! >= 12 && child.exitCode === null) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('exit', () => resolve());
      setTimeout(() => reject(new Error(`no progress: ${err}`)), 60_000);
    });
    await new Promise<void>((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.on('exit', () => r())));
    expect(child.signalCode).toBe('SIGKILL');
    expect(runId).toMatch(/^exp_/);
    const firstCalls = local.requests.slice(before).filter((q) => q.method === 'POST');
    // What the killed process left: its finished items, committed as each finished.
    const ix = openIndex({ dbPath: fx.db, backgroundEstimates: false });
    const finished = ix.experiments.results(runId);
    expect(ix.experiments.run(runId)!.status).toBe('running');
    await ix.close();
    expect(finished.length).toBeGreaterThanOrEqual(12);
    expect(finished.length).toBeLessThan(50);
    expect(firstCalls.length).toBeGreaterThanOrEqual(finished.length);
    const markers = new Map<string, string>();
    for (const q of firstCalls) markers.set(markerIn(q.body)!, '');
    const mark = local.requests.length;
    const r = JSON.parse((await spillway(['experiment', 'run', '--resume', runId, '--db', fx.db, '--json'])).stdout);
    const resumedCalls = local.requests.slice(mark).filter((q) => q.method === 'POST').map((q) => markerIn(q.body)!);
    expect(r.runs[0]).toMatchObject({ runId, status: 'done', ok: 50, resumed: finished.length, called: 50 - finished.length });
    expect(resumedCalls).toHaveLength(50 - finished.length);
    expect(new Set(resumedCalls).size).toBe(resumedCalls.length);
    // No finished item was asked for again: its summary names its marker, and none of those markers came back.
    const finishedMarkers = new Set(finished.map((f) => f.summary!.split(' ')[0]));
    expect(finishedMarkers.size).toBe(finished.length);
    expect(resumedCalls.filter((m) => finishedMarkers.has(m))).toEqual([]);
  }, 180_000);

  it('clear errors: an unknown dataset, a bad variant, a missing index, an unknown run', async () => {
    const fail = (args: string[]) => spillway(args).then(() => ({ code: 0, stderr: '' }), (e: { code: number; stderr: string }) => e);
    expect(await fail(['experiment', 'run', '--dataset', 'nope', '--variant', 'template=default,provider=structural', '--db', fx.db])).toMatchObject({ code: 1, stderr: expect.stringMatching(/no dataset "nope"/) });
    expect(await fail(['experiment', 'run', '--dataset', 'd50', '--variant', 'provider=structural', '--db', fx.db])).toMatchObject({ code: 2, stderr: expect.stringMatching(/a variant needs template=NAME/) });
    expect(await fail(['experiment', 'run', '--dataset', 'd50', '--variant', 'template=default,provider=magic', '--db', fx.db])).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown provider "magic"/) });
    expect(await fail(['experiment', 'run', '--dataset', 'd50', '--variant', 'template=nosuch,provider=structural', '--db', fx.db])).toMatchObject({ code: 2, stderr: expect.stringMatching(/template "nosuch"/) });
    expect(await fail(['experiment', 'run', '--filter', 'size=3', '--variant', 'template=default,provider=structural', '--db', fx.db])).toMatchObject({ code: 2, stderr: expect.stringMatching(/not a filter: "size=3"/) });
    expect(await fail(['experiment', 'list', '--db', path.join(fx.dir, 'none', 'x.sqlite')])).toMatchObject({ code: 1, stderr: expect.stringMatching(/no index at .*x\.sqlite: run spillway index DIR first/) });
    expect(await fail(['experiment', 'show', 'exp_nope', '--db', fx.db])).toMatchObject({ code: 1, stderr: expect.stringMatching(/no run "exp_nope"/) });
    expect(fs.existsSync(path.join(fx.dir, 'none'))).toBe(false);
  }, 120_000);

  it('a filter run offline with the structural summarizer saves its dataset and shows each item', async () => {
    const r = JSON.parse((await spillway(['experiment', 'run', '--filter', 'tool=Grep', '--sample', '5', '--seed', '2', '--variant', 'template=default,provider=structural,focus=call', '--db', fx.db, '--json'])).stdout);
    expect(r.dataset).toMatchObject({ name: expect.stringMatching(/^filter-/), items: 5 });
    expect(r.runs[0]).toMatchObject({ status: 'done', ok: 5, called: 5 });
    const show = (await spillway(['experiment', 'show', r.runs[0].runId, '--db', fx.db])).stdout;
    expect(show).toMatch(/5\/5 item\(s\) with a result, 0 failed/);
    expect(show.match(/anchors \d/g)).toHaveLength(5);
  }, 120_000);
});
