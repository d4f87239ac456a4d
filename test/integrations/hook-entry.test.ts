import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseHookArgs } from '../../src/integrations/hooks/claude-code-fast.js';
import { makeLog, makePng, ROOT, testEnv, tmpDir } from './helpers.js';
import { checkTaken, commanderRead, moduleRecorder } from './hook-cli.js';

/**
 * A hook call the fast path does not pass runs through the hook's own entry (bin/spillway.js →
 * claude-code-entry.ts), not the CLI. For the same stdin and command line it must do exactly what
 * `spillway hook claude-code` through the full CLI does: the same stdout, stderr and exit code, and
 * the same spill on disk (names, payloads, assets, sidecars), up to the clock.
 */

const BIN = path.join(ROOT, 'bin', 'spillway.js');
const MAIN = path.join(ROOT, 'dist', 'lib', 'cli', 'main.js');
const SESSION_ID = 'b2c3d4e5-6f70-4a5b-8c9d-0e1f2a3b4c5d';

const RECORDER = moduleRecorder();

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Every file under the run's app data and session folder: normalised name -> normalised content. */
  files: Record<string, string>;
  modules: string[];
}

/** Stand-ins for what differs between two runs of the same call: the folders, the clock, run ids. */
function normalise(s: string, root: string): string {
  return s
    .split(root)
    .join('<ROOT>')
    .replace(/\d{8}T\d{9}Z/g, '<STAMP>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, '<TIME>')
    .replace(/"id": ?"[0-9a-f-]{36}"/g, '"id": "<RUN>"')
    .replace(/"ms": ?\d+/g, '"ms": 0');
}

function filesUnder(dir: string, root: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile()) continue;
    const file = path.join(e.parentPath, e.name);
    if (file.endsWith('modules.log')) continue;
    const bytes = fs.readFileSync(file);
    // text as text (normalised), anything else as bytes
    const body = e.name.endsWith('.bin') || e.name.endsWith('.png') ? bytes.toString('base64') : normalise(bytes.toString('utf8'), root);
    out[normalise(file, root)] = body;
  }
  return out;
}

/** One hook call in a fresh root (app data `<root>/home`, any `{session}` in args as `<root>/session`). */
function run(entry: 'bin' | 'cli', stdin: string, args: string[]): Run {
  const root = tmpDir('spillway-entry-');
  const home = path.join(root, 'home');
  const log = path.join(root, 'modules.log');
  fs.writeFileSync(log, '');
  const argv = entry === 'bin' ? [BIN, 'hook', 'claude-code'] : [MAIN, 'hook', 'claude-code'];
  const r = spawnSync(process.execPath, ['--import', RECORDER, ...argv, ...args.map((a) => a.replace('{session}', path.join(root, 'session')))], {
    input: stdin.split('{root}').join(root),
    env: { ...testEnv(home), SPILLWAY_TEST_MODULE_LOG: log, SPILLWAY_SUMMARIZER: '', SPILLWAY_STORE: '' },
    maxBuffer: 64 * 1024 * 1024,
  });
  const modules = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
  return { code: r.status, stdout: normalise(r.stdout.toString(), root), stderr: normalise(r.stderr.toString(), root), files: filesUnder(root, root), modules };
}

const event = (tool_name: string, tool_response: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    session_id: SESSION_ID,
    transcript_path: `{root}/projects/-w/${SESSION_ID}.jsonl`,
    cwd: '/home/user/work',
    hook_event_name: 'PostToolUse',
    tool_name,
    tool_input: { command: 'cat app.log', description: 'Show the server log', q: 'ERROR lines' },
    tool_response,
    tool_use_id: 'toolu_01ENTRYENTRYENTRYENTRYEN',
    ...extra,
  });
const bash = (stdout: string, extra: Record<string, unknown> = {}) => ({ stdout, stderr: '', interrupted: false, isImage: false, noOutputExpected: false, ...extra });
const readText = (content: string) => ({ type: 'text', file: { filePath: '/w/app.log', content, numLines: content.split('\n').length, startLine: 1, totalLines: content.split('\n').length } });
const png = makePng(64, 3).toString('base64');

/** Inputs the fast path does not pass, each with the command lines it is tried with. */
const CASES: Array<{ name: string; stdin: string; args: string[][]; prepare?: (root: string) => void }> = [
  {
    name: 'a large Read',
    stdin: event('Read', readText(makeLog(60_000))),
    args: [[], ['--session', '{session}', '--summarizer', 'none'], ['--limit=100', '--profile', 'o200k', '--strategy', 'chars4', '--focus-arg', 'q', '--session={session}'], ['--context-window', '20000', '--provider', 'structural', '--template', 'default']],
  },
  {
    name: 'Bash output carrying a PNG as base64',
    stdin: event('Bash', bash(`wrote shot.png\n${png}\ndone\n`)),
    args: [[], ['--session', '{session}', '--limit', '200000']],
  },
  {
    name: 'an MCP result with an image block and a long text block',
    stdin: event('mcp__srv__shot', [{ type: 'text', text: makeLog(50_000) }, { type: 'image', data: png, mimeType: 'image/png' }]),
    args: [[], ['--session', '{session}', '--strategy', 'calibrated']],
  },
  {
    name: 'a small MCP result with an image block, cut with --cut-media',
    stdin: event('mcp__srv__shot', [{ type: 'text', text: 'the chart' }, { type: 'image', data: png, mimeType: 'image/png' }]),
    args: [['--cut-media', '--session', '{session}'], ['--session', '{session}', '--cut-media', '--summarizer', 'none']],
  },
  {
    name: 'a large result of a tool whose shape is unknown (left alone, with a note)',
    stdin: event('SomeNewTool', { output: makeLog(80_000) }),
    args: [[]],
  },
  {
    name: 'input that is not JSON',
    stdin: 'not json {',
    args: [[], ['--limit', '5']],
  },
  { name: 'a JSON array', stdin: '[1, 2, 3]', args: [[]] },
];

