import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { spillOne } from '../helpers/gen-sessions.js';
import { REPO, copyTree, tmpDir, tmpIndex } from './helpers.js';

// Transcripts written by the real clients (Claude Code 2.1.328, Codex 0.171.0) against local
// model servers; fixtures/real/SOURCES.md says what each scenario ran and which lines were kept.
const REAL = path.join(REPO, 'test', 'index', 'fixtures', 'real');
const CC = path.join(REAL, 'claude-code');
const CODEX = path.join(REAL, 'codex');

async function indexed(...roots: string[]) {
  const { index } = tmpIndex();
  for (const r of roots) index.addRoot(r);
  const res = await index.scan();
  return { index, res };
}

type Index = Awaited<ReturnType<typeof indexed>>['index'];

function session(index: Index, nameStart: string) {
  const s = index.listSessions().find((x) => x.name.startsWith(nameStart));
  if (!s) throw new Error(`no session ${nameStart}: ${index.listSessions().map((x) => x.name).join(', ')}`);
  return s;
}

function rows(index: Index, sessionId: string) {
  return index.listPayloads({ sessionId, sort: { field: 'createdAt', dir: 'asc' }, limit: 100 }).rows;
}

describe('Claude Code 2.1.328 transcripts', () => {
  it('a Bash spill named like tool-results/blb140l1b.txt is read whole; Read listings are text, not csv; new record types are skipped', async () => {
    const { index, res } = await indexed(path.join(CC, '01-read70k-bash400k-nohook'));
    expect(res.warnings).toEqual([]);
    const s = session(index, '-tmp-exp-cwd-vj1jXP/85f08f87');
    expect(s).toMatchObject({ kind: 'claude-code', project: '/tmp/exp/cwd-vj1jXP', title: 'go', client: 'Claude Code 2.1.328', readOnly: true });
    const r = rows(index, s.id);
    expect(r.map((x) => x.tool)).toEqual(['Read', 'Bash', 'Grep', 'Glob']);
    const [read, bash] = r;
    // A 70,038-char .txt shown as `1\tline 0: …`: the listing is seen through, the file is text.
    expect(read!.kind).toBe('text');
    expect(read!.action).toBe('pass');
    const spillFile = path.join(CC, '01-read70k-bash400k-nohook', '-tmp-exp-cwd-vj1jXP', '85f08f87-83ff-4d95-b3d9-8a564cde4b7c', 'tool-results', 'blb140l1b.txt');
    expect(bash).toMatchObject({ action: 'spill', kind: 'csv', bytes: 400_013 });
    expect(await index.payloadContent(bash!.id)).toEqual({ type: 'file', path: spillFile, bytes: 400_013 });
    const d = await index.getPayload(bash!.id);
    expect(d.message.startsWith('<persisted-output>')).toBe(true);
    expect(d.readOnly).toBe(true);
  });

  it('an MCP result Claude Code saved ("Output has been saved to …/tool-results/mcp-fs-…txt") is read from that file, else from mcpMeta.structuredContent', async () => {
    const dir = copyTree(path.join(CC, '03-mcp-fs-everything-agent-async'), path.join(tmpDir(), 'cc'));
    const sessionDir = path.join(dir, '-tmp-exp-cwd-Msvplq', '67562b2b-5996-45cb-880a-e66970b68906');
    const saved = path.join(sessionDir, 'tool-results', 'mcp-fs-read_text_file-1796112594103-o4vxd3.txt');
    const first = await indexed(dir);
    expect(first.res.warnings).toEqual([]);
    const main = session(first.index, '-tmp-exp-cwd-Msvplq/67562b2b');
    const r = rows(first.index, main.id);
    expect(r.map((x) => x.tool)).toEqual(['mcp__fs__read_text_file', 'mcp__ev__get-tiny-image', 'Agent', 'WebFetch', 'WebSearch']);
    const mcp = r[0]!;
    expect(mcp).toMatchObject({ action: 'spill', kind: 'json', bytes: 413_129 });
    expect(await first.index.payloadContent(mcp.id)).toEqual({ type: 'file', path: saved, bytes: 413_129 });
    // The whole CSV is searchable through the saved file's head and tail.
    expect(first.index.listPayloads({ query: 'value-91707' }).rows.map((x) => x.id)).toEqual([mcp.id]);

    // The image Claude Code saved beside the session ([Image: source: …png]) is the result's asset.
    const tiny = await first.index.getPayload(r[1]!.id);
    const png = path.join(sessionDir, 'tool-results', 'mcp-ev-blob-1796112594492-63tinl.png');
    expect(tiny.assets).toHaveLength(1);
    expect(tiny.assets[0]).toMatchObject({ path: png, mimeType: 'image/png', bytes: 4_033, source: 'mcp-image' });
    expect(tiny.assets[0]!.sha256).toMatch(/^[0-9a-f]{64}$/);

    // The sub-agent's transcript is its own session, titled with its task, under its parent.
    const sub = session(first.index, '-tmp-exp-cwd-Msvplq/67562b2b-5996-45cb-880a-e66970b68906/subagents/agent-ada8df3872149555d');
    expect(sub).toMatchObject({ title: 'SUBAGENT do it', parentSessionId: main.id, payloadCount: 0 });

    // Without the saved file, mcpMeta.structuredContent still holds the whole 413 K chars.
    fs.rmSync(saved);
    const again = await indexed(dir);
    const mcp2 = rows(again.index, session(again.index, '-tmp-exp-cwd-Msvplq/67562b2b').id)[0]!;
    expect(mcp2.id).toBe(mcp.id);
    const text = await again.index.payloadContent(mcp2.id);
    expect(text.type).toBe('text');
    expect(text.type === 'text' && text.text.startsWith('row 0,0.000000,value-0\n')).toBe(true);
    expect(text.type === 'text' && text.text.endsWith('row 13101,0.530029,value-91707\n')).toBe(true);
    expect(mcp2.bytes).toBeGreaterThan(400_000);
  });

  it('Agent and WebFetch outputs persisted as tool-results/<id>.json and .txt are read whole', async () => {
    const { index } = await indexed(path.join(CC, '04-agent-sync-webfetch-websearch'));
    const s = session(index, '-tmp-exp-cwd-eiL9vT/aa4def65');
    const r = rows(index, s.id);
    expect(r.map((x) => [x.tool, x.action, x.bytes])).toEqual([
      ['Agent', 'spill', 60_733],
      ['WebFetch', 'spill', 60_016],
      ['WebSearch', 'pass', 4_700],
    ]);
    expect(r[0]!.kind).toBe('json');
  });

  it('imports the Grep, Glob, WebFetch, WebSearch, notebook Read and NotebookEdit results', async () => {
    const { index } = await indexed(path.join(CC, '02-grep-glob-webfetch-websearch-notebook-image'));
    const r = rows(index, session(index, '-tmp-exp-cwd-PlQanw').id);
    expect(r.map((x) => x.tool)).toEqual(['Grep', 'Glob', 'WebFetch', 'WebSearch', 'Read', 'NotebookEdit', 'Grep']);
    expect(r.filter((x) => x.tool === 'unknown')).toEqual([]);
  });
});

