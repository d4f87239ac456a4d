import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AppInfo, RootInfo, SessionInfo } from '../../src/service/contract.js';
import {
  clientLabel,
  groupSessions,
  guessHome,
  projectOf,
  rootLabel,
  scopeTitle,
  sessionMatches,
  sessionTitle,
  shortenHome,
  summaryRunsDir,
} from '../../app/lib/sessions.js';
import { CLIENTS } from '../../src/agents/clients.js';

const decodeProjectFolder = (f: string) => CLIENTS['claude-code'].projectOfFolder(f);
import { summarizeProgress } from '../../app/lib/progress.js';
import { formatAgo } from '../../app/lib/format.js';

const root = (p: Partial<RootInfo> & { path: string }): RootInfo => ({ id: p.path, kind: 'sessions', addedAt: '2026-12-01T00:00:00Z', sessionCount: 0, payloadCount: 0, ...p });

let seq = 0;
const session = (p: Partial<SessionInfo>): SessionInfo => ({
  id: `s${++seq}`,
  rootId: 'r',
  name: `n${seq}`,
  path: `/x/n${seq}`,
  kind: 'claude-code',
  readOnly: true,
  payloadCount: 1,
  assetCount: 0,
  totalBytes: 1,
  totalTokens: 1,
  ...p,
});

const info = { appDataDir: '/home/gray/.config/spillway' } as AppInfo;

describe('the home folder, for ~', () => {
  it('comes from a root opened by default, never from a root the user chose', () => {
    expect(guessHome([root({ path: '/home/gray/.claude/projects', auto: true })])).toBe('/home/gray');
    expect(guessHome([root({ path: '/Users/gray/.codex/sessions/', auto: true })])).toBe('/Users/gray');
    expect(guessHome([root({ path: '/home/gray/.gemini/tmp', auto: true })])).toBe('/home/gray');
    expect(guessHome([root({ path: 'C:\\Users\\gray\\.claude\\projects', auto: true })])).toBe('C:\\Users\\gray');
    // A user's own ~/.claude/projects root could be anyone's: no guess from it.
    expect(guessHome([root({ path: '/home/other/.claude/projects', auto: false })])).toBeUndefined();
    // CLAUDE_CONFIG_DIR elsewhere: its folder says nothing about the home.
    expect(guessHome([root({ path: '/opt/claude/projects', auto: true })])).toBeUndefined();
    expect(guessHome([])).toBeUndefined();
  });

  it('is shortened at a path boundary only, and ~ expands back to the same path', () => {
    expect(shortenHome('/home/gray/Projects/claude-bug', '/home/gray')).toBe('~/Projects/claude-bug');
    expect(shortenHome('/home/gray', '/home/gray')).toBe('~');
    expect(shortenHome('/home/gray2/x', '/home/gray')).toBe('/home/gray2/x');
    expect(shortenHome('/tmp/exp/cwd', '/home/gray')).toBe('/tmp/exp/cwd');
    expect(shortenHome('C:\\Users\\gray\\app', 'C:\\Users\\gray')).toBe('~\\app');
    expect(shortenHome('/home/gray/x', undefined)).toBe('/home/gray/x');
    const seg = fc.stringMatching(/^[A-Za-z0-9._-]{1,8}$/);
    fc.assert(
      fc.property(fc.array(seg, { minLength: 1, maxLength: 3 }), fc.array(seg, { maxLength: 4 }), (h, rest) => {
        const home = `/${h.join('/')}`;
        const p = [home, ...rest].join('/');
        const short = shortenHome(p, home);
        expect(short.startsWith('~') ? home + short.slice(1) : short).toBe(p);
        // Not inside: unchanged.
        expect(shortenHome(`${home}x/${rest.join('/')}`, home)).toBe(`${home}x/${rest.join('/')}`);
      }),
    );
  });
});

describe('project paths', () => {
  it('uses the working directory the transcript recorded, home shortened', () => {
    const p = projectOf(session({ project: '/home/gray/Projects/claude-bug', name: '-home-gray-Projects-claude-bug/abc' }), '/home/gray')!;
    expect(p).toMatchObject({ path: '~/Projects/claude-bug', parent: '~/Projects/', leaf: 'claude-bug', approximate: false });
  });

  it("decodes Claude Code's folder name only when no cwd was recorded, and says it is a guess", () => {
    expect(decodeProjectFolder('-Users-gray-Projects-claude-bug')).toBe('/Users/gray/Projects/claude/bug');
    expect(decodeProjectFolder('C--Users-gray-app')).toBe('C:\\Users\\gray\\app');
    expect(decodeProjectFolder('session-000')).toBeUndefined();
    const p = projectOf(session({ name: '-Users-gray-Projects-app/0b1c' }), '/Users/gray')!;
    expect(p).toMatchObject({ path: '~/Projects/app', approximate: true });
    // Other clients' folder names are never decoded.
    expect(projectOf(session({ kind: 'codex', name: '2026/12/01/rollout-x' }), undefined)).toBeUndefined();
    expect(projectOf(session({ kind: 'spillway', name: 'session-000' }), undefined)).toBeUndefined();
  });
});

