import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { countExact, estimateAll } from '../../src/pipeline/index.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, ['--import', 'tsx', '--conditions=source', path.join(ROOT, 'src/cli/main.ts'), 'estimate', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });

describe('spillway estimate', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-'));
  const textFile = path.join(dir, 'readme.md');
  const binFile = path.join(dir, 'icon.png');
  fs.copyFileSync(path.join(ROOT, 'node_modules/commander/Readme.md'), textFile);
  fs.copyFileSync(path.join(ROOT, 'node_modules/app-builder-lib/templates/icons/electron-linux/32x32.png'), binFile);

  it('--json prints one line per file with every strategy for the profile, exact included', async () => {
    const r = run(['--json', '--profile', 'cl100k', textFile, binFile]);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    const text = fs.readFileSync(textFile, 'utf8');
    expect(lines[0]).toEqual({
      file: textFile,
      chars: text.length,
      bytes: Buffer.byteLength(text),
      binary: false,
      default: 'calibrated',
      profile: 'cl100k',
      estimates: { ...estimateAll(text, 'cl100k'), cl100k: await countExact(text, 'cl100k') },
    });
    // a binary file is estimated as the base64 a tool result would carry
    const b64 = fs.readFileSync(binFile).toString('base64');
    expect(lines[1]).toMatchObject({ binary: true, chars: b64.length, bytes: fs.statSync(binFile).size });
    expect(lines[1].estimates.cl100k).toBe(await countExact(b64, 'cl100k'));
  });

  it('--exact adds every tokenizer; --strategy names the default; the correction shows for claude', () => {
    const r = run(['--json', '--exact', '--profile', 'claude', '--strategy', 'craft-density', textFile], { SPILLWAY_CLAUDE_CORRECTION: '1.2' });
    expect(r.status).toBe(0);
    const row = JSON.parse(r.stdout);
    expect(Object.keys(row.estimates).sort()).toEqual(['calibrated', 'chars4', 'cl100k', 'claude', 'craft-density', 'o200k']);
    expect(row.default).toBe('craft-density');
    expect(row.correction).toBe(1.2);
  });

  it('prints a table without --json, and fails clearly on a missing file and on a bad profile', () => {
    const ok = run([textFile]);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/calibrated\*/);
    expect(ok.stdout).toContain('readme.md');
    const missing = run([path.join(dir, 'nope.txt'), textFile]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/nope\.txt: no such file/);
    expect(missing.stdout).toContain('readme.md');
    const bad = run(['--profile', 'gpt2', textFile]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/gpt2/);
  });
});
