/**
 * Issue 32, items 3 and 4, through the real CLI (`index`, `context`, `serve`, `prune`, `sync`):
 * - `--db FILE` never changes the mode of the folder FILE is in: on 19f533d, `--db` in a 1777
 *   folder (as /tmp is) left it 0700, so every other account lost it.
 * - App data, a database or a consent record that another account owns, or that group or others
 *   can write, is refused with a message saying how to fix it, before anything is read or written:
 *   on 19f533d, serve started in a nobody-owned 0777 app-data folder and `spillway index` used a
 *   0666 index.sqlite nobody had planted; `prune` deleted spills and then edited a database nobody
 *   owned, and `sync` read a queue in app data nobody owned.
 * Another account's ownership is made with chown to `nobody` (uid 65534), which needs root; where
 * that is impossible those tests skip, with the reason in their title.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliArgs, ROOT } from '../integrations/helpers.js';

/** Tests that spawn the CLI (tsx compiles it each time, several seconds per run on a loaded machine). */
const CLI_TEST_MS = 240_000;
const NOBODY = 65534;
const FIXTURE = path.join(ROOT, 'test', 'index', 'fixtures', 'timeline', 'claude-code');

/** A private folder of this test's own (mkdtemp: 0700, the caller's), never /tmp itself. */
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-not-private-'));
const children: ChildProcess[] = [];

/** Whether this process can give a file to another account; if not, the reason the owner tests skip. */
function chownImpossible(): string | undefined {
  if (typeof process.getuid !== 'function') return 'no POSIX owners on this platform';
  if (process.getuid() !== 0) return `not root (uid ${process.getuid()}): cannot chown a file to a second account (nobody, uid ${NOBODY})`;
  const probe = path.join(tmp, 'chown-probe');
  fs.writeFileSync(probe, '');
  try {
    fs.chownSync(probe, NOBODY, NOBODY);
    return undefined;
  } catch (err) {
    return `chown to uid ${NOBODY} failed here (${(err as NodeJS.ErrnoException).code}): no second account can own a file`;
  } finally {
    fs.rmSync(probe, { force: true });
  }
}
/** Known when the tests are collected, so a skip says why in its own title. */
const noSecondAccount = chownImpossible();
const asRootWithNobody = it.skipIf(noSecondAccount !== undefined);
const skipNote = noSecondAccount ? ` [skipped: ${noSecondAccount}]` : '';

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A folder of this test's own (under the private mkdtemp folder), never /tmp itself. */
function dir(name: string, mode = 0o700): string {
  const d = path.join(tmp, name);
  fs.mkdirSync(d, { recursive: true });
  fs.chmodSync(d, mode);
  return d;
}

