/**
 * Read-backs (src/index/readback.ts): a later call that reads a spill, linked to the spill and to
 * the exact part it read. On the transcripts Claude Code 2.1.328 and Codex 0.171 wrote behind
 * `spillway mcp` (fixtures/real, scenario proxy-read-text-file-and-grep: the model called
 * spillway_grep on the spill), and on a Claude Code transcript that reads a hook's spill back by
 * Read with an offset, by grep and sed in Bash, by the drill-down read, and reads an unrelated file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { handleLargeResponse } from '../../src/pipeline/index.js';
import { contextTimeline } from '../../src/service/offline.js';
import { createInspectorService } from '../../src/service/service.js';
import { REPO, copyTree, tmpDir, tmpIndex } from './helpers.js';
import { tmpTimelines } from '../timeline/helpers.js';
import { writeClaudeSession, type ToolCall } from '../helpers/claude-session.js';

const REAL = path.join(REPO, 'test', 'index', 'fixtures', 'real');
/** The session the real Claude Code 2.1.328 wrote (test/clients/realistic.ts): spills read back by Read with an offset, grep in Bash, spillway_read and spillway_grep. */
const REALISTIC = path.join(REPO, 'test', 'clients', 'fixtures', 'realistic', 'claude-code');

/** The spilled text of those runs as the proxy's grep saw it: 15,446 lines, `row 12345,` on line 12,347. */
function rows(): string {
  return Array.from({ length: 15446 }, (_, i) => (i < 2 ? `header ${i}` : `row ${i - 1},${((i - 1) * 0.731).toFixed(3)},label-${(i - 1) % 97}`)).join('\n');
}

async function spill(sessionPath: string, toolName: string, toolInput: unknown, at: string, text: string): Promise<string> {
  const res = await handleLargeResponse({ text, sessionPath, context: { toolName, toolInput, call: { client: 'claude-code' } }, now: () => new Date(at) });
  expect(res.payloadPath).toBeTruthy();
  return res.payloadPath!;
}

describe('read-backs from the real clients’ transcripts (proxy drill-down grep)', () => {
  for (const c of [
    { client: 'claude-code', tool: 'mcp__fs__spillway_grep', callId: 'toolu_01proxygrep', at: '2026-12-01T08:43:21.913Z', input: { path: '/tmp/spillway-cc-proxy-cwd-0FkHgX/data/rows.csv' } },
    { client: 'codex', tool: 'mcp__fs__spillway_grep', callId: undefined, at: '2026-12-01T08:43:19.723Z', input: { path: '/tmp/spillway-codex-proxy-cwd-vq686W/data/rows.csv' } },
  ]) {
    it(`${c.client}: spillway_grep on the spill is linked to it, with the line it matched`, async () => {
      const home = tmpDir();
      const transcripts = copyTree(path.join(REAL, c.client, 'proxy-read-text-file-and-grep'), path.join(home, c.client === 'codex' ? 'sessions' : 'projects'));
      const sessions = path.join(home, 'spills');
      // The spill the proxy wrote in that run (its file name is the one the transcript's grep names: same time, tool and input).
      const spilled = await spill(path.join(sessions, 'proxy'), 'read_text_file', c.input, c.at, rows());
      const { index } = tmpIndex();
      index.addRoot(transcripts);
      index.addRoot(sessions);
      await index.scan();
      const grep = index.listPayloads({ tool: c.tool }).rows[0]!;
      expect(grep).toBeTruthy();
      const spillRow = index.listPayloads({}).rows.find((r) => r.action === 'spill' && r.tool.endsWith('read_text_file'))!;
      const d = await index.getPayload(spillRow.id);
      expect(d.readBacks).toHaveLength(1);
      const rb = d.readBacks![0]!;
      expect(rb).toMatchObject({ readerId: grep.id, tool: c.tool, via: 'drill-down', part: { kind: 'grep', pattern: 'row 12345,', matched: [12347], matchCount: 1 } });
      if (c.callId) expect(rb.toolUseId).toBe(c.callId);
      expect(path.basename(rb.path).replace(/\.json$/, '')).toBe(path.basename(spilled).replace(/\.txt$/, ''));
      // The reading call itself is no spill's read-back.
      expect((await index.getPayload(grep.id)).readBacks).toBeUndefined();
    });
  }
});

