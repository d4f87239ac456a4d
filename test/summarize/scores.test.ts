import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { estimateTokens } from '../../src/pipeline/index.js';
import {
  anchorRecall,
  compression,
  costAndLatency,
  inventedAnchors,
  readBackRecall,
  scoreRuns,
  scoreSummary,
  type ReadBackEvidence,
  type SummaryScores,
} from '../../src/summarize/index.js';

/** A payment service's log: the fixture of anchor recall and invented anchors (answers counted by hand in the comments). */
const LOG = [
  '2026-12-05 INFO  server started on port 8080', //                                                      1
  '2026-12-05 ERROR payment failed for order 12,345: HTTP 502 Bad Gateway from https://pay.example.com/charge', // 2
  '2026-12-05 ERROR payment retry 3 of 5 failed: ECONNRESET', //                                          3
  '2026-12-05 INFO  request took 250ms', //                                                               4
].join('\n');

describe('anchor recall (fixture, counted by hand)', () => {
  it('over the lines that match the focus: 3 of 5 anchors held', () => {
    // Focus "payment failures" -> stems `payment`, `fail`: lines 2 and 3 match, 1 and 4 do not.
    // Their distinct anchors: 2026-12-05, 12345, HTTP 502, https://pay.example.com/charge, ECONNRESET (3 and 5 are lone digits).
    // The summary holds 12345 (as written `12345`), HTTP 502 and ECONNRESET; not the date, and the host alone is not the URL.
    const summary = 'Payment for order 12345 failed twice: HTTP 502 from pay.example.com, then ECONNRESET.';
    const r = anchorRecall(LOG, summary, 'payment failures');
    expect(r).toMatchObject({ scope: 'focus', lines: 2, anchors: 5, held: 3, score: 0.6 });
    expect(r.missing.map((a) => a.text).sort()).toEqual(['2026-12-05', 'https://pay.example.com/charge']);
  });

  it('with no focus, over every line: 3 of 7', () => {
    // Lines 1 and 4 add 8080 and 250.
    const r = anchorRecall(LOG, 'Payment for order 12345 failed twice: HTTP 502 from pay.example.com, then ECONNRESET.');
    expect(r).toMatchObject({ scope: 'whole', lines: 4, anchors: 7, held: 3 });
    expect(r.score).toBeCloseTo(3 / 7, 12);
  });

  it('a focus that matches no line falls back to the whole payload, and says so', () => {
    expect(anchorRecall(LOG, '', 'kubernetes')).toMatchObject({ scope: 'whole', anchors: 7, held: 0, score: 0 });
  });

  it('a payload without anchors has nothing to recall: null, not 0 or 1', () => {
    expect(anchorRecall('all good here\nnothing to see', 'fine').score).toBeNull();
  });
});

describe('invented anchors (fixture, counted by hand)', () => {
  it('a summary that invents a number: 1,250 is named, 1 of 3 anchors', () => {
    // Summary anchors: 12345 (in the payload as 12,345), HTTP 502 (in it), 1250 (not: the payload says 250). `7` is a lone digit.
    const r = inventedAnchors(LOG, 'Payment for order 12,345 failed with HTTP 502; 7 retries; 1,250 ms lost.');
    expect(r.count).toBe(1);
    expect(r.summaryAnchors).toBe(3);
    expect(r.share).toBeCloseTo(1 / 3, 12);
    expect(r.invented.map((a) => [a.kind, a.text])).toEqual([['number', '1,250']]);
  });

  it('an invented path, hash and error code are named; a faithful summary invents none', () => {
    const r = inventedAnchors(LOG, 'See /var/log/pay.log at commit 9fe2c1a: ETIMEDOUT, HTTP 502.');
    expect(r.invented.map((a) => a.text)).toEqual(['/var/log/pay.log', '9fe2c1a', 'ETIMEDOUT']);
    expect(inventedAnchors(LOG, 'Order 12345 got HTTP 502 from https://pay.example.com/charge, then ECONNRESET.')).toMatchObject({ count: 0, share: 0, summaryAnchors: 4 });
  });

  it('a number written inside another anchor of the payload is not invented (404 of HTTP 404)', () => {
    expect(inventedAnchors('GET /users -> HTTP 404 Not Found', 'The users endpoint returned 404.').count).toBe(0);
  });

  it("a size of the payload a summary states is measured, not invented; line references and the estimator's names are no anchors", () => {
    // LOG: lines of 44, 106, 56 and 35 chars and 3 newlines: 244 chars, all ASCII so 244 bytes; the structural
    // summary's header states such sizes.
    expect(LOG.length).toBe(244);
    const r = inventedAnchors(LOG, 'Log, 244 bytes, 4 lines, ~1,000 tokens (calibrated, o200k). L2: order 12,345; L3: 4,096 retries.', { payloadTokens: 1000 });
    expect(r.measured.map((a) => a.text)).toEqual(['244', '1,000']);
    expect(r.invented.map((a) => a.text)).toEqual(['4,096']);
    // 244, 1000, 12345, 4096: `4` is a lone digit, L2/L3 line references, calibrated/o200k the estimator's words.
    expect(r).toMatchObject({ count: 1, summaryAnchors: 4 });
  });

  it('a summary without anchors invents none, and its share is null', () => {
    expect(inventedAnchors(LOG, 'Payments failed.')).toEqual({ count: 0, share: null, summaryAnchors: 0, invented: [], measured: [] });
  });
});

