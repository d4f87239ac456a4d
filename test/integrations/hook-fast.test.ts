import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { handleClaudeCodeHook, MCP_IMAGE_TOKENS } from '../../src/integrations/hooks/claude-code.js';
import { claudeCodePasses, readToolResponse, type PassLimits } from '../../src/integrations/hooks/claude-code-shapes.js';
import { GUARD_FLAGS, HookEvent, readFlags } from '../../src/integrations/verb-input.js';
import { eventPasses, HOOKED_CLIENTS } from '../../src/cli/hook-entry.js';
import { buildProgram } from '../../src/cli/main.js';
import { makeLog, ROOT, testEnv, tmpDir } from './helpers.js';

/**
 * The hook's pass-through fast path (bin/spillway.js → the hook's entry, src/cli/hook-entry.ts, and
 * Claude Code's pass check in claude-code-shapes.ts) against the full hook: it may say "pass" only
 * where the full hook would print nothing, and it reads the command line with commander's own table.
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

/** Claude Code's pass check on a stdin text, parsed as the entry parses it (without the rules files: the full hook below has none). */
function fastVerdict(stdin: string, o: PassLimits): 'pass' | 'hook' {
  const parsed = new HookEvent(stdin).parsed;
  return parsed.ok && claudeCodePasses(parsed.value, o) ? 'pass' : 'hook';
}

/** The full hook in-process, with the real guard, measuring as the CLI does (Claude's tokenizer). */
async function fullHook(stdin: string, o: PassLimits, sessionDir: string) {
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

const limitArb: fc.Arbitrary<PassLimits> = fc.record(
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

  it('passes nothing the hook would answer or note whatever the result: --cut-media, a summarizer that cannot load', async () => {
    const small = new HookEvent(JSON.stringify(event('Bash', bash('a\nb\n'))));
    // no rules files: a private app data, and the event's cwd has none
    const env = { SPILLWAY_HOME: tmpDir() };
    expect(await eventPasses('claude-code', small, {}, env)).toBe(true);
    for (const opts of [{ cutMedia: true }, { summarizer: 'bogus' }, { provider: 'bogus' }]) expect(await eventPasses('claude-code', small, opts, env), JSON.stringify(opts)).toBe(false);
    for (const opts of [{ summarizer: 'none' }, { provider: 'off' }, { summarizer: 'structural', provider: 'bogus' }]) expect(await eventPasses('claude-code', small, opts, env), JSON.stringify(opts)).toBe(true);
    // The other clients have no pass check: their hook decides every event.
    for (const client of ['codex', 'opencode'] as const) expect(await eventPasses(client, small, {}, env)).toBe(false);
  });

  it('parses stdin once: the pass check and the hook that decides after it share one parse', async () => {
    const stdin = JSON.stringify(event('Bash', bash(makeLog(20_000))));
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const e = new HookEvent(stdin);
      expect(await eventPasses('claude-code', e, {}, { SPILLWAY_HOME: tmpDir() })).toBe(false);
      const out = await handleClaudeCodeHook(e, { guard: { profile: 'o200k', limitTokens: 1_000, summarize: undefined }, sessionDir: path.join(tmpDir(), 'session') });
      expect(out.output).toBeDefined();
      expect(parse.mock.calls.filter((c) => c[0] === stdin)).toHaveLength(1);
    } finally {
      parse.mockRestore();
    }
  });
});

const hookCommand = (client: string) => buildProgram().commands.find((c) => c.name() === 'hook')!.commands.find((c) => c.name() === client)!;

describe('the hook entry reads the command line with the table commander is built from', () => {
  it("every hook verb's options are the flags table, in its order, each taking a value but --cut-media", () => {
    for (const client of Object.keys(HOOKED_CLIENTS)) {
      const options = hookCommand(client).options.filter((o) => o.long !== '--help');
      expect(options.map((o) => o.flags), client).toEqual(GUARD_FLAGS.map((f) => f.flags));
      for (const o of options) expect(o.required, o.long).toBe(o.long !== '--cut-media');
    }
  });

  it('leaves to the CLI what it cannot read as commander would: help, a stray argument, a refused value, a missing value, an unknown flag', () => {
    for (const name of GUARD_FLAGS.map((f) => f.flags.split(' ')[0]!).filter((n) => n !== '--cut-media')) expect(readFlags([name]), name).toBeUndefined();
    for (const args of [['--help'], ['-h'], ['x'], ['--limit', '10', 'x'], ['--limit', '0'], ['--profile', 'gpt2'], ['--nope', '1'], ['--cut-media=1'], ['--']]) {
      expect(readFlags(args), JSON.stringify(args)).toBeUndefined();
    }
    // commander takes any summarizer name (the verb refuses an unknown one when it runs, with a note): so does the entry.
    expect(readFlags(['--limit=8000', '--context-window', '200000', '--session', '/tmp/s', '--summarizer', 'bogus', '--cut-media'])).toEqual({
      limit: 8000,
      contextWindow: 200000,
      session: '/tmp/s',
      summarizer: 'bogus',
      cutMedia: true,
    });
  });
});