describe('Codex 0.171.0 rollouts', () => {
  it("keeps the MCP namespace, measures outputs at Codex's own stated sizes, and classes the MCP JSON as json", async () => {
    const { index, res } = await indexed(path.join(CODEX, '01-mcp-fs-read-text-file-540k-plus-exec-cat'));
    expect(res.warnings).toEqual([]);
    const s = session(index, 'sessions/2026/12/01/rollout-2026-12-01T08-12-21');
    expect(s).toMatchObject({ kind: 'codex', project: '/tmp/exp/cxcwd-PSHN5r', title: 'go', client: 'Codex 0.171.0 (codex_exec)' });
    const [mcp, exec] = rows(index, s.id);
    expect(mcp!.tool).toBe('mcp__fs__read_text_file');
    expect(mcp!.kind).toBe('json');
    expect(exec!.tool).toBe('exec_command');
    expect(exec!.kind).toBe('csv');
    // "Original token count: 135477" at 4 bytes a token: the 541,905-byte file, not the 42 KB Codex kept.
    expect(exec!.bytes).toBe(135_477 * 4);
    // The MCP output: JSON.stringify(structuredContent) of that file (~562 K chars), cut to 48 K with "…128489 tokens truncated…".
    expect(mcp!.bytes).toBeGreaterThan(541_905);
    expect(mcp!.bytes).toBeLessThan(600_000);
    // Tokens scale with the bytes from what is visible.
    expect(exec!.tokens).toBeGreaterThan(100_000);
    const content = await index.payloadContent(exec!.id);
    // The fuller copy Codex kept (64 KB in item_completed) is what the inspector shows.
    expect(content.type === 'text' && content.text.length).toBe(65_536);
    const d = await index.getPayload(exec!.id);
    expect(d.message).toMatch(/^Chunk ID: /);
  });
});

