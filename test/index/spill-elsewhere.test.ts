import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectRootKind, discover } from '../../src/index/discover.js';
import { spillwayPayloadPath } from '../../src/index/import-link.js';
import { importClaude } from '../../src/index/import-claude.js';
import type { ImportContext } from '../../src/index/importers.js';
import { localSource } from '../../src/index/source.js';
import { Yielder } from '../../src/index/yielder.js';
import { tmpDir, tmpIndex } from './helpers.js';

// A real hooked Claude Code session (fixtures/hook-spill-elsewhere/SOURCES.md) whose spills are in a
// folder the index was not given: the transcript holds the guard's message, not the result. Listing
// those calls as "pass" told people the whole result had gone to the model.
const ROOT = path.join(import.meta.dirname, 'fixtures', 'hook-spill-elsewhere');

describe('a transcript call the guard spilled, with the spill not in any open folder', () => {
  it('is listed as a spill at the size of what the model got, and a call that passed stays a pass', async () => {
    const yielder = new Yielder();
    const asked: string[] = [];
    const ctx: ImportContext = { source: localSource, yielder, resolveSpill: async (p) => (asked.push(p), null) };
    const found = await discover({ source: localSource, root: ROOT, kind: detectRootKind(ROOT), yielder });
    expect(found.units).toHaveLength(1);
    const { payloads } = await importClaude(ctx, found.units[0]!);
    const byTool = payloads.map((p) => ({ tool: p.tool, action: p.action, bytes: p.bytes, spilledTo: p.source?.spilledTo }));
    expect(byTool.map((p) => `${p.tool}:${p.action}`)).toEqual(['Read:spill', 'Bash:spill', 'Bash:pass']);
    expect(asked).toHaveLength(2);
    for (const p of byTool.slice(0, 2)) {
      // what is in the transcript is the message (a few KB), not the 90-100 KB result: never claimed as more
      expect(p.bytes).toBeLessThan(8_000);
      expect(p.spilledTo).toMatch(/\/long_responses\/\d{8}T\d{9}Z_(Read|Bash)_[0-9a-f]{8}_0\.(txt|json)$/);
    }
    expect(byTool[2]!.spilledTo).toBeUndefined();
  });

  it("the payload's detail names where the spill went, so the inspector can say which folder to add", async () => {
    const { index } = tmpIndex();
    index.addRoot(ROOT);
    await index.scan();
    const rows = index.listPayloads({}).rows;
    const spills = rows.filter((r) => r.action === 'spill');
    expect(spills).toHaveLength(2);
    for (const r of spills) {
      const d = await index.getPayload(r.id);
      expect(d!.source!.spilledTo).toMatch(/\/long_responses\/\d{8}T\d{9}Z_(Read|Bash)_[0-9a-f]{8}_0\.(txt|json)$/);
    }
    const pass = rows.find((r) => r.action === 'pass')!;
    expect((await index.getPayload(pass.id))!.source!.spilledTo).toBeUndefined();
    await index.close();
  });
});

