/**
 * Issue 32, item 5: `spillway setup` keeps the owner and mode of every config file it edits. On
 * 19f533d, setup run as root replaced a settings.json owned by `nobody` with one owned by root, so
 * that account could no longer edit its own config. The choice (docs/security.md): as root, setup
 * gives the file back its owner, group and mode; as any other account it refuses a file it does not
 * own, which it could not give back.
 * The foreign owner is made with chown to `nobody` (uid 65534), which needs root; where that is
 * impossible the root test skips and says why.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { setupClaudeCode } from '../../src/integrations/setup/claude-code.js';
import { SetupError } from '../../src/integrations/setup/files.js';
import { cliArgs, ROOT, tmpDir } from './helpers.js';

const CLI_TEST_MS = 240_000;
const NOBODY = 65534;
const SETTINGS = `${JSON.stringify({ model: 'opus', env: { FOO: 'bar' } }, null, 2)}\n`;
const CODEX = '# mine\nmodel = "gpt-5.5"\n';

let noSecondAccount: string | undefined;
beforeAll(() => {
  if (typeof process.getuid !== 'function') noSecondAccount = 'no POSIX owners on this platform';
  else if (process.getuid() !== 0) noSecondAccount = `not root (uid ${process.getuid()}): cannot chown a file to a second account (nobody, uid ${NOBODY})`;
  else {
    const probe = path.join(tmpDir('spillway-chown-probe-'), 'f');
    fs.writeFileSync(probe, '');
    try {
      fs.chownSync(probe, NOBODY, NOBODY);
    } catch (err) {
      noSecondAccount = `chown to uid ${NOBODY} failed here (${(err as NodeJS.ErrnoException).code}): no second account can own a file`;
    }
    fs.rmSync(path.dirname(probe), { recursive: true, force: true });
  }
  if (noSecondAccount) console.warn(`issue 32 setup-owner test skips: ${noSecondAccount}`);
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** A private HOME and app data, and a PATH without any `spillway`. */
function envFor(): NodeJS.ProcessEnv {
  const home = tmpDir('spillway-setup-owner-home-');
  return { HOME: home, PATH: '/usr/bin:/bin', SPILLWAY_HOME: path.join(tmpDir('spillway-setup-owner-data-'), 'app'), CODEX_HOME: path.join(home, '.codex') };
}

function runSetup(args: string[], env: NodeJS.ProcessEnv) {
  // Under the usual umask: a mode kept only by luck of the umask would not show.
  const r = spawnSync('/bin/sh', ['-c', 'umask 022 && exec "$0" "$@"', process.execPath, ...cliArgs(['setup', ...args])], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A config file (and its folder) that belong to `nobody`, with a mode umask 022 would not give. */
function foreignFile(file: string, text: string, mode: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  fs.chmodSync(file, mode);
  fs.chownSync(path.dirname(file), NOBODY, NOBODY);
  fs.chownSync(file, NOBODY, NOBODY);
}

const ownerOf = (f: string) => {
  const st = fs.statSync(f);
  return { uid: st.uid, gid: st.gid, mode: (st.mode & 0o777).toString(8) };
};

describe('setup keeps the owner and mode of the files it edits (issue 32, item 5)', () => {
  it('as root (real CLI): settings.json and config.toml owned by nobody stay nobody\'s, with their mode, through setup and --remove', (t) => {
    if (noSecondAccount) t.skip(noSecondAccount);
    const env = envFor();
    const settings = path.join(env.HOME!, '.claude', 'settings.json');
    const toml = path.join(env.CODEX_HOME!, 'config.toml');
    foreignFile(settings, SETTINGS, 0o664);
    foreignFile(toml, CODEX, 0o640);
    const want = (mode: string) => ({ uid: NOBODY, gid: NOBODY, mode });

    const a = runSetup(['claude-code'], env);
    expect(a.code, a.stderr).toBe(0);
    expect(JSON.parse(fs.readFileSync(settings, 'utf8')).hooks.PostToolUse).toHaveLength(1);
    expect(ownerOf(settings)).toEqual(want('664'));
    const b = runSetup(['codex', '--mcp', 'fs', '--', 'srv', '--flag'], env);
    expect(b.code, b.stderr).toBe(0);
    expect((parse(fs.readFileSync(toml, 'utf8')) as { mcp_servers: Record<string, unknown> }).mcp_servers).toHaveProperty('fs');
    expect(ownerOf(toml)).toEqual(want('640'));

    expect(runSetup(['claude-code', '--remove'], env).code).toBe(0);
    expect(fs.readFileSync(settings, 'utf8')).toBe(SETTINGS);
    expect(ownerOf(settings)).toEqual(want('664'));
    expect(runSetup(['codex', '--remove'], env).code).toBe(0);
    expect(fs.readFileSync(toml, 'utf8')).toBe(CODEX);
    expect(ownerOf(toml)).toEqual(want('640'));
    // No temp file is left beside them.
    expect(fs.readdirSync(path.dirname(settings))).toEqual(['settings.json']);
    expect(fs.readdirSync(path.dirname(toml))).toEqual(['config.toml']);
  }, CLI_TEST_MS);

  it('as another account: a file it does not own is refused, left untouched, and nothing is written', () => {
    const env = envFor();
    const settings = path.join(env.HOME!, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(settings), { recursive: true });
    fs.writeFileSync(settings, SETTINGS);
    const before = fs.statSync(settings);
    // This process plays an account that does not own the file (and is not root): setup could not give it back.
    const other = before.uid === 1000 ? 1001 : 1000;
    vi.spyOn(process, 'geteuid').mockReturnValue(other);
    expect(() => setupClaudeCode({ env })).toThrow(SetupError);
    expect(() => setupClaudeCode({ env })).toThrow(
      new RegExp(`settings\\.json belongs to another account \\(uid ${before.uid}; setup runs as uid ${other}\\), which setup could not give it back to; it was left untouched\\. Run setup as the account that owns it`),
    );
    expect(fs.readFileSync(settings, 'utf8')).toBe(SETTINGS);
    expect(fs.statSync(settings).ino).toBe(before.ino);
    expect(fs.readdirSync(path.dirname(settings))).toEqual(['settings.json']);
    expect(fs.existsSync(path.join(env.SPILLWAY_HOME!, 'backups'))).toBe(false);
  });
});
