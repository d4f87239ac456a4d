/** Comparisons (docs/experiments.md): per item deltas, aggregates, the largest regression first; answers computed by hand. */
import { describe, expect, it } from 'vitest';
import { compareRuns, runQueue, type RunResults } from '../../src/experiments/index.js';

/** A result with just the scores a comparison reads. */
function res(payloadId: string, s: { rb?: number | null; ar: number | null; inv?: number; share?: number | null; comp?: number } | 'error'): RunResults['results'][number] {
  if (s === 'error') return { n: 0, payloadId, status: 'error', error: 'provider HTTP 500', cached: false, finishedAt: '' };
  return {
    n: 0,
    payloadId,
    status: 'ok',
    cached: false,
    summary: `summary of ${payloadId}`,
    costUsd: 0.001,
    ms: 10,
    finishedAt: '',
    scores: {
      readBackRecall: s.rb === undefined || s.rb === null ? null : { score: s.rb },
      anchorRecall: { score: s.ar },
      inventedAnchors: { count: s.inv ?? 0, share: s.share ?? null },
      compression: { ratio: s.comp ?? 0.1 },
      cost: {},
    },
  };
}
const run = (id: string, results: RunResults['results']): RunResults => ({ run: { id, dataset: 'd', variant: { template: id }, budget: {}, status: 'done', createdAt: '' }, results });

describe('compareRuns', () => {
  const base = run('base', [res('a', { rb: 1, ar: 0.8 }), res('b', { ar: 0.5 }), res('c', { ar: 1, inv: 0, share: 0 }), res('d', { ar: 0.6 }), res('only-base', { ar: 1 })]);
  const cand = run('cand', [res('a', { rb: 0.5, ar: 0.8 }), res('b', { ar: 0.75 }), res('c', { ar: 1, inv: 1, share: 0.25 }), res('d', 'error'), res('only-cand', { ar: 1 })]);
  const c = compareRuns(base, [cand]).candidates[0]!;

  it('sorts by the largest regression first: a failure (kept nothing), a read-back line lost, an invented anchor; an improvement last', () => {
    expect(c.items.map((i) => [i.payloadId, i.worst])).toEqual([
      ['d', -0.6],
      ['a', -0.5],
      ['c', -0.25],
      ['b', 0.25],
    ]);
    expect(c.items[0]!.candidate).toMatchObject({ status: 'error', error: 'provider HTTP 500' });
    expect(c.regressed).toBe(3);
    expect(c.improved).toBe(1);
    expect(c.failed).toEqual({ baseline: 0, candidate: 1 });
    expect(c.onlyBaseline).toBe(1);
    expect(c.onlyCandidate).toBe(1);
  });

  it('aggregates each score over the items both sides have it: means, mean delta, regressions and improvements', () => {
    // anchor recall: a 0.8→0.8, b 0.5→0.75, c 1→1, d 0.6→0 (failed).
    expect(c.aggregate.anchorRecall).toEqual({ pairs: 4, baselineMean: 0.725, candidateMean: 0.6375, meanDelta: -0.0875, regressions: 1, improvements: 1, same: 2 });
    // read-back recall: only a was read back.
    expect(c.aggregate.readBackRecall).toEqual({ pairs: 1, baselineMean: 1, candidateMean: 0.5, meanDelta: -0.5, regressions: 1, improvements: 0, same: 0 });
    // invented anchors: a lower count is better, so one more is a regression.
    expect(c.aggregate.inventedAnchors).toMatchObject({ pairs: 3, meanDelta: 1 / 3, regressions: 1, improvements: 0, same: 2 });
  });
});

describe('runQueue', () => {
  it('runs at most `concurrency` jobs at once, in order, and a stop starts no further job', async () => {
    let running = 0;
    let peak = 0;
    const started: number[] = [];
    const out = await runQueue([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], {
      concurrency: 3,
      async work(i, _signal, control) {
        started.push(i);
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 5));
        running--;
        if (i === 4) control.stop('enough');
      },
    });
    expect(peak).toBe(3);
    expect(out).toEqual({ cancelled: false, stopped: 'enough', started: started.length });
    expect(started).toEqual([...started].sort((a, b) => a - b));
    expect(started.length).toBeLessThan(10);
  });
});
