import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openIndex } from '../../src/index/index.js';
import { generateSessionsRoot } from '../helpers/gen-sessions.js';
import { CLI, FIXTURES, REPO, tmpDir } from './helpers.js';

function spillway(args: string[], home: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', '--conditions=source', CLI, ...args], {
    cwd: REPO,
    env: { ...process.env, SPILLWAY_HOME: home },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('spillway index', () => {
  it('indexes folders into --db and prints the totals as JSON', async () => {
    const dir = path.join(tmpDir(), 'sessions');
    const gen = await generateSessionsRoot(dir, { sessions: 2, payloads: 12, seed: 21 });
    const home = tmpDir();
    const db = path.join(tmpDir(), 'my.sqlite');
    const r = spillway(['index', dir, path.join(FIXTURES, 'gemini'), '--db', db, '--json'], home);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(Object.keys(out).sort()).toEqual(['assets', 'bytes', 'payloads', 'seconds', 'sessions']);
    expect(out.sessions).toBe(3);
    expect(out.payloads).toBe(12 + 10);
    expect(out.assets).toBe(gen.assets);
    expect(out.seconds).toBeGreaterThanOrEqual(0);
    // The database is the one named, and holds what was printed.
    const index = openIndex({ dbPath: db });
    expect(index.listPayloads({}).total).toBe(22);
    await index.close();
    // Again: nothing to do, same totals; a subfolder of a known root reuses that root.
    const again = spillway(['index', path.join(dir, 'session-000'), '--db', db], home);
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/indexed 2 session\(s\), 12 payload\(s\)/);
  });

  it('uses the app-data folder by default and fails clearly on a missing folder', () => {
    const home = tmpDir();
    const ok = spillway(['index', path.join(FIXTURES, 'gemini'), '--json'], home);
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout).payloads).toBe(10);
    const index = openIndex({ dbPath: path.join(home, 'index.sqlite') });
    expect(index.listRoots()).toHaveLength(1);
    void index.close();
    const bad = spillway(['index', path.join(home, 'missing'), '--json'], home);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/does not exist/);
    expect(bad.stdout).toBe('');
  });

  it('prints the progress of both phases to stderr: listing, then full-text search', () => {
    const home = tmpDir();
    const r = spillway(['index', path.join(FIXTURES, 'gemini'), '--db', path.join(home, 'x.sqlite')], home);
    expect(r.status).toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(/^spillway: gemini: listing done, 1 unit\(s\) listed, at \d+\.\d\d s$/),
      expect.stringMatching(/^spillway: gemini: full-text search done, 10 payload\(s\) searchable, at \d+\.\d\d s$/),
    ]);
    expect(r.stdout).toMatch(/indexed 1 session\(s\), 10 payload\(s\)/);
  });
});
