/**
 * What the model is told must work with the tools its client has: the read-more advice, the size
 * and the tokenizer the message names.
 */
import { describe, expect, it } from 'vitest';
import { fmtBytes, guardLargeResult } from '../../src/pipeline/index.js';
import { readMoreAdvice } from '../../src/pipeline/message.js';
import { guardToolResult } from '../../src/integrations/mcp/tool-result.js';
import { clientProfile } from '../../src/cli/commands/mcp.js';
import { guardWith } from '../../src/integrations/options.js';
import { tmpDir } from './helpers.js';

const textOf = (out: Record<string, unknown> | null) => (out!.content as Array<{ text: string }>)[0]!.text;

describe('the read-more advice for Claude Code', () => {
  it('leads with Read and grep in Bash (offered in every setup of 2.1.328 seen), and names Grep only as "if you have it"', () => {
    const a = readMoreAdvice('claude-code');
    expect(a).toMatch(/^Read more: open the absolute path with Read \(offset\/limit/);
    expect(a).toContain('`grep -n "<pattern>" <path>` with Bash');
    // Grep is named only conditionally: 2.1.328 offers it only when --allowedTools/--tools names it.
    expect(a.replace(/\(or use the Grep tool, if you have it\)/, '')).not.toMatch(/\bGrep\b/);
  });
});

describe('behind `spillway mcp --client claude-code`', () => {
  // An MCP result as server-filesystem's read_text_file gives it: the file in a text block AND in structuredContent.
  const file = Array.from({ length: 30_000 }, (_, i) => `{"row":${i},"label":"item-${i % 97}"}`).join('\n');
  const result = { content: [{ type: 'text', text: file }], structuredContent: { content: file } };

  it('the size in the message is what Claude Code shows (the serialized structuredContent), not text + structuredContent', async () => {
    const out = await guardToolResult(result, { toolName: 'read_text_file' }, { guard: guardLargeResult, client: 'claude-code', session: async () => tmpDir(), log: () => {} });
    const msg = textOf(out);
    const shown = Buffer.byteLength(JSON.stringify(result.structuredContent));
    const whole = Buffer.byteLength(JSON.stringify(result));
    expect(fmtBytes(whole)).not.toBe(fmtBytes(shown));
    expect(msg).toContain(`(json, ${fmtBytes(shown)} as the client shows it; the whole result saved is ${fmtBytes(whole)})`);
  });

  it('the tokenizer follows the client: claude for Claude Code, o200k for Codex and unknown clients', async () => {
    expect(clientProfile('claude-code')).toBe('claude');
    expect(clientProfile('codex')).toBe('o200k');
    expect(clientProfile(undefined)).toBe('o200k');
    const out = await guardToolResult(result, { toolName: 'read_text_file' }, { guard: guardWith({}, clientProfile('claude-code')), client: 'claude-code', session: async () => tmpDir(), log: () => {} });
    expect(textOf(out)).toMatch(/~[\d,]+ tokens \([a-z0-9-]+(, exact| estimate), claude\)/);
  });
});
