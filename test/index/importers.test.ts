import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { countExact } from '../../src/pipeline/estimate/internal.js';
import { CLAUDE_PROJECTS, FIXTURES, REPO, copyTree, tmpDir, tmpIndex } from './helpers.js';
import { tmpTimelines } from '../timeline/helpers.js';

// Expected counts come from the fixtures' SOURCES.md (tool_use / tool_result pairs per file).
const PHANTOM = '-Users-gray-Projects-claude-bug/637ef6e7-e740-4503-8ff8-5780d7c0918f';
const EXPECTED: Record<string, number> = {
  'sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b': 167,
  [PHANTOM]: 19,
  [`${PHANTOM}/subagents/agent-a4d534b`]: 7,
  '-Users-dain-workspace-danieldemmel-me-next/4379d1bf-ccb1-414e-a856-9791b73f3af2': 2,
  '-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1': 40,
};
const PERSISTED_ID = 'toolu_01PRASLbbpSRmj2CjAaB1NP4';
const SPOTTER_ID = 'toolu_019CpL49DWBenUxVVCWEXz3L';

function sessionsByName(index: ReturnType<typeof tmpIndex>['index']) {
  return new Map(index.listSessions().map((s) => [s.name, s]));
}

describe('Claude Code import (real transcripts)', () => {
  it('detects a .claude/projects folder and imports every tool_result with its tool_use', async () => {
    const home = tmpDir();
    const projects = copyTree(CLAUDE_PROJECTS, path.join(home, '.claude', 'projects'));
    const { index } = tmpIndex();
    const root = index.addRoot(projects);
    expect(root.kind).toBe('claude-projects');
    const stats = await index.scan();
    expect(stats.warnings).toEqual([]);
    const byName = sessionsByName(index);
    for (const [name, n] of Object.entries(EXPECTED)) {
      const s = byName.get(name);
      expect(s, name).toBeDefined();
      expect(s!.kind).toBe('claude-code');
      expect(s!.readOnly).toBe(true);
      expect(s!.payloadCount, name).toBe(n);
    }
    // Every result was linked to its call: no "unknown" tools in complete transcripts.
    for (const name of Object.keys(EXPECTED)) {
      const rows = index.listPayloads({ sessionId: byName.get(name)!.id, limit: 1000 }).rows;
      expect(rows.filter((r) => r.tool === 'unknown'), name).toEqual([]);
    }
    const sample = index.listPayloads({ sessionId: byName.get('sample-project/fe5e1c67-53e7-4862-81ae-d0e013e3270b')!.id, sort: { field: 'bytes', dir: 'desc' }, limit: 1 });
    // Largest tool_result is 26,746 chars; the fuller of content/toolUseResult may be larger, never smaller.
    expect(sample.rows[0]!.bytes).toBeGreaterThanOrEqual(26_746);
  });

  it('a tool result the fit misprices (Amharic) gets its real token count, in the list and the waste report', async () => {
    const home = tmpDir();
    const dir = path.join(home, '.claude', 'projects', '-home-greek');
    fs.mkdirSync(dir, { recursive: true });
    const greek = JSON.parse(fs.readFileSync(path.join(REPO, 'test', 'estimate', 'fixtures', 'more-scripts.json'), 'utf8')).am as string;
    const text = (greek + '\n').repeat(4);
    const sessionId = '0b5a3c1e-0000-4000-8000-000000000001';
    const lines = [
      { type: 'assistant', sessionId, timestamp: '2026-11-30T10:00:00.000Z', message: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_greek', name: 'WebFetch', input: { url: 'https://example.gr' } }] } },
      { type: 'user', sessionId, timestamp: '2026-11-30T10:00:01.000Z', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_greek', content: text }] } },
    ];
    fs.writeFileSync(path.join(dir, `${sessionId}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const { index, timelines } = tmpTimelines();
    index.addRoot(path.join(home, '.claude', 'projects'));
    await index.scan();
    const row = index.listPayloads({ limit: 5 }).rows[0]!;
    const truth = await countExact(text, 'o200k');
    expect(row.tool).toBe('WebFetch');
    expect(row.tokens).toBe(truth);
    const d = await index.getPayload(row.id);
    expect(d.estimates.o200k).toBe(truth);
    expect(d.estimates.calibrated).toBeLessThan(truth * 0.8); // the fit alone: Amharic at ~0.74x
    expect((await timelines.wasteReport({ sessionId: row.sessionId })).biggest[0]!.fullTokens ?? (await timelines.wasteReport({ sessionId: row.sessionId })).biggest[0]!.tokens).toBe(truth);
  });

  it('reads a <persisted-output> stub from its tool-results spill file, linked to the Grep call', async () => {
    const home = tmpDir();
    const projects = copyTree(CLAUDE_PROJECTS, path.join(home, 'projects'));
    const { index } = tmpIndex();
    index.addRoot(projects);
    await index.scan();
    const s = sessionsByName(index).get(PHANTOM)!;
    const rows = index.listPayloads({ sessionId: s.id, tool: 'Grep', limit: 100 }).rows;
    expect(rows).toHaveLength(4);
    const big = rows.find((r) => r.action === 'spill')!;
    expect(big).toBeDefined();
    const detail = await index.getPayload(big.id);
    const spillFile = path.join(projects, PHANTOM, 'tool-results', `${PERSISTED_ID}.txt`);
    expect(detail.path).toBe(spillFile);
    expect(detail.source?.toolUseId).toBe(PERSISTED_ID);
    expect(detail.source?.line).toBe(51);
    expect(detail.source?.toolInput).toMatchObject({ pattern: expect.any(String) });
    expect(detail.message.startsWith('<persisted-output>')).toBe(true);
    const content = await index.payloadContent(big.id);
    expect(content).toEqual({ type: 'file', path: spillFile, bytes: 85_795 });
    expect(fs.readFileSync(spillFile, 'utf8')).toHaveLength(85_713);

    // Without the spill file, the line's toolUseResult.content still holds the whole output.
    fs.rmSync(spillFile);
    await index.scan();
    const again = index.listPayloads({ sessionId: s.id, tool: 'Grep', limit: 100 }).rows.find((r) => r.action === 'spill')!;
    expect(again.id).toBe(big.id);
    const text = await index.payloadContent(again.id);
    expect(text.type).toBe('text');
    expect(text.type === 'text' && text.text.length).toBe(85_713);
  });

  it('takes toolUseResult.stdout when content is only a stub (spotter excerpt, spill file absent)', async () => {
    const { index } = tmpIndex();
    index.addRoot(path.join(CLAUDE_PROJECTS, '-home-USER-projects-spotter-worktrees-spotter-fum'));
    await index.scan();
    const rows = index.listPayloads({ tool: 'Bash', limit: 100 }).rows;
    const stub = rows.find((r) => r.action === 'spill')!;
    const detail = await index.getPayload(stub.id);
    expect(detail.source?.toolUseId).toBe(SPOTTER_ID);
    const content = await index.payloadContent(stub.id);
    expect(content.type === 'text' && content.text.length).toBe(144_356);
    expect(detail.message.length).toBe(2_250);
  });

  it('skips a 500 KB pasted-image line and unknown record types without failing', async () => {
    const { index } = tmpIndex();
    index.addRoot(path.join(CLAUDE_PROJECTS, '-Users-dain-workspace-danieldemmel-me-next', '4379d1bf-ccb1-414e-a856-9791b73f3af2.jsonl'));
    const stats = await index.scan();
    expect(stats.payloads).toBe(2);
    expect(stats.warnings).toEqual([]);
    const { index: i2 } = tmpIndex();
    i2.addRoot(path.join(CLAUDE_PROJECTS, '-experiments-worktrees'));
    const s2 = await i2.scan();
    expect(s2.payloads).toBe(40);
    expect(s2.warnings).toEqual([]);
  });

  it('re-reads an inline result exactly from its transcript line', async () => {
    const { index } = tmpIndex();
    const file = path.join(CLAUDE_PROJECTS, 'sample-project', 'fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl');
    index.addRoot(file);
    await index.scan();
    // Independently: the longest string tool_result content in the file.
    let longest = '';
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      if (!line.includes('"tool_result"')) continue;
      const o = JSON.parse(line);
      for (const b of o.message?.content ?? []) {
        if (b.type === 'tool_result' && typeof b.content === 'string' && b.content.length > longest.length) longest = b.content;
      }
    }
    expect(longest.length).toBe(26_746);
    const hit = index.listPayloads({ sort: { field: 'bytes', dir: 'desc' }, limit: 5 }).rows;
    const texts = await Promise.all(hit.map(async (r) => index.payloadContent(r.id)));
    expect(texts.some((t) => t.type === 'text' && (t.text === longest || t.text.length >= longest.length))).toBe(true);
  });
});

describe('Codex and Gemini import', () => {
  it('links 102 Codex outputs to their calls by call_id', async () => {
    const { index } = tmpIndex();
    const file = path.join(FIXTURES, 'codex', 'rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl');
    index.addRoot(file);
    const stats = await index.scan();
    expect(stats.payloads).toBe(102);
    const [session] = index.listSessions();
    expect(session!.kind).toBe('codex');
    const rows = index.listPayloads({ limit: 1000 }).rows;
    // SOURCES.md: 99 function_call (exec_command, and the write_stdin/update_plan calls around them) + 3 custom apply_patch.
    expect(rows.filter((r) => r.tool === 'apply_patch')).toHaveLength(3);
    expect(rows.filter((r) => r.tool !== 'apply_patch')).toHaveLength(99);
    expect(rows.filter((r) => r.tool === 'exec_command').length).toBeGreaterThan(0);
    expect(rows.filter((r) => r.tool === 'unknown')).toEqual([]);
    let longest = { id: '', chars: 0 };
    for (const r of rows) {
      const c = await index.payloadContent(r.id);
      const chars = c.type === 'text' ? c.text.length : 0;
      if (chars > longest.chars) longest = { id: r.id, chars };
    }
    expect(longest.chars).toBe(40_157);
    const detail = await index.getPayload(longest.id);
    // arguments arrive as a JSON string and are parsed back into the call's input.
    expect(typeof detail.source?.toolInput).toBe('object');
    expect(detail.row.inputExcerpt).toBeTruthy();
  });

  it('imports 10 Gemini tool calls with name and args', async () => {
    const { index } = tmpIndex();
    index.addRoot(path.join(FIXTURES, 'gemini', 'session-2025-12-01T21-45-5b959dae.json'));
    const stats = await index.scan();
    expect(stats.payloads).toBe(10);
    expect(index.listSessions()[0]!.kind).toBe('gemini');
    const rows = index.listPayloads({ limit: 100 }).rows;
    expect(rows.some((r) => r.tool === 'list_directory')).toBe(true);
    for (const r of rows) {
      const c = await index.payloadContent(r.id);
      expect(c.type).toBe('text');
      // Longest result in the file is 14,536 chars of JSON; the output text is never longer.
      expect(c.bytes).toBeLessThanOrEqual(14_536 * 3);
    }
  });

  it('indexes the whole fixture folder: every agent, no failures', async () => {
    const { index } = tmpIndex();
    index.addRoot(FIXTURES);
    const stats = await index.scan();
    const total = Object.values(EXPECTED).reduce((a, b) => a + b, 0) + 4 /* spotter excerpt */ + 102 + 10;
    expect(stats.payloads).toBe(total);
    expect(stats.sessions).toBe(8);
  });
});
