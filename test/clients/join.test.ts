/**
 * One row per tool call, from runs of the real clients: Claude Code with the hook and `spillway mcp`
 * in front of the filesystem server, Codex with `spillway mcp`. Their HOMEs are then indexed as the
 * inspector does (the agents' folders and Spillway's app-data sessions) and each tool call must be
 * listed once, on the transcript's row, with the spill's summary and one token figure; the spill
 * sessions open on their own and are named by their client session.
 *
 * The ids the clients send were observed in these runs: the hook input's `tool_use_id`; in
 * tools/call, Claude Code 2.1.328's `_meta["claudecode/toolUseId"]` and Codex 0.171.0's
 * `_meta.callId` (the rollout's call_id) with `_meta.sessionId` (its thread).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex, type SpillIndex } from '../../src/index/index.js';
import type { PayloadMeta } from '../../src/pipeline/types.js';
import { startAnthropicDouble, type AnthropicDouble } from './doubles/anthropic.js';
import { startResponsesDouble, type ResponsesDouble } from './doubles/openai-responses.js';
import { runClaudeCode, sourceHookCommand, sourceSpillwayArgs, type ClaudeRun } from './claude.js';
import { runCodex, tomlString, type CodexRun } from './codex.js';
import { exportTranscripts, listFiles, ROOT, tmpDir } from './harness.js';

const FILESYSTEM = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const RUN_MS = 180_000;

function lines(bytes: number, f: (i: number) => string): string {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `${f(i)}\n`;
  return s;
}

/**
 * A run's Spillway sessions folder. Claude Code hands hooks and MCP servers its environment, so
 * they spill under SPILLWAY_HOME (`<home>/spillway`); Codex starts MCP servers with a short list of
 * variables of its own (seen here: SPILLWAY_HOME does not reach the proxy), so the proxy spills
 * in the default app data of that HOME.
 */
function sessionsRoot(home: string): string {
  const set = path.join(home, 'spillway', 'sessions');
  return fs.existsSync(set) ? set : path.join(home, '.local', 'share', 'spillway', 'sessions');
}

/** Every sidecar a run's Spillway app data holds. */
function sidecars(home: string): Array<PayloadMeta & { file: string }> {
  const root = sessionsRoot(home);
  return listFiles(root)
    .filter((f) => f.endsWith('.meta.json'))
    .map((f) => ({ ...(JSON.parse(fs.readFileSync(path.join(root, f), 'utf8')) as PayloadMeta), file: path.join(root, f) }));
}

