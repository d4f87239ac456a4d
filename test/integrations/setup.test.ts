import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { hookCommand, isOurHookCommand, setupClaudeCode } from '../../src/integrations/setup/claude-code.js';
import { setupCodex, STARTUP_TIMEOUT_S } from '../../src/integrations/setup/codex.js';
import { SetupError } from '../../src/integrations/setup/files.js';
import { cliArgs, ROOT, tmpDir } from './helpers.js';

const BIN = path.join(ROOT, 'bin', 'spillway.js');
/** Tests that spawn the CLI (tsx compiles it each time, several seconds per run on a loaded machine). */
const CLI_TEST_MS = 240_000;
const SERVER = ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/home/me/work'];

/** A private HOME and app data, and a PATH without any `spillway`, so the absolute form is written. */
function envFor(home = tmpDir('spillway-setup-home-')): NodeJS.ProcessEnv {
  return { HOME: home, PATH: '/usr/bin:/bin', SPILLWAY_HOME: path.join(tmpDir('spillway-setup-data-'), 'app') };
}

/** The backups setup keeps (in app data). */
function backups(env: NodeJS.ProcessEnv): string[] {
  const dir = path.join(env.SPILLWAY_HOME!, 'backups');
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.spillway-backup')) : [];
}

/** Backups beside the file: there must never be any. */
function besideBackups(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.includes('spillway-backup')) : [];
}

function runSetup(args: string[], env: NodeJS.ProcessEnv) {
  const r = spawnSync(process.execPath, cliArgs(['setup', ...args]), { env: { ...process.env, ...env }, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const EXISTING_SETTINGS = {
  model: 'opus',
  permissions: { allow: ['Bash(npm test:*)'], deny: [] },
  hooks: {
    PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '/usr/local/bin/check-bash' }] }],
    PostToolUse: [{ matcher: 'Edit', hooks: [{ type: 'command', command: 'prettier --write' }] }],
  },
  env: { FOO: 'bar' },
};

/** A fresh git repository with one commit (a README), and git run in it with `home` as HOME and no system config. */
function gitRepo(home: string): { repo: string; git: (...a: string[]) => string } {
  const repo = tmpDir('spillway-git-');
  const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: home } });
  git('init', '-q');
  fs.writeFileSync(path.join(repo, 'README.md'), 'hi\n');
  git('add', '.');
  git('-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qm', 'init');
  return { repo, git };
}

