/**
 * Which folders may become roots (src/service/roots-policy.ts), for each source: the CLI/config
 * (trusted), the desktop window, an HTTP client. Real folders in a fake home.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../src/service/contract.js';
import { createInspectorService } from '../../src/service/service.js';
import { checkRoot, hardRootRefusal, type RootPolicyContext } from '../../src/service/roots-policy.js';

let tmp: string;
let home: string;
let ctx: RootPolicyContext;

const code = (f: () => unknown): string => {
  try {
    f();
    return 'ok';
  } catch (err) {
    return err instanceof ServiceError ? err.code : String(err);
  }
};

const touch = (p: string, text = '{}') => {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
};

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-rootpol-')));
  home = path.join(tmp, 'home', 'me');
  touch(path.join(home, '.claude', 'projects', '-home-me-app', '637ef6e7-e740-4503-8ff8-5780d7c0918f.jsonl'));
  touch(path.join(home, '.codex', 'sessions', '2026', '11', '30', 'rollout-2026-11-30T10-00-00-abc.jsonl'));
  touch(path.join(home, '.gemini', 'tmp', '9f8e7d', 'chats', 'session-2026-11-30T10-00-abc.json'));
  touch(path.join(home, 'agent-sessions', 'run-1', 'long_responses', '20261130T100000000Z_fetch_abcdef12_0.json'));
  touch(path.join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY');
  fs.mkdirSync(path.join(home, 'empty-new-folder'), { recursive: true });
  const app = path.join(home, '.local', 'share', 'spillway');
  ctx = { appData: { root: app, sessions: path.join(app, 'sessions'), scratch: path.join(app, 'scratch') }, home, env: {} };
  for (const d of Object.values(ctx.appData)) fs.mkdirSync(d, { recursive: true });
  touch(path.join(app, 'index.sqlite'), 'SQLite format 3');
});

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('root policy', () => {
  it("lets the CLI's default agent roots through, and refuses the home folder itself from every source", () => {
    for (const p of ['.claude/projects', '.codex/sessions', '.gemini']) {
      expect(code(() => checkRoot(path.join(home, p), 'trusted', ctx)), p).toBe('ok');
      expect(code(() => checkRoot(path.join(home, p), 'window', ctx, () => true)), p).toBe('ok');
    }
    for (const source of ['trusted', 'window', 'http'] as const) {
      expect(code(() => checkRoot(home, source, ctx, () => true)), source).toBe('FORBIDDEN_PATH');
      expect(code(() => checkRoot(path.dirname(home), source, ctx, () => true)), source).toBe('FORBIDDEN_PATH');
    }
  });

  it('never a system folder, the file-system root, or the app data (its sessions and scratch folders aside)', () => {
    for (const p of ['/', '/etc', '/proc', '/sys', '/dev', '/usr/share', '/var/log']) {
      if (fs.existsSync(p)) expect(hardRootRefusal(fs.realpathSync(p), ctx), p).not.toBeNull();
    }
    expect(hardRootRefusal(ctx.appData.root, ctx)).toMatch(/app-data/);
    expect(hardRootRefusal(path.join(ctx.appData.root, 'index.sqlite'), ctx)).toMatch(/sessions\/ and scratch\//);
    expect(hardRootRefusal(ctx.appData.sessions, ctx)).toBeNull();
    expect(hardRootRefusal(ctx.appData.scratch, ctx)).toBeNull();
    // A link to a system folder is the system folder.
    const link = path.join(tmp, 'innocent');
    fs.symlinkSync('/etc', link);
    expect(code(() => checkRoot(link, 'trusted', ctx))).toBe('FORBIDDEN_PATH');
  });

  it('the desktop window may add only a folder the user consented to (however much it looks like sessions); the CLI may add a new empty folder', () => {
    const consented = (dir: string) => (real: string) => real === dir;
    expect(code(() => checkRoot(path.join(home, 'agent-sessions'), 'window', ctx))).toBe('FORBIDDEN_PATH');
    expect(code(() => checkRoot(path.join(home, 'agent-sessions'), 'window', ctx, consented(path.join(home, 'agent-sessions'))))).toBe('ok');
    expect(code(() => checkRoot(path.join(home, '.ssh'), 'window', ctx, consented(path.join(home, 'agent-sessions'))))).toBe('FORBIDDEN_PATH');
    expect(code(() => checkRoot(path.join(home, 'empty-new-folder'), 'window', ctx))).toBe('FORBIDDEN_PATH');
    expect(code(() => checkRoot(path.join(home, 'empty-new-folder'), 'trusted', ctx))).toBe('ok');
    expect(code(() => checkRoot(path.join(home, 'agent-sessions'), 'http', ctx))).toBe('FORBIDDEN_PATH');
    expect(code(() => checkRoot(path.join(home, 'missing'), 'trusted', ctx))).toBe('NOT_FOUND');
  });

  it('an s3:// root comes only from the CLI or config (it is read with the user\'s AWS credentials), canonical and checked', () => {
    expect(checkRoot('s3://team-spills/agents/', 'trusted', ctx)).toBe('s3://team-spills/agents');
    expect(checkRoot('S3://team-spills', 'trusted', ctx)).toBe('s3://team-spills');
    for (const source of ['window', 'http'] as const) expect(code(() => checkRoot('s3://team-spills/agents', source, ctx)), source).toBe('FORBIDDEN_PATH');
    for (const bad of ['s3://team-spills/a/../b', 's3://AKIAEXAMPLE:wJalrXUtnFEMIK7MDENG@team-spills/x', 's3://Bad_Bucket/x', 's3://team-spills/x?versionId=1']) {
      expect(code(() => checkRoot(bad, 'trusted', ctx)), bad).toBe('BAD_REQUEST');
    }
    // The refusal never echoes what might be a credential pasted into the URL.
    try {
      checkRoot('s3://AKIAEXAMPLE:wJalrXUtnFEMIK7MDENG@team-spills/x', 'trusted', ctx);
    } catch (err) {
      expect((err as Error).message).not.toContain('wJalrXUtnFEMIK7MDENG');
      expect((err as Error).message).not.toContain('AKIAEXAMPLE');
    }
  });

  it('a root an older version stored that policy now refuses is never read (forgotten at start: nobody consented to it either)', async () => {
    const appDataDir = path.join(tmp, 'svc-home');
    const first = createInspectorService({ appDataDir, roots: [path.join(home, 'agent-sessions')], transport: 'http', scanOnStart: false, watch: false, env: { HOME: home } });
    await first.ready;
    await first.close();
    // Plant /etc into that database, as the HTTP addRoot of 3a18a0f allowed.
    const { openIndex } = await import('../../src/index/index.js');
    const ix = openIndex({ dbPath: path.join(appDataDir, 'index.sqlite') });
    ix.addRoot('/etc');
    await ix.close();
    const warnings: string[] = [];
    const svc = createInspectorService({ appDataDir, transport: 'http', scanOnStart: false, watch: false, env: { HOME: home }, onWarning: (w) => warnings.push(w) });
    try {
      await svc.ready;
      expect(warnings.some((w) => /forgot root \/etc\b/.test(w))).toBe(true);
      expect(((await svc.listRoots({})) as Array<{ path: string }>).map((r) => r.path)).not.toContain('/etc');
      const e = await svc.estimate({ path: '/etc/hostname' }).then(() => 'read', (err: ServiceError) => err.code);
      expect(e).toBe('FORBIDDEN_PATH');
    } finally {
      await svc.close();
    }
  });
});
