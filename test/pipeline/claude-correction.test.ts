import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { guardLargeResult as pipelineGuard, normalizeGuardOptions } from '../../src/pipeline/index.js';
import * as root from '../../src/index.js';

/**
 * SPILLWAY_CLAUDE_CORRECTION is read at the edges (the package root, the CLI's and the hook's
 * settings) and travels down as `claudeCorrection`; the pipeline below reads no variable, so a
 * caller that gives it an `env` decides which correction applies.
 */
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-corr-'));
const text = 'Die Katze sitzt auf der Matte und schaut aus dem Fenster. '.repeat(3_000);
const saved = process.env.SPILLWAY_CLAUDE_CORRECTION;
afterEach(() => {
  if (saved === undefined) delete process.env.SPILLWAY_CLAUDE_CORRECTION;
  else process.env.SPILLWAY_CLAUDE_CORRECTION = saved;
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const spill = (opts: Parameters<typeof pipelineGuard>[1]) => pipelineGuard(text, { summarize: undefined, limitTokens: 2_000, profile: 'claude', ...opts });

describe('the claude correction travels as a value', () => {
  it('normalised options take it from the option, else from the env value given, else none', () => {
    expect(normalizeGuardOptions({ sessionPath: tmp, claudeCorrection: 1.5 }).claudeCorrection).toBe(1.5);
    expect(normalizeGuardOptions({ sessionPath: tmp, env: { SPILLWAY_CLAUDE_CORRECTION: '1.2' } }).claudeCorrection).toBe(1.2);
    expect(normalizeGuardOptions({ sessionPath: tmp, claudeCorrection: 1.5, env: { SPILLWAY_CLAUDE_CORRECTION: '1.2' } }).claudeCorrection).toBe(1.5);
    // nonsense never breaks a tool call: an option out of range gives way to the env's, a bad env value to none
    expect(normalizeGuardOptions({ sessionPath: tmp, claudeCorrection: 99, env: { SPILLWAY_CLAUDE_CORRECTION: '1.2' } }).claudeCorrection).toBe(1.2);
    expect(normalizeGuardOptions({ sessionPath: tmp, env: { SPILLWAY_CLAUDE_CORRECTION: 'lots' } }).claudeCorrection).toBeUndefined();
  });

  it("the guard's estimate carries the env's correction, and ignores the process's when given no env", async () => {
    process.env.SPILLWAY_CLAUDE_CORRECTION = '2';
    const plain = await spill({ sessionPath: path.join(tmp, 'plain') });
    const corrected = await spill({ sessionPath: path.join(tmp, 'env'), env: { SPILLWAY_CLAUDE_CORRECTION: '1.5' } });
    expect(plain?.estimate.correction).toBeUndefined();
    expect(corrected?.estimate.correction).toBe(1.5);
    expect(corrected!.estimate.tokens).toBe(Math.ceil(plain!.estimate.tokens * 1.5));
    // the sidecar's per-strategy counts use the same correction as the decision
    const meta = JSON.parse(fs.readFileSync(corrected!.metaPath!, 'utf8'));
    expect(meta.estimates[corrected!.estimate.strategy]).toBe(corrected!.estimate.tokens);
  });

  it("the package root fills it from the process's environment, for the guard and the estimate verbs", async () => {
    delete process.env.SPILLWAY_CLAUDE_CORRECTION;
    const before = root.estimateTokens(text, { profile: 'claude' });
    process.env.SPILLWAY_CLAUDE_CORRECTION = '1.25';
    const after = root.estimateTokens(text, { profile: 'claude' });
    expect(after.tokens).toBe(Math.ceil(before.tokens * 1.25));
    expect(root.estimateTokens(text, { profile: 'claude', claudeCorrection: 1 }).tokens).toBe(before.tokens);
    expect((await root.describeTokens(text, { profile: 'claude', check: false })).claudeCorrection).toBe(1.25);
    const g = await root.guardLargeResult(text, { sessionPath: path.join(tmp, 'root'), summarize: false, limitTokens: 2_000, profile: 'claude' });
    expect(g?.estimate.correction).toBe(1.25);
  });
});

describe("a guard's message names the profile it counted with", () => {
  it('profileOfMessage reads it back from real messages, exact, estimated or sampled', async () => {
    const { profileOfMessage } = await import('../../src/pipeline/index.js');
    const cases: Array<[string, Parameters<typeof pipelineGuard>[1]]> = [
      [text, { sessionPath: path.join(tmp, 'm1'), profile: 'claude', limitTokens: 2_000 }],
      [text.slice(0, 12_000), { sessionPath: path.join(tmp, 'm2'), profile: 'cl100k', limitTokens: 2_000 }],
      ['x'.repeat(60_000) + text, { sessionPath: path.join(tmp, 'm3'), profile: 'o200k', limitTokens: 2_000, strategy: 'o200k' }],
    ];
    for (const [input, opts] of cases) {
      const g = await pipelineGuard(input, opts);
      expect(profileOfMessage(g!.message)).toBe(opts.profile);
    }
    expect(profileOfMessage('a tool result that says (calibrated estimate, claude) in passing')).toBeUndefined();
  });
});