function run(args: string[], env: NodeJS.ProcessEnv) {
  const r = spawnSync(process.execPath, cliArgs(args), { cwd: ROOT, env: { ...process.env, SPILLWAY_NO_DEFAULT_ROOTS: '1', ...env }, encoding: 'utf8', timeout: 180_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `spillway serve` until it prints its URL (then SIGTERM), or until it exits. */
function serve(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; url?: string; stderr: string }> {
  const child = spawn(process.execPath, cliArgs(['serve', '--no-default-roots', ...args]), { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  let url: string | undefined;
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  child.stdout!.on('data', (c: Buffer) => {
    out += c.toString();
    if (url === undefined && out.includes('\n')) {
      url = out.split('\n')[0];
      child.kill('SIGTERM');
    }
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, url, stderr: err });
    }),
  );
}

const modeOf = (p: string) => fs.lstatSync(p).mode & 0o7777;

/** A sessions folder of ours with one real Claude Code transcript in it. */
function sessions(name: string): { root: string; transcript: string } {
  const root = dir(name);
  fs.cpSync(FIXTURE, root, { recursive: true });
  const project = fs.readdirSync(root)[0]!;
  const transcript = path.join(root, project, fs.readdirSync(path.join(root, project)).find((f) => f.endsWith('.jsonl'))!);
  return { root, transcript };
}

/** A session folder of ours with one spill 40 days old, which `prune --older-than 30d` removes. */
function oldSpill(name: string): { session: string; payload: string } {
  const session = dir(name);
  const lr = path.join(session, 'long_responses');
  fs.mkdirSync(lr, { mode: 0o700 });
  const stem = `${new Date(Date.now() - 40 * 86_400_000).toISOString().replace(/[-:.]/g, '')}_tool_0123abcd_0`;
  const payload = path.join(lr, `${stem}.txt`);
  fs.writeFileSync(payload, 'payload', { mode: 0o600 });
  fs.writeFileSync(path.join(lr, `${stem}.meta.json`), JSON.stringify({ id: stem, payloadFile: `${stem}.txt`, assets: [] }), { mode: 0o600 });
  return { session, payload };
}

describe('--db in a shared 1777 folder leaves the folder as it was (item 3)', () => {
  it('index, context and serve create their database 0600 there and keep the folder 1777; prune leaves it too', async () => {
    const shared = dir('shared', 0o1777);
    const { root, transcript } = sessions('sessions-db');
    const env = { SPILLWAY_HOME: path.join(dir('home-db'), 'app') };

    const ix = run(['index', root, '--db', path.join(shared, 'index.sqlite')], env);
    expect(ix.code, ix.stderr).toBe(0);
    expect(modeOf(shared).toString(8)).toBe('1777');
    const ctx = run(['context', transcript, '--db', path.join(shared, 'context.sqlite'), '--json'], env);
    expect(ctx.code, ctx.stderr).toBe(0);
    expect(modeOf(shared).toString(8)).toBe('1777');
    const s = await serve(['--root', root, '--db', path.join(shared, 'serve.sqlite')], env);
    expect(s.url, s.stderr).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(s.code).toBe(0);
    expect(modeOf(shared).toString(8)).toBe('1777');
    // prune opens an existing database only: it never created or changed the folder, and still does not.
    const spill = oldSpill('session-db');
    const p = run(['prune', '--older-than', '30d', '--session', spill.session, '--db', path.join(shared, 'index.sqlite')], env);
    expect(p.code, p.stderr).toBe(0);
    expect(fs.existsSync(spill.payload)).toBe(false);
    expect(modeOf(shared).toString(8)).toBe('1777');
    // The privacy is the database's own: created 0600 (SQLite gives -wal and -shm its mode).
    for (const f of ['index.sqlite', 'context.sqlite', 'serve.sqlite']) expect(modeOf(path.join(shared, f)), f).toBe(0o600);
  }, CLI_TEST_MS);

  it('a folder the database needs that does not exist yet is created 0700 (it is Spillway\'s)', () => {
    const { root } = sessions('sessions-new');
    const parent = dir('parent-new', 0o755);
    const r = run(['index', root, '--db', path.join(parent, 'made', 'by', 'us', 'index.sqlite')], { SPILLWAY_HOME: path.join(dir('home-new'), 'app') });
    expect(r.code, r.stderr).toBe(0);
    expect(modeOf(parent)).toBe(0o755);
    for (const d of ['made', 'made/by', 'made/by/us']) expect(modeOf(path.join(parent, d)), d).toBe(0o700);
  }, CLI_TEST_MS);
});

describe('app data, a database or a consent record not the caller\'s alone is refused (item 4)', () => {
  const FIX_APP = /\(check nobody else put anything in it\), or set SPILLWAY_HOME to a folder of your own/;

  asRootWithNobody(`serve, index and context refuse an app-data folder nobody owns (0777), and leave it as it was${skipNote}`, async () => {
    const { root, transcript } = sessions('sessions-serve');
    const foreign = dir('home-foreign-serve/app', 0o777);
    fs.chownSync(foreign, NOBODY, NOBODY);
    const said = new RegExp(`app-data folder .*home-foreign-serve/app belongs to another account \\(uid 65534, you are uid 0\\), so Spillway will not use it: if it is yours, \`chown 0 .*\` and \`chmod 700 .*\`; otherwise set SPILLWAY_HOME to a folder of your own`);
    const s = await serve(['--root', root], { SPILLWAY_HOME: foreign });
    expect(s.url).toBeUndefined();
    expect(s.code).toBe(1);
    expect(s.stderr).toMatch(said);
    // With --db elsewhere too: the consent record would still go into app data.
    const ix = run(['index', root, '--db', path.join(dir('db-foreign-app'), 'index.sqlite')], { SPILLWAY_HOME: foreign });
    expect(ix.code).toBe(1);
    expect(ix.stderr).toMatch(said);
    const ctx = run(['context', transcript, '--json'], { SPILLWAY_HOME: foreign });
    expect(ctx.code).not.toBe(0);
    expect(ctx.stderr).toMatch(said);
    expect(modeOf(foreign)).toBe(0o777);
    expect(fs.statSync(foreign).uid).toBe(NOBODY);
    expect(fs.readdirSync(foreign)).toEqual([]);
  }, CLI_TEST_MS);

  it('serve and index refuse an app-data folder of ours that group or others can write (0777, 0770), and leave its mode', async () => {
    const { root } = sessions('sessions-open');
    for (const m of [0o777, 0o770]) {
      const open = dir(`home-open-${m.toString(8)}/app`, m);
      const o = await serve(['--root', root], { SPILLWAY_HOME: open });
      expect(o.url).toBeUndefined();
      expect(o.code).toBe(1);
      expect(o.stderr).toContain(`app-data folder ${open} can be written by other accounts (mode 0${m.toString(8)}), so Spillway will not use it: \`chmod 700 ${open}\``);
      expect(o.stderr).toMatch(FIX_APP);
      const ix = run(['index', root], { SPILLWAY_HOME: open });
      expect(ix.code).toBe(1);
      expect(ix.stderr).toContain(`app-data folder ${open} can be written by other accounts`);
      expect(modeOf(open)).toBe(m);
      expect(fs.readdirSync(open)).toEqual([]);
    }
  }, CLI_TEST_MS);

  asRootWithNobody(`index refuses a planted index.sqlite (nobody's 0666, or ours but 0666) and a planted -wal, and leaves them as they were${skipNote}`, () => {
    const { root } = sessions('sessions-planted');
    const app = dir('home-planted/app');
    const planted = path.join(app, 'index.sqlite');
    fs.writeFileSync(planted, '');
    fs.chmodSync(planted, 0o666);
    fs.chownSync(planted, NOBODY, NOBODY);
    const r = run(['index', root], { SPILLWAY_HOME: app });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/index database .*index\.sqlite belongs to another account \(uid 65534, you are uid 0\), so Spillway will not use it: if it is yours, `chown 0 .*` and `chmod 600 .*`; otherwise give --db a file in a folder of your own/);
    expect(fs.statSync(planted).size).toBe(0); // nothing indexed into it
    expect(modeOf(planted)).toBe(0o666);
    expect(fs.statSync(planted).uid).toBe(NOBODY);

    const mine = path.join(dir('db-open'), 'mine.sqlite');
    fs.writeFileSync(mine, '');
    fs.chmodSync(mine, 0o666);
    const o = run(['index', root, '--db', mine], { SPILLWAY_HOME: path.join(dir('home-open-db'), 'app') });
    expect(o.code).toBe(1);
    expect(o.stderr).toContain(`index database ${mine} can be written by other accounts (mode 0666), so Spillway will not use it: \`chmod 600 ${mine}\``);
    expect(fs.statSync(mine).size).toBe(0);
    expect(modeOf(mine)).toBe(0o666);
    // A planted journal next to a database of ours is refused too: SQLite would replay it into the database.
    const ours = path.join(dir('db-wal'), 'ours.sqlite');
    fs.writeFileSync(`${ours}-wal`, '');
    fs.chownSync(`${ours}-wal`, NOBODY, NOBODY);
    const w = run(['index', root, '--db', ours], { SPILLWAY_HOME: path.join(dir('home-wal'), 'app') });
    expect(w.code).toBe(1);
    expect(w.stderr).toMatch(/index database journal .*ours\.sqlite-wal belongs to another account/);
  }, CLI_TEST_MS);

  asRootWithNobody(`prune refuses an index database nobody owns before it deletes anything, and sync a queue in app data nobody owns${skipNote}`, () => {
    // A real database of nobody's: prune would otherwise open it and delete rows from it.
    const shared = dir('prune-db');
    const db = path.join(shared, 'index.sqlite');
    const made = run(['index', sessions('sessions-prune').root, '--db', db], { SPILLWAY_HOME: path.join(dir('home-prune-made'), 'app') });
    expect(made.code, made.stderr).toBe(0);
    for (const f of fs.readdirSync(shared)) fs.chownSync(path.join(shared, f), NOBODY, NOBODY);
    const before = fs.readFileSync(db);
    const spill = oldSpill('session-prune');
    const p = run(['prune', '--older-than', '30d', '--session', spill.session, '--db', db], { SPILLWAY_HOME: path.join(dir('home-prune'), 'app') });
    expect(p.code).toBe(1);
    expect(p.stderr).toMatch(/index database .*prune-db\/index\.sqlite belongs to another account \(uid 65534, you are uid 0\), so Spillway will not use it: if it is yours, `chown 0 .*` and `chmod 600 .*`; otherwise give --db a file in a folder of your own/);
    expect(fs.existsSync(spill.payload)).toBe(true); // refused first: nothing pruned
    expect(fs.readFileSync(db).equals(before)).toBe(true);
    expect(fs.statSync(db).uid).toBe(NOBODY);

    // The sync queue lives in app data: records nobody planted would say what to upload, and where.
    const app = dir('home-sync/app');
    fs.mkdirSync(path.join(app, 'pending-sync'));
    fs.chownSync(app, NOBODY, NOBODY);
    for (const args of [['sync'], ['prune', '--older-than', '30d', '--session', spill.session]]) {
      const r = run(args, { SPILLWAY_HOME: app });
      expect(r.code, args[0]).not.toBe(0);
      expect(r.stderr, args[0]).toMatch(/app-data folder .*home-sync\/app belongs to another account \(uid 65534, you are uid 0\)/);
    }
    expect(fs.existsSync(spill.payload)).toBe(true);
    expect(fs.statSync(app).uid).toBe(NOBODY);
  }, CLI_TEST_MS);

  asRootWithNobody(`index and serve refuse a root-consent.json nobody owns, or one others can write, and leave it as it was${skipNote}`, async () => {
    const { root } = sessions('sessions-consent');
    const app = dir('home-consent/app');
    const consent = path.join(app, 'root-consent.json');
    const planted = JSON.stringify({ version: 1, roots: { '/': { how: 'cli', at: '2026-01-01T00:00:00.000Z' } } });
    fs.writeFileSync(consent, planted, { mode: 0o600 });
    fs.chownSync(consent, NOBODY, NOBODY);
    const r = run(['index', root, '--db', path.join(dir('db-consent'), 'index.sqlite')], { SPILLWAY_HOME: app });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/root consent file .*root-consent\.json belongs to another account \(uid 65534, you are uid 0\), so Spillway will not use it: if it is yours, `chown 0 .*` and `chmod 600 .*`; otherwise set SPILLWAY_HOME to a folder of your own/);
    const s = await serve(['--root', root], { SPILLWAY_HOME: app });
    expect(s.url).toBeUndefined();
    expect(s.stderr).toMatch(/root consent file .*root-consent\.json belongs to another account/);
    expect(fs.readFileSync(consent, 'utf8')).toBe(planted);
    expect(fs.statSync(consent).uid).toBe(NOBODY);

    fs.chownSync(consent, 0, 0);
    fs.chmodSync(consent, 0o666);
    const o = run(['index', root, '--db', path.join(dir('db-consent-2'), 'index.sqlite')], { SPILLWAY_HOME: app });
    expect(o.code).toBe(1);
    expect(o.stderr).toContain(`root consent file ${consent} can be written by other accounts (mode 0666), so Spillway will not use it: \`chmod 600 ${consent}\``);
    expect(fs.readFileSync(consent, 'utf8')).toBe(planted);
    expect(modeOf(consent)).toBe(0o666);
  }, CLI_TEST_MS);

  it('private app data made by mkdtemp (0700, ours), and app data Spillway creates itself, are used', () => {
    const { root } = sessions('sessions-fine');
    const made = fs.mkdtempSync(path.join(tmp, 'home-mkdtemp-'));
    const a = run(['index', root], { SPILLWAY_HOME: made });
    expect(a.code, a.stderr).toBe(0);
    expect(modeOf(made)).toBe(0o700);
    const fresh = path.join(dir('home-fresh'), 'new', 'app');
    const b = run(['index', root], { SPILLWAY_HOME: fresh });
    expect(b.code, b.stderr).toBe(0);
    expect(modeOf(fresh)).toBe(0o700);
    expect(modeOf(path.join(fresh, 'index.sqlite'))).toBe(0o600);
  }, CLI_TEST_MS);
});