// ---- bin/spillway.js end to end, on the built dist (as `spillway setup` installs it) ----

const BIN = path.join(ROOT, 'bin', 'spillway.js');
const DIST_ENTRY = path.join(ROOT, 'dist', 'lib', 'cli', 'hook-entry.js');

/** A module hook that writes every file URL the process loads to $SPILLWAY_TEST_MODULE_LOG. */
function moduleRecorder(): string {
  const dir = tmpDir('spillway-modlog-');
  fs.writeFileSync(
    path.join(dir, 'hooks.mjs'),
    "import fs from 'node:fs';\nexport async function load(url, context, next) {\n  if (url.startsWith('file:')) fs.appendFileSync(process.env.SPILLWAY_TEST_MODULE_LOG, url + '\\n');\n  return next(url, context);\n}\n",
  );
  fs.writeFileSync(path.join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n");
  return path.join(dir, 'register.mjs');
}

function runBin(input: unknown, args: string[] = []) {
  const home = tmpDir();
  const log = path.join(home, 'modules.log');
  fs.writeFileSync(log, '');
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(moduleRecorder()).href, BIN, 'hook', 'claude-code', ...args], {
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
    // the client's hook, loaded by the entry for an event that did not pass
    entry: modules.some((m) => m.endsWith('/hooks/run.js')),
  };
}

function sidecar(session: string) {
  const dir = path.join(session, 'long_responses');
  const meta = fs.readdirSync(dir).find((f) => f.endsWith('.meta.json'))!;
  return JSON.parse(fs.readFileSync(path.join(dir, meta), 'utf8')) as { intent?: string; limitTokens: number; estimate: { profile: string; strategy: string }; payloadFile: string; message: string };
}

describe('bin/spillway.js hook claude-code', () => {
  it('is built from the current source (run npm run build:lib)', () => {
    expect(fs.existsSync(DIST_ENTRY), `${DIST_ENTRY} missing: run npm run build:lib`).toBe(true);
    for (const src of ['src/cli/hook-entry.ts', 'src/integrations/hooks/claude-code-shapes.ts', 'src/integrations/verb-input.ts']) {
      expect(fs.statSync(DIST_ENTRY).mtimeMs, `dist/lib is older than ${src}: run npm run build:lib`).toBeGreaterThanOrEqual(fs.statSync(path.join(ROOT, src)).mtimeMs);
    }
  });

  it('passes a small result without loading the CLI or any package', () => {
    const r = runBin(event('Bash', bash('a\nb\n')));
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(r.modules.some((m) => m.endsWith('/cli/hook-entry.js'))).toBe(true);
    expect(r).toMatchObject({ fullCli: false, entry: false });
    expect(r.modules.filter((m) => m.includes('/node_modules/'))).toEqual([]);
    // The fast path's own files only: 11 today (bin/spillway.js, the hook's entry, the flags table,
    // Claude Code's shapes and pass check, the quick checks and their leaves: limits, base64, the
    // binary check, values, vocab, and config.ts, where the rules files are; the rules' reader loads
    // only when one exists). A jump means something heavy slipped in; `npm run bench hook` measures the time.
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
    // commander takes any summarizer name, so the entry does, and the hook says it cannot load it (as the verb does)
    const bogus = runBin(event('Bash', bash('ok')), ['--summarizer', 'bogus']);
    expect(bogus).toMatchObject({ code: 0, stdout: '', entry: true, fullCli: false });
    expect(bogus.stderr).toMatch(/unknown summarizer "bogus"/);
    const badLimit = runBin(event('Bash', bash('ok')), ['--limit', '0']);
    expect(badLimit.code).toBe(2);
    expect(badLimit.stderr).toMatch(/--limit must be a positive whole number/);
    const help = runBin('', ['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/PostToolUse hook/);
  });
});
