import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as spillway from 'spillway';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('the package root', () => {
  it('resolves `spillway` from inside the repo to the guard API', async () => {
    expect(typeof spillway.guardLargeResult).toBe('function');
    expect(typeof spillway.handleLargeResponse).toBe('function');
    expect(typeof spillway.estimateTokens).toBe('function');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-pkg-'));
    expect(await spillway.guardLargeResult('small', { sessionPath: dir })).toBeNull();
    const big = await spillway.guardLargeResult('word '.repeat(40_000), { sessionPath: dir, toolName: 'pkg' });
    expect(big?.action).toBe('spill');
    expect(fs.readFileSync(big!.payloadPath!, 'utf8')).toBe('word '.repeat(40_000));
  });

  it('exports "." as ESM with types, and the built entry loads in plain Node', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.name).toBe('spillway');
    expect(pkg.type).toBe('module');
    expect(pkg.exports['.'].types).toMatch(/\.d\.ts$/);
    const built = path.join(ROOT, pkg.exports['.'].import);
    // The built library exists after `npm install` (prepare) / `npm run build`.
    expect(fs.existsSync(built), `${built} missing: run npm run build:lib`).toBe(true);
    const out = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('spillway'); console.log(typeof m.guardLargeResult, typeof m.estimateTokens)"],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(out.trim()).toBe('function function');
  });

  it('exports the hook entry and the CLI as subpaths, and bin/spillway.js imports only those (no path into dist)', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    for (const entry of ['./hook', './cli']) {
      expect(fs.existsSync(path.join(ROOT, pkg.exports[entry].import)), `${entry}: run npm run build:lib`).toBe(true);
      expect(fs.existsSync(path.join(ROOT, pkg.exports[entry].source)), entry).toBe(true);
    }
    // its code, without the comments (which may say where the entries are built), names no file of dist/ or src/
    const code = fs.readFileSync(path.join(ROOT, 'bin', 'spillway.js'), 'utf8').split('\n').filter((l) => !l.trimStart().startsWith('//')).join('\n');
    expect(code).not.toMatch(/\b(dist|src)\//);
    expect(code).toContain("import.meta.resolve(`spillway/${entry}`)");
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', "const h = await import('spillway/hook'); console.log(Object.keys(h.HOOKED_CLIENTS).join(' '))"], { cwd: ROOT, encoding: 'utf8' });
    expect(out.trim()).toBe('claude-code codex opencode');
  });
});
