import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { ALL_STRATEGIES, guardLargeResult } from '../../src/pipeline/index.js';
import { PROVIDER_NAMES } from '../../src/summarize/index.js';
import { handleClaudeCodeHook, MCP_IMAGE_TOKENS } from '../../src/integrations/hooks/claude-code.js';
import { readToolResponse } from '../../src/integrations/hooks/claude-code-shapes.js';
import { FAST_MCP_IMAGE_TOKENS, FAST_STRATEGIES, FAST_SUMMARIZERS, fastVerdict, parseFastArgs, type FastHookOptions } from '../../src/integrations/hooks/claude-code-fast.js';
import { buildProgram } from '../../src/cli/main.js';
import { makeLog, ROOT, testEnv, tmpDir } from './helpers.js';
import { checkTaken, commanderRead, moduleRecorder } from './hook-cli.js';

/**
 * The hook's pass-through fast path (bin/spillway.js → claude-code-fast.ts) against the full hook:
 * it may say "pass" only where the full hook would print nothing, and it must never take an option
 * commander would read differently.
 */

const SESSION_ID = 'a1b2c3d4-5e6f-4a5b-8c9d-0e1f2a3b4c5d';
const event = (tool_name: string | undefined, tool_response: unknown, extra: Record<string, unknown> = {}) => ({
  session_id: SESSION_ID,
  transcript_path: `/home/user/.claude/projects/-home-user-work/${SESSION_ID}.jsonl`,
  cwd: '/home/user/work',
  hook_event_name: 'PostToolUse',
  ...(tool_name === undefined ? {} : { tool_name }),
  tool_input: { command: 'x', description: 'Show it' },
  tool_response,
  tool_use_id: 'toolu_01ABCDEFGHJKLMNPQRSTUVWX',
  ...extra,
});
const bash = (stdout: string, extra: Record<string, unknown> = {}) => ({ stdout, stderr: '', interrupted: false, isImage: false, noOutputExpected: false, ...extra });
const readText = (content: string) => ({ type: 'text', file: { filePath: '/w/a.txt', content, numLines: 1, startLine: 1, totalLines: 1 } });
const b64 = (n: number, seed = 7) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) % 256)).toString('base64');

/** The full hook in-process, with the real guard, measuring as the CLI does (Claude's tokenizer). */
async function fullHook(stdin: string, o: FastHookOptions, sessionDir: string) {
  return handleClaudeCodeHook(stdin, {
    guard: { limitTokens: o.limitTokens, contextWindowTokens: o.contextWindowTokens, profile: 'claude' },
    sessionDir,
  });
}

// Texts that straddle every rule of the decision: size around the limit, base64 and data URLs
// around the inline-asset threshold (256 decoded bytes), binary in a string, plain and non-ASCII text.
const textArb = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.integer({ min: 0, max: 20_000 }).map((n) => makeLog(n).slice(0, n)),
  fc.tuple(fc.string({ maxLength: 40 }), fc.integer({ min: 150, max: 420 }), fc.integer({ min: 0, max: 255 })).map(([pre, n, seed]) => `${pre}${b64(n, seed)} end`),
  fc.tuple(fc.integer({ min: 150, max: 420 }), fc.constantFrom('image/png', 'application/pdf')).map(([n, mime]) => `<img src="data:${mime};base64,${b64(n)}">`),
  fc.uint8Array({ minLength: 1, maxLength: 300 }).map((b) => Buffer.from(b).toString('latin1')),
  fc.constant(`GIF89a${'\u0000\u0001\u0002'.repeat(20)}`),
);

const mcpBlockArb = fc.oneof(
  textArb.map((text) => ({ type: 'text', text })),
  fc.integer({ min: 10, max: 2000 }).map((n) => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(n) } })),
  fc.integer({ min: 10, max: 500 }).map((n) => ({ type: 'image', data: b64(n), mimeType: 'image/png' })),
  fc.record({ type: fc.constant('resource'), resource: fc.record({ uri: fc.constant('file:///a'), text: textArb }) }),
);

