/**
 * `spillway hook claude-code` inside the real Claude Code binary. The model is the local Anthropic
 * double; each test reads what Claude Code sent it on the turn after the tool call (the
 * tool_result), and Claude Code's transcript for answers it rejected.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicDouble, type AnthropicDouble, type AnthropicStep } from './doubles/anthropic.js';
import { startWebPage, type WebPage } from './doubles/web.js';
import { hookAttachments, runClaudeCode, shapeWarnings, shellQuote, sourceHookCommand, type ClaudeRun } from './claude.js';
import { exportTranscripts, ROOT, tmpDir } from './harness.js';
import { restorePayload } from '../../src/pipeline/index.js';

const FILESYSTEM = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const RUN_MS = 180_000;

/** Text of a tool_result block as the model reads it. */
function textOf(block: any): string {
  if (!block) return '';
  if (typeof block.content === 'string') return block.content;
  if (Array.isArray(block.content)) return block.content.map((b: any) => (b.type === 'text' ? b.text : `<${b.type}>`)).join('\n');
  return '';
}

function received(d: AnthropicDouble, id: string): any {
  const r = d.toolResults().find((t) => t.block.tool_use_id === id);
  expect(r, `no tool_result for ${id}; got ${d.toolResults().map((t) => t.block.tool_use_id).join(', ')}`).toBeDefined();
  return r!.block;
}

/** The saved payload a message points at (Read's line numbers in front or not). */
function savedFile(message: string): string {
  const m = /Absolute path: (\S+)/.exec(message);
  expect(m, message.slice(0, 400)).not.toBeNull();
  return m![1]!;
}

function makeText(bytes: number, line: (i: number) => string): string {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `${line(i)}\n`;
  return s;
}

function expectAccepted(run: ClaudeRun) {
  expect(shapeWarnings(run)).toEqual([]);
  const bad = hookAttachments(run).filter((a) => a.type !== 'hook_success');
  expect(bad.map((a) => `${a.type}: ${a.stderr ?? a.content}`.slice(0, 300))).toEqual([]);
}

