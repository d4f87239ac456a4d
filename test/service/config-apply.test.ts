/**
 * Issue 30 item 5: the inspector writes the rules file after showing the diff. previewConfig shows
 * the text now and after, a unified diff and the tool's effective rule before and after;
 * applyConfig writes exactly that text, only while the file is as previewed. A project's file is
 * written only in a project folder the inspector knows (an indexed session's, or a root the user
 * gave): everything goes through `invoke`, which is what IPC and HTTP call with the page's request.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError, type ApplyConfigResponse, type PreviewConfigResponse } from '../../src/service/contract.js';
import { createInspectorService, type InspectorService } from '../../src/service/service.js';

let tmp: string;
let project: string;
let appData: string;
let projects: string;
let svc: InspectorService;

const SESSION_ID = '11111111-2222-3333-4444-555555555555';
const codeOf = (p: Promise<unknown>) => p.then(() => 'ok', (err: unknown) => (err instanceof ServiceError ? `${err.code}: ${err.message}` : String(err)));
const preview = (req: unknown) => svc.invoke('previewConfig', req) as Promise<PreviewConfigResponse>;
const apply = (req: unknown) => svc.invoke('applyConfig', req) as Promise<ApplyConfigResponse>;

beforeAll(async () => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-config-apply-')));
  project = path.join(tmp, 'work', 'webapp');
  fs.mkdirSync(project, { recursive: true });
  // A Claude Code transcript that ran in the project: the index records its cwd as the session's project.
  projects = path.join(tmp, 'claude', 'projects');
  const dir = path.join(projects, '-work-webapp');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, `${SESSION_ID}.jsonl`),
    JSON.stringify({ type: 'user', cwd: project, sessionId: SESSION_ID, version: '2.1.328', uuid: 'u1', timestamp: '2026-11-30T10:00:00.000Z', message: { role: 'user', content: 'list the files' } }) + '\n',
  );
  appData = path.join(tmp, 'appdata');
  svc = createInspectorService({ appDataDir: appData, roots: [projects], transport: 'http', scanOnStart: false, watch: false, env: { HOME: path.join(tmp, 'home') } });
  await svc.ready;
  await svc.reindex({});
  expect((await svc.listSessions({})).map((s) => s.project)).toEqual([project]);
});

afterAll(async () => {
  await svc.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('previewConfig and applyConfig', () => {
  it("project scope: the diff, the effective rule before and after, then exactly that text written, keeping the file's mode", async () => {
    const file = path.join(project, '.spillway.json');
    const before = '{"$schema":"keep me","rules":{"Read":{"template":"errors"}}}';
    fs.writeFileSync(file, before);
    fs.chmodSync(file, 0o640);
    const req = { scope: 'project', project, change: { tool: 'Bash', set: { limit: 4000, template: 'errors' } } };
    const p = await preview(req);
    expect(p.file).toBe(file);
    expect(p.exists).toBe(true);
    expect(p.currentText).toBe(before);
    expect(JSON.parse(p.proposedText)).toEqual({ $schema: 'keep me', rules: { Read: { template: 'errors' }, Bash: { limit: 4000, template: 'errors' } } });
    // A unified diff: the file named on both sides, the old line out and the new lines in.
    const lines = p.diff.split('\n');
    expect(lines).toContain(`--- ${file}`);
    expect(lines).toContain(`+++ ${file}`);
    expect(lines).toContain(`-${before}`);
    expect(lines).toContain('+    "Bash": {');
    expect(lines).toContain('+      "limit": 4000,');
    expect(lines.some((l) => /^@@ -1(,1)? \+1,\d+ @@$/.test(l))).toBe(true);
    // The old text had no newline at its end: the diff says so, as diff -u does.
    expect(lines).toContain('\\ No newline at end of file');
    // Before: the default limit; after: the project's rule, named with its file.
    expect(p.before.settings.limit).toEqual({ value: 12_000, source: 'default' });
    expect(p.after.settings.limit).toEqual({ value: 4000, source: 'project', match: 'Bash', file });
    expect(p.after.settings.template).toEqual({ value: 'errors', source: 'project', match: 'Bash', file });
    // Nothing written by a preview.
    expect(fs.readFileSync(file, 'utf8')).toBe(before);

    const a = await apply({ ...req, baseHash: p.baseHash, proposedHash: p.proposedHash });
    expect(a.file).toBe(file);
    expect(a.created).toBe(false);
    expect(fs.readFileSync(file, 'utf8')).toBe(p.proposedText);
    expect(a.text).toBe(p.proposedText);
    expect(a.mode).toBe('0640');
    expect(fs.statSync(file).mode & 0o777).toBe(0o640);
    expect(a.effective.settings.limit).toEqual({ value: 4000, source: 'project', match: 'Bash', file });
    expect(fs.readdirSync(project)).toEqual(['.spillway.json']);
  });

  it('refuses a file that changed since the preview (CONFLICT), and writes nothing', async () => {
    const file = path.join(project, '.spillway.json');
    fs.writeFileSync(file, '{"rules":{}}');
    const req = { scope: 'project', project, change: { tool: 'Read', set: { limit: 9000 } } };
    const p = await preview(req);
    // Someone else's edit between the preview and the apply.
    const theirs = '{"rules":{"Grep":{"limit":100}}}';
    fs.writeFileSync(file, theirs);
    expect(await codeOf(apply({ ...req, baseHash: p.baseHash, proposedHash: p.proposedHash }))).toMatch(/^CONFLICT: .*changed since the preview/);
    expect(fs.readFileSync(file, 'utf8')).toBe(theirs);
    // A file made since a preview of no file is a change too.
    fs.rmSync(file);
    const fresh = await preview(req);
    expect(fresh.exists).toBe(false);
    expect(fresh.baseHash).toBe('absent');
    expect(fresh.diff.split('\n')).toContain('--- /dev/null');
    fs.writeFileSync(file, theirs);
    expect(await codeOf(apply({ ...req, baseHash: fresh.baseHash, proposedHash: fresh.proposedHash }))).toMatch(/^CONFLICT: /);
    expect(fs.readFileSync(file, 'utf8')).toBe(theirs);
    // A hash the preview did not give for this change: refused as well.
    const p2 = await preview(req);
    expect(await codeOf(apply({ ...req, change: { tool: 'Read', set: { limit: 9001 } }, baseHash: p2.baseHash, proposedHash: p2.proposedHash }))).toMatch(/^CONFLICT: .*no longer gives the previewed text/);
    expect(fs.readFileSync(file, 'utf8')).toBe(theirs);
  });

  it('user scope: a new file is made 0600 in app data; unset removes a setting and an emptied rule', async () => {
    const file = path.join(appData, 'config.json');
    expect(fs.existsSync(file)).toBe(false);
    const req = { scope: 'user', change: { tool: 'fs/*', set: { provider: 'none' } } };
    const p = await preview(req);
    expect(p.file).toBe(file);
    expect(p.currentText).toBe('');
    const a = await apply({ ...req, baseHash: p.baseHash, proposedHash: p.proposedHash });
    expect(a.created).toBe(true);
    expect(a.mode).toBe('0600');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ rules: { 'fs/*': { provider: 'none' } } });
    expect(a.effective.settings.provider).toEqual({ value: 'none', source: 'user', match: 'fs/*', file });
    // With a project given, the user's scope shows the project's rule coming first.
    const withProject = await preview({ scope: 'user', project, change: { tool: 'Grep', set: { limit: 50 } } });
    expect(withProject.after.settings.limit).toEqual({ value: 100, source: 'project', match: 'Grep', file: path.join(project, '.spillway.json') });
    const unset = { scope: 'user', change: { tool: 'fs/*', unset: ['provider'] } };
    const u = await preview(unset);
    expect(JSON.parse(u.proposedText)).toEqual({ rules: {} });
    expect(u.diff).toMatch(/^-\s+"provider": "none"$/m);
    await apply({ ...unset, baseHash: u.baseHash, proposedHash: u.proposedHash });
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ rules: {} });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses a project folder the inspector does not know, a relative or escaping path, and a link out of the project', async () => {
    const change = { tool: 'Bash', set: { limit: 10 } };
    const elsewhere = path.join(tmp, 'elsewhere');
    fs.mkdirSync(elsewhere);
    expect(await codeOf(preview({ scope: 'project', project: elsewhere, change }))).toMatch(/^FORBIDDEN_PATH: .*not the project folder of an indexed session/);
    expect(await codeOf(preview({ scope: 'project', project: path.join(project, '..', '..', 'elsewhere'), change }))).toMatch(/^FORBIDDEN_PATH: /);
    expect(await codeOf(preview({ scope: 'project', project: path.join(project, 'sub'), change }))).toMatch(/^NOT_FOUND: /);
    expect(await codeOf(preview({ scope: 'project', project: 'work/webapp', change }))).toMatch(/^BAD_REQUEST: .*absolute/);
    expect(await codeOf(preview({ scope: 'project', project: '/etc', change }))).toMatch(/^FORBIDDEN_PATH: /);
    expect(await codeOf(preview({ scope: 'project', project: `${project}\u0000x`, change }))).toMatch(/^FORBIDDEN_PATH: /);
    // A link named like the project folder is resolved first: it leads elsewhere, so it is not the project.
    const link = path.join(tmp, 'looks-like-project');
    fs.symlinkSync(elsewhere, link);
    expect(await codeOf(preview({ scope: 'project', project: link, change }))).toMatch(/^FORBIDDEN_PATH: /);
    // A root the user gave (here on the command line) is a folder the inspector knows; a folder under it is not.
    expect(await codeOf(preview({ scope: 'project', project: projects, change }))).toBe('ok');
    expect(await codeOf(preview({ scope: 'project', project: path.join(projects, '-work-webapp'), change }))).toMatch(/^FORBIDDEN_PATH: /);
    // The project scope needs its folder; the validator says so before anything is read.
    expect(await codeOf(preview({ scope: 'project', change }))).toMatch(/^BAD_REQUEST: .*project folder/);
    // The project's file may not be a link out of the project (the page would write the file it leads to).
    const file = path.join(project, '.spillway.json');
    const outside = path.join(elsewhere, 'rules.json');
    fs.writeFileSync(outside, '{"rules":{}}');
    fs.rmSync(file, { force: true });
    fs.symlinkSync(outside, file);
    try {
      expect(await codeOf(preview({ scope: 'project', project, change }))).toMatch(/^FORBIDDEN_PATH: .*leads out of the project folder/);
      expect(await codeOf(apply({ scope: 'project', project, change, baseHash: 'absent', proposedHash: 'absent' }))).toMatch(/^FORBIDDEN_PATH: /);
      expect(fs.readFileSync(outside, 'utf8')).toBe('{"rules":{}}');
    } finally {
      fs.rmSync(file);
    }
    expect(fs.readdirSync(elsewhere)).toEqual(['rules.json']);
  });

  it('checks the change as `config set` does: a bad value or key, a setting both set and unset, a bad file left alone', async () => {
    const bad = async (change: unknown) => codeOf(preview({ scope: 'user', change }));
    expect(await bad({ tool: 'Bash', set: { limit: 0 } })).toMatch(/^BAD_REQUEST: /);
    expect(await bad({ tool: 'Bash', set: { limit: 2_000_000 } })).toMatch(/^BAD_REQUEST: /);
    expect(await bad({ tool: 'Bash', set: { template: '../x' } })).toMatch(/^BAD_REQUEST: /);
    expect(await bad({ tool: 'Bash', set: { provider: 'mystery' } })).toMatch(/^BAD_REQUEST: /);
    expect(await bad({ tool: 'a*', set: { limit: 5 } })).toMatch(/^BAD_REQUEST: /);
    expect(await bad({ tool: 'Bash', set: { limit: 5 }, unset: ['limit'] })).toMatch(/^BAD_REQUEST: .*not both/);
    expect(await bad({ tool: 'Bash' })).toMatch(/^BAD_REQUEST: .*set or to unset/);
    expect(await bad({ tool: 'Bash', set: { limit: 5, extra: 1 } })).toMatch(/^BAD_REQUEST: /);
    expect(await bad({ tool: '__proto__', set: { limit: 5 } })).toMatch(/^BAD_REQUEST: /);
    const file = path.join(appData, 'config.json');
    const broken = '{"rules":{"Bash":{"limit":"x"}}}';
    fs.writeFileSync(file, broken);
    expect(await bad({ tool: 'Bash', set: { limit: 5 } })).toMatch(/^BAD_REQUEST: .*fix it by hand first/);
    expect(fs.readFileSync(file, 'utf8')).toBe(broken);
    fs.rmSync(file);
  });

  it('over HTTP: no token, no write (401); a stale apply is a 409 with the reason', async () => {
    const { startServer } = await import('../../src/server/server.js');
    const srv = await startServer({ service: svc, port: 0, staticDir: null });
    try {
      const file = path.join(project, '.spillway.json');
      fs.writeFileSync(file, '{"rules":{}}');
      const req = { scope: 'project', project, change: { tool: 'Bash', set: { limit: 777 } } };
      const post = (method: string, body: unknown, token?: string) =>
        fetch(`http://127.0.0.1:${srv.port}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
      const p = (await (await post('previewConfig', req, srv.token)).json()) as { result: PreviewConfigResponse };
      expect(p.result.proposedText).toContain('"limit": 777');
      const applyReq = { ...req, baseHash: p.result.baseHash, proposedHash: p.result.proposedHash };
      expect((await post('applyConfig', applyReq)).status).toBe(401);
      expect((await post('previewConfig', req)).status).toBe(401);
      expect(fs.readFileSync(file, 'utf8')).toBe('{"rules":{}}');
      fs.writeFileSync(file, '{"rules":{"Read":{"limit":5}}}');
      const stale = await post('applyConfig', applyReq, srv.token);
      expect(stale.status).toBe(409);
      expect(((await stale.json()) as { error: { code: string } }).error.code).toBe('CONFLICT');
      expect(fs.readFileSync(file, 'utf8')).toBe('{"rules":{"Read":{"limit":5}}}');
    } finally {
      await srv.close();
    }
  });
});