describe('read-backs in a Claude Code transcript of a hook spill', () => {
  it('Read with an offset, grep and sed in Bash and the drill-down read are linked to their lines; an unrelated read is not', async () => {
    const home = tmpDir();
    const log = Array.from({ length: 400 }, (_, i) => (i + 1 === 150 || i + 1 === 333 ? `E${i + 1} ERROR disk full on /dev/sda${i}` : `I${i + 1} ok step ${i} ${'x'.repeat(300)}`)).join('\n');
    const spilled = await spill(path.join(home, 'spills', 'hook'), 'Bash', { command: 'make test' }, '2026-12-01T10:00:00.000Z', log);
    const other = path.join(home, 'work', 'notes.txt');
    fs.mkdirSync(path.dirname(other), { recursive: true });
    fs.writeFileSync(other, 'ERROR not a spill\n');
    const sid = '11111111-2222-4333-8444-555555555555';
    const calls: ToolCall[] = [
      ['toolu_read', 'Read', { file_path: spilled, offset: 120, limit: 61 }, 'lines 120-180'],
      ['toolu_grep', 'Bash', { command: `grep -n ERROR ${spilled}` }, '150:E150 ERROR\n333:E333 ERROR'],
      ['toolu_sed', 'Bash', { command: `sed -n '330,340p' "${spilled}" | cat` }, 'lines'],
      ['toolu_dd', 'mcp__fs__spillway_read', { path: path.basename(spilled), startLine: 1, endLine: 20 }, 'lines'],
      ['toolu_other', 'Read', { file_path: other, offset: 1, limit: 5 }, 'ERROR not a spill'],
      ['toolu_other_grep', 'Bash', { command: `grep ERROR ${other}` }, 'ERROR not a spill'],
    ];
    const transcript = writeClaudeSession(home, sid, 'run the tests', calls);
    const { index, dbPath } = tmpIndex();
    index.addRoot(path.join(home, 'projects'));
    index.addRoot(path.join(home, 'spills'));
    await index.scan();
    const spillRow = index.listPayloads({ tool: 'Bash' }).rows.find((r) => r.action === 'spill')!;
    const rbs = (await index.getPayload(spillRow.id)).readBacks!;
    expect(rbs.map((r) => [r.toolUseId, r.via, r.part])).toEqual([
      ['toolu_read', 'read', { kind: 'lines', start: 120, end: 180 }],
      ['toolu_grep', 'shell', { kind: 'grep', pattern: 'ERROR', regex: 'basic', ignoreCase: false, matched: [150, 333], matchCount: 2 }],
      ['toolu_sed', 'shell', { kind: 'lines', start: 330, end: 340 }],
      ['toolu_dd', 'drill-down', { kind: 'lines', start: 1, end: 20 }],
    ]);
    expect(rbs.every((r) => r.spillId === spillRow.id)).toBe(true);
    // Re-scanning changes nothing: the links are rebuilt from the same rows.
    fs.appendFileSync(transcript, '\n');
    await index.scan();
    expect((await index.getPayload(spillRow.id)).readBacks).toHaveLength(4);

    // `spillway context --json` prints them under readBacks: the reading call's tool_use id and the spill it read.
    const session = index.listSessions().find((x) => x.kind === 'claude-code')!;
    await index.close();
    const t = await contextTimeline({ target: session.id, env: { ...process.env, SPILLWAY_HOME: path.join(home, 'app') }, dbPath, request: {} });
    expect(t.readBacks.map((r) => [r.toolUseId, r.spillId])).toEqual(['toolu_read', 'toolu_grep', 'toolu_sed', 'toolu_dd'].map((id) => [id, spillRow.id]));
  });
});