/** The figure a message states: `~268,991 tokens (calibrated estimate, generic)`. */
function messageTokens(message: string): number | undefined {
  const m = /~([\d,]+) tokens \(/.exec(message);
  return m ? Number(m[1]!.replace(/,/g, '')) : undefined;
}

const indexes: SpillIndex[] = [];
async function indexHome(home: string, agentFolder: string[]): Promise<SpillIndex> {
  const index = openIndex({ dbPath: path.join(tmpDir('spillway-join-db-'), 'index.sqlite') });
  indexes.push(index);
  index.addRoot(path.join(home, ...agentFolder));
  index.addRoot(sessionsRoot(home));
  const scan = await index.scan();
  expect(scan.warnings).toEqual([]);
  return index;
}

describe('one row per tool call: real Claude Code (hook + proxy) and real Codex (proxy)', () => {
  let anthropic: AnthropicDouble;
  let responses: ResponsesDouble;
  let cc: ClaudeRun;
  let cx: CodexRun;
  let ccCwd: string;
  let cxCwd: string;

  beforeAll(async () => {
    ccCwd = tmpDir('spillway-join-cc-cwd-');
    fs.writeFileSync(path.join(ccCwd, 'report70k.txt'), lines(70_000, (i) => `line ${i}: revenue ${i * 13} for region ${i % 17}`));
    fs.writeFileSync(path.join(ccCwd, 'rows.csv'), lines(420_000, (i) => `row ${i},${(i * 0.731).toFixed(3)},label-${i % 97}`));
    fs.writeFileSync(path.join(ccCwd, 'small.txt'), 'one\ntwo\n');
    cxCwd = tmpDir('spillway-join-cx-cwd-');
    fs.writeFileSync(path.join(cxCwd, 'rows.csv'), lines(420_000, (i) => `row ${i},${(i * 0.731).toFixed(3)},label-${i % 97}`));
    anthropic = await startAnthropicDouble({
      steps: [
        { toolUses: [{ id: 'toolu_01joinread', name: 'Read', input: { file_path: path.join(ccCwd, 'report70k.txt') } }] },
        { toolUses: [{ id: 'toolu_01joinmcp', name: 'mcp__fs__read_text_file', input: { path: path.join(ccCwd, 'rows.csv') } }] },
        { toolUses: [{ id: 'toolu_01joinsmall', name: 'Read', input: { file_path: path.join(ccCwd, 'small.txt') } }] },
        { text: 'done' },
      ],
    });
    responses = await startResponsesDouble({
      steps: [
        { call: { name: 'read_text_file', namespace: 'mcp__fs', arguments: { path: path.join(cxCwd, 'rows.csv') }, callId: 'call_01joinmcp' } },
        { call: { name: 'exec_command', arguments: { cmd: 'echo hi' }, callId: 'call_01joinecho' } },
        { text: 'done' },
      ],
    });
    [cc, cx] = await Promise.all([
      runClaudeCode({
        baseUrl: anthropic.origin,
        prompt: 'look at the report and the rows',
        cwd: ccCwd,
        settings: { hooks: { PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: sourceHookCommand(), timeout: 120 }] }] } },
        mcpServers: { fs: { command: process.execPath, args: sourceSpillwayArgs(['mcp', '--client', 'claude-code', '--', process.execPath, FILESYSTEM, ccCwd]) } },
        addDirs: [ccCwd],
        timeoutMs: RUN_MS,
      }),
      runCodex({
        baseUrl: responses.origin,
        prompt: 'count the rows',
        cwd: cxCwd,
        configToml: [
          '[mcp_servers.fs]',
          `command = ${tomlString(process.execPath)}`,
          `args = [${sourceSpillwayArgs(['mcp', '--client', 'codex', '--', process.execPath, FILESYSTEM, cxCwd]).map(tomlString).join(', ')}]`,
          'startup_timeout_sec = 60',
          'tool_timeout_sec = 120',
          'required = true',
        ].join('\n'),
        timeoutMs: RUN_MS,
      }),
    ]);
    exportTranscripts(cc.home, 'claude-code', 'join-hook-read70k-proxy-mcp420k-small');
    exportTranscripts(cx.home, 'codex', 'join-proxy-mcp420k-echo');
  }, RUN_MS + 60_000);

  afterAll(async () => {
    for (const i of indexes) await i.close();
    await anthropic?.close();
    await responses?.close();
  });

  it('both runs completed, and every scripted call came back to the model', () => {
    expect(cc.code, cc.stderr.slice(-2000)).toBe(0);
    expect(cx.code, cx.stderr.slice(-2000)).toBe(0);
    expect(anthropic.toolResults().map((t) => t.block.tool_use_id)).toEqual(['toolu_01joinread', 'toolu_01joinmcp', 'toolu_01joinsmall']);
    expect(responses.toolOutputs().map((t) => t.item.call_id)).toEqual(['call_01joinmcp', 'call_01joinecho']);
  });

  it('the sidecars record the tool call id each client sent (hook input, Claude Code _meta, Codex _meta), the client and its session', () => {
    const ccMetas = sidecars(cc.home);
    const byId = new Map(ccMetas.map((m) => [m.toolCallId, m]));
    expect([...byId.keys()].sort()).toEqual(['toolu_01joinmcp', 'toolu_01joinread']);
    const hook = byId.get('toolu_01joinread')!;
    expect(hook).toMatchObject({ tool: 'Read', client: 'claude-code', clientSessionId: cc.sessionId, transcriptPath: cc.transcriptPath, cwd: ccCwd });
    const proxy = byId.get('toolu_01joinmcp')!;
    // The proxy learns the client from `initialize` (clientInfo.name "claude-code"); Claude Code sends no session id to MCP servers.
    expect(proxy).toMatchObject({ tool: 'read_text_file', client: 'claude-code' });
    expect(proxy.clientSessionId).toBeUndefined();
    const [codex] = sidecars(cx.home);
    const thread = cx.rollout.find((o: any) => o.type === 'session_meta')?.payload?.id;
    expect(thread).toBeTruthy();
    expect(codex).toMatchObject({ tool: 'read_text_file', toolCallId: 'call_01joinmcp', client: 'codex', clientSessionId: thread });
  });

  it('Claude Code: each tool call is one row over all roots, the transcript row has the spill (its summary, content, sidecar), and one token figure', async () => {
    const index = await indexHome(cc.home, ['.claude', 'projects']);
    const all = index.listPayloads({ limit: 1000 });
    expect(all.total).toBe(anthropic.toolResults().length);
    const transcript = index.listSessions().find((s) => s.kind === 'claude-code' && !s.parentSessionId)!;
    expect(all.rows.every((r) => r.sessionId === transcript.id)).toBe(true);
    // The footer's count: every root's payloads, each tool call once.
    expect(index.listRoots().reduce((n, r) => n + r.payloadCount, 0)).toBe(anthropic.toolResults().length);
    for (const id of ['toolu_01joinread', 'toolu_01joinmcp']) {
      const row = all.rows.find((r) => r.tool.endsWith(id === 'toolu_01joinread' ? 'Read' : 'read_text_file') && r.action === 'spill')!;
      expect(row, id).toBeDefined();
      expect(row.join).toBeDefined();
      // No more "No summary yet" / SUM "·": the guard's summary is the spill's and shows here.
      expect(row.summaryCount).toBeGreaterThanOrEqual(1);
      const d = await index.getPayload(row.id);
      expect(d.meta?.toolCallId).toBe(id);
      expect(d.summaryRuns[0]?.summary).toMatch(/\S/);
      expect(d.source?.toolUseId).toBe(id);
      expect(d.spill?.how).toBe(row.join);
      // One figure: the table's, the sidecar's decision and what the model's message said.
      expect(row.tokens).toBe(d.meta!.estimate.tokens);
      expect(messageTokens(d.message)).toBe(row.tokens);
      expect(d.figure).toMatchObject({ tokens: row.tokens, strategy: d.meta!.estimate.strategy, profile: d.meta!.estimate.profile });
      // What the tool returned: the spill's bytes, not the message.
      expect(row.bytes).toBe(d.meta!.bytes);
      const content = await index.payloadContent(row.id);
      const spilled = await index.getPayload(d.spill!.payloadId);
      expect(content).toMatchObject({ type: 'file', path: spilled.path });
      expect(spilled.row.tokens).toBe(row.tokens);
    }
    const small = all.rows.find((r) => r.action === 'pass')!;
    expect(small.tool).toBe('Read');
    expect(small.join).toBeUndefined();
  });

  it('Claude Code: the hook and the proxy sessions open on their own, named by client, project and first prompt', async () => {
    const index = await indexHome(cc.home, ['.claude', 'projects']);
    const transcript = index.listSessions().find((s) => s.kind === 'claude-code' && !s.parentSessionId)!;
    const spills = index.listSessions().filter((s) => s.kind === 'spillway');
    expect(spills).toHaveLength(2);
    for (const s of spills) {
      expect(s.joinedSessionId).toBe(transcript.id);
      expect(s.title).toBe('look at the report and the rows');
      expect(s.project).toBe(ccCwd);
      expect(s.client).toMatch(/^Claude Code 2\.1\.328 · Spillway (hook|MCP proxy \(secure-filesystem-server\))$/);
      const rows = index.listPayloads({ sessionId: s.id, limit: 100 }).rows;
      expect(rows).toHaveLength(1);
      expect(s.joinedCount).toBe(1);
      expect(rows[0]!.joinedTo).toBeDefined();
      const d = await index.getPayload(rows[0]!.id);
      expect(d.calledIn?.sessionId).toBe(transcript.id);
    }
    expect(spills.map((s) => s.client).sort()).toEqual(['Claude Code 2.1.328 · Spillway MCP proxy (secure-filesystem-server)', 'Claude Code 2.1.328 · Spillway hook']);
  });

  it('Codex: the proxy spill is one row with the rollout call, with its summary and one figure; its session is named by the Codex session', async () => {
    const index = await indexHome(cx.home, ['.codex', 'sessions']);
    const all = index.listPayloads({ limit: 1000 });
    expect(all.total).toBe(responses.toolOutputs().length);
    expect(index.listRoots().reduce((n, r) => n + r.payloadCount, 0)).toBe(responses.toolOutputs().length);
    const row = all.rows.find((r) => r.tool === 'mcp__fs__read_text_file')!;
    expect(row.join).toBeDefined();
    expect(row.summaryCount).toBeGreaterThanOrEqual(1);
    const d = await index.getPayload(row.id);
    expect(d.meta?.toolCallId).toBe('call_01joinmcp');
    expect(row.tokens).toBe(d.meta!.estimate.tokens);
    expect(messageTokens(d.message)).toBe(row.tokens);
    const spill = index.listSessions().find((s) => s.kind === 'spillway')!;
    expect(spill.title).toBe('count the rows');
    expect(spill.project).toBe(cxCwd);
    expect(spill.client).toMatch(/^Codex 0\.171\.0 .*· Spillway MCP proxy \(secure-filesystem-server\)$/);
  });
});
