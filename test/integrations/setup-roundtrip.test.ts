/**
 * Issue 32 (also noticed): `setup codex --remove` left its `# spillway setup codex: …` comment in
 * config.toml. The promise now (docs/security.md, "Config files setup edits"): `--remove` takes out
 * every line setup added and nothing the user wrote, so setup then `--remove` gives back the very
 * bytes the file had: for Codex's config.toml (a server added, or the user's own wrapped, whatever
 * the file's layout), and for Claude Code's JSON files (written back in the file's own indent and ending).
 * In process, with a private HOME, CODEX_HOME and app data in fresh temp folders.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { setupClaudeCode } from '../../src/integrations/setup/claude-code.js';
import { setupCodex } from '../../src/integrations/setup/codex.js';
import { tmpDir } from './helpers.js';

const SERVER = ['npx', '-y', '@modelcontextprotocol/server-filesystem', '/home/me/work'];

function envFor(): NodeJS.ProcessEnv {
  const home = tmpDir('spillway-roundtrip-home-');
  return { HOME: home, PATH: '/usr/bin:/bin', SPILLWAY_HOME: path.join(tmpDir('spillway-roundtrip-data-'), 'app'), CODEX_HOME: path.join(home, '.codex') };
}

function codexFile(text: string | undefined): { env: NodeJS.ProcessEnv; file: string } {
  const env = envFor();
  const file = path.join(env.CODEX_HOME!, 'config.toml');
  if (text !== undefined) {
    fs.mkdirSync(env.CODEX_HOME!, { recursive: true });
    fs.writeFileSync(file, text);
  }
  return { env, file };
}

/** A user's config with its own comments inside the server table setup will wrap. */
const CODEX_CONFIG = `# my Codex config
model = "gpt-5.5"   # the default model

# the git server, do not touch
[mcp_servers.git]
command = "uvx"   # installed by hand
# args = ["old-server"]
args = [
  "mcp-server-git",
]

[profiles.fast]
model = "gpt-5.5-mini"

[mcp_servers.git.env]
GIT_TOKEN = "secret"
`;

