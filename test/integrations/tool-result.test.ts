import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fitSummaryInput, guardLargeResult, MAX_MESSAGE_CHARS } from '../../src/pipeline/index.js';
import { guardToolResult, mcpAwareSummarizer, shownText, summaryTextOfMcp } from '../../src/integrations/mcp/tool-result.js';
import { createSummarizer } from '../../src/summarize/index.js';
import { makeLog, tmpDir } from './helpers.js';

const bigResult = () => ({ content: [{ type: 'text', text: makeLog(200_000) }], structuredContent: { content: 'x'.repeat(10) } });

describe('guardToolResult', () => {
  it('spills with the real guard and keeps isError and _meta of the original', async () => {
    const session = tmpDir();
    const result = { ...bigResult(), isError: true, _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't1' } } };
    const out = await guardToolResult(result, { toolName: 'fetch_logs' }, { guard: guardLargeResult, session: async () => session, log: () => {} });
    expect(out).not.toBeNull();
    expect(out!.isError).toBe(true);
    expect((out!._meta as Record<string, unknown>)['io.modelcontextprotocol/related-task']).toEqual({ taskId: 't1' });
    const spill = (out!._meta as Record<string, { payloadPath: string }>)['spillway/spill']!;
    expect(JSON.parse(fs.readFileSync(spill.payloadPath, 'utf8'))).toEqual(result);
    // No outputSchema known: structuredContent is dropped, the message is the result.
    expect(out!.structuredContent).toBeUndefined();
  });

  it('never fails the call when the session folder cannot be made: a bounded message with a preview', async () => {
    const file = path.join(tmpDir(), 'a-file');
    fs.writeFileSync(file, '');
    const session = path.join(file, 'session'); // a folder under a file: mkdir fails (ENOTDIR), even for root
    const logs: string[] = [];
    const out = await guardToolResult(
      bigResult(),
      { toolName: 'fetch_logs' },
      {
        guard: guardLargeResult,
        session: async () => {
          await fs.promises.mkdir(session, { recursive: true });
          return session;
        },
        log: (m) => logs.push(m),
      },
    );
    const text = (out!.content as Array<{ text: string }>)[0]!.text;
    expect(text).toMatch(/could not be saved/);
    expect(text).toContain('INFO line 1:');
    expect(text.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(logs.join('\n')).toMatch(/ENOTDIR/);
  });

  it('the could-not-save preview never carries base64 (an image result whose session cannot be made)', async () => {
    const file = path.join(tmpDir(), 'a-file');
    fs.writeFileSync(file, '');
    const b64 = crypto.randomBytes(120_000).toString('base64');
    const out = await guardToolResult(
      { content: [{ type: 'image', data: b64, mimeType: 'image/png' }], structuredContent: { shot: b64 } },
      { toolName: 'screenshot' },
      { guard: guardLargeResult, session: async () => fs.promises.mkdir(path.join(file, 's'), { recursive: true }).then(() => ''), log: () => {} },
    );
    const text = (out!.content as Array<{ text: string }>)[0]!.text;
    expect(text).toMatch(/could not be saved/);
    expect(text).not.toContain(b64.slice(0, 200));
    expect(text).not.toMatch(/[A-Za-z0-9+/]{200}/);
    expect(text.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
  });

  it('passes a result under the limit (null)', async () => {
    const out = await guardToolResult({ content: [{ type: 'text', text: 'small' }] }, { toolName: 't' }, { guard: guardLargeResult, session: async () => tmpDir(), log: () => {} });
    expect(out).toBeNull();
  });

  it('what each client shows decides: Claude Code and Codex read structuredContent only, generic counts both', async () => {
    const result = bigResult(); // 200 KB in the text block, a tiny structuredContent
    expect(shownText(result, 'codex')).toBe(JSON.stringify(result.structuredContent));
    expect(shownText(result, 'claude-code')).toBe(JSON.stringify(result.structuredContent));
    expect(shownText(result, 'generic')).toBeUndefined();
    // Gemini CLI 0.61.0 shows the content blocks' text, not structuredContent.
    expect(shownText(result, 'gemini')).toBe(result.content[0]!.text);
    expect(shownText({ content: [{ type: 'text', text: 'a' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }] }, 'codex')).toBe('a\n[image]');
    const deps = { guard: guardLargeResult, session: async () => tmpDir(), log: () => {} };
    const ctx = { toolName: 'read_text_file', outputSchema: { validate: () => ({ valid: true }) } };
    expect(await guardToolResult(result, ctx, { ...deps, client: 'codex' })).toBeNull();
    expect(await guardToolResult(result, ctx, { ...deps, client: 'generic' })).not.toBeNull();
  });

  it('structuredContent carries the whole message (summary and advice), sized by what the client shows', async () => {
    const text = makeLog(400_000);
    const result = { content: [{ type: 'text', text }], structuredContent: { content: text } };
    const ctx = { toolName: 'read_text_file', outputSchema: { validate: (v: unknown) => ({ valid: typeof (v as { content?: unknown }).content === 'string' }) } };
    const out = await guardToolResult(result, ctx, { guard: guardLargeResult, session: async () => tmpDir(), log: () => {}, client: 'codex', readMore: 'drill-down', summarize: mcpAwareSummarizer(createSummarizer({ provider: 'structural' })) });
    const msg = (out!.content as Array<{ text: string }>)[0]!.text;
    expect(out!.structuredContent).toEqual({ content: msg });
    expect(msg).toContain('Summary (');
    expect(msg).toContain('spillway_read');
    expect(msg).not.toMatch(/\bwith Read\b|\bGrep\b/);
    // The count in the message is of what Codex would have shown (one copy of the text), not of both copies.
    const tokens = Number(/~([\d,]+) tokens/.exec(msg)![1]!.replace(/,/g, ''));
    const both = (await guardLargeResult(result, { sessionPath: tmpDir() }))!.estimate.tokens;
    expect(tokens).toBeLessThan(both * 0.6);
  });
});

