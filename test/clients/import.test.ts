/**
 * The transcripts the real clients wrote, imported by Spillway's index: one session per run, with
 * as many tool results as the client sent back to the model (counted by the model double), each
 * linked to its tool call. The scenarios hold the spill forms the clients write today: Claude
 * Code's `<persisted-output>` for a large Bash output, its "Output has been saved to" notice for a
 * large MCP result, Codex's cut of a large exec or MCP output.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex, type SpillIndex } from '../../src/index/index.js';
import { startAnthropicDouble, type AnthropicDouble } from './doubles/anthropic.js';
import { startResponsesDouble, type ResponsesDouble } from './doubles/openai-responses.js';
import { runClaudeCode, type ClaudeRun } from './claude.js';
import { runCodex, tomlString, type CodexRun } from './codex.js';
import { exportTranscripts, ROOT, tmpDir } from './harness.js';

const FILESYSTEM = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const RUN_MS = 180_000;

function lines(bytes: number, f: (i: number) => string): string {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `${f(i)}\n`;
  return s;
}

function fixture(cwd: string): string {
  const data = path.join(cwd, 'data');
  fs.mkdirSync(data);
  fs.writeFileSync(path.join(data, 'big.log'), lines(400_000, (i) => `2026-12-01T08:${String(i % 60).padStart(2, '0')}:00Z INFO request ${i} took ${i % 300}ms`));
  fs.writeFileSync(path.join(data, 'small.txt'), 'one\ntwo\nthree\n');
  return data;
}

const indexes: SpillIndex[] = [];
function indexOf(root: string): SpillIndex {
  const index = openIndex({ dbPath: path.join(tmpDir('spillway-import-db-'), 'index.sqlite') });
  indexes.push(index);
  index.addRoot(root);
  return index;
}

describe('importing what the real clients wrote', () => {
  let anthropic: AnthropicDouble;
  let responses: ResponsesDouble;
  let cc: ClaudeRun;
  let cx: CodexRun;

  beforeAll(async () => {
    const ccCwd = tmpDir('spillway-import-cc-cwd-');
    const ccData = fixture(ccCwd);
    anthropic = await startAnthropicDouble({
      steps: [
        { toolUses: [{ name: 'Read', input: { file_path: path.join(ccData, 'small.txt') } }] },
        { toolUses: [{ name: 'Bash', input: { command: `cat ${path.join(ccData, 'big.log')}`, description: 'show the log' } }] },
        { toolUses: [{ name: 'mcp__fs__read_text_file', input: { path: path.join(ccData, 'big.log') } }] },
        { toolUses: [{ name: 'Bash', input: { command: 'echo hi' } }] },
        { text: 'done' },
      ],
    });
    const cxCwd = tmpDir('spillway-import-codex-cwd-');
    const cxData = fixture(cxCwd);
    responses = await startResponsesDouble({
      steps: [
        { call: { name: 'exec_command', arguments: { cmd: `cat ${path.join(cxData, 'big.log')}` } } },
        { call: { name: 'read_text_file', namespace: 'mcp__fs', arguments: { path: path.join(cxData, 'big.log') } } },
        { call: { name: 'exec_command', arguments: { cmd: 'echo hi' } } },
        { text: 'done' },
      ],
    });
    [cc, cx] = await Promise.all([
      runClaudeCode({
        baseUrl: anthropic.origin,
        prompt: 'look at the log',
        cwd: ccCwd,
        mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, ccData] } },
        addDirs: [ccData],
        timeoutMs: RUN_MS,
      }),
      runCodex({
        baseUrl: responses.origin,
        prompt: 'look at the log',
        cwd: cxCwd,
        configToml: ['[mcp_servers.fs]', `command = ${tomlString(process.execPath)}`, `args = [${[FILESYSTEM, cxData].map(tomlString).join(', ')}]`, 'required = true'].join('\n'),
        timeoutMs: RUN_MS,
      }),
    ]);
    exportTranscripts(cc.home, 'claude-code', 'import-read-bash400k-mcp400k-echo');
    exportTranscripts(cx.home, 'codex', 'import-exec400k-mcp400k-echo');
  }, RUN_MS + 60_000);

  afterAll(async () => {
    for (const i of indexes) await i.close();
    await anthropic?.close();
    await responses?.close();
  });

  it('both runs completed and every scripted tool call came back to the model', () => {
    expect(cc.code, cc.stderr.slice(-2000)).toBe(0);
    expect(cx.code, cx.stderr.slice(-2000)).toBe(0);
    expect(anthropic.toolResults()).toHaveLength(4);
    expect(responses.toolOutputs()).toHaveLength(3);
  });

  it('Claude Code: ~/.claude/projects imports as one session with its 4 tool results, each linked to its call', async () => {
    const index = indexOf(path.join(cc.home, '.claude', 'projects'));
    const scan = await index.scan();
    expect(scan.warnings).toEqual([]);
    const sessions = index.listSessions();
    const main = sessions.filter((s) => s.kind === 'claude-code');
    expect(main).toHaveLength(1);
    expect(main[0]!.payloadCount).toBe(anthropic.toolResults().length);
    const rows = index.listPayloads({ sessionId: main[0]!.id, limit: 100 }).rows;
    expect(rows.map((r) => r.tool).sort()).toEqual(['Bash', 'Bash', 'Read', 'mcp__fs__read_text_file']);
  });

  it('Codex: ~/.codex/sessions imports as one session with its 3 tool results, each linked to its call', async () => {
    const index = indexOf(path.join(cx.home, '.codex', 'sessions'));
    const scan = await index.scan();
    expect(scan.warnings).toEqual([]);
    const main = index.listSessions().filter((s) => s.kind === 'codex');
    expect(main).toHaveLength(1);
    expect(main[0]!.payloadCount).toBe(responses.toolOutputs().length);
    const rows = index.listPayloads({ sessionId: main[0]!.id, limit: 100 }).rows;
    expect(rows.filter((r) => r.tool === 'unknown')).toEqual([]);
  });
});