describe('the hook entry (bin/spillway.js) against the full CLI', () => {
  it('is built from the current source (run npm run build:lib)', () => {
    const built = path.join(ROOT, 'dist', 'lib', 'integrations', 'hooks', 'claude-code-entry.js');
    expect(fs.existsSync(built), `${built} missing: run npm run build:lib`).toBe(true);
    const src = path.join(ROOT, 'src', 'integrations', 'hooks', 'claude-code-entry.ts');
    expect(fs.statSync(built).mtimeMs, 'dist/lib is older than src: run npm run build:lib').toBeGreaterThanOrEqual(fs.statSync(src).mtimeMs);
  });

  for (const c of CASES) {
    it(`prints, writes and exits as the CLI does: ${c.name}`, () => {
      for (const args of c.args) {
        const light = run('bin', c.stdin, args);
        const full = run('cli', c.stdin, args);
        const label = `${c.name} ${JSON.stringify(args)}`;
        // the entry ran, not the CLI: no commander, no other verb, no zod (file-type may load, to type an asset)
        expect(light.modules.some((m) => m.endsWith('/hooks/claude-code-entry.js')), label).toBe(true);
        const heavy = /\/cli\/main\.js$|\/cli\/commands\/|\/node_modules\/(commander|zod|better-sqlite3|chokidar|smol-toml)\//;
        expect(light.modules.filter((m) => heavy.test(m)), label).toEqual([]);
        expect(full.modules.some((m) => m.includes('/node_modules/commander/')), label).toBe(true);
        expect({ code: light.code, stdout: light.stdout, stderr: light.stderr }, label).toEqual({ code: full.code, stdout: full.stdout, stderr: full.stderr });
        expect(light.files, label).toEqual(full.files);
      }
    }, 120_000);
  }

  it('spills in the cases above (the comparison is not of two silent runs)', () => {
    const r = run('bin', CASES[0]!.stdin, []);
    expect(r.stdout).toContain('updatedToolOutput');
    expect(Object.keys(r.files).some((f) => f.endsWith('.meta.json'))).toBe(true);
    const asset = run('bin', CASES[1]!.stdin, ['--session', '{session}', '--limit', '200000']);
    expect(Object.keys(asset.files).some((f) => f.includes('/assets/'))).toBe(true);
  }, 60_000);

  it('leaves help and options it cannot read to the CLI, which prints its usage message', () => {
    for (const args of [['--help'], ['--limit', '0'], ['--summarizer', 'bogus'], ['stray']]) {
      const r = run('bin', event('Read', readText(makeLog(60_000))), args);
      expect(r.modules.some((m) => m.endsWith('/cli/main.js')), JSON.stringify(args)).toBe(true);
      expect(r.modules.some((m) => m.endsWith('/hooks/claude-code-entry.js')), JSON.stringify(args)).toBe(false);
    }
  }, 60_000);
});

describe("the hook entry's command line", () => {
  it('is read only when commander accepts it, into exactly the options commander hands the verb', () => {
    const value = fc.oneof(
      fc.constantFrom('100', '12000', '0', '-5', '1.5', 'abc', '', 'claude', 'o200k', 'gpt2', 'chars4', 'calibrated', 'none', 'off', 'structural', 'bogus', '/tmp/s', 's3://b/p', '--limit'),
      fc.string({ maxLength: 6 }),
    );
    const known = ['--limit', '--context-window', '--profile', '--strategy', '--summarizer', '--provider', '--session', '--store', '--model', '--template', '--focus-arg'];
    const token = fc.oneof(
      { weight: 8, arbitrary: fc.tuple(fc.constantFrom(...known), value).map(([k, v]) => [k, v]) },
      { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...known), value).map(([k, v]) => [`${k}=${v}`]) },
      { weight: 2, arbitrary: fc.constant(['--cut-media']) },
      { weight: 1, arbitrary: fc.constantFrom(['--help'], ['-h'], ['--cut-media=1'], ['--verbose'], ['stray'], ['--'], ['--limit']) },
    );
    checkTaken(token, 5, parseHookArgs, (args, mine) => {
      expect(commanderRead(args), JSON.stringify(args)).toEqual(mine);
    });
  });
});