describe('the hook inside real Claude Code: built-in tools', () => {
  let d: AnthropicDouble;
  let web: WebPage;
  let run: ClaudeRun;
  let cwd: string;
  const readText = makeText(70_000, (i) => `line ${i}: the quarterly report lists revenue ${i * 13} for region ${i % 17}`);
  const csv = Buffer.from(makeText(400_000, (i) => `row ${i},${Math.sin(i).toFixed(6)},value-${i * 7},${i % 3 ? 'ok' : 'FAIL'}`));
  const small = 'hello world\n'.repeat(10);
  // Under the limit by size, but most of it a base64 blob the model could only read as text.
  const blob = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 2654435761) >>> 24));
  const withBlob = `thumbnail follows\n${blob.toString('base64')}\nend of listing\n`;

  beforeAll(async () => {
    cwd = tmpDir('spillway-cc-hook-cwd-');
    fs.writeFileSync(path.join(cwd, 'report70k.txt'), readText);
    fs.writeFileSync(path.join(cwd, 'rows400k.csv'), csv);
    fs.writeFileSync(path.join(cwd, 'small.txt'), small);
    fs.writeFileSync(path.join(cwd, 'blob.txt'), withBlob);
    web = await startWebPage(tmpDir('spillway-web-'), `<html><body>${'<p>paragraph</p>'.repeat(1000)}</body></html>`);
    const steps: AnthropicStep[] = [
      { toolUses: [{ id: 'toolu_01read70k', name: 'Read', input: { file_path: path.join(cwd, 'report70k.txt') } }] },
      { toolUses: [{ id: 'toolu_01bashcat', name: 'Bash', input: { command: `cat ${path.join(cwd, 'rows400k.csv')}`, description: 'rows that FAIL' } }] },
      { toolUses: [{ id: 'toolu_01readsmall', name: 'Read', input: { file_path: path.join(cwd, 'small.txt') } }] },
      { toolUses: [{ id: 'toolu_01bashblob', name: 'Bash', input: { command: `cat ${path.join(cwd, 'blob.txt')}`, description: 'show the listing' } }] },
      { toolUses: [{ id: 'toolu_01grep', name: 'Grep', input: { pattern: 'FAIL', path: cwd, output_mode: 'content', head_limit: 0 } }] },
      { toolUses: [{ id: 'toolu_01webfetch', name: 'WebFetch', input: { url: web.url, prompt: 'list the paragraphs' } }] },
      { toolUses: [{ id: 'toolu_01websearch', name: 'WebSearch', input: { query: 'spillway dam design' } }] },
      { toolUses: [{ id: 'toolu_01agent', name: 'Agent', input: { description: 'survey', prompt: 'SUBAGENT: survey the folder', subagent_type: 'general-purpose', run_in_background: false } }] },
      { text: 'done' },
    ];
    const firstUserText = (b: any) => JSON.stringify(b?.messages?.[0]?.content ?? '');
    d = await startAnthropicDouble({
      steps,
      side: (b) => {
        if (firstUserText(b).includes('SUBAGENT:')) return { text: `Survey: ${'the folder holds many files of rows and reports. '.repeat(1800)}` };
        if (JSON.stringify(b?.tools ?? []).includes('web_search')) {
          return {
            blocks: [
              { type: 'server_tool_use', id: 'srvtoolu_01search', name: 'web_search', input: { query: 'spillway dam design' } },
              {
                type: 'web_search_tool_result',
                tool_use_id: 'srvtoolu_01search',
                content: Array.from({ length: 10 }, (_, i) => ({ type: 'web_search_result', title: `Spillway design ${i}`, url: `https://example.com/${i}`, encrypted_content: 'e', page_age: null })),
              },
            ],
            text: 'Spillways release surplus water from a dam. '.repeat(1500),
          };
        }
        // WebFetch's helper model call: no tools, the page in the prompt.
        if (!(b?.tools?.length) && firstUserText(b).includes('paragraph')) return { text: `Page summary: ${'paragraph text repeated. '.repeat(3000)}` };
        return undefined;
      },
    });
    run = await runClaudeCode({
      baseUrl: d.origin,
      prompt: 'inspect the files',
      cwd,
      settings: { skipWebFetchPreflight: true, hooks: { PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: sourceHookCommand(), timeout: 120 }] }] } },
      // 2.1.328 leaves Grep and Glob out unless they are named.
      args: ['--allowedTools', 'Grep,Glob'],
      env: { NODE_EXTRA_CA_CERTS: web.certPath },
      timeoutMs: RUN_MS,
    });
    exportTranscripts(run.home, 'claude-code', 'hook-builtins');
  }, RUN_MS + 60_000);

  afterAll(async () => {
    await d?.close();
    await web?.close();
  });

  it('the run completed and Claude Code accepted every answer (no "does not match … output shape", no hook error)', () => {
    expect(run.timedOut).toBe(false);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expectAccepted(run);
  });

  it('Read of a ~70 KB file: the model receives the message with the summary, and the spill holds the file', () => {
    const got = textOf(received(d, 'toolu_01read70k'));
    expect(got).toContain('[spillway] The result of `Read` is too large for the context');
    expect(got).toContain('Summary (structural');
    expect(got).toContain('with Read (offset/limit');
    expect(got.length).toBeLessThan(20_000);
    expect(got).not.toContain(readText.trimEnd().split('\n').at(-1)); // the file's end is not there
    expect(fs.readFileSync(savedFile(got), 'utf8')).toBe(readText);
  });

  it('Bash cat of a ~400 KB file: the spill is complete and byte-identical, though the hook was handed 30,000 chars', async () => {
    const got = textOf(received(d, 'toolu_01bashcat'));
    expect(got).toMatch(/^\[spillway\] The result of `Bash` is too large/);
    expect(got).toContain('It was saved in full instead.');
    expect(got).not.toContain('<persisted-output>');
    expect(got).toContain('focus: rows that FAIL');
    const saved = fs.readFileSync(savedFile(got));
    expect(saved.length).toBe(csv.length);
    expect(saved.equals(csv)).toBe(true);
    // `spillway restore` gives the same bytes back (sha256 checked).
    expect((await restorePayload(savedFile(got))).equals(csv)).toBe(true);
    const hookRun = hookAttachments(run).find((a) => a.toolUseID === 'toolu_01bashcat');
    const stdin = JSON.parse(hookRun.stdout).hookSpecificOutput.updatedToolOutput;
    expect(stdin).not.toHaveProperty('persistedOutputPath');
  });

  it('a small result is left unchanged: the model receives the file as Read renders it', () => {
    const got = textOf(received(d, 'toolu_01readsmall'));
    expect(got).not.toContain('[spillway]');
    expect(got).toContain('1\thello world\n2\thello world');
    expect(hookAttachments(run).find((a) => a.toolUseID === 'toolu_01readsmall')?.stdout ?? '').toBe('');
  });

  it('a small Bash output carrying base64: the model receives the text with the blob replaced by an asset reference', async () => {
    const got = textOf(received(d, 'toolu_01bashblob'));
    expect(got).toContain('[spillway]');
    expect(got).toContain('thumbnail follows');
    expect(got).toContain('end of listing');
    expect(got).toContain('[spillway asset: ');
    expect(got).not.toContain(blob.toString('base64').slice(0, 120));
    // Byte for byte what Bash gave the hook (Claude Code trims the output's final newline).
    expect((await restorePayload(savedFile(got))).toString('utf8')).toBe(withBlob.trimEnd());
  });

  it('Grep, WebFetch, WebSearch and Agent: each answer in its own shape reaches the model', () => {
    for (const [id, tool] of [
      ['toolu_01grep', 'Grep'],
      ['toolu_01webfetch', 'WebFetch'],
      ['toolu_01websearch', 'WebSearch'],
      ['toolu_01agent', 'Agent'],
    ] as const) {
      const got = textOf(received(d, id));
      expect(got, tool).toContain(`[spillway] The result of \`${tool}\``);
      expect(got.length, tool).toBeLessThan(20_000);
      expect(fs.statSync(savedFile(got)).size, tool).toBeGreaterThan(40_000);
    }
  });
});

