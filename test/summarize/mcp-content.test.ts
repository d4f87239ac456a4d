/**
 * An MCP result saved by the proxy (the whole CallToolResult envelope) is summarised, projected and
 * shown as a tree by its content, as the guard read it: `spillway summarize` (summarizeText) and
 * the inspector's re-run (every createSummarizer summarizer) give the guard's own summary, not
 * `JSON object … $.content[*].text 50%, $.structuredContent.content 50%`.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { guardLargeResult } from '../../src/pipeline/index.js';
import type { PayloadMeta } from '../../src/pipeline/types.js';
import { guardToolResult, mcpAwareSummarizer } from '../../src/integrations/mcp/tool-result.js';
import { createSummarizer, mcpContentText, mcpContentValue } from '../../src/summarize/index.js';
import { applyProjection, suggestProjectionFor, summarizeText } from '../../src/service/offline.js';
import { treeValueOf } from '../../app/lib/mcp.js';
import { tmpDir } from '../integrations/helpers.js';

const rows = Array.from({ length: 3000 }, (_, i) => ({ id: i, name: `item-${i}`, price: Math.round(i * 7.3) / 10, tags: ['a', i % 2 ? 'odd' : 'even'] }));
const text = JSON.stringify(rows);
/** What @modelcontextprotocol/server-filesystem's read_text_file returns for a JSON file. */
const envelope = { content: [{ type: 'text', text }], structuredContent: { content: text } };

async function spilled(): Promise<{ saved: string; meta: PayloadMeta }> {
  const out = await guardToolResult(envelope, { toolName: 'read_text_file' }, {
    guard: guardLargeResult,
    session: async () => tmpDir(),
    log: () => {},
    client: 'codex',
    summarize: mcpAwareSummarizer(createSummarizer({ provider: 'structural' })),
  });
  const spill = (out!._meta as Record<string, { payloadPath: string; metaPath: string }>)['spillway/spill']!;
  return { saved: fs.readFileSync(spill.payloadPath, 'utf8'), meta: JSON.parse(fs.readFileSync(spill.metaPath, 'utf8')) as PayloadMeta };
}

describe('an MCP result is read by its content', () => {
  it('spillway summarize of the saved envelope gives the guard\'s summary: a schema of the rows', async () => {
    const { saved, meta } = await spilled();
    expect(JSON.parse(saved)).toEqual(envelope);
    const guard = meta.summaryRuns[0]!.summary;
    expect(guard).toMatch(/JSON array of 3,000 items/);
    const cli = await summarizeText({ provider: 'structural', text: saved, signal: new AbortController().signal });
    expect(cli.summary).toBe(guard);
    expect(cli.summary).not.toContain('$.content[*].text');
    expect(cli.summary).not.toContain('$.structuredContent');
  });

  it('leaves JSON that only looks like blocks alone: a tool\'s own data with extra keys, or untyped items', () => {
    const data = JSON.stringify({ content: [{ type: 'text', text: 'x' }], page: 2 });
    expect(mcpContentText(data)).toBe(data);
    const untyped = JSON.stringify([{ text: 'x' }]);
    expect(mcpContentText(untyped)).toBe(untyped);
    expect(mcpContentText(JSON.stringify(envelope))).toBe(text);
  });

  it('projection (spillway project) works on the rows, not on the envelope', async () => {
    const { saved } = await spilled();
    const value = JSON.parse(saved) as unknown;
    expect(mcpContentValue(value)).toEqual(rows);
    const s = suggestProjectionFor(saved, value);
    expect(JSON.stringify(s.spec)).not.toContain('content');
    const p = applyProjection(saved, value, { keep: ['$[*].id'] });
    expect(p.value).toEqual(rows.map((r) => ({ id: r.id })));
  });

  it('the tree shows the rows, not one escaped string', async () => {
    const { saved } = await spilled();
    const t = treeValueOf(JSON.parse(saved));
    expect(t.value).toEqual(rows);
    expect(t.note).toMatch(/MCP tool result/);
    expect(treeValueOf({ a: 1 })).toEqual({ value: { a: 1 } });
  });
});
