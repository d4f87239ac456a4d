import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as pipelineLimits from '../../src/pipeline/limits.js';
import {
  CONTEXT_WINDOW_SHARE,
  DEFAULT_LIMIT_TOKENS,
  MIN_LIMIT_TOKENS,
  firstAbove,
  limitForContextWindow,
  sliderToTokens,
  overLimit,
  savings,
  sumReplays,
  tokensToSlider,
  configSnippet,
  type SizeRow,
} from '../../app/lib/tuner.js';
import { appendChunk, countNewlines, cutChunk, makeChunk, MAX_WINDOWS, prependChunk, prettyJson } from '../../app/components/viewer/windows.js';
import { formatBytes, formatDiff, formatTokens, formatTime } from '../../app/lib/format.js';
import { parseForTree } from '../../app/components/viewer/ParsedView.js';
import { densityReason, trustText } from '../../app/components/detail/EstimatesPanel.js';

const sizesArb = fc.array(fc.integer({ min: 0, max: 2_000_000 }), { maxLength: 300 }).map((ts) =>
  ts.sort((a, b) => a - b).map((tokens, i): SizeRow => ({ id: `p${i}`, tokens, tool: 't' })),
);

describe('limit tuner math', () => {
  it('uses the same context-window rule and constants as the guard', () => {
    expect(DEFAULT_LIMIT_TOKENS).toBe(pipelineLimits.DEFAULT_LIMIT_TOKENS);
    expect(MIN_LIMIT_TOKENS).toBe(pipelineLimits.MIN_LIMIT_TOKENS);
    expect(CONTEXT_WINDOW_SHARE).toBe(pipelineLimits.CONTEXT_WINDOW_SHARE);
    fc.assert(
      fc.property(fc.oneof(fc.constant(undefined), fc.constant(0), fc.integer({ min: -5, max: 3_000_000 })), (w) => {
        expect(limitForContextWindow(w)).toBe(pipelineLimits.limitForContextWindow(w));
      }),
    );
    expect(limitForContextWindow(200_000)).toBe(12_000);
    expect(limitForContextWindow(50_000)).toBe(5_000);
    expect(limitForContextWindow(8_000)).toBe(2_000);
  });

  it('counts payloads over a limit by size exactly like a brute-force pass', () => {
    fc.assert(
      fc.property(sizesArb, fc.integer({ min: 0, max: 2_100_000 }), (sizes, limit) => {
        expect(overLimit(sizes, limit)).toBe(sizes.filter((x) => x.tokens > limit).length);
      }),
    );
    expect(firstAbove([], 5)).toBe(0);
  });

  it('sums the replays of several sessions: tokens and dollars add, the peak is the largest; a saving can be negative', () => {
    const t = (sent: number, usd: number, peak: number) => ({ sentTokens: sent, cacheReadTokens: 0, costUsd: usd, peak, compactions: 1, replaced: 2, pending: 0 });
    const s = (a: number) => ({ sessionId: `s${a}`, name: `s${a}`, client: 'claude-code' as const, calls: 3, profile: 'claude' as const, prices: { input: 5, cacheWrite: 6.25, cacheRead: 0.5, output: 25 }, asRan: t(a, a, a), noGuard: t(2 * a, 2 * a, 2 * a), atLimit: t(3 * a, 3 * a, 3 * a) });
    const sum = sumReplays([s(10), s(20)]);
    expect(sum.noGuard).toEqual({ sentTokens: 60, cacheReadTokens: 0, costUsd: 60, peak: 40, compactions: 2, replaced: 4, pending: 0 });
    expect(savings(sum.noGuard, sum.atLimit)).toEqual({ tokens: -30, usd: -30 });
  });

  it('maps the slider on a log scale, monotonic, and one step always moves the value', () => {
    let prev = -1;
    for (let pos = 0; pos <= 1000; pos++) {
      const t = sliderToTokens(pos / 1000);
      expect(t).toBeGreaterThanOrEqual(prev);
      prev = t;
    }
    expect(sliderToTokens(0)).toBe(100);
    expect(sliderToTokens(1)).toBe(1_000_000);
    for (const t of [150, 2_000, 12_000, 64_000, 900_000]) {
      const pos = Math.round(tokensToSlider(t) * 1000);
      expect(sliderToTokens((pos - 1) / 1000)).toBeLessThan(sliderToTokens((pos + 1) / 1000));
      expect(Math.abs(sliderToTokens(pos / 1000) - t) / t).toBeLessThan(0.02);
    }
  });

  it('writes a config a guard can read back', () => {
    const cfg = JSON.parse(configSnippet({ limitTokens: 5000, strategy: 'calibrated', profile: 'o200k', contextWindowTokens: 50_000 }));
    expect(cfg).toEqual({ limitTokens: 5000, strategy: 'calibrated', profile: 'o200k', contextWindowTokens: 50_000 });
  });
});

