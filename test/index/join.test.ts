/**
 * The join of a transcript's tool call with the spill Spillway made for it (src/index/join.ts), on
 * the transcript Claude Code 2.1.328 wrote behind `spillway mcp` (fixtures/real, scenario
 * proxy-read-text-file-and-grep). That transcript's message names a payload under the run's own
 * temp HOME, outside every root here, so no path join can happen: the spill written for these
 * tests joins by its sidecar's `toolCallId`, or, without one, by inference (same tool under
 * the `mcp__fs__` prefix, same arguments, the transcript's result shortly after the spill).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { handleLargeResponse } from '../../src/pipeline/index.js';
import { INFERRED_JOIN_AFTER_MS } from '../../src/index/join.js';
import { REPO, copyTree, tmpDir, tmpIndex } from './helpers.js';

const SCENARIO = path.join(REPO, 'test', 'index', 'fixtures', 'real', 'claude-code', 'proxy-read-text-file-and-grep');
/** What the model asked for in that run (the transcript's tool_use input). */
const INPUT = { path: '/tmp/spillway-cc-proxy-cwd-0FkHgX/data/rows.csv' };
/** When the proxy spilled in that run (the payload's name in the transcript: 20261201T084321913Z_…); the result line is 08:43:22.054Z. */
const SPILLED_AT = new Date('2026-12-01T08:43:21.913Z');
/** A word only the spill's content holds (never in Spillway's message, the preview or the summary's head). */
const INSIDE = 'quetzalcoatl7731';

function csv(): string {
  const rows = Array.from({ length: 6000 }, (_, i) => `row ${i},${(i * 0.731).toFixed(3)},label-${i % 97}`);
  rows[5] = `row 5,${INSIDE},label-0`;
  return rows.join('\n');
}

/** A proxy session the way `spillway mcp --client claude-code` writes it: the call's client recorded, its id only when the client sent one. */
async function proxySpill(sessions: string, o: { toolCallId?: string; at?: Date; input?: unknown }): Promise<void> {
  const res = await handleLargeResponse({
    text: csv(),
    sessionPath: path.join(sessions, '20261201T084321140Z_secure-filesystem-server'),
    context: { toolName: 'read_text_file', toolInput: o.input ?? INPUT, call: { client: 'claude-code', ...(o.toolCallId ? { toolCallId: o.toolCallId } : {}) } },
    now: () => o.at ?? SPILLED_AT,
  });
  expect(res.payloadPath).toBeTruthy();
}

async function indexed(o: Parameters<typeof proxySpill>[1]) {
  const home = tmpDir();
  const transcripts = copyTree(SCENARIO, path.join(home, 'projects'));
  const sessions = path.join(home, 'sessions');
  await proxySpill(sessions, o);
  const { index } = tmpIndex();
  index.addRoot(transcripts);
  index.addRoot(sessions);
  const res = await index.scan();
  expect(res.warnings).toEqual([]);
  return index;
}

describe('the join of a transcript call with its spill', () => {
  it('inferred: a spill whose client sent no id joins the call of the same tool and arguments made just after it', async () => {
    const index = await indexed({});
    const [row, ...more] = index.listPayloads({ tool: 'mcp__fs__read_text_file' }).rows;
    expect(more).toEqual([]);
    expect(row).toMatchObject({ join: 'inferred', action: 'spill', bytes: Buffer.byteLength(csv()) });
    // One row per call over the roots: the spill is the transcript's row, not a second one.
    expect(index.listPayloads({ tool: 'read_text_file' }).total).toBe(0);
    const d = await index.getPayload(row!.id);
    expect(d.spill?.how).toBe('inferred');
    expect(d.meta?.toolCallId).toBeUndefined();
    expect(d.source?.toolUseId).toBe('toolu_01proxyread');
    const own = index.listSessions().find((s) => s.kind === 'spillway')!;
    expect(index.listPayloads({ sessionId: own.id }).rows[0]!.joinedTo).toBe(row!.id);
  });

  it('inferred: not with other arguments, nor long after the call', async () => {
    for (const o of [{ input: { path: '/tmp/spillway-cc-proxy-cwd-0FkHgX/data/other.csv' } }, { at: new Date(SPILLED_AT.getTime() - INFERRED_JOIN_AFTER_MS - 60_000) }]) {
      const index = await indexed(o);
      const [row] = index.listPayloads({ tool: 'mcp__fs__read_text_file' }).rows;
      expect(row!.join, JSON.stringify(o)).toBeUndefined();
      expect(index.listPayloads({ tool: 'read_text_file' }).total).toBe(1);
    }
  });

  it('by id: the sidecar’s toolCallId is the transcript’s tool_use id', async () => {
    const index = await indexed({ toolCallId: 'toolu_01proxyread', at: new Date(SPILLED_AT.getTime() - 3 * INFERRED_JOIN_AFTER_MS) });
    const [row] = index.listPayloads({ tool: 'mcp__fs__read_text_file' }).rows;
    expect(row!.join).toBe('id');
  });

  for (const how of ['id', 'inferred'] as const) {
    it(`full-text search finds a word inside a spill joined ${how === 'id' ? 'by id' : 'by inference'}, on the joined row, with a snippet of the spill`, async () => {
      const index = await indexed(how === 'id' ? { toolCallId: 'toolu_01proxyread' } : {});
      const [row] = index.listPayloads({ tool: 'mcp__fs__read_text_file' }).rows;
      expect(row!.join).toBe(how);
      const found = index.listPayloads({ query: INSIDE });
      expect(found.rows.map((r) => r.id)).toEqual([row!.id]);
      expect(found.total).toBe(1);
      expect(found.rows[0]!.snippet).toContain(INSIDE);
      // The spill's own session still finds it on the spill's row.
      const own = index.listSessions().find((s) => s.kind === 'spillway')!;
      expect(index.listPayloads({ query: INSIDE, sessionId: own.id }).rows.map((r) => r.joinedTo)).toEqual([row!.id]);
      // The transcript's session, filtered, finds it too.
      expect(index.listPayloads({ query: INSIDE, sessionId: row!.sessionId }).rows.map((r) => r.id)).toEqual([row!.id]);
    });
  }
});
