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
import { afterEach, describe, expect, it, vi } from 'vitest';
import { setupClaudeCode } from '../../src/integrations/setup/claude-code.js';
import { setupCodex } from '../../src/integrations/setup/codex.js';
import { SetupError } from '../../src/integrations/setup/files.js';
import { cliArgs, ROOT, tmpDir } from './helpers.js';

const CLI_TEST_MS = 240_000;
const NOBODY = 65534;
const SETTINGS = `${JSON.stringify({ model: 'opus', env: { FOO: 'bar' } }, null, 2)}\n`;
const CODEX = '# mine\nmodel = "gpt-5.5"\n';

/** Why the root tests cannot run here (undefined: they can). Known at collection, for it.skipIf. */
const noSecondAccount: string | undefined = (() => {
  if (typeof process.getuid !== 'function') return 'no POSIX owners on this platform';
  if (process.getuid() !== 0) return `not root (uid ${process.getuid()}): cannot chown a file to a second account (nobody, uid ${NOBODY})`;
  const dir = tmpDir('spillway-chown-probe-');
  try {
    const probe = path.join(dir, 'f');
    fs.writeFileSync(probe, '');
    fs.chownSync(probe, NOBODY, NOBODY);
    return undefined;
  } catch (err) {
    return `chown to uid ${NOBODY} failed here (${(err as NodeJS.ErrnoException).code}): no second account can own a file`;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
})();
const SKIP = noSecondAccount ? ` [skipped: ${noSecondAccount}]` : '';
if (noSecondAccount) console.warn(`issue 32 setup-owner root tests skip: ${noSecondAccount}`);

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
  it.skipIf(noSecondAccount)(`as root (real CLI): settings.json and config.toml owned by nobody stay nobody's, with their mode, through setup and --remove${SKIP}`, () => {
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

  it.skipIf(noSecondAccount)(`as root (in process): every file setup edits (settings.json, ~/.claude.json, a project's settings.local.json and .mcp.json, config.toml), owned by nobody 0640, keeps owner, group, mode and, after --remove, its bytes${SKIP}`, () => {
    const env = envFor();
    const project = tmpDir('spillway-setup-owner-project-');
    const files = {
      settings: path.join(env.HOME!, '.claude', 'settings.json'),
      claudeJson: path.join(env.HOME!, '.claude.json'),
      local: path.join(project, '.claude', 'settings.local.json'),
      mcpJson: path.join(project, '.mcp.json'),
      toml: path.join(env.CODEX_HOME!, 'config.toml'),
    };
    const original: Record<string, string> = {
      settings: SETTINGS,
      claudeJson: `${JSON.stringify({ numStartups: 3, mcpServers: {} }, null, 2)}\n`,
      local: `${JSON.stringify({ permissions: { allow: [] } }, null, 2)}\n`,
      mcpJson: `${JSON.stringify({ mcpServers: { other: { command: 'x' } } }, null, 2)}\n`,
      toml: CODEX,
    };
    for (const [k, f] of Object.entries(files)) foreignFile(f, original[k]!, 0o640);
    const want = { uid: NOBODY, gid: NOBODY, mode: '640' };
    const server = { name: 'fs', server: ['srv', '--flag'] };

    const changes = [
      ...setupClaudeCode({ env, mcp: server }),
      ...setupClaudeCode({ env, projectDir: project, mcp: server }),
      ...setupCodex({ env, mcp: server }),
    ];
    expect(changes.map((c) => c.action)).toEqual(['updated', 'updated', 'updated', 'updated', 'updated']);
    for (const f of Object.values(files)) expect([f, ownerOf(f)]).toEqual([f, want]);
    expect(JSON.parse(fs.readFileSync(files.claudeJson, 'utf8')).mcpServers).toHaveProperty('fs');
    expect(JSON.parse(fs.readFileSync(files.mcpJson, 'utf8')).mcpServers).toHaveProperty('fs');
    expect(JSON.parse(fs.readFileSync(files.local, 'utf8')).enabledMcpjsonServers).toEqual(['fs']);
    // The backups hold the old content: readable by their writer (root) alone, no more than the original.
    for (const c of changes) {
      const st = fs.statSync(c.backup!);
      expect([c.file, st.mode & 0o777, st.uid]).toEqual([c.file, 0o600, 0]);
    }

    setupClaudeCode({ env, remove: true });
    setupClaudeCode({ env, projectDir: project, remove: true });
    setupCodex({ env, remove: true });
    for (const [k, f] of Object.entries(files)) {
      expect([f, ownerOf(f)]).toEqual([f, want]);
      expect([f, fs.readFileSync(f, 'utf8')]).toEqual([f, original[k]]);
      expect(fs.readdirSync(path.dirname(f)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
    }
  });

  it.skipIf(noSecondAccount)(`as root: a new config file in a folder nobody owns is nobody's; a folder setup would have to create there is refused, nothing written${SKIP}`, () => {
    const env = envFor();
    fs.chownSync(env.HOME!, NOBODY, NOBODY);
    // ~/.claude is missing: root would make a folder in nobody's home. Refused before anything is written.
    expect(() => setupClaudeCode({ env })).toThrow(/setup runs as root and would create .*\.claude inside .*, which belongs to uid 65534; .*Nothing was written\. Run setup as that account, or create .*\.claude as it first/);
    expect(fs.readdirSync(env.HOME!)).toEqual([]);
    expect(fs.existsSync(path.join(env.SPILLWAY_HOME!, 'backups'))).toBe(false);
    // Once the account has its folder, the file setup creates there is the account's.
    fs.mkdirSync(path.join(env.HOME!, '.claude'));
    fs.chownSync(path.join(env.HOME!, '.claude'), NOBODY, NOBODY);
    const [c] = setupClaudeCode({ env });
    expect(c!.action).toBe('created');
    const st = fs.statSync(c!.file);
    expect([st.uid, st.gid]).toEqual([NOBODY, NOBODY]);
    expect(JSON.parse(fs.readFileSync(c!.file, 'utf8')).hooks.PostToolUse).toHaveLength(1);
  });

  it.skipIf(noSecondAccount)(`as root: when the owner cannot be given back (fchown refused), the file is left untouched, with no backup and no temp file${SKIP}`, () => {
    const env = envFor();
    const settings = path.join(env.HOME!, '.claude', 'settings.json');
    foreignFile(settings, SETTINGS, 0o640);
    const before = fs.statSync(settings);
    // What root meets where it may not chown (a user namespace, an NFS root squash).
    vi.spyOn(fs, 'fchownSync').mockImplementation(() => {
      throw Object.assign(new Error('operation not permitted'), { code: 'EPERM' });
    });
    expect(() => setupClaudeCode({ env })).toThrow(new RegExp(`settings\\.json could not be given back its owner and group \\(uid ${NOBODY}, gid ${NOBODY}: EPERM\\); it was left untouched`));
    expect(fs.readFileSync(settings, 'utf8')).toBe(SETTINGS);
    expect(fs.statSync(settings).ino).toBe(before.ino);
    expect(ownerOf(settings)).toEqual({ uid: NOBODY, gid: NOBODY, mode: '640' });
    expect(fs.readdirSync(path.dirname(settings))).toEqual(['settings.json']);
    expect(fs.existsSync(path.join(env.SPILLWAY_HOME!, 'backups'))).toBe(false);
  });

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
