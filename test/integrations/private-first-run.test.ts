/**
 * Issue 22, finding 4: app data is private whichever command creates it. Under umask 022 with a
 * fresh SPILLWAY_HOME, the real CLI (`hook claude-code`, `guard` into app data) must make the
 * app-data folder, `sessions/` and the session folders 0700, and spills, sidecars and assets 0600.
 * Before the fix the hook made them 0755 and 0644: whole Bash outputs readable by every account.
 * `spillway mcp` in front of a real server (server-filesystem from npm), and `spillway setup`'s
 * backups and manifest, are held to the same.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FILESYSTEM, cliArgs, connect, makeLog, makePng, spillOf, tmpDir } from './helpers.js';

/** What a shell with umask 022 runs: `cmd args…` started by `/bin/sh -c 'umask 022; exec …'`. */
function umask022Argv(cmd: string, args: string[]): [string, string[]] {
  return ['/bin/sh', ['-c', 'umask 022; exec "$0" "$@"', cmd, ...args]];
}

/** The CLI as a shell with umask 022 starts it. */
function underUmask022(args: string[], input: string, home: string) {
  const r = spawnSync('/bin/sh', ['-c', 'umask 022; exec "$0" "$@"', process.execPath, ...cliArgs(args)], {
    input,
    env: { ...process.env, SPILLWAY_HOME: home },
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(r.status, r.stderr.toString()).toBe(0);
  return r;
}

/** Every folder and file from `home` down, with its mode, so a failure names the culprit. */
function modes(home: string): Array<{ p: string; dir: boolean; mode: string }> {
  const out: Array<{ p: string; dir: boolean; mode: string }> = [];
  const walk = (p: string) => {
    const st = fs.lstatSync(p);
    out.push({ p: path.relative(path.dirname(home), p), dir: st.isDirectory(), mode: (st.mode & 0o777).toString(8) });
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) walk(path.join(p, n));
  };
  walk(home);
  return out;
}

function expectPrivate(home: string, wantFiles: RegExp[]): void {
  const all = modes(home);
  for (const re of wantFiles) expect(all.some((e) => !e.dir && re.test(e.p)), `${re} was written`).toBe(true);
  expect(all.filter((e) => e.mode !== (e.dir ? '700' : '600'))).toEqual([]);
}

describe('private files from whichever command runs first (umask 022, fresh app data)', () => {
  it('spillway hook claude-code', () => {
    const home = path.join(tmpDir(), 'home');
    const png = makePng(64, 64).toString('base64');
    const ev = {
      session_id: 'a1b2c3d4-5e6f-4a5b-8c9d-0e1f2a3b4c5d',
      transcript_path: '/home/user/.claude/projects/-p/a1b2c3d4-5e6f-4a5b-8c9d-0e1f2a3b4c5d.jsonl',
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'cat big' },
      tool_response: { stdout: `${makeLog(200_000)}\ndata:image/png;base64,${png}\n`, stderr: '', interrupted: false, isImage: false },
      tool_use_id: 'toolu_01ABCDEFGHJKLMNPQRSTUVWX',
    };
    underUmask022(['hook', 'claude-code'], JSON.stringify(ev), home);
    expectPrivate(home, [/long_responses\/[^/]+\.meta\.json$/, /long_responses\/[^/]+_0(\.[a-z]+)?$/]);
  });

  it('spillway guard --session into app data', () => {
    const home = path.join(tmpDir(), 'home');
    const png = makePng(64, 64).toString('base64');
    const result = JSON.stringify({ log: makeLog(200_000), image: `data:image/png;base64,${png}` });
    underUmask022(['guard', '--session', path.join(home, 'sessions', 'manual'), '--tool', 'big'], result, home);
    expectPrivate(home, [/long_responses\/[^/]+\.meta\.json$/, /long_responses\/assets\/[0-9a-f]{32}\.png$/]);
  });

  it('spillway mcp in front of server-filesystem: a text spill and an image spill with its asset', async () => {
    const home = path.join(tmpDir(), 'home');
    const data = fs.realpathSync(tmpDir('spillway-fs-'));
    fs.writeFileSync(path.join(data, 'big.log'), makeLog(300_000));
    fs.writeFileSync(path.join(data, 'picture.png'), makePng(400));
    const [cmd, args] = umask022Argv(process.execPath, cliArgs(['mcp', '--', process.execPath, FILESYSTEM, data]));
    const proxy = await connect(cmd, args, { ...process.env, SPILLWAY_HOME: home });
    try {
      const text = await proxy.client.callTool({ name: 'read_text_file', arguments: { path: path.join(data, 'big.log') } });
      expect(spillOf(text)?.action, proxy.stderr()).toBe('spill');
      const media = await proxy.client.callTool({ name: 'read_media_file', arguments: { path: path.join(data, 'picture.png') } });
      // Cut out as an asset (inline-assets) or spilled whole: either way written to the session.
      expect(spillOf(media)?.action, proxy.stderr()).toMatch(/^(spill|inline-assets)$/);
    } finally {
      await proxy.client.close();
    }
    expectPrivate(home, [/sessions\/[^/]+\/long_responses\/[^/]+\.meta\.json$/, /long_responses\/[^/]+read_text_file[^/]*_0\.[a-z]+$/, /long_responses\/assets\/[0-9a-f]{32}\.png$/]);
  }, 120_000);

  it('spillway setup: the backup of a settings file and the manifest, in fresh app data', () => {
    const home = path.join(tmpDir(), 'app');
    const project = tmpDir('spillway-setup-project-');
    const settings = path.join(project, '.claude', 'settings.local.json');
    fs.mkdirSync(path.dirname(settings), { recursive: true });
    fs.writeFileSync(settings, '{"model":"opus"}\n');
    const [cmd, args] = umask022Argv(process.execPath, cliArgs(['setup', 'claude-code', '--project', project, '--mcp', 'fs', '--', 'npx', '-y', '@modelcontextprotocol/server-filesystem', project]));
    const r = spawnSync(cmd, args, { env: { ...process.env, HOME: tmpDir('spillway-setup-home-'), PATH: '/usr/bin:/bin', SPILLWAY_HOME: home }, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expectPrivate(home, [/backups\/[^/]+\.spillway-backup$/, /setup\/manifest\.json$/]);
  }, 120_000);
});
