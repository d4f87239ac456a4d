import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSessionsRoot } from '../helpers/gen-sessions.js';

/** `spillway serve` as a user runs it: a real process, real signals. */

const REPO = path.resolve(import.meta.dirname, '..', '..');
const CLI = ['--import', 'tsx', '--conditions=source', path.join(REPO, 'src', 'cli', 'main.ts')];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-serve-cli-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});

function serve(args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string; stderr: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [...CLI, 'serve', ...args], { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve printed no URL in time; stderr: ${err}`)), 60_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n')[0]!;
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve({ child, url: line, stderr: () => err, exited });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${err}`));
    });
  });
}

describe('spillway serve', () => {
  it('prints a one-time loopback link, serves the API, registers --root persistently and stops cleanly on SIGTERM', async () => {
    const home = path.join(tmp, 'home');
    const gen = await generateSessionsRoot(path.join(tmp, 'root'), { sessions: 1, payloads: 4, seed: 5 });
    const db = path.join(tmp, 'db', 'index.sqlite');
    const token = 'fixed-token-from-the-environment-0123';
    const first = await serve(['--root', gen.root, '--db', db], { SPILLWAY_HOME: home, SPILLWAY_TOKEN: token });
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#launch=[A-Za-z0-9_-]{43}$/);
    expect(first.url).not.toContain(token);
    const u = new URL(first.url);
    // The link buys the token once, and the terminal then offers a fresh link.
    const trade = await fetch(new URL('/api/auth/launch', u), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code: u.hash.slice(8) }) });
    expect(((await trade.json()) as { result: { token: string } }).result.token).toBe(token);
    for (let i = 0; i < 50 && !/link used/.test(first.stderr()); i++) await new Promise((r) => setTimeout(r, 50));
    expect(first.stderr()).toMatch(/link used; for another tab or after a reload open http:\/\/127\.0\.0\.1:\d+\/#launch=[A-Za-z0-9_-]{43}/);
    expect((await fetch(new URL('/api/listRoots', u), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
    const call = async (m: string, body: unknown) => {
      const r = await fetch(new URL(`/api/${m}`, u), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      return (await r.json()) as { result: any };
    };
    const info = (await call('getInfo', {})).result;
    expect(info.dbPath).toBe(db);
    let total = 0;
    for (let i = 0; i < 100 && total < 4; i++) {
      total = (await call('listPayloads', { limit: 1 })).result.total;
      if (total < 4) await new Promise((r) => setTimeout(r, 100));
    }
    expect(total).toBe(4);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.stderr()).toContain('SIGTERM, closing');

    // The root was remembered: a second run without --root still lists it.
    const tokenFile = path.join(tmp, 'token');
    fs.writeFileSync(tokenFile, `${token}-2\n`, { mode: 0o600 });
    const second = await serve(['--db', db, '--port', '0', '--token-file', tokenFile], { SPILLWAY_HOME: home });
    const u2 = new URL(second.url);
    const roots = (await (
      await fetch(new URL('/api/listRoots', u2), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}-2` },
        body: '{}',
      })
    ).json()) as { result: Array<{ path: string }> };
    expect(roots.result.map((r) => r.path)).toContain(fs.realpathSync(gen.root));
    // Ctrl+C under a parent (npm start) arrives twice at once: still a clean stop.
    second.child.kill('SIGINT');
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('with no root at all, uses the app-data sessions folder; --open without a browser only warns', async () => {
    const home = path.join(tmp, 'home2');
    const token = 'another-fixed-token-0123456789';
    const run = await serve(['--open'], { SPILLWAY_HOME: home, PATH: '/nonexistent', DISPLAY: '', SPILLWAY_TOKEN: token });
    const u = new URL(run.url);
    const roots = (await (
      await fetch(new URL('/api/listRoots', u), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: '{}',
      })
    ).json()) as { result: Array<{ path: string }> };
    expect(roots.result.map((r) => r.path)).toContain(path.join(home, 'sessions'));
    await new Promise((r) => setTimeout(r, 300));
    expect(run.stderr()).toMatch(/could not open a browser/);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('never puts the token in an argv: no --token flag, a token file others can read is refused, --open hands the browser a one-time link', async () => {
    const env = { ...process.env, SPILLWAY_HOME: path.join(tmp, 'h5') };
    const flag = spawnSync(process.execPath, [...CLI, 'serve', '--token', 'abcdefghijklmnopqrstuvwxyz'], { cwd: REPO, encoding: 'utf8', env });
    expect(flag.status).toBe(2);
    expect(flag.stderr).toMatch(/unknown option/);
    const open = path.join(tmp, 'token-0644');
    fs.writeFileSync(open, 'abcdefghijklmnopqrstuvwxyz', { mode: 0o644 });
    fs.chmodSync(open, 0o644);
    const loose = spawnSync(process.execPath, [...CLI, 'serve', '--token-file', open], { cwd: REPO, encoding: 'utf8', env });
    expect(loose.status).toBe(1);
    expect(loose.stderr).toMatch(/readable by other accounts/);
    // A stand-in xdg-open records the argv a browser would be started with (readable by any local account).
    const bin = path.join(tmp, 'bin');
    fs.mkdirSync(bin, { recursive: true });
    const argvFile = path.join(tmp, 'xdg-open-argv');
    fs.writeFileSync(path.join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$*" > '${argvFile}'\n`, { mode: 0o755 });
    const token = 'token-that-must-stay-in-memory-42';
    const run = await serve(['--open'], { SPILLWAY_HOME: path.join(tmp, 'h6'), SPILLWAY_TOKEN: token, PATH: `${bin}:${process.env.PATH}` });
    for (let i = 0; i < 100 && !fs.existsSync(argvFile); i++) await new Promise((r) => setTimeout(r, 50));
    const argv = fs.readFileSync(argvFile, 'utf8');
    expect(argv).not.toContain(token);
    expect(argv).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#launch=[A-Za-z0-9_-]{43}$/);
    expect(argv).not.toBe(run.url);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('rejects a bad port and a missing root with a clear error', () => {
    const bad = spawnSync(process.execPath, [...CLI, 'serve', '--port', '99999'], { cwd: REPO, encoding: 'utf8', env: { ...process.env, SPILLWAY_HOME: path.join(tmp, 'h3') } });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/port/);
    const missing = spawnSync(process.execPath, [...CLI, 'serve', '--root', path.join(tmp, 'nope')], {
      cwd: REPO,
      encoding: 'utf8',
      env: { ...process.env, SPILLWAY_HOME: path.join(tmp, 'h4') },
    });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/nope/);
  });
});