describe('titles and badges', () => {
  it('is the first prompt on one line; without one, a name a person can tell apart', () => {
    expect(sessionTitle(session({ title: 'fix the\n  flaky   test\tin auth' }))).toEqual({ text: 'fix the flaky test in auth', fromPrompt: true });
    expect(sessionTitle(session({ kind: 'spillway', name: 'session-003' }))).toEqual({ text: 'session-003', fromPrompt: false });
    expect(sessionTitle(session({ kind: 'codex', name: '2026/12/01/rollout-2026-12-01T08-12-21-01a2' }))).toEqual({ text: '2026-12-01T08-12-21-01a2', fromPrompt: false });
    expect(sessionTitle(session({ title: '   ', name: '-tmp-x/85f0' })).text).toBe('85f0');
    expect(sessionTitle(session({ kind: 'scratch', name: '20261201T104414802Z_tool-result.json_a1b2c3' })).text).toBe('tool-result.json');
  });

  it('names each client the way people do', () => {
    expect(['claude-code', 'codex', 'gemini', 'spillway', 'scratch'].map((k) => clientLabel(k as SessionInfo['kind']))).toEqual(['Claude Code', 'Codex', 'Gemini CLI', 'Spillway', 'Dropped file']);
  });

  it('names roots: the agents, Spillway sessions, dropped files, else the folder', () => {
    const home = '/home/gray';
    expect(rootLabel(root({ path: '/home/gray/.claude/projects', auto: true }), info, home)).toMatchObject({ name: 'Claude Code', detail: '~/.claude/projects', role: 'agent' });
    expect(rootLabel(root({ path: '/home/gray/.codex/sessions' }), info, home).name).toBe('Codex');
    expect(rootLabel(root({ path: '/home/gray/.config/spillway/sessions' }), info, home)).toMatchObject({ name: 'Spillway sessions', role: 'app-sessions' });
    expect(rootLabel(root({ path: '/home/gray/.config/spillway/scratch' }), info, home).role).toBe('scratch');
    expect(rootLabel(root({ path: '/srv/agent-runs' }), info, home)).toMatchObject({ name: 'agent-runs', role: 'user' });
    expect(summaryRunsDir(info)).toBe('/home/gray/.config/spillway/summary-runs');
  });
});