const toolArb: fc.Arbitrary<[string | undefined, unknown]> = fc.oneof(
  fc.tuple(fc.constant('Bash'), fc.record({ stdout: textArb, stderr: fc.oneof(fc.constant(''), textArb), interrupted: fc.boolean(), isImage: fc.boolean(), noOutputExpected: fc.boolean() })),
  fc.tuple(fc.constant('Bash'), textArb.map((t) => bash(t, { persistedOutputPath: `/home/user/.claude/projects/-home-user-work/${SESSION_ID}/tool-results/b1.txt`, persistedOutputSize: 90_000 }))),
  fc.tuple(fc.constant('Read'), textArb.map(readText)),
  fc.tuple(fc.constant('Read'), fc.array(fc.record({ cellType: fc.constant('code'), source: textArb }), { maxLength: 3 }).map((cells) => ({ type: 'notebook', file: { filePath: '/w/n.ipynb', cells } }))),
  fc.tuple(fc.constant('Read'), fc.constantFrom('image', 'pdf', 'file_unchanged', 'weird').map((type) => ({ type, file: { base64: b64(3000), type: 'image/png' } }))),
  fc.tuple(fc.constant('Grep'), fc.oneof(textArb.map((content) => ({ mode: 'content', numFiles: 1, filenames: [], content, numLines: 1 })), fc.array(textArb, { maxLength: 4 }).map((filenames) => ({ mode: 'files_with_matches', filenames, numFiles: filenames.length })))),
  fc.tuple(fc.constant('Glob'), fc.array(textArb, { maxLength: 4 }).map((filenames) => ({ filenames, durationMs: 1, numFiles: filenames.length, truncated: false }))),
  fc.tuple(fc.constant('WebFetch'), textArb.map((result) => ({ bytes: result.length, code: 200, codeText: 'OK', result, durationMs: 5, url: 'https://x.test/' }))),
  fc.tuple(fc.constant('WebSearch'), fc.array(fc.oneof(textArb, fc.record({ tool_use_id: fc.constant('srv'), content: fc.array(fc.record({ title: textArb, url: fc.constant('https://x.test') }), { maxLength: 2 }) })), { maxLength: 3 }).map((results) => ({ query: 'q', results, durationSeconds: 1, searchCount: 1 }))),
  fc.tuple(fc.constantFrom('Agent', 'Task'), fc.oneof(fc.array(textArb.map((text) => ({ type: 'text', text })), { maxLength: 3 }).map((content) => ({ status: 'completed', content, agentId: 'a' })), fc.constant({ status: 'async_launched', agentId: 'a' }), fc.constant({ status: 'completed', content: [{ type: 'image' }] }))),
  fc.tuple(fc.constantFrom('Edit', 'Write', 'TodoWrite'), textArb.map((content) => ({ filePath: '/w/a', content, originalFile: content }))),
  fc.tuple(fc.constant('mcp__srv__tool'), fc.oneof(textArb, fc.array(mcpBlockArb, { maxLength: 4 }), fc.array(mcpBlockArb, { maxLength: 3 }).map((content) => ({ content, isError: false })), fc.constant(42))),
  fc.tuple(fc.constant('mcp__srv__tool'), fc.integer({ min: 40_000, max: 90_000 }).map((n) => `Error: result (${n.toLocaleString('en-US')} characters) exceeds maximum allowed tokens. Output has been saved to /home/user/.claude/projects/-home-user-work/${SESSION_ID}/tool-results/mcp.txt\nFormat: JSON`)),
  fc.tuple(fc.constantFrom('SomeNewTool', undefined, ''), fc.oneof(textArb, textArb.map((t) => ({ output: t })), fc.constant([1, 2]))),
);

const stdinArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.tuple(toolArb, fc.constantFrom<string | undefined>('PostToolUse', undefined, 'PostToolUse', 'PreToolUse')).map(([[tool, response], hookEvent]) => JSON.stringify(event(tool, response, hookEvent === undefined ? { hook_event_name: undefined } : { hook_event_name: hookEvent }))) },
  { weight: 1, arbitrary: fc.constantFrom('not json {', '[]', '"x"', 'null', '', JSON.stringify(event('Bash', null)), JSON.stringify({ hook_event_name: 'PostToolUse', tool_name: 'Bash' })) },
);

const limitArb: fc.Arbitrary<FastHookOptions> = fc.record(
  { limitTokens: fc.constantFrom(40, 300, 2_000, 12_000), contextWindowTokens: fc.integer({ min: 1_000, max: 300_000 }) },
  { requiredKeys: [] },
);

