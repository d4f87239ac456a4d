import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeContent } from '../../src/service/heavy.js';

/**
 * The Analyse view showed the guard's 570,045 beside the table's 572,041 with nothing saying which
 * was which (issue 29). The analysis now carries the guard's one figure, the one its message states,
 * so the view can name it beside the table's counts.
 */
describe('analyze: the decision carries the figure its message states', () => {
  it('every "~N tokens" in the message is the decision estimate, under its profile', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-analyze-figure-'));
    const lines: string[] = [];
    for (let i = 0; i < 30_000; i++) lines.push(`2026-12-05T10:${String(i % 60).padStart(2, '0')}:00Z INFO request ${i * 17} served by node-${i % 11} in ${i % 300} ms`);
    const r = await analyzeContent(Buffer.from(lines.join('\n')), { name: 'big.log', sessionPath: path.join(dir, 'scratch'), limitTokens: 10_000, profile: 'claude' });
    expect(r.decision.action).toBe('spill');
    const e = r.decision.estimate!;
    expect(e).toMatchObject({ profile: 'claude' });
    const figures = [...r.decision.message!.matchAll(/~([\d,]+) tokens/g)].map((m) => Number(m[1]!.replace(/,/g, '')));
    expect(figures.length).toBeGreaterThan(0);
    for (const n of figures) expect(n).toBe(e.tokens);
  });
});