describe('grouping', () => {
  it('groups by project (latest first), sub-agents under their parent, sessions with no project last', () => {
    const a1 = session({ project: '/p/a', lastAt: '2026-12-01T08:00:00Z' });
    const a2 = session({ project: '/p/a', lastAt: '2026-12-01T09:00:00Z' });
    const sub = session({ project: '/p/a', parentSessionId: a1.id, payloadCount: 0 });
    const b = session({ project: '/p/b', lastAt: '2026-12-01T10:00:00Z', payloadCount: 5 });
    const own = session({ kind: 'spillway', name: 'session-000', lastAt: '2026-12-01T11:00:00Z' });
    const orphan = session({ project: '/p/b', parentSessionId: 'gone', lastAt: '2026-12-01T07:00:00Z' });
    const groups = groupSessions([a1, sub, own, a2, b, orphan], undefined);
    expect(groups.map((g) => g.key)).toEqual(['/p/b', '/p/a', '']);
    const [gb, ga, none] = groups;
    expect(ga!.nodes.map((n) => n.session.id)).toEqual([a2.id, a1.id]);
    expect(ga!.nodes[1]!.children.map((c) => c.id)).toEqual([sub.id]);
    expect(ga!.count).toBe(3);
    expect(gb!.payloads).toBe(6);
    expect(gb!.nodes.find((n) => n.session.id === orphan.id)!.orphan).toBe(true);
    expect(none!.project).toBeUndefined();
  });

  it('puts a sub-agent of a sub-agent under the first session, and cuts a cycle of parent links', () => {
    const top = session({ project: '/p', lastAt: '2026-12-01T08:00:00Z' });
    const mid = session({ project: '/p', parentSessionId: top.id });
    const leaf = session({ project: '/p', parentSessionId: mid.id });
    const c1 = session({ id: 'c1', project: '/q', parentSessionId: 'c2' });
    const c2 = session({ id: 'c2', project: '/q', parentSessionId: 'c1' });
    const groups = groupSessions([leaf, mid, top, c1, c2], undefined);
    const p = groups.find((g) => g.key === '/p')!;
    expect(p.nodes).toHaveLength(1);
    expect(p.nodes[0]!.children.map((c) => c.id).sort()).toEqual([mid.id, leaf.id].sort());
    const q = groups.find((g) => g.key === '/q')!;
    expect(q.nodes.map((n) => [n.session.id, n.children.map((c) => c.id), n.orphan])).toEqual([['c1', ['c2'], true]]);
  });

  it('lists every session exactly once, whatever the parent links', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ project: fc.option(fc.constantFrom('/a', '/b', '/c'), { nil: undefined }), parent: fc.option(fc.nat(30), { nil: undefined }), t: fc.nat(1000) }), { maxLength: 40 }),
        (specs) => {
          const list = specs.map((x, i) => session({ id: `x${i}`, project: x.project, lastAt: new Date(Date.UTC(2026, 0, 1) + x.t * 60_000).toISOString() }));
          specs.forEach((x, i) => x.parent !== undefined && (list[i]!.parentSessionId = `x${x.parent}`));
          const seen = groupSessions(list, undefined).flatMap((g) => g.nodes.flatMap((n) => [n.session.id, ...n.children.map((c) => c.id)]));
          expect(seen.sort()).toEqual(list.map((s) => s.id).sort());
        },
      ),
    );
  });

  it('filters on the prompt, the project (as shown or as recorded), the client and the name', () => {
    const s = session({ title: 'Fix the flaky test', project: '/home/gray/Projects/app', client: 'Claude Code 2.1.328' });
    for (const q of ['flaky', '~/projects/app', '/home/gray', 'claude code', '2.1.328']) expect(sessionMatches(s, q, '/home/gray')).toBe(true);
    expect(sessionMatches(s, 'codex', '/home/gray')).toBe(false);
  });
});

describe('times in the sidebar', () => {
  it('are compact: now, minutes, hours, days, then the date', () => {
    const now = Date.UTC(2026, 11, 1, 12, 0, 0);
    const ago = (s: number) => formatAgo(new Date(now - s * 1000).toISOString(), now);
    expect([ago(10), ago(300), ago(7200), ago(86_400 * 3)]).toEqual(['now', '5m', '2h', '3d']);
    expect(ago(86_400 * 40)).toMatch(/^2026-10-2\d$/);
    expect(formatAgo(undefined, now)).toBe('');
  });
});

describe('index progress', () => {
  it('sums each phase over the roots in flight, and one root alone on request', () => {
    const p = summarizeProgress({
      'list:a': { rootId: 'a', done: 5, total: 10, phase: 'list' },
      'fulltext:b': { rootId: 'b', done: 30, total: 40, phase: 'fulltext' },
      'fulltext:c': { rootId: 'c', done: 12, total: 10, phase: 'fulltext' },
    });
    expect(p.list).toEqual({ done: 5, total: 10, roots: 1 });
    expect(p.fulltext).toEqual({ done: 40, total: 50, roots: 2 });
    expect(summarizeProgress({ 'list:a': { rootId: 'a', done: 5, total: 10 } }, 'b')).toEqual({});
  });
});

// Issue 29: the tuner's and the waste report's headers named a session by its folder
// (`-home-dev-project/0e02aa84-….jsonl`) while the sidebar showed its first prompt.
describe('one session title everywhere', () => {
  it("a view's header names a session by the sidebar's title, a folder by its label", () => {
    const s = session({ name: '-home-dev-project/0e02aa84-881c-4e4d-b477-9a48058d9661.jsonl', title: 'Fix the\nlogin bug' });
    const roots = [root({ path: '/home/dev/.claude/projects', auto: true })];
    const o = { sessions: [s], roots, info };
    expect(scopeTitle({ ...o, sessionId: s.id, rootId: null })).toBe(`Session: ${sessionTitle(s).text}`);
    expect(scopeTitle({ ...o, sessionId: s.id, rootId: null })).toBe('Session: Fix the login bug');
    expect(scopeTitle({ ...o, sessionId: s.id, rootId: null })).not.toContain('0e02aa84');
    expect(scopeTitle({ ...o, sessionId: null, rootId: roots[0]!.id })).toBe('Folder: Claude Code');
    expect(scopeTitle({ ...o, sessionId: null, rootId: null })).toBe('All folders');
  });
});
