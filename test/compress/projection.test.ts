import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { estimateTokens } from '../../src/pipeline/estimate/index.js';
import {
  findProjectionSpec,
  loadProjectionSpecs,
  parsePath,
  project,
  projectWithStats,
  ProjectionSpecError,
  saveProjectionSpec,
  suggestProjection,
} from '../../src/compress/index.js';

// Shaped like GitHub's "list issues" API response.
const issues = Array.from({ length: 120 }, (_, i) => ({
  url: `https://api.github.com/repos/acme/app/issues/${i + 1}`,
  repository_url: 'https://api.github.com/repos/acme/app',
  labels_url: `https://api.github.com/repos/acme/app/issues/${i + 1}/labels{/name}`,
  html_url: `https://github.com/acme/app/issues/${i + 1}`,
  id: 9_000_000 + i,
  node_id: `I_kwDO${(i * 7919).toString(36)}`,
  number: i + 1,
  title: `Issue ${i + 1}: ${i % 2 ? 'crash on start' : 'slow search'}`,
  user: { login: `user${i % 9}`, id: 100 + (i % 9), avatar_url: `https://avatars.githubusercontent.com/u/${100 + (i % 9)}?v=4`, gravatar_id: '', type: 'User', site_admin: false },
  labels: i % 3 ? [{ id: 1, name: 'bug', color: 'd73a4a', default: true }] : [],
  state: i % 4 ? 'open' : 'closed',
  locked: false,
  assignee: null,
  milestone: null,
  comments: i % 11,
  created_at: `2026-11-${String((i % 28) + 1).padStart(2, '0')}T10:00:00Z`,
  body: `Steps to reproduce ${i}. `.repeat(30),
  reactions: { url: `https://api.github.com/repos/acme/app/issues/${i + 1}/reactions`, total_count: i % 5, '+1': 0, '-1': 0 },
}));

describe('project', () => {
  it('keeps named fields, including fields inside arrays of objects', () => {
    const out = project(issues, { keep: ['$[*].number', '[*].title', '$[*].user.login', '$[*].labels[*].name'] }) as any[];
    expect(out).toHaveLength(120);
    expect(out[1]).toEqual({ number: 2, title: 'Issue 2: crash on start', user: { login: 'user1' }, labels: [{ name: 'bug' }] });
    expect(out[0]).toEqual({ number: 1, title: 'Issue 1: slow search', user: { login: 'user0' }, labels: [] });
  });

  it('keeps from inside wrapper objects, dictionaries (.*) and at any depth (..key)', () => {
    const v = { data: { items: issues.slice(0, 2) }, meta: { page: 1 } };
    expect(project(v, { keep: ['data.items[].number', 'meta'] })).toEqual({ data: { items: [{ number: 1 }, { number: 2 }] }, meta: { page: 1 } });
    const dict = { a: { v: 1, w: 2 }, b: { v: 3, w: 4 } };
    expect(project(dict, { keep: ['$.*.v'] })).toEqual({ a: { v: 1 }, b: { v: 3 } });
    expect(project({ x: { y: { login: 'a', z: 1 } }, login: 'b' }, { keep: ['$..login'] })).toEqual({ x: { y: { login: 'a' } }, login: 'b' });
    expect(project(issues.slice(0, 3), { keep: ['[0].id', '[2].id'] })).toEqual([{ id: 9_000_000 }, { id: 9_000_002 }]);
  });

  it('trims: drop nulls and empties, cap arrays with a count, shorten strings; drop paths', () => {
    const { value, stats } = projectWithStats(issues, { drop: ['$[*].body', '$..url'], dropNulls: true, dropEmpty: true, maxArray: 2, maxString: 20 });
    const out = value as any[];
    expect(out).toHaveLength(3);
    expect(out[2]).toBe('… 118 more items cut (120 in all)');
    expect(out[0].assignee).toBeUndefined();
    expect(out[0].labels).toBeUndefined(); // [] dropped
    expect(out[0].body).toBeUndefined();
    expect(out[0].url).toBeUndefined();
    expect(out[0].reactions.url).toBeUndefined();
    expect(out[0].html_url).toBe(`https://github.com/a…[+${'https://github.com/acme/app/issues/1'.length - 20} chars]`);
    expect(stats.itemsCut).toBe(118);
    expect(stats.nullsDropped).toBeGreaterThan(0);
  });

  it('parses a JSON string and leaves non-JSON strings alone', () => {
    expect(project(JSON.stringify({ a: 1, b: 2 }), { keep: ['a'] })).toEqual({ a: 1 });
    expect(project('plain text', { maxString: 5 })).toBe('plain…[+5 chars]');
  });

  it('refuses bad specs with a clear error', () => {
    expect(() => project({}, { keep: ['$.a[?(@.x)]'] })).toThrow(ProjectionSpecError);
    expect(() => project({}, { keep: 'a' as unknown as string[] })).toThrow(/keep must be an array/);
    expect(() => project({}, { maxArray: -1 })).toThrow(/maxArray/);
    expect(() => project({}, { bogus: 1 } as never)).toThrow(/unknown field "bogus"/);
    expect(() => parsePath("$['unterminated")).toThrow(/unterminated quote/);
  });

  it('hostile nesting gives a clear error, not a stack overflow', () => {
    const deep = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
    expect(() => project(deep, { maxArray: 5 })).toThrow(/nested deeper than 256 levels/);
    expect(() => suggestProjection(deep)).toThrow(ProjectionSpecError);
  });

  it('property: projection never adds data, and keep-everything + no trims is the identity', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        expect(project(v, {})).toEqual(JSON.parse(JSON.stringify(v)));
        const out = JSON.stringify(project(v, { keep: ['$..id', '$[*].name'], dropNulls: true, maxArray: 3, maxString: 10 }));
        expect(out.length).toBeLessThanOrEqual(JSON.stringify(v).length + 64);
      }),
      { numRuns: 200 },
    );
  });
});

