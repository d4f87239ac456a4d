/**
 * `spillway mcp` in front of the real @modelcontextprotocol/server-filesystem, inside the real Codex
 * and Claude Code binaries. The model double asks for a large read_text_file, then greps the spill
 * with spillway_grep at the path the message gave; the tests read what each client sent back.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicDouble, type AnthropicDouble } from './doubles/anthropic.js';
import { startResponsesDouble, type ResponsesDouble } from './doubles/openai-responses.js';
import { runClaudeCode, sourceSpillwayArgs, transcriptToolResults, type ClaudeRun } from './claude.js';
import { runCodex, tomlString, type CodexRun } from './codex.js';
import { exportTranscripts, ROOT, tmpDir } from './harness.js';
import { fmtBytes } from '../../src/pipeline/index.js';

const FILESYSTEM = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const RUN_MS = 180_000;
/** The line the model greps for, somewhere in the middle of the file. */
const NEEDLE = 'row 12345,';

function makeCsv(): string {
  let s = 'id,value,label\n';
  for (let i = 0; s.length < 420_000; i++) s += `row ${i},${(i * 0.731).toFixed(3)},label-${i % 97}\n`;
  return s;
}

/** The absolute payload path a spill message names (inside JSON text or not). */
function payloadPathIn(text: string): string | undefined {
  return /Absolute path: ([^\s"\\]+)/.exec(text)?.[1];
}

function lastToolOutputText(body: any, kind: 'codex' | 'claude'): string {
  if (kind === 'codex') {
    const outs = (body?.input ?? []).filter((i: any) => i?.type === 'function_call_output');
    const o = outs.at(-1)?.output;
    return typeof o === 'string' ? o : JSON.stringify(o ?? '');
  }
  const blocks = (body?.messages ?? []).flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b?.type === 'tool_result');
  return JSON.stringify(blocks.at(-1)?.content ?? '');
}

describe('spillway mcp under the real Codex', () => {
  let d: ResponsesDouble;
  let run: CodexRun;
  let csv: string;
  let session: string;

  beforeAll(async () => {
    const cwd = tmpDir('spillway-codex-proxy-cwd-');
    const data = path.join(cwd, 'data');
    fs.mkdirSync(data);
    csv = makeCsv();
    fs.writeFileSync(path.join(data, 'rows.csv'), csv);
    const home = tmpDir('spillway-codex-proxy-home-');
    // Inside the run's own Spillway sessions root, so exported transcripts carry their spills too.
    session = path.join(home, 'spillway', 'sessions', 'codex-proxy');
    d = await startResponsesDouble({
      steps: [
        { call: { name: 'read_text_file', namespace: 'mcp__fs', arguments: { path: path.join(data, 'rows.csv') } } },
        (body) => ({ call: { name: 'spillway_grep', namespace: 'mcp__fs', arguments: { path: payloadPathIn(lastToolOutputText(body, 'codex')) ?? 'missing', pattern: NEEDLE } } }),
        { text: 'done' },
      ],
    });
    const args = sourceSpillwayArgs(['mcp', '--client', 'codex', '--session', session, '--', process.execPath, FILESYSTEM, data]);
    run = await runCodex({
      baseUrl: d.origin,
      prompt: 'read data/rows.csv and find row 12345',
      cwd,
      home,
      configToml: [`[mcp_servers.fs]`, `command = ${tomlString(process.execPath)}`, `args = [${args.map(tomlString).join(', ')}]`, 'startup_timeout_sec = 60', 'tool_timeout_sec = 120', '# wait for the server before the first model request (else the scripted call can beat it)', 'required = true'].join('\n'),
      timeoutMs: RUN_MS,
    });
    exportTranscripts(run.home, 'codex', 'proxy-read-text-file-and-grep');
  }, RUN_MS + 60_000);

  afterAll(async () => {
    await d?.close();
  });

  it('the run completed', () => {
    expect(run.timedOut).toBe(false);
    expect(run.code, run.stderr.slice(-3000)).toBe(0);
  });

  it('a large read_text_file: the model receives the summary and the drill-down advice, not only the path', () => {
    const [first] = d.toolOutputs();
    const out = first!.item.output as string;
    // Codex shows "Wall time: …\nOutput:\n" + JSON.stringify(structuredContent): the message is in there.
    expect(out).toMatch(/^Wall time: [\d.]+ seconds\nOutput:\n\{"content":"\[spillway\] The result of `read_text_file`/);
    const shown = JSON.parse(out.slice(out.indexOf('\n', out.indexOf('Output:')) + 1)) as { content: string };
    expect(shown.content).toContain('Summary (structural');
    expect(shown.content).toContain('spillway_grep');
    expect(shown.content).not.toMatch(/\bwith Read\b|\bGrep\b/);
    // Codex runs OpenAI models: counted with o200k; the size is of what Codex shows (structuredContent).
    expect(shown.content).toMatch(/~[\d,]+ tokens \([a-z0-9-]+(, exact| estimate), o200k\)/);
    expect(shown.content).toContain(`(json, ${fmtBytes(Buffer.byteLength(JSON.stringify({ content: csv })))} as the client shows it; the whole result saved is `);
    expect(out.length).toBeLessThan(20_000);
    // `spillway restore` gives back the MCP result: its structuredContent holds the file.
    const saved = JSON.parse(fs.readFileSync(payloadPathIn(shown.content)!, 'utf8'));
    expect(saved.structuredContent.content).toBe(csv);
  });

  it('the follow-up spillway_grep (namespace mcp__fs) returns the right line', () => {
    const outs = d.toolOutputs();
    expect(outs).toHaveLength(2);
    const call = d.mainTurns()[2]!.body.input.find((i: any) => i.type === 'function_call' && i.name === 'spillway_grep');
    expect(call.namespace).toBe('mcp__fs');
    // No structuredContent here: Codex sends the content blocks, as input_text items.
    expect(JSON.stringify(outs[1]!.item.output)).toContain('row 12345,9024.195,label-26');
  });
});

describe('spillway mcp under the real Claude Code', () => {
  let d: AnthropicDouble;
  let run: ClaudeRun;
  let csv: string;

  beforeAll(async () => {
    const cwd = tmpDir('spillway-cc-proxy-cwd-');
    const data = path.join(cwd, 'data');
    fs.mkdirSync(data);
    csv = makeCsv();
    fs.writeFileSync(path.join(data, 'rows.csv'), csv);
    d = await startAnthropicDouble({
      steps: [
        { toolUses: [{ id: 'toolu_01proxyread', name: 'mcp__fs__read_text_file', input: { path: path.join(data, 'rows.csv') } }] },
        (body) => ({ toolUses: [{ id: 'toolu_01proxygrep', name: 'mcp__fs__spillway_grep', input: { path: payloadPathIn(lastToolOutputText(body, 'claude')) ?? 'missing', pattern: NEEDLE } }] }),
        { text: 'done' },
      ],
    });
    run = await runClaudeCode({
      baseUrl: d.origin,
      prompt: 'read data/rows.csv and find row 12345',
      cwd,
      mcpServers: { fs: { command: process.execPath, args: sourceSpillwayArgs(['mcp', '--client', 'claude-code', '--', process.execPath, FILESYSTEM, data]) } },
      addDirs: [data],
      timeoutMs: RUN_MS,
    });
    exportTranscripts(run.home, 'claude-code', 'proxy-read-text-file-and-grep');
  }, RUN_MS + 60_000);

  afterAll(async () => {
    await d?.close();
  });

  it('the run completed', () => {
    expect(run.code, run.stderr.slice(-3000)).toBe(0);
  });

  it('a large read_text_file: the model receives the summary in the structuredContent Claude Code shows', () => {
    const r = d.toolResults().find((t) => t.block.tool_use_id === 'toolu_01proxyread')!;
    const text = JSON.stringify(r.block.content);
    expect(text).toContain('[spillway] The result of `read_text_file`');
    expect(text).toContain('Summary (structural');
    expect(text).toContain('spillway_grep');
    // The profile follows the client (Claude's tokenizer), and the size is what Claude Code shows: the
    // serialized structuredContent, not it plus the text block holding the same file.
    expect(text).toMatch(/~[\d,]+ tokens \([a-z0-9-]+(, exact| estimate), claude\)/);
    expect(text).toContain(`(json, ${fmtBytes(Buffer.byteLength(JSON.stringify({ content: csv })))} as the client shows it; the whole result saved is `);
    expect(text).not.toContain('exceeds maximum allowed tokens');
    expect(text.length).toBeLessThan(20_000);
  });

  it('the follow-up spillway_grep returns the right line', () => {
    const r = d.toolResults().find((t) => t.block.tool_use_id === 'toolu_01proxygrep')!;
    expect(JSON.stringify(r.block.content)).toContain('row 12345,9024.195,label-26');
    // The transcript recorded both results.
    expect(transcriptToolResults(run.transcript).map((t) => t.name)).toEqual(['mcp__fs__read_text_file', 'mcp__fs__spillway_grep']);
  });
});

