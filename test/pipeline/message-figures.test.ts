import { describe, expect, it } from 'vitest';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { createSummarizer } from '../../src/summarize/index.js';
import { tmpSession } from './helpers.js';

/**
 * One message, one figure (issue 29): the lockfile spill said "~114,517 tokens (calibrated
 * estimate, claude)" and its own summary "~109,572 (calibrated, o200k)". Every token count a
 * spill's message states about the payload is the guard's one estimate, under its one profile.
 */

/** A package-lock.json of `n` packages, as npm writes it. */
function lockfile(n: number): string {
  const packages: Record<string, unknown> = { '': { name: 'app', version: '1.0.0', dependencies: {} } };
  for (let i = 0; i < n; i++) {
    packages[`node_modules/pkg-${i}`] = {
      version: `${i % 7}.${i % 13}.${i % 5}`,
      resolved: `https://registry.npmjs.org/pkg-${i}/-/pkg-${i}-${i % 7}.${i % 13}.${i % 5}.tgz`,
      integrity: `sha512-${Buffer.from(`pkg-${i}-integrity-${i * 7919}`).toString('base64')}`,
      license: i % 3 ? 'MIT' : 'ISC',
      dependencies: i > 2 ? { [`pkg-${i - 1}`]: `^${(i - 1) % 7}.0.0` } : undefined,
    };
  }
  return JSON.stringify({ name: 'app', version: '1.0.0', lockfileVersion: 3, requires: true, packages }, null, 2);
}

function logText(lines: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(`2026-12-05T09:${String(i % 60).padStart(2, '0')}:00Z ${i % 17 ? 'INFO' : 'ERROR'} worker-${i % 9} handled request ${i * 31} in ${i % 400} ms`);
  return out.join('\n');
}

/** Every "~N tokens" the message states, with the words that follow it. */
function tokenFigures(message: string): { n: number; at: string }[] {
  return [...message.matchAll(/~([\d,]+) tokens(.{0,40})/g)].map((m) => ({ n: Number(m[1]!.replace(/,/g, '')), at: m[0] }));
}

describe('a message states one figure under one profile', () => {
  for (const profile of ['claude', 'o200k'] as const) {
    it(`a spill and its structural summary state the guard's estimate (${profile})`, async () => {
      const session = tmpSession();
      const summarize = createSummarizer({ provider: 'structural' });
      for (const [name, text] of [['lockfile', lockfile(3_000)], ['log', logText(20_000)]] as const) {
        const r = (await guardLargeResult(text, { sessionPath: session, toolName: 'Bash', limitTokens: 12_000, profile, summarize }))!;
        expect(r.action, name).toBe('spill');
        expect(r.summary?.status, name).toBe('ok');
        const figures = tokenFigures(r.message);
        expect(figures.length, `${name}: the header and the summary each state one`).toBeGreaterThanOrEqual(2);
        for (const f of figures) expect(f.n, `${name}: ${f.at}`).toBe(r.estimate.tokens);
        // and under one profile
        for (const m of r.message.matchAll(/~[\d,]+ tokens \(([^)]*)\)/g)) expect(m[1], name).toContain(profile);
      }
    });
  }
});