describe('suggestProjection', () => {
  it('ranks fields by token cost and proposes a spec that keeps the facts and drops the noise', () => {
    const s = suggestProjection(JSON.stringify(issues));
    expect(s.fields[0]!.path).toBe('$[*].body');
    for (let i = 1; i < s.fields.length; i++) expect(s.fields[i - 1]!.tokens).toBeGreaterThanOrEqual(s.fields[i]!.tokens);
    const f = (p: string) => s.fields.find((x) => x.path === p)!;
    expect(f('$[*].labels_url').keep).toBe(false);
    expect(f('$[*].user.avatar_url').keep).toBe(false);
    expect(f('$[*].locked').keep).toBe(false); // same value everywhere
    expect(f('$[*].assignee').keep).toBe(false); // always null
    expect(f('$[*].url').keep).toBe(false); // html_url is the useful link
    for (const p of ['$[*].number', '$[*].title', '$[*].state', '$[*].html_url', '$[*].user.login', '$[*].body']) expect(f(p).keep, p).toBe(true);
    expect(s.spec.keep).toContain('$[*].title');
    expect(s.spec.maxString).toBe(500);
    expect(s.spec.maxArray).toBe(50);
    expect(s.tokensAfter).toBeLessThan(s.tokensBefore * 0.6);
    // the suggested spec, applied, keeps the facts
    const out = project(issues, s.spec) as any[];
    expect(out[1]).toMatchObject({ number: 2, title: 'Issue 2: crash on start', state: 'open', html_url: 'https://github.com/acme/app/issues/2', user: { login: 'user1' } });
    expect(estimateTokens(JSON.stringify(out)).tokens).toBe(s.tokensAfter);
  });

  it('says so when the payload is not JSON', () => {
    expect(() => suggestProjection('not json {')).toThrow(/does not parse as JSON/);
  });
});

describe('specs per tool on disk', () => {
  it('saves atomically as <tool>.json, loads a folder or a file, finds by name or glob', () => {
    const dir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-proj-')), 'projections');
    const p = saveProjectionSpec(dir, 'github/list_issues', { keep: ['$[*].number'], maxString: 100 });
    expect(path.basename(p)).toBe('github_list_issues.json');
    saveProjectionSpec(dir, 'github_*', { keep: ['$[*].id'] });
    const specs = loadProjectionSpecs(dir);
    expect(findProjectionSpec(specs, 'github/list_issues')!.keep).toEqual(['$[*].number']);
    expect(findProjectionSpec(specs, 'github_list_prs')!.keep).toEqual(['$[*].id']);
    expect(findProjectionSpec(specs, 'slack_history')).toBeUndefined();
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('.'))).toEqual([]);
    const file = path.join(dir, '..', 'all.json');
    fs.writeFileSync(file, JSON.stringify({ tools: { jira_search: { keep: ['issues[].key'] } } }));
    expect(loadProjectionSpecs(file).get('jira_search')!.keep).toEqual(['issues[].key']);
    fs.writeFileSync(path.join(dir, 'broken.json'), '{"keep": 5}');
    expect(() => loadProjectionSpecs(dir)).toThrow(/broken\.json: keep must be an array/);
    expect(loadProjectionSpecs(path.join(dir, 'nope')).size).toBe(0);
  });

  it('tool names cannot escape the folder', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-proj-'));
    const p = saveProjectionSpec(dir, '../../etc/passwd', { keep: ['a'] });
    expect(path.dirname(p)).toBe(dir);
  });
});
