/**
 * `spillway estimate --calibrate-from`: the claude correction fitted on the API's own usage in
 * the real Claude Code 2.1.328 transcripts (fixtures/timeline/SOURCES.md). Their double counted
 * usage with the public (legacy) Claude tokenizer, so the true correction is 1: the fit must land
 * near it, beat a wrong correction, and leave out the run whose double inflated every result.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { calibrateClaude } from '../../src/index/calibrate.js';
import { REPO, tmpDir } from './helpers.js';

const TL = path.join(REPO, 'test', 'index', 'fixtures', 'timeline');

describe('the claude correction fitted from transcripts', () => {
  it('lands near 1 on the session whose usage was the legacy tokenizer, and beats a wrong correction', async () => {
    const c = await calibrateClaude(path.join(TL, 'claude-code-pct5'), { current: 1.5 });
    expect(c.files).toBe(1);
    expect(c.samples.length).toBeGreaterThanOrEqual(3);
    expect(c.skipped.afterCompaction).toBe(2);
    const f = c.overall!;
    expect(f.correction).toBeGreaterThan(0.9);
    expect(f.correction).toBeLessThan(1.2);
    expect(f.after.median).toBeLessThan(0.1);
    expect(f.after.median).toBeLessThan(f.before.median);
    expect(c.byModel.map((m) => m.model)).toEqual(['claude-opus-5-5']);
  });

  it('a folder: the run that inflated usage by 250,000 per result is left out as implausible, not fitted', async () => {
    const alone = await calibrateClaude(path.join(TL, 'claude-code-pct5'));
    const dir = tmpDir('spillway-calibrate-');
    for (const run of ['claude-code', 'claude-code-pct5']) fs.cpSync(path.join(TL, run), path.join(dir, run), { recursive: true });
    const c = await calibrateClaude(dir);
    expect(c.files).toBe(2);
    expect(c.skipped.implausible).toBeGreaterThanOrEqual(4);
    expect(c.overall!.correction).toBe(alone.overall!.correction);
  });

  it('the CLI prints the fit, its error before and after, and how to use it', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=source', path.join(REPO, 'src', 'cli', 'main.ts'), 'estimate', '--calibrate-from', path.join(TL, 'claude-code-pct5')], { encoding: 'utf8', env: { ...process.env, SPILLWAY_CLAUDE_CORRECTION: '' } });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/claude-opus-5-5 +\d+ +1\.\d{3} +[\d.]+% \/ [\d.]+% +[\d.]+% \/ [\d.]+%/);
    expect(r.stdout).toMatch(/SPILLWAY_CLAUDE_CORRECTION=1\.\d{3}/);
  });
});