describe('viewer windows', () => {
  it('keeps the line under the cursor when windows are appended and dropped', () => {
    let chunks = [makeChunk(0, 10, 'a\nb\nc\nd\ne\n')];
    let removed = 0;
    for (let i = 1; i <= 5; i++) {
      const r = appendChunk(chunks, makeChunk(i * 10, i * 10 + 10, `${i}\n${i}\n`));
      chunks = r.chunks;
      removed += r.linesRemovedAtTop;
    }
    expect(chunks).toHaveLength(MAX_WINDOWS);
    expect(chunks[0]!.start).toBe(30);
    // Dropped: the 5-line first window and two 2-line windows.
    expect(removed).toBe(5 + 2 + 2);
    const p = prependChunk(chunks, makeChunk(20, 30, 'x\ny\nz\n'));
    expect(p.linesAddedAtTop).toBe(3);
    expect(p.chunks.map((c) => c.start)).toEqual([20, 30, 40]);
  });

  it('cuts a window at a character boundary and reports its true UTF-8 length', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 400 }), fc.integer({ min: 1, max: 300 }), (text, max) => {
        const c = makeChunk(1000, 1000 + Buffer.byteLength(text), text);
        const cut = cutChunk(c, max);
        expect(text.startsWith(cut.text)).toBe(true);
        expect(cut.end - cut.start).toBe(Buffer.byteLength(cut.text));
        expect(cut.text).not.toMatch(/[\ud800-\udbff]$/);
        expect(cut.newlines).toBe(countNewlines(cut.text));
      }),
    );
  });

  it('pretty-prints only small one-line JSON', () => {
    expect(prettyJson('{"a":[1,2]}')).toBe('{\n  "a": [\n    1,\n    2\n  ]\n}');
    expect(prettyJson('not json')).toBeNull();
    expect(prettyJson('{"a":\n1,\n"b":\n2,\n"c":3}')).toBeNull();
  });

  it('parses JSON and NDJSON for the tree, and refuses other text', () => {
    expect(parseForTree('{"a":1}')?.value).toEqual({ a: 1 });
    expect(parseForTree('{"a":1}\n{"a":2}\n')?.value).toEqual([{ a: 1 }, { a: 2 }]);
    expect(parseForTree('hello\nworld')).toBeNull();
  });
});

describe('formatting', () => {
  it('formats sizes, tokens and differences compactly', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(100 * 1024 * 1024)).toBe('100 MB');
    expect(formatTokens(950)).toBe('950');
    expect(formatTokens(12_345)).toBe('12k');
    expect(formatTokens(26_643_886)).toBe('27M');
    expect(formatDiff(110, 100)).toBe('+10.0%');
    expect(formatDiff(90, 100)).toBe('−10.0%');
    const now = new Date(2026, 10, 30, 12, 0, 0);
    expect(formatTime(new Date(2026, 10, 30, 8, 5, 9).toISOString(), now)).toBe('08:05:09');
    expect(formatTime(new Date(2026, 10, 1, 8, 5, 9).toISOString(), now)).toBe('Nov 01 08:05');
    expect(formatTime(new Date(2025, 0, 2).toISOString(), now)).toBe('2025-01-02');
  });

  it('explains density from the dense shares', () => {
    expect(densityReason({ base64: 0.4, hex: 0, uuid: 0, cjk: 0.1, otherNonAscii: 0, digits: 0.01, punctuation: 0.2, whitespace: 0.1, letters: 0.19 })).toMatch(/^Dense: 40% base64, 10% CJK\./);
    expect(densityReason({ base64: 0, hex: 0, uuid: 0, cjk: 0, otherNonAscii: 0, digits: 0.01, punctuation: 0.1, whitespace: 0.15, letters: 0.74 })).toMatch(/prose/);
  });

  it('says how far to trust the calibrated estimate: the margin, or what lies outside the corpus', () => {
    const calm = trustText({ margin: 0.27, riskTokens: 40, parts: [{ label: 'emoji', tokens: 40 }] }, 10_000, 'o200k');
    expect(calm.risky).toBe(false);
    expect(calm.text).toMatch(/±27%/);
    const greek = trustText(
      { margin: 0.27, riskTokens: 9_000, parts: [{ label: 'Greek and Cyrillic', tokens: 8_000 }, { label: 'control characters', tokens: 1_000 }] },
      6_000,
      'cl100k',
    );
    expect(greek.risky).toBe(true);
    expect(greek.text).toMatch(/±9,000 tokens/);
    expect(greek.text).toMatch(/Greek and Cyrillic \(±8,000\), control characters \(±1,000\)/);
  });
});
