/**
 * Issue 14, item 6: what Spillway writes for itself is private. On 3a18a0f a 0600 file analysed
 * through the service became a 0644 copy in 0755 folders under scratch, and index.sqlite was 0644.
 * Runs with the usual umask (022), as a user's shell has it.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirPrivateNew } from '../../src/service/private-files.js';
import { createInspectorService, type InspectorService } from '../../src/service/service.js';

let tmp: string;
let home: string;
let svc: InspectorService;
let umask: number;

const mode = (p: string) => fs.lstatSync(p).mode & 0o777;

function walk(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? [p, ...walk(p)] : [p];
  });
}

beforeAll(async () => {
  umask = process.umask(0o022);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-modes-'));
  home = path.join(tmp, 'home');
  const root = path.join(tmp, 'root');
  fs.mkdirSync(root);
  svc = createInspectorService({ env: process.env, appDataDir: home, roots: [root], transport: 'http', scanOnStart: false, watch: false });
  await svc.ready;
});

afterAll(async () => {
  await svc?.close();
  process.umask(umask);
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('files Spillway writes are 0600, folders 0700', () => {
  it('an analysed private file is copied into scratch privately', async () => {
    const secret = path.join(tmp, 'private.json');
    fs.writeFileSync(secret, JSON.stringify({ apiKey: 'sk-private', rows: Array.from({ length: 4000 }, (_, i) => ({ i, v: crypto.randomBytes(8).toString('hex') })) }), { mode: 0o600 });
    const res = await svc.analyze({ name: 'private.json', base64: fs.readFileSync(secret).toString('base64'), limitTokens: 1000 });
    expect(res.decision.action).toBe('spill');
    const scratch = path.join(home, 'scratch');
    const entries = walk(scratch);
    expect(entries.some((p) => p.endsWith('.json') && fs.readFileSync(p, 'utf8').includes('sk-private'))).toBe(true);
    for (const p of [home, scratch, ...entries]) {
      const st = fs.lstatSync(p);
      expect(mode(p), `${p} (${(st.mode & 0o777).toString(8)})`).toBe(st.isDirectory() ? 0o700 : 0o600);
    }
  });

  it('the index database (and its WAL files) are 0600, the app-data folders 0700', async () => {
    await svc.reindex({});
    for (const f of ['index.sqlite', 'index.sqlite-wal', 'index.sqlite-shm']) {
      const p = path.join(home, f);
      if (fs.existsSync(p)) expect(mode(p), f).toBe(0o600);
    }
    expect(fs.existsSync(path.join(home, 'index.sqlite'))).toBe(true);
    for (const d of ['', 'sessions', 'scratch', 'templates']) expect(mode(path.join(home, d)), d || 'app data').toBe(0o700);
  });

  it('a saved template is private too', async () => {
    await svc.saveTemplate({ name: 'mine', body: 'Summarize {{focus}}' });
    for (const p of walk(path.join(home, 'templates'))) expect(mode(p), p).toBe(fs.lstatSync(p).isDirectory() ? 0o700 : 0o600);
  });
});

describe('a scratch session folder is new and ours (issue 32: a mode only on what Spillway creates)', () => {
  it('mkdirPrivateNew makes a 0700 folder, and refuses a name that exists without touching it or what is in it', async () => {
    const parent = path.join(tmp, 'scratch-new');
    const made = path.join(parent, 'fresh');
    await mkdirPrivateNew(made);
    expect(mode(parent)).toBe(0o700);
    expect(mode(made)).toBe(0o700);
    const taken = path.join(parent, 'taken');
    fs.mkdirSync(taken, { mode: 0o755 });
    fs.chmodSync(taken, 0o755);
    fs.writeFileSync(path.join(taken, 'theirs.txt'), 'x', { mode: 0o644 });
    await expect(mkdirPrivateNew(taken)).rejects.toMatchObject({ code: 'EEXIST' });
    expect(mode(taken)).toBe(0o755);
    expect(mode(path.join(taken, 'theirs.txt'))).toBe(0o644);
  });
});
