import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_MESSAGE_CHARS, restorePayload } from '../../src/pipeline/index.js';
import { handleClaudeCodeHook, readPersisted, toolResultsDir, type ClaudeCodeHookOutcome } from '../../src/integrations/hooks/claude-code.js';
import { claudeProject, cliArgs, makeLog, makePng, testEnv, tmpDir } from './helpers.js';

/** Run `spillway hook claude-code` as Claude Code does: JSON on stdin, read stdout and the exit code. */
function runHook(input: unknown, args: string[] = [], home = tmpDir()) {
  const r = spawnSync(process.execPath, cliArgs(['hook', 'claude-code', ...args]), {
    input: typeof input === 'string' ? input : JSON.stringify(input),
    env: testEnv(home),
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString(), home };
}

const SESSION_ID = 'a1b2c3d4-5e6f-4a5b-8c9d-0e1f2a3b4c5d';

// The stdin shape of Claude Code 2.1.328's PostToolUse command hook (recorded from the real binary).
function event(tool_name: string, tool_input: unknown, tool_response: unknown, transcript_path = `/home/user/.claude/projects/-home-user-work/${SESSION_ID}.jsonl`) {
  return {
    session_id: SESSION_ID,
    transcript_path,
    cwd: '/home/user/work',
    prompt_id: '3b8ba781-759c-467a-8551-28a1fa7a524a',
    permission_mode: 'bypassPermissions',
    effort: { level: 'medium' },
    hook_event_name: 'PostToolUse',
    tool_name,
    tool_input,
    tool_response,
    tool_use_id: 'toolu_01ABCDEFGHJKLMNPQRSTUVWX',
    duration_ms: 19,
  };
}

const bash = (stdout: string, extra: Record<string, unknown> = {}) => ({ stdout, stderr: '', interrupted: false, isImage: false, noOutputExpected: false, ...extra });

/** The hook in-process, spilling into a fresh session folder. */
async function hook(input: unknown, o: { limitTokens?: number } = {}) {
  const sessionDir = path.join(tmpDir(), 'session');
  const out = await handleClaudeCodeHook(JSON.stringify(input), { guard: { limitTokens: o.limitTokens }, sessionDir });
  return { ...out, sessionDir };
}

/** The message inside an answer, wherever the tool's shape puts it. */
function messageIn(out: ClaudeCodeHookOutcome): string {
  const find = (v: unknown): string | undefined => {
    if (typeof v === 'string') return v.startsWith('[spillway]') ? v : undefined;
    if (v && typeof v === 'object') for (const x of Object.values(v)) { const f = find(x); if (f) return f; }
    return undefined;
  };
  const m = find(out.output?.hookSpecificOutput.updatedToolOutput);
  expect(m, JSON.stringify(out).slice(0, 500)).toBeDefined();
  return m!;
}

function savedBytes(message: string): Buffer {
  const m = /Absolute path: (.+)/.exec(message);
  expect(m, message.slice(0, 500)).not.toBeNull();
  return fs.readFileSync(m![1]!.trim());
}

describe('spillway hook claude-code: answers in each tool’s own shape', () => {
  it('Bash: {stdout: message, stderr, interrupted, isImage, noOutputExpected}; stdout saved exactly; the description is the focus', async () => {
    const stdout = makeLog(300_000);
    const r = await hook(event('Bash', { command: 'cat /var/log/app.log', description: 'Show the app log' }, bash(stdout)));
    const answer = r.output!.hookSpecificOutput.updatedToolOutput as Record<string, unknown>;
    expect(r.output!.hookSpecificOutput.hookEventName).toBe('PostToolUse');
    expect(Object.keys(answer).sort()).toEqual(['interrupted', 'isImage', 'noOutputExpected', 'stderr', 'stdout']);
    expect(answer).toMatchObject({ stderr: '', interrupted: false, isImage: false, noOutputExpected: false });
    const msg = answer.stdout as string;
    expect(msg).toMatch(/^\[spillway\] The result of `Bash`/);
    expect(msg).toContain('It was saved in full instead.');
    expect(msg).toContain('with Read (offset/limit');
    expect(msg.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(savedBytes(msg).toString('utf8')).toBe(stdout);
    const meta = JSON.parse(fs.readFileSync(r.guard!.metaPath!, 'utf8')) as { tool: string; intent?: string };
    expect(meta).toMatchObject({ tool: 'Bash', intent: 'Show the app log' });
  });

  it('Bash past 30,000 chars: the whole output is read back from persistedOutputPath, byte for byte, and the persisted fields are dropped', async () => {
    const { toolResults, transcript } = claudeProject(SESSION_ID);
    const full = Buffer.from(makeLog(400_000) + 'tail line with é and 😀\n');
    const file = path.join(toolResults, 'bdjrwf069.txt');
    fs.writeFileSync(file, full);
    const r = await hook(event('Bash', { command: 'cat big.log' }, bash(full.toString('utf8').slice(0, 30_000), { persistedOutputPath: file, persistedOutputSize: full.length }), transcript));
    const answer = r.output!.hookSpecificOutput.updatedToolOutput as Record<string, unknown>;
    expect(answer).not.toHaveProperty('persistedOutputPath');
    expect(answer).not.toHaveProperty('persistedOutputSize');
    const msg = answer.stdout as string;
    expect(msg).toContain('saved in full');
    expect(savedBytes(msg).equals(full)).toBe(true);
    expect(r.guard!.payloadPath).toBeDefined();
  });

  it('Bash: a persistedOutputPath outside the session’s tool-results folder is never read; the message says exactly what was saved', async () => {
    const { project, toolResults, transcript } = claudeProject(SESSION_ID);
    const secret = path.join(project, 'secret.txt');
    fs.writeFileSync(secret, `SECRET ${makeLog(100_000)}`);
    const outside = path.join(tmpDir(), 'elsewhere.txt');
    fs.writeFileSync(outside, `SECRET ${makeLog(100_000)}`);
    fs.symlinkSync(outside, path.join(toolResults, 'link.txt'));
    const inline = makeLog(60_000).slice(0, 30_000);
    for (const hostile of [secret, path.join(toolResults, '..', '..', 'secret.txt'), '../../secret.txt', path.join(toolResults, 'link.txt'), toolResults, '/etc/passwd']) {
      const r = await hook(event('Bash', { command: 'cat x' }, bash(inline, { persistedOutputPath: hostile, persistedOutputSize: 412_098 }), transcript));
      const msg = messageIn(r);
      const saved = savedBytes(msg).toString('utf8');
      expect(saved, hostile).toBe(inline);
      expect(saved).not.toContain('SECRET');
      expect(msg).toContain('NOT in full');
      expect(msg).toContain('402.4 KB (412098 bytes)');
      expect(msg).toContain('only the first 30000 chars');
      expect(msg).toContain('rebuilds exactly the bytes that were saved');
      expect(msg).not.toContain('exact original bytes');
      const meta = JSON.parse(fs.readFileSync(r.guard!.metaPath!, 'utf8')) as { errors?: string[] };
      expect(meta.errors?.some((e) => e.startsWith('incomplete: '))).toBe(true);
    }
  });

  it('the tool-results folder is that of the session the input names: a transcript path that does not end in <session_id>.jsonl names none', () => {
    expect(toolResultsDir({ session_id: SESSION_ID, transcript_path: `/p/${SESSION_ID}.jsonl` })).toBe(`/p/${SESSION_ID}/tool-results`);
    expect(toolResultsDir({ session_id: SESSION_ID, transcript_path: '/p/other.jsonl' })).toBeUndefined();
    expect(toolResultsDir({ session_id: '../..', transcript_path: '/p/../...jsonl' })).toBeUndefined();
    expect(toolResultsDir({ session_id: SESSION_ID, transcript_path: `p/${SESSION_ID}.jsonl` })).toBeUndefined();
  });

  it('property: readPersisted returns only files whose real path lies inside the session’s tool-results folder', async () => {
    const { project, toolResults, transcript } = claudeProject(SESSION_ID);
    fs.writeFileSync(path.join(toolResults, 'ok.txt'), 'inside');
    fs.writeFileSync(path.join(project, 'out.txt'), 'outside');
    fs.mkdirSync(path.join(toolResults, 'sub'));
    fs.writeFileSync(path.join(toolResults, 'sub', 'deep.txt'), 'inside');
    fs.symlinkSync(path.join(project, 'out.txt'), path.join(toolResults, 'sym.txt'));
    const input = { session_id: SESSION_ID, transcript_path: transcript };
    const segment = fc.constantFrom('..', '.', 'sub', 'ok.txt', 'out.txt', 'sym.txt', 'deep.txt', 'tool-results', SESSION_ID, '', '%2e%2e');
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 6 }), fc.boolean(), async (parts, absolute) => {
        const p = absolute ? path.join(toolResults, ...parts) : parts.join('/');
        const r = await readPersisted(input, p);
        if ('bytes' in r) expect(r.bytes.toString()).toBe('inside');
      }),
      { numRuns: 300 },
    );
  });

  it('Read: {type:"text", file:{filePath, content, numLines, startLine, totalLines}}; the content is what gets measured and saved', async () => {
    const content = makeLog(250_000);
    const r = await hook(event('Read', { file_path: '/home/user/work/big.log' }, { type: 'text', file: { filePath: '/home/user/work/big.log', content, numLines: 3000, startLine: 1, totalLines: 3000 } }));
    const answer = r.output!.hookSpecificOutput.updatedToolOutput as { type: string; file: Record<string, unknown> };
    expect(answer.type).toBe('text');
    expect(Object.keys(answer.file).sort()).toEqual(['content', 'filePath', 'numLines', 'startLine', 'totalLines']);
    const msg = answer.file.content as string;
    const lines = msg.replace(/\n$/, '').split('\n').length;
    expect(answer.file).toMatchObject({ filePath: '/home/user/work/big.log', startLine: 1, numLines: lines, totalLines: lines });
    expect(savedBytes(msg).toString('utf8')).toBe(content);
  });

  it('Read of a notebook: measured by its cells, answered in Read’s text shape; Read of an image is left alone (priced by pixels)', async () => {
    const cells = [{ cellType: 'code', source: 'print(1)\n', cell_id: 'cell-0', language: 'python', outputs: [{ output_type: 'stream', text: makeLog(200_000) }] }];
    const nb = await hook(event('Read', { file_path: '/w/nb.ipynb' }, { type: 'notebook', file: { filePath: '/w/nb.ipynb', cells } }));
    expect((nb.output!.hookSpecificOutput.updatedToolOutput as { type: string }).type).toBe('text');
    const png = makePng(600).toString('base64');
    const img = await hook(event('Read', { file_path: '/w/a.png' }, { type: 'image', file: { base64: png, type: 'image/png', originalSize: png.length, dimensions: {} } }));
    expect(img.output).toBeUndefined();
    expect(img.note).toBeUndefined();
  });

  it('Grep (content and files_with_matches), Glob, WebFetch, WebSearch and Agent answer in their own shapes', async () => {
    const big = makeLog(200_000);
    const names = big.split('\n').map((l, i) => `src/dir-${i % 50}/${l.slice(0, 40).replace(/\W+/g, '_')}.ts`);
    const cases: Array<[string, unknown, (a: any) => string]> = [
      ['Grep', { mode: 'content', numFiles: 0, filenames: [], content: big, numLines: 2500, appliedLimit: 250 }, (a) => {
        expect(a).toMatchObject({ mode: 'content', numFiles: 0, filenames: [] });
        expect(a).not.toHaveProperty('appliedLimit');
        expect(a.numLines).toBe(a.content.replace(/\n$/, '').split('\n').length);
        return a.content;
      }],
      ['Grep', { mode: 'files_with_matches', filenames: names, numFiles: names.length }, (a) => a.content],
      ['Glob', { filenames: names, durationMs: 11, numFiles: names.length, truncated: false }, (a) => {
        expect(a.numFiles).toBe(a.filenames.length);
        expect(a.durationMs).toBe(11);
        return a.filenames.join('\n');
      }],
      ['WebFetch', { bytes: 110026, code: 200, codeText: 'OK', result: big, durationMs: 76, url: 'https://example.com/' }, (a) => {
        expect(a).toMatchObject({ code: 200, url: 'https://example.com/' });
        return a.result;
      }],
      ['WebSearch', { query: 'q', results: [{ tool_use_id: 'srvtoolu_1', content: [{ title: 't', url: 'https://e.com' }] }, big], durationSeconds: 0.01, searchCount: 1 }, (a) => {
        expect(a.results).toHaveLength(1);
        return a.results[0];
      }],
      ['Agent', { status: 'completed', prompt: 'p', agentId: 'a1', content: [{ type: 'text', text: big }], totalTokens: 17038, usage: {} }, (a) => {
        expect(a).toMatchObject({ status: 'completed', agentId: 'a1', totalTokens: 17038 });
        expect(a.content).toHaveLength(1);
        return a.content[0].text;
      }],
    ];
    for (const [tool, response, pick] of cases) {
      const r = await hook(event(tool, {}, response));
      expect(r.output, tool).toBeDefined();
      const msg = pick(r.output!.hookSpecificOutput.updatedToolOutput);
      expect(msg, tool).toMatch(new RegExp(`^\\[spillway\\] The result of \`${tool}\``));
      expect(savedBytes(msg).length).toBeGreaterThan(100_000);
    }
  });

  it('tools that show the model one line (Edit, Write, NotebookEdit) are never spilled, however big their tool_response', async () => {
    const file = makeLog(300_000);
    for (const tool of ['Edit', 'Write', 'NotebookEdit']) {
      const r = await hook(event(tool, { file_path: '/w/a.ts' }, { filePath: '/w/a.ts', originalFile: file, structuredPatch: [], content: file }));
      expect(r.output, tool).toBeUndefined();
    }
  });

  it('a tool whose output shape Spillway does not know: left alone, with the reason on stderr', async () => {
    const r = await hook(event('SomeFutureTool', {}, { items: makeLog(200_000) }));
    expect(r.output).toBeUndefined();
    expect(r.note).toMatch(/SomeFutureTool: output left unchanged \(.+KB\); Spillway does not know the output shape of SomeFutureTool/);
    const small = await hook(event('SomeFutureTool', {}, { items: 'tiny' }));
    expect(small).toMatchObject({});
    expect(small.note).toBeUndefined();
  });

  it('an MCP tool: a string answers a string; blocks answer blocks, the images kept beside the message and saved as assets', async () => {
    const issues = Array.from({ length: 3000 }, (_, i) => ({ number: i + 1, title: `Issue ${i + 1} about module ${i % 37}`, state: i % 5 ? 'open' : 'closed' }));
    const asString = await hook(event('mcp__github__list_issues', { owner: 'acme' }, JSON.stringify(issues)));
    const s = asString.output!.hookSpecificOutput.updatedToolOutput as string;
    expect(typeof s).toBe('string');
    expect(JSON.parse(savedBytes(s).toString())).toEqual(issues);

    const png = makePng(400).toString('base64');
    const blocks = [
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
      { type: 'text', text: '[Image: source: /x/tool-results/mcp-fs-blob-1.png]' },
      { type: 'text', text: `${JSON.stringify({ content: [{ type: 'image', data: png.slice(0, 90_000) }] })}\n\n[OUTPUT TRUNCATED - exceeded 25000 token limit]` },
    ];
    const r = await hook(event('mcp__fs__read_media_file', { path: '/w/a.png' }, blocks));
    const answer = r.output!.hookSpecificOutput.updatedToolOutput as Array<Record<string, any>>;
    expect(answer).toHaveLength(2);
    expect(answer[0]).toEqual(blocks[0]);
    expect(answer[1]!.type).toBe('text');
    expect(answer[1]!.text).toContain('NOT the whole result: Claude Code had already cut this result at 25,000 tokens');
    expect(r.guard!.assets.length).toBeGreaterThan(0);

    // Images alone are cheap for the model (priced by pixels): a small text beside one is left alone.
    const few = await hook(event('mcp__fs__read_media_file', { path: '/w/a.png' }, blocks.slice(0, 2)));
    expect(few.output).toBeUndefined();
  });

  it("an MCP result Claude Code saved itself ('Output has been saved to …'): the saved file is spilled whole and summarized", async () => {
    const { toolResults, transcript } = claudeProject(SESSION_ID);
    const structured = JSON.stringify({ content: makeLog(413_000) });
    const file = path.join(toolResults, 'mcp-fs-read_text_file-1796112594103-o4vxd3.txt');
    fs.writeFileSync(file, structured);
    const notice =
      `Error: result (${structured.length.toLocaleString('en-US')} characters) exceeds maximum allowed tokens. Output has been saved to ${file}.\n` +
      'Format: JSON with schema: {content: string}\nUse jq to make structured queries (find a value, filter by field).\n';
    const r = await hook(event('mcp__fs__read_text_file', { path: '/w/big.log' }, notice, transcript));
    const msg = r.output!.hookSpecificOutput.updatedToolOutput as string;
    expect(msg).toMatch(/^\[spillway\] The result of `mcp__fs__read_text_file`/);
    expect(savedBytes(msg).toString()).toBe(structured);
    // Not readable (outside the folder): the notice stays, and stderr says why.
    const other = await hook(event('mcp__fs__read_text_file', {}, notice.replace(file, '/etc/passwd'), transcript));
    expect(other.output).toBeUndefined();
    expect(other.note).toMatch(/saved copy could not be read/);
  });

  it('small Bash output carrying base64: the blob is cut out to an asset and the rest shown (inline-assets), restorable', async () => {
    const png = makePng(24, 5);
    const stdout = `$ cat thumb.b64\n${png.toString('base64')}\n$ echo done\ndone\n`;
    const r = await hook(event('Bash', { command: 'cat thumb.b64; echo done' }, bash(stdout)));
    const answer = r.output!.hookSpecificOutput.updatedToolOutput as { stdout: string };
    expect(r.guard!.action).toBe('inline-assets');
    expect(answer.stdout).not.toContain(png.toString('base64').slice(0, 100));
    expect(answer.stdout).toContain('$ echo done');
    expect(fs.readFileSync(r.guard!.assets[0]!.path).equals(png)).toBe(true);
    expect((await restorePayload(r.guard!.payloadPath!)).toString('utf8')).toBe(stdout);
  });

  it('small Bash output that is binary (cat of a GIF): saved as an asset and described, never shown as text', async () => {
    const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
    const stdout = gif.toString('latin1').repeat(4);
    const r = await hook(event('Bash', { command: 'cat pixel.gif' }, bash(stdout)));
    expect(r.output, 'a binary string must not reach the model').toBeDefined();
    expect(messageIn(r)).toMatch(/binary|GIF/i);
  });

  it('small results: no output', async () => {
    expect((await hook(event('Bash', { command: 'ls' }, bash('a\nb\n')))).output).toBeUndefined();
    expect((await hook(event('Read', {}, { type: 'text', file: { filePath: '/a', content: 'x', numLines: 1, startLine: 1, totalLines: 1 } }))).output).toBeUndefined();
  });
});

