import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CLAUDE_CORRECTION_ENV,
  calibrated,
  chars4,
  claudeCorrectionFor,
  claudeCorrectionFromEnv,
  countExact,
  craftDensity,
  countsOf,
  describeTokens,
  estimateTokens,
  parseClaudeCorrection,
} from '../../src/pipeline/estimate/internal.js';
import type { DensityShares as ContractDensityShares } from '../../src/service/contract.js';

const NM = path.resolve(import.meta.dirname, '../../node_modules');
const b64 = (n: number) => fs.readFileSync(path.join(NM, 'tiktoken/lite/tiktoken_bg.wasm')).subarray(0, n).toString('base64');

describe('chars4', () => {
  it('is ceil(chars / 4)', () => {
    expect(chars4('')).toBe(0);
    expect(chars4('abc')).toBe(1);
    expect(chars4('abcd')).toBe(1);
    expect(chars4('abcde')).toBe(2);
  });
});

describe('craft-density (the published craft-agents rule)', () => {
  it('is ceil(len/4) under 20,000 chars, even for pure base64', () => {
    const t = b64(16_000).slice(0, 19_999);
    expect(t.length).toBe(19_999);
    expect(craftDensity(t)).toBe(Math.ceil(19_999 / 4));
  });

  it('uses len/1.5 from 20,000 chars when runs of 60+ [A-Za-z0-9+/=] cover at least 70%', () => {
    const t = b64(15_000).slice(0, 20_000);
    expect(craftDensity(t)).toBe(Math.ceil(20_000 / 1.5));
    // exactly 70% covered by 60-char runs, the rest prose-like separators
    const run = 'A'.repeat(70);
    const sep = ' '.repeat(30);
    const mixed = (run + sep).repeat(200); // 20,000 chars, 70% in runs
    expect(mixed.length).toBe(20_000);
    expect(craftDensity(mixed)).toBe(Math.ceil(20_000 / 1.5));
  });

  it('stays at len/4 when coverage is below 70% or runs are shorter than 60', () => {
    const below = ('A'.repeat(69) + ' '.repeat(31)).repeat(200);
    expect(craftDensity(below)).toBe(Math.ceil(20_000 / 4));
    const shortRuns = ('A'.repeat(59) + ' ').repeat(400); // 24,000 chars, 98% base64 chars, runs of 59
    expect(craftDensity(shortRuns)).toBe(Math.ceil(24_000 / 4));
    const longRuns = ('A'.repeat(60) + ' ').repeat(400);
    expect(craftDensity(longRuns)).toBe(Math.ceil(longRuns.length / 1.5));
  });
});

describe('estimateTokens / describeTokens', () => {
  it('returns { tokens, strategy, profile, exact } with calibrated and o200k by default', () => {
    const e = estimateTokens('hello world');
    expect(e).toMatchObject({ strategy: 'calibrated', profile: 'o200k', exact: false });
    expect(Number.isInteger(e.tokens) && e.tokens > 0).toBe(true);
  });

  it('refuses exact strategies synchronously and unknown names with clear errors', () => {
    expect(() => estimateTokens('x', { strategy: 'o200k' })).toThrow(/countTokens/);
    expect(() => estimateTokens('x', { strategy: 'nope' as never })).toThrow(/unknown strategy/);
    expect(() => estimateTokens('x', { profile: 'gpt2' as never })).toThrow(/unknown profile/);
  });

  it('describeTokens gives every cheap strategy, calibrated per profile', async () => {
    const text = fs.readFileSync(path.join(NM, 'typescript/lib/ja/diagnosticMessages.generated.json'), 'utf8').slice(0, 30_000);
    const o = countsOf(await describeTokens(text, { profile: 'o200k', check: false })) as Record<string, number>;
    const c = countsOf(await describeTokens(text, { profile: 'cl100k', check: false })) as Record<string, number>;
    expect(Object.keys(o).sort()).toEqual(['calibrated', 'chars4', 'craft-density']);
    expect(o.chars4).toBe(chars4(text));
    expect(o['craft-density']).toBe(craftDensity(text));
    expect(o.calibrated).toBe(calibrated(text, 'o200k'));
    // Japanese costs more in cl100k than in o200k: the profiles must differ the right way
    expect(c.calibrated).toBeGreaterThan(o.calibrated!);
  });

  it('prices base64 far above chars/4, the failure the issue is about', async () => {
    const t = b64(30_000);
    const exact = await countExact(t, 'o200k');
    expect(chars4(t) / exact).toBeLessThan(0.5);
    expect(Math.abs(calibrated(t, 'o200k') / exact - 1)).toBeLessThan(0.1);
  });
});

describe('claude correction factor', () => {
  const text = 'The quick brown fox jumps over the lazy dog. '.repeat(50);

  it('multiplies the claude profile only, from the option or the env var', () => {
    const base = estimateTokens(text, { profile: 'claude' });
    const corr = estimateTokens(text, { profile: 'claude', claudeCorrection: 1.25 });
    expect(corr.tokens).toBe(Math.ceil(base.tokens * 1.25));
    expect(corr.correction).toBe(1.25);
    expect(estimateTokens(text, { profile: 'o200k', claudeCorrection: 1.25 }).tokens).toBe(estimateTokens(text).tokens);
    // the estimator reads no variable: the edges turn the env's value into the option
    expect(claudeCorrectionFor({})).toBe(1);
    expect(claudeCorrectionFromEnv({ [CLAUDE_CORRECTION_ENV]: '1.3' })).toBe(1.3);
    // a broken env value is ignored (the guard must not fail on it); a broken option is an error
    expect(claudeCorrectionFromEnv({ [CLAUDE_CORRECTION_ENV]: 'abc' })).toBeUndefined();
    expect(claudeCorrectionFromEnv({})).toBeUndefined();
    expect(() => parseClaudeCorrection('0')).toThrow(/between/);
    expect(() => estimateTokens(text, { profile: 'claude', claudeCorrection: Number.NaN })).toThrow(/between/);
  });
});

const densityShares = async (text: string) => (await describeTokens(text, { check: false })).density;

describe('density shares (describeTokens)', () => {
  const keys = (x: ContractDensityShares) => Object.keys(x).sort();

  it('has exactly the contract fields and sums to 1', async () => {
    const text = '{"id":"550e8400-e29b-41d4-a716-446655440000","n":12345,"s":"héllo 世界"}\n';
    const d = await densityShares(text);
    expect(keys(d)).toEqual(['base64', 'cjk', 'digits', 'hex', 'letters', 'otherNonAscii', 'punctuation', 'uuid', 'whitespace']);
    const sum = Object.values(d).reduce((a, b) => a + b, 0);
    expect(sum).toBeCloseTo(1, 9);
    expect(d.uuid).toBeCloseTo(36 / text.length, 9);
    expect(d.cjk).toBeGreaterThan(0);
    expect(d.otherNonAscii).toBeGreaterThan(0);
    expect(Object.values(await densityShares('')).every((v) => v === 0)).toBe(true);
  });

  it('sees base64 in a data URL and hex in a hash list', async () => {
    const png = fs.readFileSync(path.join(NM, 'app-builder-lib/templates/icons/electron-linux/256x256.png')).toString('base64');
    expect((await densityShares(`data:image/png;base64,${png}`)).base64).toBeGreaterThan(0.95);
    const hashes = Array.from({ length: 50 }, (_, i) => `${i}\t${(i * 2654435761).toString(16).padStart(8, '0').repeat(8)}`).join('\n');
    expect((await densityShares(hashes)).hex).toBeGreaterThan(0.8);
  });
});