describe('summaryTextOfMcp', () => {
  it('gives the text of an MCP result, whole or cut to fit the summarizer (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1, maxLength: 3000 }), fc.string({ maxLength: 200 }), (a, b) => {
        const result = { content: [{ type: 'text', text: a }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }, { type: 'text', text: b }], structuredContent: { n: 1 } };
        const json = JSON.stringify(result);
        expect(summaryTextOfMcp(json)).toBe(`${a}\n${b}`);
        // Cut the way the guard cuts (head … tail): what comes back is a prefix of the text, the marker, then text.
        const cut = fitSummaryInput(json, 200);
        const got = summaryTextOfMcp(cut);
        if (cut !== json) {
          const m = /\n… \[\d+ chars cut to fit the summarizer\] …\n/.exec(got);
          expect(m).not.toBeNull();
          expect(`${a}\n${b}`.startsWith(got.slice(0, m!.index))).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('decodes escapes and leaves non-MCP text alone', () => {
    expect(summaryTextOfMcp('{"content":[{"type":"text","text":"a\\nb\\u00e9\\"q\\""}]}')).toBe('a\nbé"q"');
    expect(summaryTextOfMcp('plain log line\nanother')).toBe('plain log line\nanother');
    expect(summaryTextOfMcp('{"rows":[1,2,3]}')).toBe('{"rows":[1,2,3]}');
    const cut = '{"content":[{"type":"text","text":"line 1\\nline 2\\nli\n… [500 chars cut to fit the summarizer] …\nne 98\\nline 99"}],"structuredContent":{"content":"x"}}';
    expect(summaryTextOfMcp(cut)).toBe('line 1\nline 2\nli\n… [500 chars cut to fit the summarizer] …\nne 98\nline 99');
  });
});