describe('spillway setup claude-code', () => {
  it('merges the hook into existing user settings, keeps a backup, is idempotent, and --remove gives the settings back', () => {
    const env = envFor();
    const file = path.join(env.HOME!, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const original = `${JSON.stringify(EXISTING_SETTINGS, null, 4)}\n`;
    fs.writeFileSync(file, original);

    const [c] = setupClaudeCode({ env });
    expect(c).toMatchObject({ file, action: 'updated' });
    expect(fs.readFileSync(c!.backup!, 'utf8')).toBe(original);
    const merged = JSON.parse(fs.readFileSync(file, 'utf8'));
    const { hooks, ...rest } = merged;
    const { hooks: oldHooks, ...oldRest } = EXISTING_SETTINGS;
    expect(rest).toEqual(oldRest);
    expect(hooks.PreToolUse).toEqual(oldHooks.PreToolUse);
    expect(hooks.PostToolUse[0]).toEqual(oldHooks.PostToolUse[0]);
    expect(hooks.PostToolUse[1]).toEqual({
      matcher: '*',
      hooks: [{ type: 'command', command: `${process.execPath} ${BIN} hook claude-code`, timeout: 120 }],
    });

    expect(path.dirname(c!.backup!)).toBe(path.join(env.SPILLWAY_HOME!, 'backups'));
    const again = setupClaudeCode({ env });
    expect(again[0]!.action).toBe('unchanged');
    expect(backups(env)).toHaveLength(1);
    expect(besideBackups(path.dirname(file))).toEqual([]);

    const [r] = setupClaudeCode({ env, remove: true });
    expect(r!.action).toBe('updated');
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(EXISTING_SETTINGS);
    expect(setupClaudeCode({ env, remove: true })[0]!.action).toBe('unchanged');
  });

  it('writes `spillway …` when the spillway on PATH is this install (npm link), and replaces an older install’s hook', () => {
    const env = envFor();
    const binDir = tmpDir('spillway-path-');
    fs.symlinkSync(BIN, path.join(binDir, 'spillway'));
    const file = path.join(env.HOME!, '.claude', 'settings.json');
    setupClaudeCode({ env }); // absolute form first
    setupClaudeCode({ env: { ...env, PATH: `${binDir}:/usr/bin:/bin` } });
    const post = JSON.parse(fs.readFileSync(file, 'utf8')).hooks.PostToolUse;
    expect(post).toEqual([{ matcher: '*', hooks: [{ type: 'command', command: 'spillway hook claude-code', timeout: 120 }] }]);
  });

  it('--project: settings.local.json (this machine’s paths stay out of the repo), .mcp.json for --mcp, and the server approved', () => {
    const env = envFor();
    const project = tmpDir('spillway-project-');
    fs.mkdirSync(path.join(project, '.claude'));
    fs.writeFileSync(path.join(project, '.claude', 'settings.json'), '{"model":"sonnet"}\n');
    const changes = setupClaudeCode({ env, projectDir: project, mcp: { name: 'fs', server: SERVER } });
    expect(changes.map((c) => [path.relative(project, c.file), c.action])).toEqual([
      ['.claude/settings.local.json', 'created'],
      ['.mcp.json', 'created'],
    ]);
    expect(fs.readFileSync(path.join(project, '.claude', 'settings.json'), 'utf8')).toBe('{"model":"sonnet"}\n');
    const local = JSON.parse(fs.readFileSync(path.join(project, '.claude', 'settings.local.json'), 'utf8'));
    expect(local.enabledMcpjsonServers).toEqual(['fs']);
    const mcp = JSON.parse(fs.readFileSync(path.join(project, '.mcp.json'), 'utf8'));
    expect(mcp.mcpServers.fs).toEqual({
      type: 'stdio',
      command: process.execPath,
      args: [BIN, 'mcp', '--client', 'claude-code', '--server-name', 'fs', '--', ...SERVER],
      env: { SET_UP_BY_SPILLWAY: 'added' },
    });
    expect(setupClaudeCode({ env, projectDir: project, mcp: { name: 'fs', server: SERVER } }).map((c) => c.action)).toEqual(['unchanged', 'unchanged']);
    // Removal without --mcp: the hook, the server and its approval; both files setup created are
    // left empty, so they are deleted; settings.json (the user's) stays as it was.
    const removed = setupClaudeCode({ env, projectDir: project, remove: true });
    expect(removed.map((c) => [path.relative(project, c.file), c.action])).toEqual([
      ['.claude/settings.local.json', 'deleted'],
      ['.mcp.json', 'deleted'],
    ]);
    expect(removed[0]!.detail).toMatch(/removed the PostToolUse hook.*removed "fs" from enabledMcpjsonServers/);
    expect(removed[1]!.detail).toMatch(/removed MCP server "fs"/);
    expect(fs.readdirSync(project).sort()).toEqual(['.claude']);
    expect(fs.readdirSync(path.join(project, '.claude'))).toEqual(['settings.json']);
    expect(fs.readFileSync(path.join(project, '.claude', 'settings.json'), 'utf8')).toBe('{"model":"sonnet"}\n');
    // Every removed file was backed up first, in app data.
    expect(backups(env)).toHaveLength(2);
  });

  it('--user --mcp: the server goes into ~/.claude.json (user scope), everything Claude Code keeps there untouched', () => {
    const env = envFor();
    const state = path.join(env.HOME!, '.claude.json');
    const before = { numStartups: 12, projects: { '/w': { allowedTools: [] } }, mcpServers: { other: { command: 'x' } } };
    fs.writeFileSync(state, JSON.stringify(before));
    fs.chmodSync(state, 0o600);
    setupClaudeCode({ env, mcp: { name: 'fs', server: SERVER } });
    const after = JSON.parse(fs.readFileSync(state, 'utf8'));
    expect(after.numStartups).toBe(12);
    expect(after.projects).toEqual(before.projects);
    expect(after.mcpServers.other).toEqual({ command: 'x' });
    expect(after.mcpServers.fs.args.slice(-SERVER.length)).toEqual(SERVER);
    expect(fs.statSync(state).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(path.join(env.HOME!, '.claude', 'settings.json'), 'utf8'))).not.toHaveProperty('enabledMcpjsonServers');
    setupClaudeCode({ env, mcp: { name: 'fs', server: [] }, remove: true });
    expect(JSON.parse(fs.readFileSync(state, 'utf8'))).toEqual(before);
  });

  it('--mcp NAME without a command wraps the existing server; --remove gives it its own command back', () => {
    const env = envFor();
    const project = tmpDir('spillway-project-');
    const own = { command: 'uvx', args: ['mcp-server-git', '--repository', '.'], env: { GIT_TOKEN: 'x' } };
    fs.writeFileSync(path.join(project, '.mcp.json'), JSON.stringify({ mcpServers: { git: own, other: { command: 'x' } } }));
    setupClaudeCode({ env, projectDir: project, mcp: { name: 'git', server: [] } });
    const wrapped = JSON.parse(fs.readFileSync(path.join(project, '.mcp.json'), 'utf8')).mcpServers;
    expect(wrapped.other).toEqual({ command: 'x' });
    expect(wrapped.git.args).toEqual([BIN, 'mcp', '--client', 'claude-code', '--server-name', 'git', '--', 'uvx', 'mcp-server-git', '--repository', '.']);
    expect(wrapped.git.env).toEqual({ GIT_TOKEN: 'x', SET_UP_BY_SPILLWAY: 'wrapped' });
    setupClaudeCode({ env, projectDir: project, mcp: { name: 'git', server: [] }, remove: true });
    const back = JSON.parse(fs.readFileSync(path.join(project, '.mcp.json'), 'utf8')).mcpServers;
    expect(back.git).toEqual({ ...own, type: 'stdio' });
    // A server setup did not write is never removed.
    expect(() => setupClaudeCode({ env, projectDir: project, mcp: { name: 'other', server: [] }, remove: true })).toThrow(/not set up by spillway/);
  });

  it('an invalid settings file is left untouched, with a clear error and exit 1; an unknown client is a usage error (exit 2)', () => {
    const env = envFor();
    const file = path.join(env.HOME!, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    for (const bad of ['{"hooks": {', '[1,2]', '{"hooks": {"PostToolUse": {"matcher": "*"}}}', '{"hooks": []}']) {
      fs.writeFileSync(file, bad);
      expect(() => setupClaudeCode({ env })).toThrow(SetupError);
      const r = runSetup(['claude-code'], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`spillway setup: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*(not valid JSON|not an object|not an array|not a hook group|not hold a JSON object).*left untouched`));
      expect(fs.readFileSync(file, 'utf8')).toBe(bad);
      expect(backups(env)).toEqual([]);
      expect(besideBackups(path.dirname(file))).toEqual([]);
    }
    const u = runSetup(['vscode'], env);
    expect(u.code).toBe(2);
    expect(u.stderr).toMatch(/unknown client "vscode"/);
  }, CLI_TEST_MS);

  it('the CLI reports each file it touched', () => {
    const env = envFor();
    const r = runSetup(['claude-code', '--user'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^created +.*\.claude\/settings\.json: added the PostToolUse hook/m);
    expect(runSetup(['claude-code'], env).stdout).toMatch(/^unchanged /m);
  }, CLI_TEST_MS);
});

const CODEX_CONFIG = `# my Codex config
model = "gpt-5.5"   # the default model
approval_policy = "on-request"

[model_providers.local]
name = "local"  # trailing comment
base_url = "http://127.0.0.1:8080/v1"
wire_api = "responses"

# the git server, do not touch
[mcp_servers.git]
command = "uvx"
args = ["mcp-server-git"]

[mcp_servers.git.env]
GIT_TOKEN = "secret"

[profiles.fast]
model = "gpt-5.5-mini"
`;

describe('spillway setup codex', () => {
  function codexEnv(text?: string) {
    const env = { ...envFor(), CODEX_HOME: path.join(tmpDir('spillway-codex-'), 'codex-home') };
    const file = path.join(env.CODEX_HOME, 'config.toml');
    if (text !== undefined) {
      fs.mkdirSync(env.CODEX_HOME, { recursive: true });
      fs.writeFileSync(file, text);
    }
    return { env, file };
  }

  it('adds [mcp_servers.NAME] to $CODEX_HOME/config.toml keeping every other line and comment; idempotent; --remove restores the file exactly', () => {
    const { env, file } = codexEnv(CODEX_CONFIG);
    const [c] = setupCodex({ env, mcp: { name: 'fs', server: SERVER } });
    expect(c).toMatchObject({ file, action: 'updated' });
    expect(fs.readFileSync(c!.backup!, 'utf8')).toBe(CODEX_CONFIG);
    const text = fs.readFileSync(file, 'utf8');
    expect(text.startsWith(CODEX_CONFIG.trimEnd())).toBe(true);
    const doc = parse(text) as any;
    expect(doc.mcp_servers.fs).toEqual({
      command: process.execPath,
      args: [BIN, 'mcp', '--client', 'codex', '--server-name', 'fs', '--', ...SERVER],
      env: { SET_UP_BY_SPILLWAY: 'added' },
      startup_timeout_sec: STARTUP_TIMEOUT_S,
    });
    expect(c!.detail).toMatch(/startup_timeout_sec = 120: by default Codex waits about 30 s .*npx -y/);
    expect(doc.mcp_servers.git).toEqual({ command: 'uvx', args: ['mcp-server-git'], env: { GIT_TOKEN: 'secret' } });
    expect(setupCodex({ env, mcp: { name: 'fs', server: SERVER } })[0]!.action).toBe('unchanged');
    setupCodex({ env, mcp: { name: 'fs', server: [] }, remove: true });
    expect(fs.readFileSync(file, 'utf8')).toBe(CODEX_CONFIG);
  });

  it('wraps an existing server (its env kept) and unwraps it; a new file is created when there is none', () => {
    const { env, file } = codexEnv(CODEX_CONFIG);
    setupCodex({ env, mcp: { name: 'git', server: [] } });
    const wrapped = (parse(fs.readFileSync(file, 'utf8')) as any).mcp_servers.git;
    expect(wrapped.args).toEqual([BIN, 'mcp', '--client', 'codex', '--server-name', 'git', '--', 'uvx', 'mcp-server-git']);
    expect(wrapped.env).toEqual({ GIT_TOKEN: 'secret', SET_UP_BY_SPILLWAY: 'wrapped' });
    expect(wrapped).not.toHaveProperty('startup_timeout_sec');
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toContain('# my Codex config');
    expect(text).toContain('[profiles.fast]');
    setupCodex({ env, mcp: { name: 'git', server: [] }, remove: true });
    expect(parse(fs.readFileSync(file, 'utf8'))).toEqual(parse(CODEX_CONFIG));

    const fresh = codexEnv();
    setupCodex({ env: fresh.env, mcp: { name: 'fs', server: SERVER } });
    expect(Object.keys((parse(fs.readFileSync(fresh.file, 'utf8')) as any).mcp_servers)).toEqual(['fs']);
  });

  it('an invalid config.toml, or a server written as an inline table, is left untouched with a clear error (exit 1)', () => {
    for (const bad of ['model = "x"\n[mcp_servers.fs\ncommand = 1\n', 'mcp_servers = { fs = { command = "npx" } }\n']) {
      const { env, file } = codexEnv(bad);
      expect(() => setupCodex({ env, mcp: { name: 'fs', server: SERVER } })).toThrow(SetupError);
      const r = runSetup(['codex', '--mcp', 'fs', '--', ...SERVER], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/spillway setup: .*config\.toml.*(not valid TOML|inline table).*/);
      expect(fs.readFileSync(file, 'utf8')).toBe(bad);
      expect(backups(env)).toEqual([]);
      expect(besideBackups(path.dirname(file))).toEqual([]);
    }
    expect(runSetup(['codex'], envFor()).code).toBe(1);
  }, CLI_TEST_MS);

  it('issue 32: --remove of a wrapped server leaves no `# spillway setup codex:` comment behind (real CLI)', () => {
    const { env, file } = codexEnv(CODEX_CONFIG);
    const wrap = runSetup(['codex', '--mcp', 'git'], env);
    expect(wrap.code, wrap.stderr).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toContain('# spillway setup codex: git runs behind spillway mcp');
    // Without --mcp (every server setup touched) and with it: the table gets its own command back, and no marker.
    const r = runSetup(['codex', '--remove'], env);
    expect(r.code, r.stderr).toBe(0);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).not.toContain('# spillway setup codex');
    expect(parse(text)).toEqual(parse(CODEX_CONFIG));
    expect(runSetup(['codex', '--mcp', 'git'], env).code).toBe(0);
    expect(runSetup(['codex', '--mcp', 'git', '--remove'], env).code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).not.toContain('# spillway setup codex');
  }, CLI_TEST_MS);

  it('property: for any server name, add then remove gives back the same document, and nothing else ever changes', () => {
    const name = fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/), fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !/[\u0000-\u001f\u007f]/.test(s)));
    fc.assert(
      fc.property(name, fc.array(fc.string({ maxLength: 10 }), { minLength: 1, maxLength: 4 }), (n, args) => {
        const { env, file } = codexEnv(CODEX_CONFIG);
        if (n === 'git') return;
        setupCodex({ env, mcp: { name: n, server: ['srv', ...args] } });
        const doc = parse(fs.readFileSync(file, 'utf8')) as any;
        expect(doc.mcp_servers[n].args.slice(-args.length - 1)).toEqual(['srv', ...args]);
        const { [n]: _x, ...others } = doc.mcp_servers;
        expect({ ...doc, mcp_servers: others }).toEqual(parse(CODEX_CONFIG));
        setupCodex({ env, mcp: { name: n, server: [] }, remove: true });
        expect(fs.readFileSync(file, 'utf8')).toBe(CODEX_CONFIG);
      }),
      { numRuns: 60 },
    );
  });
});