describe('the hook inside real Claude Code: MCP tools', () => {
  let d: AnthropicDouble;
  let run: ClaudeRun;
  let data: string;
  const csv = makeText(400_000, (i) => `row ${i},${(i * 0.37).toFixed(2)},item-${i}`);

  beforeAll(async () => {
    const cwd = tmpDir('spillway-cc-mcp-cwd-');
    data = path.join(cwd, 'data');
    fs.mkdirSync(data);
    fs.writeFileSync(path.join(data, 'rows.csv'), csv);
    // A real PNG of ~120 KB (noise does not compress), read through server-filesystem's read_media_file.
    const { makePng } = await import('../integrations/helpers.js');
    fs.writeFileSync(path.join(data, 'photo.png'), makePng(200));
    d = await startAnthropicDouble({
      steps: [
        { toolUses: [{ id: 'toolu_01mcpimage', name: 'mcp__fs__read_media_file', input: { path: path.join(data, 'photo.png') } }] },
        { toolUses: [{ id: 'toolu_01mcptext', name: 'mcp__fs__read_text_file', input: { path: path.join(data, 'rows.csv') } }] },
        { toolUses: [{ id: 'toolu_01mcptiny', name: 'mcp__ev__get-tiny-image', input: {} }] },
        { text: 'done' },
      ],
    });
    run = await runClaudeCode({
      baseUrl: d.origin,
      prompt: 'look at the data',
      cwd,
      settings: { hooks: { PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: sourceHookCommand(), timeout: 120 }] }] } },
      mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, data] }, ev: { command: process.execPath, args: [EVERYTHING] } },
      addDirs: [data],
      timeoutMs: RUN_MS,
    });
    exportTranscripts(run.home, 'claude-code', 'hook-mcp');
  }, RUN_MS + 60_000);

  afterAll(async () => {
    await d?.close();
  });

  it('the run completed and every answer was accepted', () => {
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expectAccepted(run);
  });

  it('an MCP image result: the model still sees the image, and the base64 text beside it is replaced by the message', () => {
    const block = received(d, 'toolu_01mcpimage');
    expect(Array.isArray(block.content)).toBe(true);
    const kinds = block.content.map((b: any) => b.type);
    expect(kinds).toEqual(['image', 'text']);
    expect(block.content[0].source).toMatchObject({ type: 'base64', media_type: 'image/png' });
    const text = block.content[1].text as string;
    expect(text).toMatch(/^\[spillway\] The result of `mcp__fs__read_media_file`/);
    expect(text).toMatch(/long_responses\/assets\/[0-9a-f]+\.png/);
    expect(text.length).toBeLessThan(20_000);
  });

  it("an MCP text result Claude Code saved itself ('Output has been saved to …'): the model gets Spillway's summary of the whole result", () => {
    const got = textOf(received(d, 'toolu_01mcptext'));
    expect(got).toMatch(/^\[spillway\] The result of `mcp__fs__read_text_file`/);
    expect(got).not.toContain('exceeds maximum allowed tokens');
    expect(got).toContain('Summary (structural');
    expect(JSON.parse(fs.readFileSync(savedFile(got), 'utf8'))).toEqual({ content: csv });
  });

  it('a small MCP result (a tiny image) is left unchanged', () => {
    const got = received(d, 'toolu_01mcptiny');
    expect(JSON.stringify(got.content)).not.toContain('[spillway]');
    expect(got.content.some((b: any) => b.type === 'image')).toBe(true);
  });
});

