import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { setupClaudeCode } from '../../src/integrations/setup/claude-code.js';
import { setupCodex } from '../../src/integrations/setup/codex.js';
import { SetupError } from '../../src/integrations/setup/files.js';
import { cliArgs, ROOT, tmpDir } from './helpers.js';

const BIN = path.join(ROOT, 'bin', 'spillway.js');
const SERVER = ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/home/me/work'];

/** A private HOME and a PATH without any `spillway`, so the absolute form is written. */
function envFor(home = tmpDir('spillway-setup-home-')): NodeJS.ProcessEnv {
  return { HOME: home, PATH: '/usr/bin:/bin' };
}

function backups(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.spillway-backup')) : [];
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

    const again = setupClaudeCode({ env });
    expect(again[0]!.action).toBe('unchanged');
    expect(backups(path.dirname(file))).toHaveLength(1);

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
      args: [BIN, 'mcp', '--client', 'claude-code', '--', ...SERVER],
      env: { SET_UP_BY_SPILLWAY: 'added' },
    });
    expect(setupClaudeCode({ env, projectDir: project, mcp: { name: 'fs', server: SERVER } }).map((c) => c.action)).toEqual(['unchanged', 'unchanged']);
    setupClaudeCode({ env, projectDir: project, mcp: { name: 'fs', server: [] }, remove: true });
    expect(JSON.parse(fs.readFileSync(path.join(project, '.mcp.json'), 'utf8'))).toEqual({ mcpServers: {} });
    expect(JSON.parse(fs.readFileSync(path.join(project, '.claude', 'settings.local.json'), 'utf8'))).toEqual({});
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
    expect(wrapped.git.args).toEqual([BIN, 'mcp', '--client', 'claude-code', '--', 'uvx', 'mcp-server-git', '--repository', '.']);
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
      expect(backups(path.dirname(file))).toEqual([]);
    }
    const u = runSetup(['vscode'], env);
    expect(u.code).toBe(2);
    expect(u.stderr).toMatch(/unknown client "vscode"/);
  });

  it('the CLI reports each file it touched', () => {
    const env = envFor();
    const r = runSetup(['claude-code', '--user'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^created +.*\.claude\/settings\.json: added the PostToolUse hook/m);
    expect(runSetup(['claude-code'], env).stdout).toMatch(/^unchanged /m);
  });
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
    expect(doc.mcp_servers.fs).toEqual({ command: process.execPath, args: [BIN, 'mcp', '--client', 'codex', '--', ...SERVER], env: { SET_UP_BY_SPILLWAY: 'added' } });
    expect(doc.mcp_servers.git).toEqual({ command: 'uvx', args: ['mcp-server-git'], env: { GIT_TOKEN: 'secret' } });
    expect(setupCodex({ env, mcp: { name: 'fs', server: SERVER } })[0]!.action).toBe('unchanged');
    setupCodex({ env, mcp: { name: 'fs', server: [] }, remove: true });
    expect(fs.readFileSync(file, 'utf8')).toBe(CODEX_CONFIG);
  });

  it('wraps an existing server (its env kept) and unwraps it; a new file is created when there is none', () => {
    const { env, file } = codexEnv(CODEX_CONFIG);
    setupCodex({ env, mcp: { name: 'git', server: [] } });
    const wrapped = (parse(fs.readFileSync(file, 'utf8')) as any).mcp_servers.git;
    expect(wrapped.args).toEqual([BIN, 'mcp', '--client', 'codex', '--', 'uvx', 'mcp-server-git']);
    expect(wrapped.env).toEqual({ GIT_TOKEN: 'secret', SET_UP_BY_SPILLWAY: 'wrapped' });
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
      expect(backups(path.dirname(file))).toEqual([]);
    }
    expect(runSetup(['codex'], envFor()).code).toBe(1);
  });

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
  });
});