describe('the hook fast path decides as the full hook does', () => {
  it('says "pass" only where the full hook prints nothing (no answer, no note), and where the guard itself passes a text', async () => {
    let passes = 0;
    let hooks = 0;
    const sessionDir = path.join(tmpDir('spillway-fast-'), 'session');
    await fc.assert(
      fc.asyncProperty(stdinArb, limitArb, async (stdin, o) => {
        if (fastVerdict(stdin, o) !== 'pass') {
          hooks++;
          return;
        }
        passes++;
        const full = await fullHook(stdin, o, sessionDir);
        expect(full.output, 'the fast path let through what the hook answers').toBeUndefined();
        expect(full.note, 'the fast path silenced a note of the full hook').toBeUndefined();
        // A text reading that passed must also pass the guard itself (nothing over the limit, no base64 to cut, not binary).
        const input = JSON.parse(stdin) as { tool_name?: string; tool_response?: unknown; hook_event_name?: string };
        if (input.hook_event_name !== undefined && input.hook_event_name !== 'PostToolUse') return;
        if (input.tool_response === undefined || input.tool_response === null) return;
        const reading = readToolResponse(input.tool_name || 'tool', input.tool_response);
        if (reading.kind === 'text') expect(await guardLargeResult(reading.text, { ...o, profile: 'claude', sessionPath: sessionDir })).toBeNull();
      }),
      { numRuns: 400 },
    );
    // Both answers occur: the property is not met by the fast path always deferring, nor by never deferring.
    expect(fs.existsSync(sessionDir), 'nothing was spilled for a result the fast path passes').toBe(false);
    expect(passes).toBeGreaterThan(80);
    expect(hooks).toBeGreaterThan(80);
  }, 120_000);

  it('sends to the full hook anything that may be oversized, carry base64 or a data URL, be binary, or was persisted by Claude Code', () => {
    const send = [
      event('Bash', bash(makeLog(12_001))), // over the default limit by bytes
      event('Read', readText(`header ${b64(300)}`)), // 300 bytes of base64: worth cutting
      event('WebFetch', { bytes: 1, code: 200, codeText: 'OK', result: `<img src="data:image/png;base64,${b64(260)}">`, durationMs: 1, url: 'https://x.test' }),
      event('Bash', bash(Buffer.from([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0, 1, 2, 3, 0]).toString('latin1'))),
      event('Bash', bash('tiny', { persistedOutputPath: `/home/user/.claude/projects/-home-user-work/${SESSION_ID}/tool-results/x.txt`, persistedOutputSize: 99_999 })),
      event('mcp__s__t', [{ type: 'text', text: 'x '.repeat(6_000).slice(0, 12_000 - MCP_IMAGE_TOKENS + 1) }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64(100) } }]),
      event('SomeNewTool', { output: 'x'.repeat(12_001) }), // unknown shape, large: the full hook says why it is left alone
    ];
    for (const e of send) expect(fastVerdict(JSON.stringify(e), {}), JSON.stringify(e).slice(0, 160)).toBe('hook');
    for (const bad of ['not json', '[1]']) expect(fastVerdict(bad, {})).toBe('hook');
    // Just under the thresholds: these pass (spaced, so no run of base64 letters).
    expect(fastVerdict(JSON.stringify(event('Bash', bash('x '.repeat(6_000)))), {})).toBe('pass');
    expect(fastVerdict(JSON.stringify(event('Read', readText(`header ${b64(200)}`))), {})).toBe('pass');
    // The limit comes from the options: --limit, and a context window narrows it.
    expect(fastVerdict(JSON.stringify(event('Bash', bash('x '.repeat(1_500)))), { limitTokens: 2_999 })).toBe('hook');
    expect(fastVerdict(JSON.stringify(event('Bash', bash('x '.repeat(1_500)))), { contextWindowTokens: 20_000 })).toBe('hook');
    expect(fastVerdict(JSON.stringify(event('Bash', bash('x '.repeat(1_500)))), { limitTokens: 100_000, contextWindowTokens: 200_000 })).toBe('pass');
  });

  it('keeps the lists it copies equal to the ones the CLI uses', () => {
    expect(FAST_MCP_IMAGE_TOKENS).toBe(MCP_IMAGE_TOKENS);
    expect([...FAST_STRATEGIES].sort()).toEqual([...ALL_STRATEGIES].sort());
    expect([...FAST_SUMMARIZERS].sort()).toEqual([...PROVIDER_NAMES, 'none', 'off'].sort());
  });
});

const hookCommand = (): Command => buildProgram().commands.find((c) => c.name() === 'hook')!.commands.find((c) => c.name() === 'claude-code')!;