describe('spillway setup claude-desktop | cursor --print', () => {
  it('prints an mcpServers snippet with this install’s command, and edits nothing', () => {
    const env = envFor();
    const r = runSetup(['cursor', '--print', '--mcp', 'fs', '--', ...SERVER], env);
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout.slice(r.stdout.indexOf('{')));
    expect(json.mcpServers.fs.args).toEqual([BIN, 'mcp', '--client', 'generic', '--', ...SERVER]);
    expect(r.stdout).toMatch(/\.cursor\/mcp\.json/);
    expect(fs.readdirSync(env.HOME!)).toEqual([]);
    expect(runSetup(['claude-desktop', '--mcp', 'fs', '--', ...SERVER], env).code).toBe(1);
    expect(runSetup(['claude-desktop', '--print', '--mcp', 'fs', '--', ...SERVER], env).stdout).toMatch(/claude_desktop_config\.json/);
  }, CLI_TEST_MS);
});

describe('spillway setup: removal, backups, symlinks, wrappers, other scopes', () => {
  it('a hook command is ours only when it is exactly what setup writes', () => {
    const env = envFor();
    expect(isOurHookCommand(hookCommand(env))).toBe(true);
    expect(isOurHookCommand(hookCommand(env, ['--limit', '8000']))).toBe(true);
    expect(isOurHookCommand('spillway hook claude-code')).toBe(true);
    expect(isOurHookCommand("'/opt/my node/bin/node' '/home/me/it'\\''s/spillway/bin/spillway.js' hook claude-code")).toBe(true);
    for (const foreign of [
      'log-start ; spillway hook claude-code',
      'spillway hook claude-code && notify-send done',
      'spillway hook claude-code | tee /tmp/out',
      'FOO=1 spillway hook claude-code',
      'spillway hook claude-code > /tmp/log',
      'sh -c "spillway hook claude-code"',
      '$(which spillway) hook claude-code',
      'spillway hook codex',
      'node /x/bin/spillway.js hook claude-code', // a relative node: not what setup writes
    ]) {
      expect(isOurHookCommand(foreign), foreign).toBe(false);
    }
  });

  it('keeps a wrapper of the user’s that runs the hook, says so, adds no second hook, and --remove leaves it', () => {
    const env = envFor();
    const file = path.join(env.HOME!, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const wrapper = { type: 'command', command: 'log-start ; spillway hook claude-code', timeout: 30 };
    const original = { hooks: { PostToolUse: [{ matcher: '*', hooks: [wrapper] }] } };
    fs.writeFileSync(file, JSON.stringify(original));
    const [c] = setupClaudeCode({ env, cwd: tmpDir() });
    expect(c!.action).toBe('unchanged');
    expect(c!.notes!.join('\n')).toMatch(/kept the PostToolUse hook "log-start ; spillway hook claude-code".*added no hook of its own/);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(original);
    // With ours beside it (an older setup's), removal takes ours and keeps the wrapper.
    const ours = { type: 'command', command: hookCommand(env), timeout: 120 };
    fs.writeFileSync(file, JSON.stringify({ hooks: { PostToolUse: [{ matcher: '*', hooks: [wrapper, ours] }] } }));
    const [r] = setupClaudeCode({ env, remove: true });
    expect(r!.detail).toMatch(/removed the PostToolUse hook \(1 entry\)/);
    expect(r!.notes!.join('\n')).toMatch(/kept the PostToolUse hook "log-start/);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(original);
  });

  it('writes through a symlinked settings.json / config.toml to its target, keeps the link, and refuses a dangling one', () => {
    const env = envFor();
    const dotfiles = tmpDir('spillway-dotfiles-');
    const target = path.join(dotfiles, 'claude-settings.json');
    fs.writeFileSync(target, '{"model":"opus"}\n');
    const link = path.join(env.HOME!, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(target, link);
    const [c] = setupClaudeCode({ env, cwd: tmpDir() });
    expect(c!.detail).toContain(`written through the symlink to ${fs.realpathSync(target)}`);
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(fs.readFileSync(target, 'utf8')).hooks.PostToolUse).toHaveLength(1);
    expect(fs.readFileSync(c!.backup!, 'utf8')).toBe('{"model":"opus"}\n');
    setupClaudeCode({ env, remove: true });
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(fs.readFileSync(target, 'utf8'))).toEqual({ model: 'opus' });

    const codexHome = path.join(env.HOME!, '.codex');
    fs.mkdirSync(codexHome);
    const tomlTarget = path.join(dotfiles, 'codex.toml');
    fs.writeFileSync(tomlTarget, CODEX_CONFIG);
    fs.symlinkSync(tomlTarget, path.join(codexHome, 'config.toml'));
    const cenv = { ...env, CODEX_HOME: codexHome };
    setupCodex({ env: cenv, mcp: { name: 'fs', server: SERVER } });
    expect(fs.lstatSync(path.join(codexHome, 'config.toml')).isSymbolicLink()).toBe(true);
    expect((parse(fs.readFileSync(tomlTarget, 'utf8')) as any).mcp_servers.fs.env.SET_UP_BY_SPILLWAY).toBe('added');
    setupCodex({ env: cenv, remove: true });
    expect(fs.readFileSync(tomlTarget, 'utf8')).toBe(CODEX_CONFIG);

    const dangling = envFor();
    const dl = path.join(dangling.HOME!, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(dl), { recursive: true });
    fs.symlinkSync(path.join(dotfiles, 'missing.json'), dl);
    expect(() => setupClaudeCode({ env: dangling, cwd: tmpDir() })).toThrow(/is a symlink to .*missing\.json, which cannot be opened.*left untouched/);
    expect(fs.readlinkSync(dl)).toBe(path.join(dotfiles, 'missing.json'));
    expect(fs.existsSync(path.join(dotfiles, 'missing.json'))).toBe(false);
  });

  it('warns when the hook is already registered in another scope (user vs project shared vs local)', () => {
    const env = envFor();
    const project = tmpDir('spillway-project-');
    setupClaudeCode({ env, cwd: project });
    const [p] = setupClaudeCode({ env, projectDir: project });
    expect(p!.notes!.join('\n')).toMatch(/warning: the Spillway hook is also registered at user scope \(.*\.claude\/settings\.json\).*spillway setup claude-code --user --remove/);
    // From the project's side, back at user scope: the local project scope is named.
    const [u] = setupClaudeCode({ env, cwd: project, hookArgs: ['--limit', '9000'] });
    expect(u!.notes!.join('\n')).toMatch(/also registered at project \(local\) scope .*spillway setup claude-code --project .* --remove/);
    const [s] = setupClaudeCode({ env, projectDir: project, shared: true });
    expect(s!.notes!.join('\n')).toMatch(/user scope[\s\S]*project \(local\) scope/);
    // In the home folder the user's settings are also the project's shared ones: one warning, not two.
    const inHome = envFor();
    setupClaudeCode({ env: inHome, cwd: inHome.HOME });
    const [h] = setupClaudeCode({ env: inHome, projectDir: inHome.HOME });
    expect(h!.notes).toHaveLength(1);
    expect(h!.notes![0]).toMatch(/at user scope/);
    // A scope with none says nothing.
    const lone = envFor();
    expect(setupClaudeCode({ env: lone, cwd: tmpDir() })[0]!.notes).toBeUndefined();
  });

  it('backups and the manifest are private (0700 folder, 0600 files), even under umask 022', () => {
    const env = envFor();
    const file = path.join(env.HOME!, '.claude', 'settings.json');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '{"env":{"TOKEN":"secret"}}');
    const old = process.umask(0o022);
    try {
      const [c] = setupClaudeCode({ env, cwd: tmpDir() });
      expect(fs.statSync(path.dirname(c!.backup!)).mode & 0o777).toBe(0o700);
      expect(fs.statSync(c!.backup!).mode & 0o777).toBe(0o600);
      setupClaudeCode({ env, projectDir: tmpDir(), mcp: { name: 'fs', server: SERVER } });
      const manifest = path.join(env.SPILLWAY_HOME!, 'setup', 'manifest.json');
      expect(fs.statSync(manifest).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.dirname(manifest)).mode & 0o777).toBe(0o700);
    } finally {
      process.umask(old);
    }
  });

  it('--remove takes back only the approval it gave: a server the user had approved stays approved', () => {
    const env = envFor();
    const project = tmpDir('spillway-project-');
    const own = { command: 'uvx', args: ['mcp-server-git'] };
    fs.writeFileSync(path.join(project, '.mcp.json'), JSON.stringify({ mcpServers: { git: own } }));
    fs.mkdirSync(path.join(project, '.claude'));
    fs.writeFileSync(path.join(project, '.claude', 'settings.local.json'), JSON.stringify({ enabledMcpjsonServers: ['git'] }));
    setupClaudeCode({ env, projectDir: project, mcp: { name: 'git', server: [] } });
    setupClaudeCode({ env, projectDir: project, mcp: { name: 'fs', server: SERVER } });
    expect(JSON.parse(fs.readFileSync(path.join(project, '.claude', 'settings.local.json'), 'utf8')).enabledMcpjsonServers).toEqual(['git', 'fs']);
    const [settings, mcp] = setupClaudeCode({ env, projectDir: project, remove: true });
    expect(mcp!.detail).toMatch(/MCP server "git" runs its own command again.*removed MCP server "fs"/);
    expect(settings!.detail).toMatch(/removed "fs" from enabledMcpjsonServers/);
    expect(settings!.detail).not.toMatch(/"git"/);
    expect(JSON.parse(fs.readFileSync(path.join(project, '.claude', 'settings.local.json'), 'utf8'))).toEqual({ enabledMcpjsonServers: ['git'] });
    expect(JSON.parse(fs.readFileSync(path.join(project, '.mcp.json'), 'utf8'))).toEqual({ mcpServers: { git: { ...own, type: 'stdio' } } });
  });

  it('in a real git repo, setup then --remove (CLI, no --mcp) leaves `git status --porcelain` clean and says what it removed', () => {
    const env = envFor();
    const { repo, git } = gitRepo(env.HOME!);
    const add = runSetup(['claude-code', '--project', repo, '--mcp', 'fs', '--', ...SERVER], env);
    expect(add.code, add.stderr).toBe(0);
    expect(git('status', '--porcelain', '--untracked-files=all')).not.toBe('');
    // Twice more, as a user following both README lines would: still nothing beside the files.
    expect(runSetup(['claude-code', '--project', repo, '--mcp', 'fs', '--', ...SERVER], env).code).toBe(0);
    const rm = runSetup(['claude-code', '--project', repo, '--remove'], env);
    expect(rm.code, rm.stderr).toBe(0);
    expect(rm.stdout).toMatch(/^deleted +.*settings\.local\.json: removed the PostToolUse hook.*removed "fs" from enabledMcpjsonServers/m);
    expect(rm.stdout).toMatch(/^deleted +.*\.mcp\.json: removed MCP server "fs"/m);
    expect(rm.stdout).toMatch(new RegExp(`backup of the previous file: ${env.SPILLWAY_HOME!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/backups/`));
    expect(git('status', '--porcelain', '--untracked-files=all', '--ignored')).toBe('');
  }, CLI_TEST_MS);
});

