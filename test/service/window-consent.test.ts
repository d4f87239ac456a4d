/**
 * Issue 22, item 6: a compromised desktop window could widen what it reads. Its `addRoot` took any
 * folder that looked like a session tree, and the README's own layout
 * (`./.spillway/session-42/long_responses`) made a whole project one; `analyze {path}` then copied
 * the project's `.env` into scratch and `readPayload` gave it back. Now the window adds only a folder
 * the user dropped or picked (the main process proves a drop with webUtils.getPathForFile and calls
 * `allowDropped`), and reads only dropped/picked files or files under such roots. Everything goes
 * through `invoke`, which is what the IPC handler calls with the page's request.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/service/contract.js';
import { createInspectorService, type InspectorService } from '../../src/service/service.js';

let tmp: string;
let project: string;
let spillway: string;
let env: string;
let svc: InspectorService;
const SECRET = 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI-window-consent-test';

const outcome = (p: Promise<unknown>) => p.then(() => 'ok', (err: unknown) => (err instanceof ServiceError ? err.code : String(err)));

beforeAll(async () => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-consent-')));
  // The README layout: a project whose agent spills into ./.spillway/session-42/long_responses.
  project = path.join(tmp, 'home', 'me', 'work', 'webapp');
  spillway = path.join(project, '.spillway');
  const lr = path.join(spillway, 'session-42', 'long_responses');
  fs.mkdirSync(lr, { recursive: true });
  fs.writeFileSync(path.join(lr, '20261130T100000000Z_fetch_abcdef12_0.json'), JSON.stringify({ rows: [1, 2, 3] }));
  env = path.join(project, '.env');
  fs.writeFileSync(env, `${SECRET}\n`);
  fs.writeFileSync(path.join(project, 'notes.txt'), 'notes of the project\n');
  svc = createInspectorService({ appDataDir: path.join(tmp, 'appdata'), transport: 'electron', scanOnStart: false, watch: false, env: { HOME: path.join(tmp, 'home', 'me') } });
  await svc.ready;
});

afterAll(async () => {
  await svc.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the desktop window reads only what the user gave it', () => {
  it('the README layout attack: the page cannot make the project a root, nor analyze its .env', async () => {
    expect(await outcome(svc.invoke('addRoot', { path: project }))).toBe('FORBIDDEN_PATH');
    expect(await outcome(svc.invoke('addRoot', { path: spillway }))).toBe('FORBIDDEN_PATH');
    expect(await outcome(svc.invoke('analyze', { name: '.env', path: env }))).toBe('FORBIDDEN_PATH');
    const roots = (await svc.invoke('listRoots', {})) as Array<{ path: string }>;
    expect(roots.some((r) => r.path.startsWith(project))).toBe(false);
    // Nothing of the secret reached the index or scratch.
    await svc.invoke('reindex', {});
    const found = (await svc.invoke('listPayloads', { query: 'wJalrXUtnFEMI' })) as { total: number };
    expect(found.total).toBe(0);
  });

  it('a dropped folder may become a root; consent to it does not cover its parent or the files beside it', async () => {
    // What the main process does for a drop whose path webUtils.getPathForFile proved.
    expect(svc.allowDropped(spillway)).toBe('folder');
    const root = (await svc.invoke('addRoot', { path: spillway })) as { id: string; path: string };
    expect(root.path).toBe(spillway);
    expect(await outcome(svc.invoke('addRoot', { path: project }))).toBe('FORBIDDEN_PATH');
    expect(await outcome(svc.invoke('analyze', { name: '.env', path: env }))).toBe('FORBIDDEN_PATH');
    // A file under the consented root is the user's to analyse.
    const spill = path.join(spillway, 'session-42', 'long_responses', '20261130T100000000Z_fetch_abcdef12_0.json');
    expect(await outcome(svc.invoke('analyze', { name: 'spill.json', path: spill }))).toBe('ok');
  });

  it('a dropped file may be analysed, and is no consent for its folder', async () => {
    const notes = path.join(project, 'notes.txt');
    expect(await outcome(svc.invoke('analyze', { name: 'notes.txt', path: notes }))).toBe('FORBIDDEN_PATH');
    expect(svc.allowDropped(notes)).toBe('file');
    const res = (await svc.invoke('analyze', { name: 'notes.txt', path: notes })) as { payloadId?: string };
    expect(res.payloadId).toBeDefined();
    expect(((await svc.invoke('readPayload', { id: res.payloadId })) as { text: string }).text).toBe('notes of the project\n');
    expect(await outcome(svc.invoke('addRoot', { path: project }))).toBe('FORBIDDEN_PATH');
    expect(await outcome(svc.invoke('analyze', { name: '.env', path: env }))).toBe('FORBIDDEN_PATH');
  });

  it('a drop is refused for what nobody drops (relative paths, pseudo-files, devices, controls), and hard limits still hold', async () => {
    for (const bad of ['relative/dir', '/proc/self', '/proc/self/environ', '/dev/null', `${project}/\u202etxt.exe`, 42, undefined]) {
      expect(svc.allowDropped(bad), String(bad)).toBeNull();
    }
    // The home folder dropped whole: consent, but roots-policy's hard limit refuses it for everyone.
    const home = path.join(tmp, 'home', 'me');
    expect(svc.allowDropped(home)).toBe('folder');
    expect(await outcome(svc.invoke('addRoot', { path: home }))).toBe('FORBIDDEN_PATH');
  });

  it('the Open Folder dialog (the main process, not the page) still adds any folder within the hard limits', async () => {
    const other = path.join(tmp, 'picked');
    fs.mkdirSync(other);
    expect((await svc.addTrustedRoot(other)).path).toBe(other);
  });
});
