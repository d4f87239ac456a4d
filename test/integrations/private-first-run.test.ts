/**
 * Issue 22, finding 4: app data is private whichever command creates it. Under umask 022 with a
 * fresh SPILLWAY_HOME, the real CLI (`hook claude-code`, `guard` into app data) must make the
 * app-data folder, `sessions/` and the session folders 0700, and spills, sidecars and assets 0600.
 * Before the fix the hook made them 0755 and 0644: whole Bash outputs readable by every account.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliArgs, makeLog, makePng, tmpDir } from './helpers.js';

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
});
