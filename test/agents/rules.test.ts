import { describe, expect, it } from 'vitest';
import { CLIENT_RULES, clientGives, type ResultShape } from '../../src/agents/index.js';
import { CLAUDE_BASH_PERSIST_CHARS, CLAUDE_MCP_MAX_TOKENS } from '../../src/agents/claude-code/rules.js';

const text = (tool: string, chars: number, lines = Math.ceil(chars / 80)): ResultShape => ({ tool, chars, tokens: Math.ceil(chars / 4), lines, images: [] });

describe('client rules as data', () => {
  it('every rule names its provenance and its evidence, ids are unique, and each client ends with a catch-all', () => {
    const ids = new Set<string>();
    for (const [client, r] of Object.entries(CLIENT_RULES)) {
      expect(r.rules.length).toBeGreaterThan(0);
      for (const rule of r.rules) {
        expect(['observed', 'reported', 'inferred']).toContain(rule.provenance);
        expect(rule.evidence.length, rule.id).toBeGreaterThan(20);
        expect(rule.id.startsWith(client === 'gemini' ? 'gemini-cli.' : `${client}.`), rule.id).toBe(true);
        expect(ids.has(rule.id)).toBe(false);
        ids.add(rule.id);
      }
      expect(r.rules[r.rules.length - 1]!.applies('SomeToolNobodyKnows')).toBe(true);
    }
  });
});

describe('Claude Code', () => {
  it('Bash over 30,000 characters becomes a ~2,000-character preview; under it, whole', () => {
    const small = clientGives('claude-code', text('Bash', CLAUDE_BASH_PERSIST_CHARS), 'claude-sonnet-4-5');
    expect(small).toMatchObject({ tokens: CLAUDE_BASH_PERSIST_CHARS / 4, treatment: 'whole', ruleId: 'claude-code.bash' });
    const big = clientGives('claude-code', text('Bash', 400_000));
    expect(big.treatment).toBe('persisted');
    expect(big.tokens).toBeLessThan(1_000);
    expect(big.tokens).toBeGreaterThan(400);
  });

  it('Grep persists at 20,000, other tools at 50,000', () => {
    expect(clientGives('claude-code', text('Grep', 25_000)).treatment).toBe('persisted');
    expect(clientGives('claude-code', text('WebFetch', 25_000)).treatment).toBe('whole');
    expect(clientGives('claude-code', text('WebFetch', 60_000))).toMatchObject({ treatment: 'persisted', ruleId: 'claude-code.tool' });
  });

  it('MCP over MAX_MCP_OUTPUT_TOKENS is a notice, over 50,000 characters a preview; Read over 256 KB is an error, over 25,000 tokens the lines that fit', () => {
    const mcp = clientGives('claude-code', { ...text('mcp__fs__read_text_file', 0), tokens: CLAUDE_MCP_MAX_TOKENS + 1, chars: 120_000 });
    expect(mcp).toMatchObject({ treatment: 'persisted', ruleId: 'claude-code.mcp' });
    expect(mcp.tokens).toBeLessThan(500); // the ~1,750-character notice, no preview
    expect(clientGives('claude-code', { ...text('mcp__fs__read_text_file', 0), tokens: 20_000, chars: 60_000 })).toMatchObject({ treatment: 'persisted', ruleId: 'claude-code.mcp' });
    expect(clientGives('claude-code', { ...text('mcp__fs__read_text_file', 0), tokens: 12_000, chars: 48_000 }).treatment).toBe('whole');
    const read = clientGives('claude-code', { ...text('Read', 0), tokens: 70_000, chars: 280_000 });
    expect(read).toMatchObject({ treatment: 'error', ruleId: 'claude-code.read' });
    const cut = clientGives('claude-code', { ...text('Read', 0), tokens: 40_000, chars: 200_000 });
    expect(cut).toMatchObject({ treatment: 'truncated', ruleId: 'claude-code.read' });
    expect(cut.tokens).toBeGreaterThan(25_000);
    expect(cut.tokens).toBeLessThan(25_200);
  });

  it('an image Read costs its pixels, not its base64', () => {
    const r = clientGives('claude-code', { tool: 'Read', chars: 0, tokens: 0, lines: 0, images: [{ size: { width: 3013, height: 1561 }, bytes: 700_000 }] }, 'claude-opus-4');
    expect(r.tokens).toBeGreaterThan(1_500);
    expect(r.tokens).toBeLessThan(1_600);
  });
});

describe('Codex and Gemini CLI', () => {
  it('Codex cuts shell output past 40,000 bytes (no line rule) and MCP past 48,000; other tools pass whole', () => {
    expect(clientGives('codex', text('shell', 39_000, 50)).treatment).toBe('whole');
    const cut = clientGives('codex', text('exec_command', 100_000, 100));
    expect(cut.treatment).toBe('truncated');
    expect(cut.tokens).toBeLessThan(11_000);
    expect(clientGives('codex', text('shell', 8_000, 2_000)).treatment).toBe('whole');
    expect(clientGives('codex', text('mcp__fs__read', 47_000)).treatment).toBe('whole');
    expect(clientGives('codex', text('mcp__fs__read', 100_000))).toMatchObject({ treatment: 'truncated', ruleId: 'codex.mcp' });
    expect(clientGives('codex', text('view_image', 100_000)).treatment).toBe('whole');
  });

  it('Gemini CLI keeps 40,000 characters of a big shell output, as its code says', () => {
    const g = clientGives('gemini', text('run_shell_command', 400_000));
    expect(g).toMatchObject({ treatment: 'truncated', provenance: 'inferred' });
    expect(g.tokens).toBeGreaterThan(10_000);
    expect(g.tokens).toBeLessThan(10_100);
    expect(clientGives('gemini', text('read_file', 400_000)).treatment).toBe('whole');
  });

  it('a client without rules passes the result whole and says so', () => {
    expect(clientGives(undefined, text('x', 1_000))).toMatchObject({ treatment: 'whole', ruleId: 'unknown.whole', provenance: 'inferred' });
  });
});