/** A build log the agent read back twice: lines 2–3 by line range, and `grep ERROR` (lines 2 and 5). */
const BUILD = [
  'step 1/6 restore cache',
  'ERROR src/db/pool.ts:88 connection timeout after 30,000 ms (ETIMEDOUT)',
  'the pool was exhausted while migrations ran',
  'step 4/6 run tests',
  'ERROR 2 tests failed: test_login_redirect, test_logout',
  'done in 95.2 s',
];
const lines = (...ns: number[]) => ns.map((n) => ({ n, text: BUILD[n - 1]! }));

describe('read-back recall (fixture, counted by hand)', () => {
  const readBacks: ReadBackEvidence[] = [
    { label: 'lines 2–3', lines: lines(2, 3) },
    { label: 'grep ERROR', lines: lines(2, 5) },
  ];
  // Line 2's anchors (src/db/pool.ts, 88, 30000, ETIMEDOUT) are all in the summary: held.
  // Line 3 has no anchor and is not quoted: not held. Line 5 is quoted word for word (case and spaces aside): held.
  const summary = 'Timeout in src/db/pool.ts line 88 after 30000 ms (ETIMEDOUT). error 2 tests failed:  test_login_redirect, test_logout';

  it('2 of the 3 distinct lines read (line 2 read twice counts once)', () => {
    const r = readBackRecall(summary, readBacks)!;
    expect(r).toMatchObject({ lines: 3, held: 2, unscored: 0 });
    expect(r.score).toBeCloseTo(2 / 3, 12);
    expect(r.perReadBack.map((p) => [p.label, p.score, p.lines, p.held])).toEqual([
      ['lines 2–3', 0.5, 2, 1],
      ['grep ERROR', 1, 2, 2],
    ]);
    expect(r.perReadBack[0]!.missing).toEqual([{ n: 3, text: BUILD[2] }]);
    // Anchors of lines 2, 3, 5: src/db/pool.ts, 88, 30000, ETIMEDOUT, test_login_redirect, test_logout: all held.
    expect(r).toMatchObject({ anchors: 6, anchorsHeld: 6, anchorScore: 1 });
  });

  it('a summary that drops the only line the agent needed: 0 for it', () => {
    const needed: ReadBackEvidence[] = [{ label: 'lines 2–2', lines: lines(2) }];
    const r = readBackRecall('Build ran 6 steps; 2 tests failed: test_login_redirect, test_logout. Done in 95.2 s.', needed)!;
    expect(r).toMatchObject({ score: 0, lines: 1, held: 0, anchors: 4, anchorsHeld: 0, anchorScore: 0 });
    expect(r.perReadBack[0]).toMatchObject({ label: 'lines 2–2', score: 0, missing: [{ n: 2, text: BUILD[1] }] });
  });

  it('a line with some of its anchors is not held; its anchors count one by one', () => {
    const r = readBackRecall('pool.ts timed out (ETIMEDOUT)', [{ label: 'line 2', lines: lines(2) }])!;
    // pool.ts is a tail of src/db/pool.ts, ETIMEDOUT is there; 88 and 30000 are not.
    expect(r).toMatchObject({ score: 0, anchors: 4, anchorsHeld: 2, anchorScore: 0.5 });
  });

  it('a read-back whose lines cannot be told is counted, not scored; none at all is null', () => {
    const r = readBackRecall(summary, [{ label: 'whole file', lines: null }])!;
    expect(r).toMatchObject({ score: null, lines: 0, unscored: 1, anchorScore: null });
    expect(r.perReadBack[0]).toMatchObject({ score: null });
    expect(readBackRecall(summary, [])).toBeNull();
    expect(readBackRecall(summary, undefined)).toBeNull();
  });

  it('blank lines read are not evidence', () => {
    expect(readBackRecall('x', [{ label: 'blank', lines: [{ n: 1, text: '   ' }] }])).toMatchObject({ score: null, lines: 0 });
  });
});

