/**
 * `npm run bench hook`: `spillway hook claude-code` (bin/spillway.js on the built dist, as setup
 * installs it) against a bare `node -e 0`, measured in the same run, interleaved round by round in
 * a shuffled order, every run on a fresh stdin (new session id, tool call id and output text).
 *
 *   - pass-through: a small Bash result, a 6 KB Read (the fast path; goal ≤ 1.5× `node -e 0`)
 *   - the same small Bash result through the full CLI (dist/lib/cli/main.js): what the fast path saves
 *   - a spill: a 400 KB Read, through the hook's entry (bin/spillway.js) and through the full CLI,
 *     with the modules each loads
 *   - a large Bash result Claude Code persisted (30,000 chars inline + persistedOutputPath to 1 MB)
 *
 * Needs `npm run build:lib` first (it times the built files, as Claude Code runs them).
 * SPILLWAY_BENCH_HOOK_RUNS (default 40) and SPILLWAY_BENCH_HOOK_SPILL_RUNS (default 12) set the runs.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin', 'spillway.js');
const MAIN = path.join(ROOT, 'dist', 'lib', 'cli', 'main.js');
const FAST = path.join(ROOT, 'dist', 'lib', 'cli', 'hook-entry.js');
const RUNS = Number(process.env.SPILLWAY_BENCH_HOOK_RUNS ?? '40') || 40;
const SPILL_RUNS = Number(process.env.SPILLWAY_BENCH_HOOK_SPILL_RUNS ?? '12') || 12;
const GOAL = 1.5;

const fmt = (v: number) => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(1)} ms`);
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const median = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)]!;
const p90 = (xs: number[]) => sorted(xs)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))]!;
const row = (cells: string[]) => console.log(cells.map((c, i) => (i === 0 ? c.padEnd(58) : c.padStart(11))).join(' '));

/** Fresh text of about `bytes`, in lines (random hex words: no two inputs alike). */
function freshText(bytes: number): string {
  const hex = crypto.randomBytes(Math.ceil(bytes / 2)).toString('hex');
  let out = '';
  for (let i = 0; out.length < bytes; i += 10) out += `${hex.slice(i % (hex.length - 10), (i % (hex.length - 10)) + 9)}${i % 110 === 0 ? '\n' : ' '}`;
  return out.slice(0, bytes);
}

interface Case {
  name: string;
  argv: string[];
  runs: number;
  /** A fresh stdin (and whatever files it names) for run `i`. */
  input: (i: number) => string;
  /** Whether the hook must answer (spill) or stay silent (pass). */
  answers: boolean | undefined;
  times: number[];
}

