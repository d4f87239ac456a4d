/**
 * Issue 22, item 6, after the fix: roots a window added under the old rule (any folder that looked
 * like a session tree) were still in the index's roots table, so a restart kept the wider view.
 * Now the user's consent to a root is recorded (`<app data>/root-consent.json`): a root without a
 * record is forgotten at start and never read; one the user gave (dialog, drop, `spillway index`,
 * `serve --root`) stays. Through createInspectorService({ env: process.env,transport: 'electron'}) and `invoke`,
 * which is what the IPC handler calls with the page's request.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex } from '../../src/index/index.js';
import { ServiceError } from '../../src/service/contract.js';
import { indexFolders } from '../../src/service/offline.js';
import { ROOT_CONSENT_FILE } from '../../src/service/roots-policy.js';
import { createInspectorService } from '../../src/service/service.js';

let tmp: string;
let home: string;
let appDataDir: string;
const WORD = 'xylophonist4242';

const outcome = (p: Promise<unknown>) => p.then(() => 'ok', (err: unknown) => (err instanceof ServiceError ? err.code : String(err)));

/** The README layout: a project that spills into ./.spillway/session-42/long_responses, with a .env beside. */
function project(name: string): { dir: string; spillway: string; env: string } {
  const dir = path.join(home, 'work', name);
  const spillway = path.join(dir, '.spillway');
  const lr = path.join(spillway, 'session-42', 'long_responses');
  fs.mkdirSync(lr, { recursive: true });
  fs.writeFileSync(path.join(lr, '20261130T100000000Z_fetch_abcdef12_0.json'), JSON.stringify({ rows: [WORD, name] }));
  fs.writeFileSync(path.join(dir, '.env'), `SECRET=${name}\n`);
  return { dir, spillway, env: path.join(dir, '.env') };
}

function start(warnings: string[] = []) {
  return createInspectorService({ appDataDir, transport: 'electron', scanOnStart: false, watch: false, env: { HOME: home }, onWarning: (w) => warnings.push(w) });
}

/** What an older window did: the project registered as a root straight in the index, no consent asked. */
async function plantRoot(p: string): Promise<void> {
  const ix = openIndex({ dbPath: path.join(appDataDir, 'index.sqlite') });
  ix.addRoot(p);
  await ix.scan();
  await ix.close();
}

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-root-consent-')));
  home = path.join(tmp, 'home', 'me');
  appDataDir = path.join(tmp, 'appdata');
  fs.mkdirSync(home, { recursive: true });
});

/**
 * Register `dir` as a root behind the service's back (no consent record), then start the service: it
 * must say at start that it forgot that root. Returns the started service (closed if that check fails).
 */
async function startAfterPlanting(dir: string): Promise<ReturnType<typeof start>> {
  await plantRoot(dir);
  const warnings: string[] = [];
  const svc = start(warnings);
  try {
    await svc.ready;
    expect(warnings.some((w) => w.includes(`forgot root ${dir}`))).toBe(true);
  } catch (e) {
    await svc.close();
    throw e;
  }
  return svc;
}

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('roots need a consent record to outlive a restart', () => {
  it('a root the old window rule let in is forgotten at start: not listed, not searched, its files not readable', async () => {
    const first = start();
    await first.ready;
    await first.close();
    const old = project('old-rule');
    const svc = await startAfterPlanting(old.dir);
    try {
      const roots = (await svc.invoke('listRoots', {})) as Array<{ path: string }>;
      expect(roots.some((r) => r.path.startsWith(old.dir))).toBe(false);
      expect(((await svc.invoke('listPayloads', { query: WORD })) as { total: number }).total).toBe(0);
      expect(await outcome(svc.invoke('analyze', { name: '.env', path: old.env }))).toBe('FORBIDDEN_PATH');
      // And the page still cannot add it back.
      expect(await outcome(svc.invoke('addRoot', { path: old.dir }))).toBe('FORBIDDEN_PATH');
      // The files are untouched.
      expect(fs.readFileSync(old.env, 'utf8')).toBe('SECRET=old-rule\n');
    } finally {
      await svc.close();
    }
  });

  it('roots the user gave (Open Folder dialog, a drop, spillway index) stay across a restart, readable; removeRoot takes the consent back', async () => {
    const picked = project('picked');
    const dropped = project('dropped');
    const cli = project('cli');
    const svc = start();
    await svc.ready;
    await svc.addTrustedRoot(picked.spillway);
    expect(svc.allowDropped(dropped.spillway)).toBe('folder');
    expect(((await svc.invoke('addRoot', { path: dropped.spillway })) as { path: string }).path).toBe(dropped.spillway);
    await svc.close();
    await indexFolders({ dirs: [cli.spillway], env: { HOME: home, SPILLWAY_HOME: appDataDir } });
    const consent = path.join(appDataDir, ROOT_CONSENT_FILE);
    expect(fs.statSync(consent).mode & 0o777).toBe(0o600);
    expect(Object.entries(JSON.parse(fs.readFileSync(consent, 'utf8')).roots).map(([p, r]) => [p, (r as { how: string }).how]).sort()).toEqual(
      [
        [cli.spillway, 'cli'],
        [dropped.spillway, 'drop'],
        [picked.spillway, 'dialog'],
      ].sort(),
    );

    const warnings: string[] = [];
    const again = start(warnings);
    try {
      await again.ready;
      expect(warnings.filter((w) => w.startsWith('forgot root'))).toEqual([]);
      await again.invoke('reindex', {});
      const roots = (await again.invoke('listRoots', {})) as Array<{ id: string; path: string }>;
      for (const p of [picked, dropped, cli]) expect(roots.map((r) => r.path)).toContain(p.spillway);
      const hits = (await again.invoke('listPayloads', { query: WORD })) as { rows: Array<{ id: string }> };
      expect(hits.rows).toHaveLength(3);
      for (const r of hits.rows) expect(await outcome(again.invoke('readPayload', { id: r.id }))).toBe('ok');
      // Consent to a folder is not consent to its parent: the .env beside it stays out of reach.
      expect(await outcome(again.invoke('analyze', { name: '.env', path: picked.env }))).toBe('FORBIDDEN_PATH');
      await again.invoke('removeRoot', { id: roots.find((r) => r.path === picked.spillway)!.id });
    } finally {
      await again.close();
    }
    expect(Object.keys(JSON.parse(fs.readFileSync(consent, 'utf8')).roots)).not.toContain(picked.spillway);
    // Registered again behind the user's back, the removed root is forgotten at the next start.
    await (await startAfterPlanting(picked.spillway)).close();
  });

  it('a root another process registers without consent while the service runs is listed but never read', async () => {
    const late = project('late');
    const warnings: string[] = [];
    const svc = start(warnings);
    try {
      await svc.ready;
      await plantRoot(late.spillway);
      const roots = (await svc.invoke('listRoots', {})) as Array<{ path: string }>;
      expect(roots.map((r) => r.path)).toContain(late.spillway);
      expect(warnings.some((w) => w.includes(`root ${late.spillway} is not read: nobody consented`))).toBe(true);
      const hit = ((await svc.invoke('listPayloads', { query: 'late' })) as { rows: Array<{ id: string }> }).rows[0];
      expect(hit).toBeDefined();
      expect(await outcome(svc.invoke('readPayload', { id: hit!.id }))).toBe('FORBIDDEN_PATH');
      expect(await outcome(svc.invoke('analyze', { name: '.env', path: late.env }))).toBe('FORBIDDEN_PATH');
    } finally {
      await svc.close();
    }
  });
});