describe('compression (the project estimator, profile named)', () => {
  it('summary tokens ÷ the given payload figure, both for the claude profile', () => {
    const summary = 'Order 12345 failed with HTTP 502.';
    const expected = estimateTokens(summary, { profile: 'claude', strategy: 'calibrated' }).tokens;
    const r = compression(LOG, summary, { profile: 'claude', payloadTokens: 400 });
    expect(r).toEqual({ ratio: expected / 400, summaryTokens: expected, payloadTokens: 400, strategy: 'calibrated', profile: 'claude', payloadCount: 'given' });
  });

  it('without a figure, both are counted the same way (o200k by default); the summary of itself is 1', () => {
    expect(compression(LOG, LOG)).toMatchObject({ ratio: 1, profile: 'o200k', payloadCount: 'calibrated' });
    expect(compression(LOG, '').ratio).toBe(0);
    expect(compression('', 'x').ratio).toBeNull();
  });
});

describe('cost and latency (from the run record)', () => {
  it('passes what the run measured; no price is null, not 0', () => {
    expect(costAndLatency({ costUsd: 0.0012, ms: 850, inputTokens: 5000, outputTokens: 120 })).toEqual({ usd: 0.0012, latencyMs: 850, inputTokens: 5000, outputTokens: 120 });
    expect(costAndLatency({ ms: 3, inputTokens: 0, outputTokens: 0 })).toEqual({ usd: null, latencyMs: 3, inputTokens: 0, outputTokens: 0 });
    expect(costAndLatency({ costUsd: Number.NaN, ms: -1 })).toEqual({ usd: null, latencyMs: null, inputTokens: null, outputTokens: null });
    expect(costAndLatency(undefined).usd).toBeNull();
  });
});