export async function run(): Promise<void> {
  if (!fs.existsSync(FAST) || !fs.existsSync(MAIN)) {
    console.log('SKIPPED: dist/lib is not built (or predates the fast path): run `npm run build:lib` first.');
    return;
  }
  const srcFast = path.join(ROOT, 'src', 'cli', 'hook-entry.ts');
  if (fs.statSync(srcFast).mtimeMs > fs.statSync(FAST).mtimeMs) console.log('warning: dist/lib is older than src/; run `npm run build:lib` for current figures.');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-hook-'));
  const env: NodeJS.ProcessEnv = { ...process.env, SPILLWAY_HOME: path.join(tmp, 'home') };
  delete env.SPILLWAY_STORE;
  delete env.SPILLWAY_SUMMARIZER;
  const project = path.join(tmp, 'projects', '-bench');
  try {
    const event = (i: number, tool_name: string, tool_input: unknown, tool_response: unknown, sessionId = crypto.randomUUID()) =>
      JSON.stringify({
        session_id: sessionId,
        transcript_path: path.join(project, `${sessionId}.jsonl`),
        cwd: tmp,
        prompt_id: crypto.randomUUID(),
        permission_mode: 'default',
        effort: { level: 'medium' },
        hook_event_name: 'PostToolUse',
        tool_name,
        tool_input,
        tool_response,
        tool_use_id: `toolu_${crypto.randomBytes(12).toString('hex')}`,
        duration_ms: i,
      });
    const bash = (stdout: string, extra: Record<string, unknown> = {}) => ({ stdout, stderr: '', interrupted: false, isImage: false, noOutputExpected: false, ...extra });
    const smallBash = (i: number) => event(i, 'Bash', { command: `git rev-parse HEAD # ${i}`, description: 'Show the commit' }, bash(`${crypto.randomBytes(20).toString('hex')}\n`));
    const read = (i: number, bytes: number) => {
      const content = freshText(bytes);
      const lines = content.split('\n').length;
      return event(i, 'Read', { file_path: `/src/file${i}.txt` }, { type: 'text', file: { filePath: `/src/file${i}.txt`, content, numLines: lines, startLine: 1, totalLines: lines } });
    };
    const persisted = (i: number) => {
      const sessionId = crypto.randomUUID();
      const dir = path.join(project, sessionId, 'tool-results');
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(project, `${sessionId}.jsonl`), '');
      const whole = freshText(1024 * 1024);
      const file = path.join(dir, `b${i}.txt`);
      fs.writeFileSync(file, whole);
      return event(i, 'Bash', { command: `cat big${i}.log`, description: 'Show the log' }, bash(whole.slice(0, 30_000), { persistedOutputPath: file, persistedOutputSize: whole.length }), sessionId);
    };
    const hook = [BIN, 'hook', 'claude-code'];
    const rulesProject = path.join(tmp, 'with-rules');
    fs.mkdirSync(rulesProject);
    fs.writeFileSync(path.join(rulesProject, '.spillway.json'), JSON.stringify({ rules: { Bash: { limit: 4000 }, 'fs/*': { template: 'default' }, '*': { provider: 'structural' } } }));
    const inRulesProject = (stdin: string) => JSON.stringify({ ...(JSON.parse(stdin) as object), cwd: rulesProject });
    const cases: Case[] = [
      { name: 'node -e 0 (baseline)', argv: ['-e', '0'], runs: RUNS, input: smallBash, answers: undefined, times: [] },
      { name: 'pass-through: Bash, 41 B stdout (fast path)', argv: hook, runs: RUNS, input: smallBash, answers: false, times: [] },
      { name: 'pass-through: Read, 6 KB (fast path)', argv: hook, runs: RUNS, input: (i) => read(i, 6_000), answers: false, times: [] },
      { name: 'pass-through: Bash, 41 B, full CLI (dist/lib/cli/main.js)', argv: [MAIN, 'hook', 'claude-code'], runs: RUNS, input: smallBash, answers: false, times: [] },
      { name: 'spill: Read, 400 KB', argv: hook, runs: SPILL_RUNS, input: (i) => read(i, 400_000), answers: true, times: [] },
      { name: 'spill: Read, 400 KB, full CLI (dist/lib/cli/main.js)', argv: [MAIN, 'hook', 'claude-code'], runs: SPILL_RUNS, input: (i) => read(i, 400_000), answers: true, times: [] },
      { name: 'spill: Bash, 1 MB persisted (persistedOutputPath)', argv: hook, runs: SPILL_RUNS, input: persisted, answers: true, times: [] },
      // The same events from a project with a rules file (docs/config.md): the fast path reads it, the entry validates it (zod).
      { name: 'pass-through: Bash, 41 B, rules file (fast path)', argv: hook, runs: RUNS, input: (i) => inRulesProject(smallBash(i)), answers: false, times: [] },
      { name: 'spill: Read, 400 KB, rules file', argv: hook, runs: SPILL_RUNS, input: (i) => inRulesProject(read(i, 400_000)), answers: true, times: [] },
    ];
    const once = (c: Case, i: number) => {
      const input = c.input(i);
      const t = performance.now();
      const r = spawnSync(process.execPath, c.argv, { input, env, maxBuffer: 64 * 1024 * 1024 });
      const ms = performance.now() - t;
      if (r.status !== 0) throw new Error(`${c.name}: exit ${r.status}: ${r.stderr}`);
      const out = r.stdout.toString();
      if (c.answers === false && out !== '') throw new Error(`${c.name}: expected no answer, got ${out.slice(0, 200)}`);
      if (c.answers === true && !out.includes('updatedToolOutput')) throw new Error(`${c.name}: expected a spill, got ${JSON.stringify(out.slice(0, 200))} ${r.stderr}`);
      return ms;
    };
    for (const c of cases) once(c, -1); // warm the page cache for every file each case loads
    const rounds = Math.max(...cases.map((c) => c.runs));
    for (let i = 0; i < rounds; i++) {
      const order = cases.filter((c) => i < c.runs).sort(() => Math.random() - 0.5);
      for (const c of order) c.times.push(once(c, i));
    }
    const base = median(cases[0]!.times);
    console.log(`\nwall time per hook process, ${RUNS} runs each (spills ${SPILL_RUNS}), interleaved; ${os.cpus().length} CPUs, load ${os.loadavg()[0]!.toFixed(1)}`);
    row(['', 'median', 'p90', 'vs node -e 0']);
    for (const c of cases) row([c.name, fmt(median(c.times)), fmt(p90(c.times)), `${(median(c.times) / base).toFixed(2)}×`]);
    // What each way loads (one untimed run each, through a module hook that logs every file URL).
    const loaded = (argv: string[], input: string) => {
      const log = path.join(tmp, `modules-${crypto.randomUUID()}.log`);
      fs.writeFileSync(log, '');
      fs.writeFileSync(path.join(tmp, 'log-hooks.mjs'), "import fs from 'node:fs';\nexport async function load(u, c, next) {\n  if (u.startsWith('file:')) fs.appendFileSync(process.env.SPILLWAY_BENCH_MODULE_LOG, u + '\\n');\n  return next(u, c);\n}\n");
      fs.writeFileSync(path.join(tmp, 'log-register.mjs'), "import { register } from 'node:module';\nregister('./log-hooks.mjs', import.meta.url);\n");
      spawnSync(process.execPath, ['--import', pathToFileURL(path.join(tmp, 'log-register.mjs')).href, ...argv], { input, env: { ...env, SPILLWAY_BENCH_MODULE_LOG: log }, maxBuffer: 64 * 1024 * 1024 });
      const urls = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
      return `${urls.length} (${urls.filter((u) => u.includes('/node_modules/')).length} in node_modules)`;
    };
    console.log(`\nmodules loaded by a 400 KB Read spill: the hook's entry ${loaded(hook, read(-2, 400_000))}; the full CLI ${loaded([MAIN, 'hook', 'claude-code'], read(-3, 400_000))}`);
    const pass = median(cases[1]!.times) / base;
    const spill = (k: number) => median(cases[k]!.times) / base;
    console.log(`spill of a 400 KB Read: ${spill(4).toFixed(2)}× node -e 0 through the hook's entry, ${spill(5).toFixed(2)}× through the full CLI`);
    console.log(`with a rules file: a pass ${spill(7).toFixed(2)}×, a 400 KB Read spill ${spill(8).toFixed(2)}× node -e 0; modules of that spill ${loaded(hook, inRulesProject(read(-4, 400_000)))}`);
    console.log(`\ngoal: a result that passes costs ≤ ${GOAL.toFixed(2)}× node -e 0 — ${pass <= GOAL ? 'met' : 'NOT met'} (${pass.toFixed(2)}×; the full CLI: ${(median(cases[3]!.times) / base).toFixed(2)}×)`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