describe('the fast path reads the command line as commander does', () => {
  const value = fc.oneof(
    fc.constantFrom('100', '12000', '0', '-5', '1.5', 'abc', '', '1e3', ' 7 ', 'claude', 'o200k', 'gpt2', 'chars4', 'calibrated', 'none', 'off', 'structural', 'anthropic', 'bogus', '/tmp/s', 's3://b/p', '--limit'),
    fc.string({ maxLength: 6 }),
  );
  const known = ['--limit', '--context-window', '--profile', '--strategy', '--summarizer', '--provider', '--session', '--store', '--model', '--template', '--focus-arg'];
  const token = fc.oneof(
    { weight: 8, arbitrary: fc.tuple(fc.constantFrom(...known), value).map(([k, v]) => [k, v]) },
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...known), value).map(([k, v]) => [`${k}=${v}`]) },
    { weight: 1, arbitrary: fc.constantFrom(['--help'], ['-h'], ['--cut-media'], ['--verbose'], ['stray'], ['--'], ['--limit']) },
  );

  it('takes a command line only when commander accepts it, with the same limit and context window', () => {
    checkTaken(token, 4, parseFastArgs, (args, fast) => {
      const read = commanderRead(args);
      expect(read, `commander refuses ${JSON.stringify(args)}`).toBeDefined();
      if (!read) return;
      expect(fast.limitTokens).toBe(read.limit);
      expect(fast.contextWindowTokens).toBe(read.contextWindow);
    });
  });

  it('knows only options the command has, each taking a value; anything else goes to the full CLI', () => {
    const longs = new Map(hookCommand().options.map((o) => [o.long, o]));
    for (const name of ['--limit', '--context-window', '--profile', '--strategy', '--summarizer', '--provider', '--session', '--store', '--model', '--template', '--focus-arg']) {
      expect(longs.get(name)?.required, name).toBe(true);
      expect(parseFastArgs([name])).toBeUndefined(); // no value
    }
    for (const args of [['--help'], ['-h'], ['x'], ['--limit', '10', 'x'], ['--summarizer', 'bogus'], ['--limit', '0'], ['--profile', 'gpt2'], ['--nope', '1']]) {
      expect(parseFastArgs(args), JSON.stringify(args)).toBeUndefined();
    }
    expect(parseFastArgs(['--limit=8000', '--context-window', '200000', '--session', '/tmp/s', '--summarizer', 'none'])).toEqual({ limitTokens: 8000, contextWindowTokens: 200000 });
  });
});

// ---- bin/spillway.js end to end, on the built dist (as `spillway setup` installs it) ----

const BIN = path.join(ROOT, 'bin', 'spillway.js');
const DIST_FAST = path.join(ROOT, 'dist', 'lib', 'integrations', 'hooks', 'claude-code-fast.js');

function runBin(input: unknown, args: string[] = []) {
  const home = tmpDir();
  const log = path.join(home, 'modules.log');
  fs.writeFileSync(log, '');
  const r = spawnSync(process.execPath, ['--import', moduleRecorder(), BIN, 'hook', 'claude-code', ...args], {
    input: typeof input === 'string' ? input : JSON.stringify(input),
    env: { ...testEnv(home), SPILLWAY_TEST_MODULE_LOG: log },
    maxBuffer: 256 * 1024 * 1024,
  });
  const modules = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
  return {
    code: r.status,
    stdout: r.stdout.toString(),
    stderr: r.stderr.toString(),
    home,
    modules,
    fullCli: modules.some((m) => m.endsWith('/cli/main.js')),
    entry: modules.some((m) => m.endsWith('/hooks/claude-code-entry.js')),
  };
}

function sidecar(session: string) {
  const dir = path.join(session, 'long_responses');
  const meta = fs.readdirSync(dir).find((f) => f.endsWith('.meta.json'))!;
  return JSON.parse(fs.readFileSync(path.join(dir, meta), 'utf8')) as { intent?: string; limitTokens: number; estimate: { profile: string; strategy: string }; payloadFile: string; message: string };
}