describe('what the views show beside a read-back', () => {
  it('the realistic Claude Code session: each names the spill’s tool, its session, the transcript’s call it answered and the reader’s entered tokens', async () => {
    // As the service opens them: the reader's entered is the figure the timeline measured at indexing.
    const { index } = tmpTimelines();
    index.addRoot(path.join(REALISTIC, 'projects'));
    index.addRoot(path.join(REALISTIC, 'spillway-sessions'));
    await index.scan();
    const transcript = index.listSessions().find((x) => x.kind === 'claude-code')!;
    const rows = index.listPayloads({ sessionId: transcript.id, limit: 1000 }).rows;
    const byCall = (tool: string, input: string) => rows.find((r) => r.tool === tool && (r.inputExcerpt ?? '').includes(input))!;
    const all = index.readBacks([transcript.id]);
    // Read with an offset on the Read spill, grep in Bash on the lockfile's, spillway_read and spillway_grep on the MCP read's.
    const want = [
      { call: 'toolu_01rlreadback', spilled: byCall('Read', 'report.txt') },
      { call: 'toolu_01rlgrepback', spilled: byCall('Bash', 'package-lock.json') },
      { call: 'toolu_01rlspillread', spilled: byCall('mcp__fs__read_text_file', 'big.txt') },
      { call: 'toolu_01rlspillgrep', spilled: byCall('mcp__fs__read_text_file', 'big.txt') },
    ];
    expect(all.map((r) => r.toolUseId)).toEqual(want.map((w) => w.call));
    for (const [i, w] of want.entries()) {
      const rb = all[i]!;
      // A spill answered by a transcript's call is listed in its own session (the whole list shows the call once).
      const spill = index.listPayloads({ sessionId: rb.spillSessionId, limit: 1000 }).rows.find((r) => r.id === rb.spillId)!;
      const reader = rows.find((r) => r.id === rb.readerId)!;
      expect(rb.spillTool).toBe(spill.tool);
      expect(rb.spillTool).toBe(w.spilled.tool);
      expect(rb.spillSessionId).toBe(spill.sessionId);
      // The spill is in Spillway's own session; the call it answered is the transcript's, beside the reader.
      expect(rb.spillSessionId).not.toBe(transcript.id);
      expect(rb.spillCalledIn).toEqual({ payloadId: w.spilled.id, sessionId: transcript.id });
      // What the read cost in context is the table's Entered for that call, beside its whole result.
      expect(rb.entered).toBe(reader.entered);
      expect(rb.tokens).toBe(reader.tokens);
      // The reader's own detail names what it read, the same link seen from the other end.
      expect((await index.getPayload(rb.readerId)).reads?.map((x) => [x.spillId, x.part])).toEqual([[rb.spillId, rb.part]]);
    }
    await index.close();
  });

  it('getTimeline lists the session’s read-backs; a slider move (replayOnly) does not ask for them again', async () => {
    const home = tmpDir();
    const svc = createInspectorService({
      env: process.env,
      appDataDir: path.join(home, 'app'),
      roots: [path.join(REALISTIC, 'projects'), path.join(REALISTIC, 'spillway-sessions')],
      transport: 'http',
      scanOnStart: false,
      watch: false,
    });
    try {
      await svc.ready;
      await svc.reindex({});
      const transcript = (await svc.listSessions({})).find((x) => x.kind === 'claude-code')!;
      const t = await svc.getTimeline({ sessionId: transcript.id });
      expect(t.readBacks?.map((r) => [r.toolUseId, r.spillTool])).toEqual([
        ['toolu_01rlreadback', 'Read'],
        ['toolu_01rlgrepback', 'Bash'],
        ['toolu_01rlspillread', 'mcp__fs__read_text_file'],
        ['toolu_01rlspillgrep', 'mcp__fs__read_text_file'],
      ]);
      // Each reader is a call of this Timeline, so the view can mark it.
      const called = new Set(t.turns.flatMap((x) => x.tools.map((y) => y.payloadId)));
      expect(t.readBacks!.every((r) => called.has(r.readerId))).toBe(true);
      const again = await svc.getTimeline({ sessionId: transcript.id, replayOnly: true });
      expect(again.readBacks).toBeUndefined();
    } finally {
      await svc.close();
    }
  });
});
