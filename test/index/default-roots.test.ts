import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentHomeRoots } from '../../src/index/index.js';
import { createInspectorService, type InspectorService } from '../../src/service/service.js';
import { spillOne } from '../helpers/gen-sessions.js';
import { CLI, FIXTURES, REPO, copyTree, tmpDir, tmpIndex } from './helpers.js';

const REAL = path.join(REPO, 'test', 'index', 'fixtures', 'real');

/** A home folder as the agents leave it: real transcripts in each agent's own layout. */
async function agentHome() {
  const home = tmpDir('spillway-home-');
  copyTree(path.join(REAL, 'claude-code', '01-read70k-bash400k-nohook'), path.join(home, '.claude', 'projects'));
  copyTree(path.join(REAL, 'codex', '01-mcp-fs-read-text-file-540k-plus-exec-cat', 'sessions'), path.join(home, '.codex', 'sessions'));
  const chats = path.join(home, '.gemini', 'tmp', 'fb8e242a6fbbb5c48a1d0be57a8a4cc9', 'chats');
  fs.mkdirSync(chats, { recursive: true });
  fs.copyFileSync(path.join(FIXTURES, 'gemini', 'session-2025-12-01T21-45-5b959dae.json'), path.join(chats, 'session-2025-12-01T21-45-5b959dae.json'));
  // Gemini's home holds settings and credentials next to tmp/: never walked, even when one looks like a chat.
  fs.writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify({ sessionId: 'x', messages: [{ type: 'gemini', toolCalls: [{ id: 'c', name: 'leak', result: 'credentials' }] }] }));
  // A Spillway session inside a read-only root: listed, never written to.
  const spilled = await spillOne(path.join(home, '.gemini', 'tmp', 'spilled'), { tool: 'grep_logs', text: 'timeout in shard 7\n'.repeat(2000), time: new Date('2026-12-01T09:00:00Z') });
  return { home, spilled };
}

const services: InspectorService[] = [];
afterEach(async () => {
  while (services.length) await services.pop()!.close();
});

function service(home: string, appData: string, defaultRoots: boolean | undefined) {
  const s = createInspectorService({ appDataDir: appData, env: { ...process.env, HOME: home }, transport: 'http', watch: false, scanOnStart: false, defaultRoots });
  services.push(s);
  return s;
}

describe("the agents' own session folders, opened by default", () => {
  it('finds ~/.claude/projects, ~/.codex/sessions and ~/.gemini/tmp where they exist (and honours CLAUDE_CONFIG_DIR, CODEX_HOME)', () => {
    const home = tmpDir('spillway-home-');
    expect(agentHomeRoots({ HOME: home })).toEqual([]);
    fs.mkdirSync(path.join(home, '.claude', 'projects'), { recursive: true });
    fs.mkdirSync(path.join(home, '.gemini'));
    // Gemini's home without chats yet: its settings and credentials are no root.
    expect(agentHomeRoots({ HOME: home })).toEqual([path.join(home, '.claude', 'projects')]);
    fs.mkdirSync(path.join(home, '.gemini', 'tmp'));
    expect(agentHomeRoots({ HOME: home })).toEqual([path.join(home, '.claude', 'projects'), path.join(home, '.gemini', 'tmp')]);
    const codexHome = path.join(home, 'elsewhere', 'codex');
    fs.mkdirSync(path.join(codexHome, 'sessions'), { recursive: true });
    expect(agentHomeRoots({ HOME: home, CODEX_HOME: codexHome, CLAUDE_CONFIG_DIR: path.join(home, 'none') })).toEqual([
      path.join(codexHome, 'sessions'),
      path.join(home, '.gemini', 'tmp'),
    ]);
  });

  it('lists them read-only and marked auto, with sessions by project, client and first prompt; writes nothing into them; off drops them', async () => {
    const { home, spilled } = await agentHome();
    const appData = path.join(tmpDir(), 'app');
    const svc = service(home, appData, true);
    await svc.reindex({});
    const roots = await svc.listRoots({});
    const auto = roots.filter((r) => r.auto);
    expect(auto.map((r) => r.path).sort()).toEqual([path.join(home, '.claude', 'projects'), path.join(home, '.codex', 'sessions'), path.join(home, '.gemini', 'tmp')].sort());
    expect(auto.every((r) => r.readOnly)).toBe(true);
    // Spillway's own sessions stay open beside them (the hook and the proxy spill there).
    expect(roots.some((r) => r.path === path.join(appData, 'sessions') && !r.auto && !r.readOnly)).toBe(true);

    const sessions = await svc.listSessions({});
    const claude = sessions.find((s) => s.kind === 'claude-code')!;
    // The folder name is `-tmp-exp-cwd-vj1jXP`; the project is the cwd the transcript records.
    expect(claude).toMatchObject({ project: '/tmp/exp/cwd-vj1jXP', client: 'Claude Code 2.1.328', title: 'go', readOnly: true, payloadCount: 4 });
    expect(sessions.find((s) => s.kind === 'codex')).toMatchObject({ project: '/tmp/exp/cxcwd-PSHN5r', client: 'Codex 0.171.0 (codex_exec)', payloadCount: 2 });
    expect(sessions.find((s) => s.kind === 'gemini')).toMatchObject({ title: 'hi', client: 'Gemini CLI', payloadCount: 10 });
    expect((await svc.listPayloads({ query: 'credentials' })).total).toBe(0);
    expect((await svc.listPayloads({ tool: 'leak' })).total).toBe(0);

    // A summary of a payload in a read-only root goes to app data, not into its sidecar.
    const spilledSession = sessions.find((s) => s.kind === 'spillway' && s.path.startsWith(home))!;
    expect(spilledSession.readOnly).toBe(true);
    const before = fs.readFileSync(spilled.metaPath, 'utf8');
    const [row] = (await svc.listPayloads({ sessionId: spilledSession.id })).rows;
    await svc.summarize({ payloadId: row!.id });
    expect(fs.readFileSync(spilled.metaPath, 'utf8')).toBe(before);
    expect(fs.readdirSync(path.join(appData, 'summary-runs'))).toEqual([`${row!.id}.jsonl`]);
    expect((await svc.getPayload({ id: row!.id })).summaryRuns).toHaveLength(1);
    await svc.close();

    // The inspector cannot be made to read Gemini's credentials: they are in no root.
    const refused = await svc.estimate({ path: path.join(home, '.gemini', 'settings.json') }).then(
      () => null,
      (e: { code?: string }) => e.code,
    );
    expect(refused).toBe('FORBIDDEN_PATH');

    // Next start without an opinion keeps them; turned off, they go (the user's own roots stay).
    const kept = service(home, appData, undefined);
    expect((await kept.listRoots({})).filter((r) => r.auto)).toHaveLength(3);
    await kept.close();
    const off = service(home, appData, false);
    const left = await off.listRoots({});
    expect(left.filter((r) => r.auto)).toEqual([]);
    expect(left.some((r) => r.path === path.join(appData, 'sessions'))).toBe(true);
  });
});