describe('spillway setup codex: removal of everything, created files', () => {
  it('--remove without --mcp takes out every server setup added or wrapped, and deletes a config.toml it created', () => {
    const env = { ...envFor(), CODEX_HOME: path.join(tmpDir('spillway-codex-'), 'codex-home') };
    const file = path.join(env.CODEX_HOME, 'config.toml');
    const [c] = setupCodex({ env, mcp: { name: 'fs', server: SERVER } });
    expect(c!.action).toBe('created');
    setupCodex({ env, mcp: { name: 'more', server: ['srv'] } });
    const [r] = setupCodex({ env, remove: true });
    expect(r).toMatchObject({ action: 'deleted' });
    expect(r!.detail).toMatch(/removed \[mcp_servers\.fs\]; removed \[mcp_servers\.more\]/);
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.existsSync(env.CODEX_HOME)).toBe(false);
    expect(backups(env).length).toBeGreaterThanOrEqual(2);

    // A user's file: wrapped and added servers out, the user's own text back, the file kept.
    const mine = { ...envFor(), CODEX_HOME: path.join(tmpDir('spillway-codex-'), 'codex-home') };
    fs.mkdirSync(mine.CODEX_HOME, { recursive: true });
    fs.writeFileSync(path.join(mine.CODEX_HOME, 'config.toml'), CODEX_CONFIG);
    const [w] = setupCodex({ env: mine, mcp: { name: 'git', server: [] } });
    expect(w!.notes!.join('\n')).toMatch(/\[mcp_servers\.git\] has no startup_timeout_sec.*add startup_timeout_sec = 120/);
    setupCodex({ env: mine, mcp: { name: 'fs', server: SERVER } });
    const [rm] = setupCodex({ env: mine, remove: true });
    expect(rm!.action).toBe('updated');
    expect(parse(fs.readFileSync(path.join(mine.CODEX_HOME, 'config.toml'), 'utf8'))).toEqual(parse(CODEX_CONFIG));
    expect(setupCodex({ env: mine, remove: true })[0]).toMatchObject({ action: 'unchanged', detail: 'no MCP server set up by Spillway here' });
  });
});