describe('spillway hook claude-code (the CLI)', () => {
  it("measures with Claude's tokenizer by default (Claude Code runs Claude), another with --profile", () => {
    const input = event('Bash', { command: 'cat app.log' }, bash(makeLog(300_000)));
    const profileOf = (args: string[]) => {
      const session = path.join(tmpDir(), 'session');
      const r = runHook(input, ['--session', session, ...args]);
      expect(r.code).toBe(0);
      const metaFile = fs.readdirSync(path.join(session, 'long_responses')).find((f) => f.endsWith('.meta.json'))!;
      return (JSON.parse(fs.readFileSync(path.join(session, 'long_responses', metaFile), 'utf8')) as { estimate: { profile: string; strategy: string } }).estimate;
    };
    expect(profileOf([]).profile).toBe('claude');
    expect(profileOf(['--profile', 'o200k'])).toMatchObject({ profile: 'o200k' });
    const bad = runHook(input, ['--profile', 'gpt2']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--profile must be one of o200k, cl100k, claude/);
  });

  it('spills into the app-data sessions root by default, one folder per Claude Code session; a context window narrows the limit', () => {
    const r = runHook(event('Bash', { command: 'tail -n 300 app.log' }, bash(makeLog(30_000))), ['--limit', '100000', '--context-window', '20000']);
    const out = JSON.parse(r.stdout) as { hookSpecificOutput: { updatedToolOutput: { stdout: string } } };
    expect(savedBytes(out.hookSpecificOutput.updatedToolOutput.stdout).length).toBeGreaterThan(29_000);
    expect(fs.readdirSync(path.join(r.home, 'sessions', `claude-code_${SESSION_ID}`, 'long_responses')).some((f) => f.endsWith('.meta.json'))).toBe(true);
    expect(runHook(event('Bash', {}, bash(makeLog(30_000))), ['--limit', '100000']).stdout).toBe('');
  });

  it('never blocks the agent: bad input, other events and an unwritable session exit 0 without an oversized answer', () => {
    for (const input of ['not json {', '[]', JSON.stringify({ ...event('Bash', {}, bash(makeLog(200_000))), hook_event_name: 'PreToolUse' })]) {
      const r = runHook(input);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('');
    }
    const file = path.join(tmpDir(), 'file');
    fs.writeFileSync(file, '');
    const r = runHook(event('Bash', { command: 'x' }, bash(makeLog(200_000))), ['--session', path.join(file, 'sub')]);
    expect(r.code).toBe(0);
    if (r.stdout) expect(r.stdout.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS + 500);
  });
});