describe('results that are Spillway messages link to the payload Spillway saved', () => {
  /** A copy of a fixture with the Spillway payload path it names replaced by `payloadPath`. */
  function withPayloadAt(src: string, dest: string, payloadPath: string): string {
    copyTree(src, dest);
    for (const f of fs.readdirSync(dest, { recursive: true, withFileTypes: true })) {
      if (!f.isFile() || !f.name.endsWith('.jsonl')) continue;
      const p = path.join(f.parentPath, f.name);
      const text = fs.readFileSync(p, 'utf8');
      const named = /Absolute path: (\/[^\s"\\]+\.json)/.exec(text)![1]!;
      fs.writeFileSync(p, text.split(named).join(payloadPath));
    }
    return dest;
  }

  for (const client of ['claude-code', 'codex'] as const) {
    it(`${client}: listed at the saved payload's size, opened from its file, a spill; not followed outside the roots`, async () => {
      const home = tmpDir();
      const sessions = path.join(home, 'sessions');
      const csv = Array.from({ length: 4000 }, (_, i) => `row ${i},${(i * 0.731).toFixed(3)},label-${i % 97}`).join('\n');
      const saved = await spillOne(path.join(sessions, 'proxy-session'), { tool: 'read_text_file', text: csv, time: new Date('2026-12-01T08:43:00Z') });
      const transcripts = withPayloadAt(path.join(client === 'codex' ? CODEX : CC, 'proxy-read-text-file-and-grep'), path.join(home, client), saved.payloadPath);

      // Only the transcripts: the path leads outside every root, so it is not followed; the call is
      // still a spill (the model got the message), at the message's size, never the payload's.
      const alone = await indexed(transcripts);
      const plain = alone.index.listPayloads({ tool: 'mcp__fs__read_text_file' }).rows;
      expect(plain).toHaveLength(1);
      expect(plain[0]!.action).toBe('spill');
      expect(plain[0]!.bytes).toBeLessThan(10_000);
      expect(await alone.index.payloadContent(plain[0]!.id)).not.toMatchObject({ path: saved.payloadPath });

      const { index } = await indexed(transcripts, sessions);
      const linked = index.listPayloads({ tool: 'mcp__fs__read_text_file' }).rows;
      expect(linked.map((r) => r.id)).toEqual([plain[0]!.id]);
      expect(linked[0]).toMatchObject({ action: 'spill', bytes: saved.bytes });
      expect(await index.payloadContent(linked[0]!.id)).toEqual({ type: 'file', path: saved.payloadPath, bytes: fs.statSync(saved.payloadPath).size });
      const d = await index.getPayload(linked[0]!.id);
      expect(d.message).toContain('[spillway]');
      expect(d.source?.transcript.endsWith('.jsonl')).toBe(true);
      // The follow-up drill-down call is imported too, named with its namespace.
      expect(index.listPayloads({ tool: 'mcp__fs__spillway_grep' }).total).toBe(1);
      // One row per tool call: across the folders the spill is the transcript's row, not a second one;
      // its own session, opened on its own, still lists it.
      expect(index.listPayloads({ tool: 'read_text_file' }).total).toBe(0);
      const own = index.listSessions().find((x) => x.path === path.join(sessions, 'proxy-session'));
      expect(own, 'the spill session is still listed').toBeDefined();
      expect(index.listPayloads({ sessionId: own!.id, tool: 'read_text_file' }).total).toBe(1);
    });
  }
});

describe('tolerance', () => {
  it('record types and lines it does not know are skipped, the rest imported', async () => {
    const dir = path.join(tmpDir(), 'projects', '-home-me-proj');
    fs.mkdirSync(dir, { recursive: true });
    const sessionId = '0b5a3c1e-0000-4000-8000-0000000000aa';
    const lines = [
      JSON.stringify({ type: 'queue-operation', operation: 'enqueue', sessionId }),
      JSON.stringify({ type: 'user', sessionId, cwd: '/home/me/proj', version: '9.9.9', message: { role: 'user', content: 'count the rows please' } }),
      JSON.stringify({ type: 'hologram', sessionId, payload: { tool_use: 'not what it seems', tool_result: 1 } }),
      '{"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "wc -l x"}}]}}',
      'not json at all, and never parsed: no tool traffic in it',
      '{"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t0", "content": "cut off mid-wri',
      JSON.stringify({ type: 'user', sessionId, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: '42 x' }] }, toolUseResult: { weird: ['shape'] } }),
      JSON.stringify({ type: 'user', sessionId, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'orphan', content: { unexpected: true } }] } }),
    ];
    fs.writeFileSync(path.join(dir, `${sessionId}.jsonl`), lines.join('\n') + '\n');
    const { index, res } = await indexed(path.dirname(dir));
    expect(res.warnings).toEqual([expect.stringMatching(/1 unparsable line\(s\) skipped/)]);
    const s = index.listSessions()[0]!;
    expect(s).toMatchObject({ project: '/home/me/proj', title: 'count the rows please', client: 'Claude Code 9.9.9', payloadCount: 2 });
    const r = rows(index, s.id);
    expect(r.map((x) => x.tool)).toEqual(['Bash', 'unknown']);
  });

  it("a spill path named in a transcript never leads outside that session's tool-results folder", async () => {
    const home = tmpDir();
    const outside = path.join(home, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'ZEBRAFISH '.repeat(5000));
    const dir = path.join(home, 'projects', '-home-me-proj');
    const sessionId = '0b5a3c1e-0000-4000-8000-0000000000bb';
    const results = path.join(dir, sessionId, 'tool-results');
    fs.mkdirSync(results, { recursive: true });
    // A symlink in tool-results is never followed either.
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(results, 'linked.txt'));
    const stub = (p: string) => `<persisted-output>\nOutput too large (35KB). Full output saved to: ${p}\n\nPreview (first 2KB):\nshort\n</persisted-output>`;
    const lines = [
      { type: 'assistant', sessionId, message: { content: [{ type: 'tool_use', id: 'a', name: 'Bash', input: {} }, { type: 'tool_use', id: 'b', name: 'Bash', input: {} }] } },
      { type: 'user', sessionId, message: { content: [{ type: 'tool_result', tool_use_id: 'a', content: stub(path.join(outside, 'secret.txt')) }] } },
      { type: 'user', sessionId, message: { content: [{ type: 'tool_result', tool_use_id: 'b', content: stub(path.join(results, 'linked.txt')) }] } },
    ];
    fs.writeFileSync(path.join(dir, `${sessionId}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const { index } = await indexed(path.dirname(dir));
    const r = index.listPayloads({ limit: 10 }).rows;
    expect(r).toHaveLength(2);
    for (const row of r) {
      expect(row.action).toBe('spill');
      const c = await index.payloadContent(row.id);
      expect(c.type).toBe('text');
      expect(c.type === 'text' && c.text.includes('ZEBRAFISH')).toBe(false);
    }
    expect(index.listPayloads({ query: 'ZEBRAFISH' }).total).toBe(0);
  });
});