describe('the hook inside real Claude Code: a tool whose shape Spillway does not know', () => {
  let d: AnthropicDouble;
  let run: ClaudeRun;

  beforeAll(async () => {
    d = await startAnthropicDouble({ steps: [{ toolUses: [{ id: 'toolu_01listres', name: 'ListMcpResourcesTool', input: {} }] }, { text: 'done' }] });
    run = await runClaudeCode({
      baseUrl: d.origin,
      prompt: 'list resources',
      cwd: tmpDir('spillway-cc-unknown-cwd-'),
      // A low limit makes the resource list (~1.5 KB) "large".
      settings: { hooks: { PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: sourceHookCommand(['--limit', '100']), timeout: 120 }] }] } },
      mcpServers: { ev: { command: process.execPath, args: [EVERYTHING] } },
      timeoutMs: RUN_MS,
    });
  }, RUN_MS + 60_000);

  afterAll(async () => {
    await d?.close();
  });

  it('is left alone: the model receives the original output, and the hook says why on stderr', () => {
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expectAccepted(run);
    const got = textOf(received(d, 'toolu_01listres'));
    expect(got).not.toContain('[spillway]');
    expect(got).toContain('demo://resource');
    const att = hookAttachments(run).find((a) => a.toolUseID === 'toolu_01listres');
    expect(att?.stdout ?? '').toBe('');
    expect(att?.stderr).toMatch(/ListMcpResourcesTool: output left unchanged .*does not know the output shape of ListMcpResourcesTool/);
  });
});

describe('the rejection check itself (control)', () => {
  it('sees the warning Claude Code writes when a hook answers a built-in tool with a plain string', async () => {
    const cwd = tmpDir('spillway-cc-control-cwd-');
    fs.writeFileSync(path.join(cwd, 'a.txt'), 'original text\n');
    const answer = JSON.stringify({ hookSpecificOutput: { hookEventName: 'PostToolUse', updatedToolOutput: 'a plain string' } });
    const d = await startAnthropicDouble({ steps: [{ toolUses: [{ id: 'toolu_01control', name: 'Read', input: { file_path: path.join(cwd, 'a.txt') } }] }, { text: 'done' }] });
    try {
      const run = await runClaudeCode({
        baseUrl: d.origin,
        prompt: 'read it',
        cwd,
        settings: { hooks: { PostToolUse: [{ matcher: 'Read', hooks: [{ type: 'command', command: `printf '%s' ${shellQuote(answer)}` }] }] } },
        timeoutMs: RUN_MS,
      });
      expect(run.code).toBe(0);
      expect(shapeWarnings(run).join('\n')).toMatch(/does not match Read's output shape; using original output/);
      expect(textOf(received(d, 'toolu_01control'))).toContain('original text');
    } finally {
      await d.close();
    }
  }, RUN_MS);
});