describe('spillway setup claude-code --no-hook: the proxy only', () => {
  it('project and user scope (real CLI, temp HOME): the server behind the proxy, no hook anywhere; --remove takes out all it added (git status clean)', () => {
    const env = envFor();
    const { repo, git } = gitRepo(env.HOME!);
    const userSettings = path.join(env.HOME!, '.claude', 'settings.json');
    const localSettings = path.join(repo, '.claude', 'settings.local.json');

    const add = runSetup(['claude-code', '--project', repo, '--mcp', 'fs', '--no-hook', '--', ...SERVER], env);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).not.toMatch(/PostToolUse/);
    const server = JSON.parse(fs.readFileSync(path.join(repo, '.mcp.json'), 'utf8')).mcpServers.fs;
    expect(server.args).toEqual([BIN, 'mcp', '--client', 'claude-code', '--server-name', 'fs', '--', ...SERVER]);
    // The project's approval is the only thing in its settings: no hook.
    expect(JSON.parse(fs.readFileSync(localSettings, 'utf8'))).toEqual({ enabledMcpjsonServers: ['fs'] });
    expect(fs.existsSync(userSettings)).toBe(false);
    // Again: nothing changes.
    const again = runSetup(['claude-code', '--project', repo, '--mcp', 'fs', '--no-hook', '--', ...SERVER], env);
    expect(again.stdout.trim().split('\n').every((l) => l.startsWith('unchanged'))).toBe(true);

    // User scope: ~/.claude.json gets the server; the user's settings are not even created.
    const user = runSetup(['claude-code', '--user', '--mcp', 'fs', '--no-hook', '--', ...SERVER], env);
    expect(user.code, user.stderr).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(env.HOME!, '.claude.json'), 'utf8')).mcpServers.fs.args.slice(-SERVER.length)).toEqual(SERVER);
    expect(fs.existsSync(userSettings)).toBe(false);

    // Nothing to do is an error, not a silent no-op.
    const none = runSetup(['claude-code', '--no-hook'], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/--no-hook leaves nothing to do without --mcp/);

    // A plain --remove still takes out everything setup added in the scope.
    const rm = runSetup(['claude-code', '--project', repo, '--remove'], env);
    expect(rm.code, rm.stderr).toBe(0);
    expect(rm.stdout).toMatch(/^deleted +.*settings\.local\.json: .*removed "fs" from enabledMcpjsonServers/m);
    expect(rm.stdout).toMatch(/^deleted +.*\.mcp\.json: removed MCP server "fs"/m);
    expect(git('status', '--porcelain', '--untracked-files=all', '--ignored')).toBe('');
    const rmUser = runSetup(['claude-code', '--user', '--remove'], env);
    expect(rmUser.code, rmUser.stderr).toBe(0);
    expect(fs.existsSync(path.join(env.HOME!, '.claude.json'))).toBe(false);
    expect(fs.existsSync(userSettings)).toBe(false);
  }, CLI_TEST_MS);

  it('--remove --no-hook: the servers go, the hook stays', () => {
    const env = envFor();
    const project = tmpDir('spillway-project-');
    setupClaudeCode({ env, projectDir: project, mcp: { name: 'fs', server: SERVER } });
    const settings = path.join(project, '.claude', 'settings.local.json');
    const hooks = JSON.parse(fs.readFileSync(settings, 'utf8')).hooks;
    expect(hooks.PostToolUse).toHaveLength(1);
    setupClaudeCode({ env, projectDir: project, remove: true, hook: false });
    expect(JSON.parse(fs.readFileSync(settings, 'utf8'))).toEqual({ hooks });
    expect(fs.existsSync(path.join(project, '.mcp.json'))).toBe(false);
  });
});
