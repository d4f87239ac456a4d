import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { makeLog, ROOT, testEnv, tmpDir } from './helpers.js';

/** The real CLI (bin/spillway.js on the built dist, as installed): `config show/set`, and the hook applying a project rule. */

const BIN = path.join(ROOT, 'bin', 'spillway.js');

function folders() {
  const root = tmpDir('spillway-rules-cli-');
  const cwd = path.join(root, 'project');
  const home = path.join(root, 'home');
  fs.mkdirSync(cwd);
  return { root, cwd, home };
}

function run(args: string[], o: { cwd: string; home: string; input?: string; node?: string[] }) {
  const env = testEnv(o.home);
  // The defaults must be this test's, not the machine's.
  delete env.SPILLWAY_SUMMARIZER;
  const r = spawnSync(process.execPath, [...(o.node ?? []), BIN, ...args], { cwd: o.cwd, env, input: o.input ?? '', maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

type Origin = { value: unknown; source: string; match?: string; file?: string };
type Shown = { files: Array<{ scope: string; path: string; state: string; error?: string }>; rules: Array<{ match: string; settings: Record<string, Origin> }>; errors: string[] };
const showJson = (f: { cwd: string; home: string }, extra: string[] = []) => {
  const r = run(['config', 'show', '--json', ...extra], f);
  return { ...r, json: JSON.parse(r.stdout) as Shown };
};
const row = (s: Shown, match: string) => s.rules.find((r) => r.match === match)!.settings;

describe('spillway config', () => {
  it('is listed by spillway --help', () => {
    const f = folders();
    const r = run(['--help'], f);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\s+config\b.*guard rules per tool/m);
  });

  it('show: the defaults where no file is; set writes the project\'s and the user\'s file; show names each setting\'s origin', () => {
    const f = folders();
    const empty = showJson(f);
    expect(empty.code).toBe(0);
    expect(empty.json.files.map((x) => [x.scope, x.state])).toEqual([['project', 'missing'], ['user', 'missing']]);
    expect(row(empty.json, '*')).toMatchObject({ limit: { value: 12_000, source: 'default' }, provider: { value: 'structural', source: 'default' } });

    expect(run(['config', 'set', 'Bash', 'limit', '4000', '--project'], f)).toMatchObject({ code: 0, stdout: expect.stringContaining('.spillway.json (project)') });
    expect(run(['config', 'set', 'fs/*', 'template', 'errors'], f).code).toBe(0);
    expect(run(['config', 'set', '*', 'focus-arg', 'q', '--user'], f).code).toBe(0);
    const project = path.join(f.cwd, '.spillway.json');
    const user = path.join(f.home, 'config.json');
    expect(JSON.parse(fs.readFileSync(project, 'utf8'))).toEqual({ rules: { Bash: { limit: 4000 } } });
    expect(JSON.parse(fs.readFileSync(user, 'utf8'))).toEqual({ rules: { 'fs/*': { template: 'errors' }, '*': { focusArg: 'q' } } });
    // A new file in app data is private; a folder the CLI made for it too.
    expect(fs.statSync(user).mode & 0o777).toBe(0o600);
    expect(fs.statSync(f.home).mode & 0o777).toBe(0o700);

    const s = showJson(f, ['--tool', 'mcp__fs__read_file', '--template', 'flagged']);
    expect(s.code).toBe(0);
    expect(row(s.json, 'Bash')).toMatchObject({ limit: { value: 4000, source: 'project', match: 'Bash', file: project }, focusArg: { value: 'q', source: 'user', match: '*' } });
    expect(row(s.json, 'mcp__fs__read_file')).toMatchObject({ limit: { value: 12_000, source: 'default' }, template: { value: 'flagged', source: 'flag' } });
    expect(row(showJson(f, ['--tool', 'mcp__fs__read_file']).json, 'mcp__fs__read_file').template).toMatchObject({ value: 'errors', source: 'user', match: 'fs/*', file: user });
    const text = run(['config', 'show'], f);
    expect(text.stdout).toMatch(/Bash\n {2}limit +4000 +project: Bash/);

    // An existing file keeps its mode; removing the last setting removes the rule.
    fs.chmodSync(project, 0o640);
    expect(run(['config', 'set', 'Bash', 'limit', '--unset', '--project'], f).code).toBe(0);
    expect(fs.statSync(project).mode & 0o777).toBe(0o640);
    expect(JSON.parse(fs.readFileSync(project, 'utf8'))).toEqual({ rules: {} });
  });

  it('refuses a bad value or setting (exit 2, nothing written), and names a bad file and its field (exit 1)', () => {
    const f = folders();
    for (const args of [['Bash', 'limit', '0'], ['Bash', 'limit', 'lots'], ['Bash', 'limt', '5'], ['Bash', 'provider', 'gpt'], ['Bash', 'template', '../x'], ['Bash', 'limit'], ['Bash', 'limit', '5', '--project', '--user']]) {
      const r = run(['config', 'set', ...args], f);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^spillway config: /);
    }
    expect(fs.existsSync(path.join(f.home, 'config.json'))).toBe(false);
    const project = path.join(f.cwd, '.spillway.json');
    fs.writeFileSync(project, '{"rules":{"Bash":{"limit":"4000"}}}');
    const s = showJson(f);
    expect(s.code).toBe(1);
    expect(s.stderr).toContain(project);
    expect(s.stderr).toMatch(/rules\.Bash\.limit/);
    expect(s.json.files[0]).toMatchObject({ scope: 'project', state: 'error' });
    expect(row(s.json, '*').limit).toMatchObject({ value: 12_000, source: 'default' });
    // set does not write over a file it cannot read as rules.
    const set = run(['config', 'set', 'Read', 'limit', '100', '--project'], f);
    expect(set.code).toBe(2);
    expect(set.stderr).toMatch(/fix it by hand/);
    expect(fs.readFileSync(project, 'utf8')).toBe('{"rules":{"Bash":{"limit":"4000"}}}');
  });
});

// ---- the hook, through bin/spillway.js, with a project rule ----

const event = (cwd: string, tool_name: string, tool_response: unknown) =>
  JSON.stringify({ session_id: 'a1b2c3d4-5e6f-4a5b-8c9d-0e1f2a3b4c5d', transcript_path: path.join(cwd, 't.jsonl'), cwd, hook_event_name: 'PostToolUse', tool_name, tool_input: { command: 'cat app.log', description: 'read the log' }, tool_response, tool_use_id: 'toolu_01' });
const bash = (stdout: string) => ({ stdout, stderr: '', interrupted: false, isImage: false, noOutputExpected: false });
const read = (content: string) => ({ type: 'text', file: { filePath: '/w/app.log', content, numLines: 1, startLine: 1, totalLines: 1 } });

function sidecars(session: string) {
  const dir = path.join(session, 'long_responses');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.meta.json'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as { tool: string; limitTokens: number; rule?: { source: string; match?: string; file?: string; settings: Record<string, { source: string; match?: string }> } });
}

/** A module hook that writes every file URL the process loads to $SPILLWAY_TEST_MODULE_LOG. */
function moduleRecorder(dir: string): string {
  fs.writeFileSync(path.join(dir, 'hooks.mjs'), "import fs from 'node:fs';\nexport async function load(url, context, next) {\n  if (url.startsWith('file:')) fs.appendFileSync(process.env.SPILLWAY_TEST_MODULE_LOG, url + '\\n');\n  return next(url, context);\n}\n");
  fs.writeFileSync(path.join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n");
  return pathToFileURL(path.join(dir, 'register.mjs')).href;
}

describe('spillway hook claude-code with a project rule', () => {
  it('spills a tool at its rule\'s limit and names the rule in the sidecar, while another tool keeps the default', () => {
    const f = folders();
    const session = path.join(f.root, 'session');
    fs.writeFileSync(path.join(f.cwd, '.spillway.json'), JSON.stringify({ rules: { Bash: { limit: 300 } } }));
    const log = makeLog(4_000); // ~1,000 tokens: over 300, well under the default 12,000

    const spilled = run(['hook', 'claude-code', '--session', session, '--summarizer', 'none'], { ...f, input: event(f.cwd, 'Bash', bash(log)) });
    expect(spilled.code).toBe(0);
    expect(spilled.stdout).toContain('updatedToolOutput');
    const [meta] = sidecars(session);
    expect(meta).toMatchObject({ tool: 'Bash', limitTokens: 300, rule: { source: 'project', match: 'Bash', file: path.join(f.cwd, '.spillway.json') } });
    expect(meta!.rule!.settings).toMatchObject({ limit: { source: 'project', match: 'Bash' }, provider: { source: 'flag' }, template: { source: 'default' } });

    // The same text from Read: no rule of its own, the default limit: it passes untouched.
    const passed = run(['hook', 'claude-code', '--session', session, '--summarizer', 'none'], { ...f, input: event(f.cwd, 'Read', read(log)) });
    expect(passed).toMatchObject({ code: 0, stdout: '' });
    expect(sidecars(session)).toHaveLength(1);

    // Read over the default: spilled at 12,000, and the sidecar says the limit was the default.
    const big = run(['hook', 'claude-code', '--session', session, '--summarizer', 'none'], { ...f, input: event(f.cwd, 'Read', read(makeLog(80_000))) });
    expect(big.stdout).toContain('updatedToolOutput');
    const readMeta = sidecars(session).find((m) => m.tool === 'Read')!;
    expect(readMeta).toMatchObject({ limitTokens: 12_000, rule: { source: 'default' } });

    // A --limit flag comes before the rule.
    const s2 = path.join(f.root, 'session2');
    const flagged = run(['hook', 'claude-code', '--session', s2, '--summarizer', 'none', '--limit', '5000'], { ...f, input: event(f.cwd, 'Bash', bash(log)) });
    expect(flagged).toMatchObject({ code: 0, stdout: '' });
  });

  it('with a bad rules file: says which file and field on stderr, and guards with the defaults', () => {
    const f = folders();
    const session = path.join(f.root, 'session');
    fs.writeFileSync(path.join(f.cwd, '.spillway.json'), '{"rules":{"Bash":{"limit":300,"templat":"x"}}}');
    const r = run(['hook', 'claude-code', '--session', session, '--summarizer', 'none'], { ...f, input: event(f.cwd, 'Bash', bash(makeLog(80_000))) });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('updatedToolOutput');
    expect(r.stderr).toContain(path.join(f.cwd, '.spillway.json'));
    expect(r.stderr).toMatch(/rules\.Bash.*templat/);
    expect(sidecars(session)[0]).toMatchObject({ limitTokens: 12_000, rule: { source: 'default' } });
  });

  it("passes a small result with a rules file present on the fast path: the rules' light half only, no package", () => {
    const f = folders();
    fs.writeFileSync(path.join(f.cwd, '.spillway.json'), JSON.stringify({ rules: { Bash: { limit: 300 } } }));
    const logFile = path.join(f.root, 'modules.log');
    fs.writeFileSync(logFile, '');
    const env = { ...testEnv(f.home), SPILLWAY_TEST_MODULE_LOG: logFile };
    const r = spawnSync(process.execPath, ['--import', moduleRecorder(f.root), BIN, 'hook', 'claude-code'], { cwd: f.cwd, env, input: event(f.cwd, 'Bash', bash('ok\n')) });
    expect(r.status).toBe(0);
    expect(r.stdout.toString()).toBe('');
    const modules = fs.readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
    expect(modules.some((m) => m.endsWith('/rules/match.js'))).toBe(true);
    expect(modules.some((m) => m.endsWith('/cli/main.js') || m.endsWith('/hooks/run.js'))).toBe(false);
    expect(modules.filter((m) => m.includes('/node_modules/'))).toEqual([]);
    // The fast path's 11, and the rules' light half.
    expect(modules.length).toBeLessThanOrEqual(12);
  });
});

describe('spillway guard with a project rule', () => {
  it("guards with the --tool's rule, and a flag still comes first", () => {
    const f = folders();
    fs.writeFileSync(path.join(f.cwd, '.spillway.json'), JSON.stringify({ rules: { Bash: { limit: 300, provider: 'none' } } }));
    const input = makeLog(4_000);
    const session = path.join(f.root, 'session');
    const r = run(['guard', '--session', session, '--tool', 'Bash', '--json'], { ...f, input });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ action: 'spill' });
    expect(sidecars(session)[0]).toMatchObject({ limitTokens: 300, rule: { source: 'project', match: 'Bash', settings: { provider: { source: 'project', match: 'Bash' } } } });
    // Another tool: the default limit, the text passes.
    expect(JSON.parse(run(['guard', '--session', session, '--tool', 'Read', '--json'], { ...f, input }).stdout)).toMatchObject({ action: 'pass' });
    expect(JSON.parse(run(['guard', '--session', session, '--tool', 'Bash', '--limit', '5000', '--json'], { ...f, input }).stdout)).toMatchObject({ action: 'pass' });
  });
});