describe('setup codex, then --remove: the very bytes back, no comment of setup left (issue 32)', () => {
  it('a wrapped server: its own lines (comments, layout, a table far from the rest) come back where they were', () => {
    const { env, file } = codexFile(CODEX_CONFIG);
    const [c] = setupCodex({ env, mcp: { name: 'git', server: [] } });
    expect(c!.action).toBe('updated');
    const wrapped = fs.readFileSync(file, 'utf8');
    expect((parse(wrapped) as any).mcp_servers.git.env).toEqual({ GIT_TOKEN: 'secret', SET_UP_BY_SPILLWAY: 'wrapped' });
    expect(wrapped).toContain('# spillway setup codex: git runs behind spillway mcp');
    setupCodex({ env, mcp: { name: 'git', server: [] }, remove: true });
    expect(fs.readFileSync(file, 'utf8')).toBe(CODEX_CONFIG);
    // The same through a remove of every server setup touched (no --mcp).
    setupCodex({ env, mcp: { name: 'git', server: [] } });
    setupCodex({ env, remove: true });
    expect(fs.readFileSync(file, 'utf8')).toBe(CODEX_CONFIG);
  });

  it('several servers, added and wrapped, removed in any order: the bytes back', () => {
    for (const order of [['a', 'git', 'b'], ['b', 'a', 'git'], ['git', 'b', 'a'], ['all']]) {
      const { env, file } = codexFile(CODEX_CONFIG);
      setupCodex({ env, mcp: { name: 'a', server: SERVER } });
      setupCodex({ env, mcp: { name: 'git', server: [] } });
      setupCodex({ env, mcp: { name: 'b', server: ['srv'] } });
      expect(setupCodex({ env, mcp: { name: 'git', server: [] } })[0]!.action).toBe('unchanged');
      expect(Object.keys((parse(fs.readFileSync(file, 'utf8')) as any).mcp_servers).sort()).toEqual(['a', 'b', 'git']);
      for (const n of order) setupCodex(n === 'all' ? { env, remove: true } : { env, mcp: { name: n, server: [] }, remove: true });
      expect([order, fs.readFileSync(file, 'utf8')]).toEqual([order, CODEX_CONFIG]);
    }
  });

  it('a wrapped server set up again with another command: setup\'s table replaced, the kept lines stay; --remove writes the new command (the kept lines no longer say what runs)', () => {
    const { env, file } = codexFile(CODEX_CONFIG);
    setupCodex({ env, mcp: { name: 'git', server: [] } });
    setupCodex({ env, mcp: { name: 'git', server: ['uvx', 'mcp-server-git', '--verbose'] } });
    const text = fs.readFileSync(file, 'utf8');
    expect(text.match(/# spillway setup codex: git/g)).toHaveLength(1);
    expect(text).toContain('# spillway setup codex kept: [mcp_servers.git]');
    setupCodex({ env, remove: true });
    const after = fs.readFileSync(file, 'utf8');
    expect(after).not.toMatch(/spillway/);
    expect((parse(after) as any).mcp_servers.git).toEqual({ command: 'uvx', args: ['mcp-server-git', '--verbose'], env: { GIT_TOKEN: 'secret' } });
  });

  it('the wrapper edited by hand since: --remove keeps the edit, takes out the kept lines and the comment, and says so', () => {
    const { env, file } = codexFile(CODEX_CONFIG);
    setupCodex({ env, mcp: { name: 'git', server: [] } });
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('GIT_TOKEN = "secret"\nSET_UP_BY_SPILLWAY', 'GIT_TOKEN = "rotated"\nSET_UP_BY_SPILLWAY'));
    const [c] = setupCodex({ env, mcp: { name: 'git', server: [] }, remove: true });
    expect(c!.detail).toMatch(/its own earlier lines no longer matched the wrapper, so its table was written anew \(the old text is in the backup\)/);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).not.toMatch(/spillway/);
    expect((parse(text) as any).mcp_servers.git).toEqual({ command: 'uvx', args: ['mcp-server-git'], env: { GIT_TOKEN: 'rotated' } });
    expect(fs.readFileSync(c!.backup!, 'utf8')).toContain('# spillway setup codex kept: command = "uvx"   # installed by hand');
  });

  it('property: any layout (no final newline, blank lines at the end, CRLF, empty), a server added or wrapped: setup then --remove gives back the same bytes', () => {
    const line = fc.constantFrom('model = "x"', '# a comment', '', '[profiles.p]', 'k = 1 # trailing', '[mcp_servers.own]', 'command = "own"', '[mcp_servers.own.env]', 'T = "t"', '  ');
    const config = fc.tuple(fc.array(line, { maxLength: 8 }), fc.constantFrom('', '\n', '\n\n', ' \n'), fc.boolean()).map(([lines, end, crlf]) => {
      const t = lines.join('\n') + (lines.length ? end : '');
      return crlf ? t.replace(/\n/g, '\r\n') : t;
    });
    fc.assert(
      fc.property(config, fc.constantFrom('fs', 'own'), fc.boolean(), (text, name, all) => {
        let doc: any;
        try {
          doc = parse(text);
        } catch {
          return; // not TOML (a table twice): setup refuses it, tested elsewhere
        }
        const wrap = name === 'own';
        if (wrap && typeof doc.mcp_servers?.own?.command !== 'string') return;
        const { env, file } = codexFile(text);
        setupCodex({ env, mcp: { name, server: wrap ? [] : SERVER } });
        expect((parse(fs.readFileSync(file, 'utf8')) as any).mcp_servers[name].env.SET_UP_BY_SPILLWAY).toBe(wrap ? 'wrapped' : 'added');
        setupCodex(all ? { env, remove: true } : { env, mcp: { name, server: [] }, remove: true });
        expect(JSON.stringify(fs.readFileSync(file, 'utf8'))).toBe(JSON.stringify(text));
      }),
      { numRuns: 150 },
    );
  });

  it('a file setup created is deleted again by --remove', () => {
    const { env, file } = codexFile(undefined);
    setupCodex({ env, mcp: { name: 'fs', server: SERVER } });
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^# spillway setup codex: fs runs behind spillway mcp/);
    setupCodex({ env, remove: true });
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe('setup claude-code, then --remove: the very bytes back (issue 32)', () => {
  const styles = {
    'two spaces': (v: unknown) => `${JSON.stringify(v, null, 2)}\n`,
    'four spaces, no final newline': (v: unknown) => JSON.stringify(v, null, 4),
    tabs: (v: unknown) => `${JSON.stringify(v, null, '\t')}\n`,
    CRLF: (v: unknown) => `${JSON.stringify(v, null, 2)}\n`.replace(/\n/g, '\r\n'),
  };
  for (const [style, write] of Object.entries(styles)) {
    it(`settings.json, ~/.claude.json, a project's settings.local.json and .mcp.json in ${style}`, () => {
      const env = envFor();
      const project = tmpDir('spillway-roundtrip-project-');
      const files: Array<[string, unknown]> = [
        [path.join(env.HOME!, '.claude', 'settings.json'), { model: 'opus', hooks: { Stop: [{ hooks: [{ type: 'command', command: 'notify' }] }] } }],
        [path.join(env.HOME!, '.claude.json'), { numStartups: 3, mcpServers: { other: { command: 'x', args: [] } } }],
        [path.join(project, '.claude', 'settings.local.json'), { permissions: { allow: ['Bash(ls)'] } }],
        [path.join(project, '.mcp.json'), { mcpServers: {} }],
      ];
      for (const [f, v] of files) {
        fs.mkdirSync(path.dirname(f), { recursive: true });
        fs.writeFileSync(f, write(v));
      }
      setupClaudeCode({ env, mcp: { name: 'fs', server: SERVER } });
      setupClaudeCode({ env, projectDir: project, mcp: { name: 'fs', server: SERVER } });
      for (const [f] of files) expect([f, fs.readFileSync(f, 'utf8')]).not.toEqual([f, write(files.find((x) => x[0] === f)![1])]);
      setupClaudeCode({ env, remove: true });
      setupClaudeCode({ env, projectDir: project, remove: true });
      for (const [f, v] of files) expect([f, JSON.stringify(fs.readFileSync(f, 'utf8'))]).toEqual([f, JSON.stringify(write(v))]);
    });
  }
});
