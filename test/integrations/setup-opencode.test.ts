import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PLUGIN_FILE_NAME, PLUGIN_MARK } from '../../src/agents/opencode/plugin.js';
import { setupOpenCode } from '../../src/agents/opencode/setup.js';
import { SETUP_MARK_ENV, SetupError } from '../../src/integrations/setup/files.js';
import { cliArgs, tmpDir } from './helpers.js';

const SERVER = ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/home/me/work'];
const CLI_TEST_MS = 240_000;

/** A private HOME (OpenCode's config under its .config) and app data, and a PATH without any `spillway`. */
function envFor(): NodeJS.ProcessEnv {
  const home = tmpDir('spillway-setup-oc-home-');
  return { HOME: home, PATH: '/usr/bin:/bin', SPILLWAY_HOME: path.join(tmpDir('spillway-setup-oc-data-'), 'app') };
}

const EXISTING = {
  $schema: 'https://opencode.ai/config.json',
  model: 'anthropic/claude-sonnet-4-5',
  theme: 'opencode',
  mcp: { docs: { type: 'remote', url: 'https://example.com/mcp', enabled: true } },
  permission: { bash: 'ask' },
};

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

describe('spillway setup opencode', () => {
  it('merges the plugin and the proxy into an existing user config; idempotent; --remove gives back the original bytes, mode and owner', () => {
    const env = envFor();
    const dir = path.join(env.HOME!, '.config', 'opencode');
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'opencode.json');
    // Four-space indent and no final newline: setup must give these exact bytes back.
    const original = JSON.stringify(EXISTING, null, 4);
    fs.writeFileSync(file, original);
    fs.chmodSync(file, 0o640);
    if (isRoot) fs.chownSync(file, 4321, 4322);

    const first = setupOpenCode({ env, mcp: { name: 'fs', server: SERVER } });
    const plugin = path.join(dir, 'plugins', PLUGIN_FILE_NAME);
    expect(first.map((c) => [c.file, c.action])).toEqual([
      [plugin, 'created'],
      [file, 'updated'],
    ]);
    const text = fs.readFileSync(plugin, 'utf8');
    expect(text.startsWith(PLUGIN_MARK)).toBe(true);
    expect(text).toContain("'tool.execute.after'");
    expect(text).toContain(JSON.stringify([process.execPath, path.resolve('bin', 'spillway.js'), 'hook', 'opencode']).slice(1, -1));
    const merged = JSON.parse(fs.readFileSync(file, 'utf8'));
    const { mcp, ...rest } = merged;
    const { mcp: oldMcp, ...oldRest } = EXISTING;
    expect(rest).toEqual(oldRest);
    expect(mcp.docs).toEqual(oldMcp.docs);
    expect(mcp.fs.type).toBe('local');
    expect(mcp.fs.enabled).toBe(true);
    expect(mcp.fs.command.slice(-SERVER.length - 1)).toEqual(['--', ...SERVER]);
    expect(mcp.fs.command).toContain('mcp');
    expect(mcp.fs.environment[SETUP_MARK_ENV]).toBe('added');
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    if (isRoot) expect([fs.statSync(file).uid, fs.statSync(file).gid]).toEqual([4321, 4322]);

    const afterFirst = fs.readFileSync(file);
    const second = setupOpenCode({ env, mcp: { name: 'fs', server: SERVER } });
    expect(second.map((c) => c.action)).toEqual(['unchanged', 'unchanged']);
    expect(fs.readFileSync(file).equals(afterFirst)).toBe(true);

    const removed = setupOpenCode({ env, remove: true });
    expect(removed.map((c) => [c.file, c.action])).toEqual([
      [plugin, 'deleted'],
      [file, 'updated'],
    ]);
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    if (isRoot) expect([fs.statSync(file).uid, fs.statSync(file).gid]).toEqual([4321, 4322]);
    // The plugins folder setup made is gone with its file; the user's config folder stays.
    expect(fs.existsSync(path.join(dir, 'plugins'))).toBe(false);
    expect(fs.readdirSync(dir)).toEqual(['opencode.json']);
  });

  it('--project: the plugin in .opencode/plugins, a created opencode.json deleted again by --remove, nothing left', () => {
    const env = envFor();
    const project = tmpDir('spillway-setup-oc-proj-');
    fs.writeFileSync(path.join(project, 'README.md'), 'hi\n');
    setupOpenCode({ env, projectDir: project, mcp: { name: 'fs', server: SERVER } });
    expect(fs.existsSync(path.join(project, '.opencode', 'plugins', PLUGIN_FILE_NAME))).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(project, 'opencode.json'), 'utf8')).mcp.fs.type).toBe('local');
    // Nothing lands in the user's config.
    expect(fs.existsSync(path.join(env.HOME!, '.config', 'opencode'))).toBe(false);
    setupOpenCode({ env, projectDir: project, remove: true });
    expect(fs.readdirSync(project)).toEqual(['README.md']);
  });

  it('wraps an existing local server and --remove gives it its own command back, its environment kept', () => {
    const env = envFor();
    const project = tmpDir('spillway-setup-oc-wrap-');
    const file = path.join(project, 'opencode.json');
    const original = `${JSON.stringify({ mcp: { fs: { type: 'local', command: SERVER, environment: { TOKEN: 'x' }, timeout: 20000 } } }, null, 2)}\n`;
    fs.writeFileSync(file, original);
    setupOpenCode({ env, projectDir: project, mcp: { name: 'fs', server: [] }, hook: false });
    const wrapped = JSON.parse(fs.readFileSync(file, 'utf8')).mcp.fs;
    expect(wrapped.command.slice(-SERVER.length)).toEqual(SERVER);
    expect(wrapped.environment).toEqual({ TOKEN: 'x', [SETUP_MARK_ENV]: 'wrapped' });
    expect(wrapped.timeout).toBe(20000);
    expect(fs.existsSync(path.join(project, '.opencode'))).toBe(false);
    setupOpenCode({ env, projectDir: project, remove: true, hook: false });
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(JSON.parse(original));
  });

  it("leaves alone what is not its own: a plugin file of that name, a server it did not wrap, opencode.jsonc, an invalid file", () => {
    const env = envFor();
    const project = tmpDir('spillway-setup-oc-foreign-');
    const plugin = path.join(project, '.opencode', 'plugins', PLUGIN_FILE_NAME);
    fs.mkdirSync(path.dirname(plugin), { recursive: true });
    fs.writeFileSync(plugin, 'export const Mine = async () => ({});\n');
    expect(() => setupOpenCode({ env, projectDir: project })).toThrow(SetupError);
    expect(() => setupOpenCode({ env, projectDir: project, remove: true })).toThrow(/not written by spillway setup/);
    expect(fs.readFileSync(plugin, 'utf8')).toBe('export const Mine = async () => ({});\n');

    const p2 = tmpDir('spillway-setup-oc-jsonc-');
    fs.writeFileSync(path.join(p2, 'opencode.jsonc'), '{ // mine\n}\n');
    expect(() => setupOpenCode({ env, projectDir: p2, mcp: { name: 'fs', server: SERVER } })).toThrow(/JSONC/);
    expect(fs.readdirSync(p2)).toEqual(['opencode.jsonc']);

    const p3 = tmpDir('spillway-setup-oc-bad-');
    fs.writeFileSync(path.join(p3, 'opencode.json'), '{ "mcp": ');
    expect(() => setupOpenCode({ env, projectDir: p3, mcp: { name: 'fs', server: SERVER } })).toThrow(SetupError);
    expect(fs.readFileSync(path.join(p3, 'opencode.json'), 'utf8')).toBe('{ "mcp": ');
    // Read first, write after: the plugin was not written either.
    expect(fs.existsSync(path.join(p3, '.opencode'))).toBe(false);

    const p4 = tmpDir('spillway-setup-oc-theirs-');
    const theirs = `${JSON.stringify({ mcp: { fs: { type: 'local', command: SERVER } } }, null, 2)}\n`;
    fs.writeFileSync(path.join(p4, 'opencode.json'), theirs);
    expect(() => setupOpenCode({ env, projectDir: p4, mcp: { name: 'fs', server: [] }, remove: true, hook: false })).toThrow(/not set up by spillway/);
    expect(fs.readFileSync(path.join(p4, 'opencode.json'), 'utf8')).toBe(theirs);

    expect(() => setupOpenCode({ env, projectDir: p4, hook: false })).toThrow(/--no-hook/);
  });

  it(
    'the CLI: `spillway setup opencode --project DIR --mcp fs -- …` reports each file, a second run is unchanged, --remove leaves the folder as it was',
    () => {
      const env = envFor();
      const project = tmpDir('spillway-setup-oc-cli-');
      const run = (args: string[]) => spawnSync(process.execPath, cliArgs(['setup', 'opencode', '--project', project, ...args]), { env: { ...process.env, ...env }, encoding: 'utf8' });
      const a = run(['--mcp', 'fs', '--', ...SERVER]);
      expect(a.status, a.stderr).toBe(0);
      expect(a.stdout).toMatch(/created .*spillway-guard\.js/);
      expect(a.stdout).toMatch(/created .*opencode\.json/);
      const b = run(['--mcp', 'fs', '--', ...SERVER]);
      expect(b.status, b.stderr).toBe(0);
      expect(b.stdout.trim().split('\n').every((l) => l.startsWith('unchanged')), b.stdout).toBe(true);
      const c = run(['--remove']);
      expect(c.status, c.stderr).toBe(0);
      expect(fs.readdirSync(project)).toEqual([]);
    },
    CLI_TEST_MS,
  );
});