describe('bin/spillway.js hook claude-code', () => {
  it('is built from the current source (run npm run build:lib)', () => {
    expect(fs.existsSync(DIST_FAST), `${DIST_FAST} missing: run npm run build:lib`).toBe(true);
    const src = path.join(ROOT, 'src', 'integrations', 'hooks', 'claude-code-fast.ts');
    expect(fs.statSync(DIST_FAST).mtimeMs, 'dist/lib is older than src: run npm run build:lib').toBeGreaterThanOrEqual(fs.statSync(src).mtimeMs);
  });

  it('passes a small result without loading the CLI or any package', () => {
    const r = runBin(event('Bash', bash('a\nb\n')));
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(r.modules.some((m) => m.endsWith('/claude-code-fast.js'))).toBe(true);
    expect(r.fullCli).toBe(false);
    expect(r.modules.filter((m) => m.includes('/node_modules/'))).toEqual([]);
    // The fast path's own files only: 11 today (the shapes, the quick checks and their leaves,
    // vocab.ts among them since the strategy and profile names have one source, and config.ts, where
    // the rules files are; the rules' reader loads only when one exists). A jump means something
    // heavy slipped in; `npm run bench hook` measures the time.
    expect(r.modules.length).toBeLessThanOrEqual(11);
  });

  it("gives every option to the guard through the hook's entry, which reads the stdin the fast path already read", () => {
    const session = path.join(tmpDir(), 'session');
    const stdout = makeLog(3_000);
    const input = { ...event('Bash', bash(stdout)), tool_input: { command: 'cat app.log', q: 'ERROR lines' } };
    const r = runBin(input, ['--limit', '100', '--session', session, '--summarizer', 'none', '--profile', 'o200k', '--strategy', 'chars4', '--focus-arg', 'q']);
    expect(r.code).toBe(0);
    expect(r).toMatchObject({ entry: true, fullCli: false });
    const out = JSON.parse(r.stdout) as { hookSpecificOutput: { updatedToolOutput: { stdout: string } } };
    expect(out.hookSpecificOutput.updatedToolOutput.stdout).toMatch(/^\[spillway\] The result of `Bash` is too large/);
    const meta = sidecar(session);
    expect(meta).toMatchObject({ intent: 'ERROR lines', limitTokens: 100, estimate: { profile: 'o200k', strategy: 'chars4' } });
    expect(meta.message).toContain('Preview:'); // --summarizer none: a preview, not a summary
    expect(fs.readFileSync(path.join(session, 'long_responses', meta.payloadFile), 'utf8')).toBe(stdout);
    // The `=` form and a context window reach it too: 9 KB passes the default limit, not 10% of 20,000.
    const nine = event('Bash', bash(makeLog(9_000)));
    expect(runBin(nine).stdout).toBe('');
    const s2 = path.join(tmpDir(), 'session');
    const narrowed = runBin(nine, [`--session=${s2}`, '--context-window=20000']);
    expect(narrowed.stdout).toContain('updatedToolOutput');
    expect(sidecar(s2).limitTokens).toBe(2_000);
  });

  it("hands a large stdin to the hook's entry whole: the spill is byte-exact", () => {
    const session = path.join(tmpDir(), 'session');
    const content = makeLog(6 * 1024 * 1024);
    const r = runBin(event('Read', readText(content)), ['--session', session, '--summarizer', 'none']);
    expect(r.code).toBe(0);
    expect(r).toMatchObject({ entry: true, fullCli: false });
    expect(fs.readFileSync(path.join(session, 'long_responses', sidecar(session).payloadFile), 'utf8')).toBe(content);
  });

  it("reads a Bash output Claude Code persisted through the hook's entry", () => {
    const project = path.join(tmpDir(), 'projects', '-w');
    const results = path.join(project, SESSION_ID, 'tool-results');
    fs.mkdirSync(results, { recursive: true });
    const whole = makeLog(200_000);
    fs.writeFileSync(path.join(results, 'b1.txt'), whole);
    const session = path.join(tmpDir(), 'session');
    const r = runBin(
      { ...event('Bash', bash(whole.slice(0, 30_000), { persistedOutputPath: path.join(results, 'b1.txt'), persistedOutputSize: whole.length })), transcript_path: path.join(project, `${SESSION_ID}.jsonl`) },
      ['--session', session],
    );
    expect(r).toMatchObject({ entry: true, fullCli: false });
    expect(r.stdout).toContain('updatedToolOutput');
    expect(fs.readFileSync(path.join(session, 'long_responses', sidecar(session).payloadFile), 'utf8')).toBe(whole);
  });

  it("leaves what it cannot judge to the hook's entry (bad input) or the full CLI (bad options, help), which keep their messages", () => {
    const notJson = runBin('not json {');
    expect(notJson).toMatchObject({ code: 0, stdout: '', entry: true, fullCli: false });
    expect(notJson.stderr).toMatch(/hook input is not JSON/);
    const bogus = runBin(event('Bash', bash('ok')), ['--summarizer', 'bogus']);
    expect(bogus).toMatchObject({ code: 0, stdout: '', entry: false, fullCli: true });
    expect(bogus.stderr).toMatch(/unknown summarizer "bogus"/);
    const badLimit = runBin(event('Bash', bash('ok')), ['--limit', '0']);
    expect(badLimit.code).toBe(2);
    expect(badLimit.stderr).toMatch(/--limit must be a positive whole number/);
    const help = runBin('', ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/PostToolUse hook/);
  });
});