// Issue 29: an `mcp__fs__spillway_grep` over an old spill quoted the spill message, and the index
// labelled the grep itself "spilled" (the check was "contains `[spillway]` and an Absolute path").
// A result is a spill only when it IS the message: the message's first words start it.
describe('a result that quotes a spill message is not a spill', () => {
  const spillPath = '/home/dev/.spillway/sessions/s1/long_responses/20261201T084321913Z_Bash_b64d6150_0.txt';
  const message = [
    '[spillway] The result of `Bash` is too large for the context: ~38,860 tokens (calibrated, claude) > limit 12,000 tokens (text, 155 KB). It was saved in full instead.',
    'Saved: long_responses/20261201T084321913Z_Bash_b64d6150_0.txt (in session /home/dev/.spillway/sessions/s1)',
    `Absolute path: ${spillPath}`,
    'Read more with your Read tool.',
  ].join('\n');
  const claudeNotice = 'Error: result (413,129 characters) exceeds maximum allowed tokens. Output has been saved to /home/dev/.claude/projects/-p/abc/tool-results/mcp-fs-read-1.txt';

  it('only the message itself (bare, in an MCP JSON wrapper, under a Codex preamble, as line 1 of a Read) names a payload', () => {
    expect(spillwayPayloadPath(message)).toBe(spillPath);
    expect(spillwayPayloadPath(JSON.stringify({ content: message }))).toBe(spillPath);
    expect(spillwayPayloadPath(JSON.stringify([{ type: 'text', text: message }]))).toBe(spillPath);
    expect(spillwayPayloadPath(`Exit code: 0\nWall time: 0.2101 seconds\nOutput:\n${JSON.stringify({ content: message })}`)).toBe(spillPath);
    expect(spillwayPayloadPath(message.split('\n').map((l, i) => `${String(i + 1).padStart(6)}\t${l}`).join('\n'))).toBe(spillPath);
    // Quotes: spillway_grep's matching lines, a cat of a log, a grep over a transcript.
    const grep = message.split('\n').map((l, i) => `${i + 12}: ${l}`).join('\n') + '\n[spillway_grep: 4 matching lines in 300]';
    expect(spillwayPayloadPath(grep)).toBeNull();
    expect(spillwayPayloadPath(`notes.md:\nlast week the agent got this:\n${message}`)).toBeNull();
    expect(spillwayPayloadPath(JSON.stringify({ content: `3- context\n${message}` }))).toBeNull();
  });

  it('in a Claude Code transcript, the grep that quotes a message and the Bash that cats one stay passes', async () => {
    const root = tmpDir('spillway-quoted-');
    const project = path.join(root, '-home-dev-project');
    fs.mkdirSync(project);
    const sessionId = '11111111-2222-4333-8444-555555555555';
    const lines: unknown[] = [{ type: 'user', sessionId, timestamp: '2026-12-01T08:00:00.000Z', message: { role: 'user', content: 'look at the spill' } }];
    const calls: Array<[string, string, unknown, string]> = [
      ['toolu_01spill', 'Bash', { command: 'cat big.log' }, message],
      ['toolu_01grep', 'mcp__fs__spillway_grep', { path: spillPath, pattern: 'spillway' }, message.split('\n').map((l, i) => `${i + 1}: ${l}`).join('\n') + '\n[spillway_grep: 4 matching lines in 4]'],
      ['toolu_01cat', 'Bash', { command: 'tail notes.md' }, `# notes\nthe agent got:\n${message}\nand then:\n${claudeNotice}`],
    ];
    let t = 1;
    for (const [id, name, input, out] of calls) {
      const ts = `2026-12-01T08:00:0${t++}.000Z`;
      lines.push({ type: 'assistant', sessionId, timestamp: ts, message: { role: 'assistant', model: 'claude-opus-5-5', content: [{ type: 'tool_use', id, name, input }] } });
      lines.push({ type: 'user', sessionId, timestamp: ts, message: { role: 'user', content: [{ tool_use_id: id, type: 'tool_result', content: out }] } });
    }
    fs.writeFileSync(path.join(project, `${sessionId}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const yielder = new Yielder();
    const asked: string[] = [];
    const ctx: ImportContext = { source: localSource, yielder, resolveSpill: async (p) => (asked.push(p), null) };
    const found = await discover({ source: localSource, root, kind: detectRootKind(root), yielder });
    const { payloads } = await importClaude(ctx, found.units[0]!);
    expect(payloads.map((p) => `${p.tool}:${p.action}`)).toEqual(['Bash:spill', 'mcp__fs__spillway_grep:pass', 'Bash:pass']);
    expect(asked).toEqual([spillPath]);
    expect(payloads[1]!.source?.spilledTo).toBeUndefined();
  });
});