describe('scoreSummary: all at once, any input', () => {
  const unit = (v: number | null) => v === null || (Number.isFinite(v) && v >= 0 && v <= 1);
  const check = (s: SummaryScores) => {
    expect(unit(s.anchorRecall.score)).toBe(true);
    expect(unit(s.inventedAnchors.share)).toBe(true);
    expect(s.inventedAnchors.count).toBeGreaterThanOrEqual(0);
    if (s.readBackRecall) {
      expect(unit(s.readBackRecall.score)).toBe(true);
      expect(unit(s.readBackRecall.anchorScore)).toBe(true);
      for (const p of s.readBackRecall.perReadBack) expect(unit(p.score)).toBe(true);
    }
    const r = s.compression.ratio;
    expect(r === null || (Number.isFinite(r) && r >= 0)).toBe(true);
  };

  it('empty inputs are defined', () => {
    expect(scoreSummary({ payload: '', summary: '' })).toEqual({
      readBackRecall: null,
      anchorRecall: { score: null, scope: 'whole', lines: 0, anchors: 0, held: 0, missing: [] },
      inventedAnchors: { count: 0, share: null, summaryAnchors: 0, invented: [], measured: [] },
      compression: { ratio: null, summaryTokens: 0, payloadTokens: 0, strategy: 'calibrated', profile: 'o200k', payloadCount: 'calibrated' },
      cost: { usd: null, inputTokens: null, outputTokens: null, latencyMs: null },
    });
  });

  /** Text that is mostly anchors and near-anchors, so the rules and the equivalences are exercised, not skipped. */
  const anchorish = fc
    .array(
      fc.oneof(
        fc.constantFrom('12,345', '-42', '1.50', 'HTTP 404', 'status: 5', 'ENOENT', 'E1234', 'a1b2c3d4e5', 'v1.2.3', '2026-12-05T01:02:03Z', 'https://x.io/a)', '/var/log/a.log', 'src/a.ts:12', 'test_x', '× a > b 3ms', '`q`', 'os.path', '--flag', '\n', ' ', '.', ',', '::', '/', '`'),
        fc.string({ maxLength: 12 }),
        fc.string({ unit: 'grapheme', maxLength: 6 }),
      ),
      { maxLength: 60 },
    )
    .map((parts) => parts.join(''));

  it('never throws, every share in [0, 1] or null, compression finite', () => {
    fc.assert(
      fc.property(anchorish, anchorish, fc.option(fc.string({ maxLength: 30 }), { nil: undefined }), (payload, summary, focus) => {
        const n = payload.split('\n').length;
        const readBacks: ReadBackEvidence[] = [
          { label: 'a', lines: payload.split('\n').map((text, i) => ({ n: i + 1, text })) },
          { label: 'b', lines: null },
          { label: 'c', lines: [{ n: Math.max(1, n - 1), text: summary }] },
        ];
        check(scoreSummary({ payload, summary, focus, readBacks }));
      }),
      { numRuns: 300 },
    );
  });

  it('a summary that is its payload holds every anchor and invents none', () => {
    fc.assert(
      fc.property(anchorish, (text) => {
        const s = scoreSummary({ payload: text, summary: text, readBacks: [{ label: 'all', lines: text.split('\n').map((t, i) => ({ n: i + 1, text: t })) }] });
        expect(s.anchorRecall.score === null || s.anchorRecall.score === 1).toBe(true);
        expect(s.inventedAnchors.count).toBe(0);
        expect(s.readBackRecall!.score === null || s.readBackRecall!.score === 1).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('scoreRuns gives each run what scoreSummary gives it alone', () => {
    fc.assert(
      fc.property(anchorish, fc.array(fc.record({ summary: anchorish, focus: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }) }), { maxLength: 3 }), fc.option(fc.nat(), { nil: undefined }), (payload, runs, payloadTokens) => {
        const readBacks: ReadBackEvidence[] = [{ label: 'l1', lines: [{ n: 1, text: payload.split('\n')[0]! }] }];
        const together = scoreRuns({ payload, runs, readBacks, payloadTokens, profile: 'claude' });
        expect(together).toEqual(runs.map((r) => scoreSummary({ payload, summary: r.summary, focus: r.focus, readBacks, payloadTokens, profile: 'claude' })));
      }),
      { numRuns: 100 },
    );
    expect(scoreRuns({ payload: 'x', runs: [] })).toEqual([]);
  });

  it('hostile values where strings and lists belong: never throws', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.anything(), fc.anything(), (payload, summary, focus, readBacks) => {
        check(scoreSummary({ payload, summary, focus, readBacks } as never));
      }),
      { numRuns: 200 },
    );
    expect(() => scoreSummary(undefined as never)).not.toThrow();
    expect(() => readBackRecall('x', [null, { label: 3, lines: [null, { n: 'x' }] }] as never)).not.toThrow();
  });

  it('hostile lines stay linear: 1 MB of each in seconds (a quadratic pattern would take hours)', () => {
    const MB = 1 << 20;
    for (const line of [
      'status' + ' '.repeat(MB),
      '✓ ' + ' '.repeat(MB) + 'x',
      'a.'.repeat(MB / 2),
      '1'.repeat(MB) + 'x',
      '1.'.repeat(MB / 2),
      'ab/'.repeat(MB / 3),
      'exit' + ' '.repeat(MB),
      'HTTP' + ' '.repeat(MB),
      'E'.repeat(MB),
      'aB'.repeat(MB / 2),
    ]) {
      const t0 = performance.now();
      scoreSummary({ payload: line, summary: line.slice(0, 4000) });
      expect(performance.now() - t0, line.slice(0, 12)).toBeLessThan(5_000);
    }
  });
});