describe('a ~/.gemini the user adds as a root', () => {
  it('is walked only where chats are, by a full scan and by a watcher-scoped one', async () => {
    const { home } = await agentHome();
    const { index } = tmpIndex();
    const root = index.addRoot(path.join(home, '.gemini'));
    await index.scan();
    expect(index.listPayloads({ tool: 'leak' }).total).toBe(0);
    expect(index.listSessions().filter((s) => s.kind === 'gemini')).toHaveLength(1);
    await index.scan({ rootId: root.id, scopes: [path.join(home, '.gemini', 'settings.json')] });
    expect(index.listPayloads({ tool: 'leak' }).total).toBe(0);
  });
});

describe('spillway serve', () => {
  const TOKEN = 'default-roots-test-token-0123456789';
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  });

  async function serve(args: string[], env: NodeJS.ProcessEnv) {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', CLI, 'serve', '--port', '0', ...args], {
      cwd: REPO,
      // A fixed token: the printed link carries only a one-time launch code, for the browser.
      env: { ...process.env, SPILLWAY_TOKEN: TOKEN, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL; stderr: ${err}`)), 60_000);
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('\n')) (clearTimeout(timer), resolve(out.split('\n')[0]!));
      });
      child.on('exit', (code) => (clearTimeout(timer), reject(new Error(`serve exited ${code}: ${err}`))));
    });
    // The roots lines come right after the URL.
    for (let i = 0; i < 200 && !err.includes('press Ctrl+C'); i++) await new Promise((r) => setTimeout(r, 25));
    const u = new URL(url);
    const res = await fetch(new URL('/api/listRoots', u), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: '{}',
    });
    const roots = ((await res.json()) as { result: Array<{ path: string; auto?: boolean; readOnly?: boolean }> }).result;
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    return { roots, stderr: err };
  }

  it('with no --root opens them and says so on stderr; --no-default-roots and SPILLWAY_NO_DEFAULT_ROOTS turn that off', async () => {
    const { home } = await agentHome();
    const app = path.join(tmpDir(), 'app');
    const on = await serve([], { HOME: home, SPILLWAY_HOME: app });
    expect(on.roots.filter((r) => r.auto && r.readOnly)).toHaveLength(3);
    expect(on.stderr).toContain(`root ${path.join(home, '.claude', 'projects')} (claude-projects, read-only, opened by default)`);
    expect(on.stderr).toMatch(/3 agent session folder\(s\) opened read-only by default; --no-default-roots or SPILLWAY_NO_DEFAULT_ROOTS=1 turns that off/);
    const flagOff = await serve(['--no-default-roots'], { HOME: home, SPILLWAY_HOME: app });
    expect(flagOff.roots.filter((r) => r.auto)).toEqual([]);
    expect(flagOff.stderr).not.toContain('opened by default');
    const envOff = await serve([], { HOME: home, SPILLWAY_HOME: path.join(tmpDir(), 'app2'), SPILLWAY_NO_DEFAULT_ROOTS: '1' });
    expect(envOff.roots.filter((r) => r.auto)).toEqual([]);
  }, 120_000);
});
