/**
 * Codex CLI's own caps on tool results, each a rule of ../rules.ts. Shell output is cut to its head
 * and tail, MCP results likewise at their own budget; other results reach the model whole as far as we know.
 */
import { type ClientRule, type ClientRules, NOTE_TOKENS, imagesTokens, keptTokens, whole } from '../rules.js';

/** Shell output shown to the model: 10,000 tokens counted as bytes / 4, half head and half tail (no line rule). */
export const CODEX_SHELL_MAX_BYTES = 40_000;
/** An MCP result's text (with its frame) is kept to 12,000 tokens = 48,000 bytes, head and tail. */
export const CODEX_MCP_MAX_BYTES = 48_000;

const SHELL_TOOLS = new Set(['shell', 'local_shell', 'container.exec', 'exec_command', 'shell_command', 'unified_exec']);

/** Codex keeps the head and tail of a result past `maxBytes` (its token budget counted as bytes / 4), with a short note. */
const headTail = (id: string, covers: string, maxBytes: number, applies: (tool: string) => boolean, evidence: string): ClientRule => ({
  id,
  covers,
  provenance: 'observed',
  evidence,
  applies,
  give(r, provider) {
    if (r.chars <= maxBytes) return whole(r, provider);
    return { tokens: keptTokens(r, maxBytes) + NOTE_TOKENS / 3 + imagesTokens(r.images, provider), treatment: 'truncated' };
  },
});

export const CODEX_RULES: ClientRules = {
  client: 'codex',
  // No hook: only MCP results pass through Spillway (the proxy); shell output reaches the model as Codex gives it.
  guardReaches: (tool) => tool.startsWith('mcp__') || tool.includes('/'),
  rules: [
    headTail('codex.shell', 'shell, exec_command and the other shell tools', CODEX_SHELL_MAX_BYTES, (tool) => SHELL_TOOLS.has(tool), 'exec_command output over 10,000 tokens (bytes / 4 = 40,000 bytes) is cut to ~40,000 bytes of head and tail with a "truncated output" warning; 2,000 short lines pass whole, so there is no line rule (observed in 0.171.0, test/clients/client-rules.test.ts)'),
    headTail('codex.mcp', 'MCP tools', CODEX_MCP_MAX_BYTES, (tool) => tool.startsWith('mcp__') || tool.includes('/'), 'an MCP result\'s text, with its "Wall time … Output:" frame, is kept to 12,000 tokens (48,000 bytes), head and tail, with "…N tokens truncated…" (observed in 0.171.0, test/clients/client-rules.test.ts)'),
    {
      id: 'codex.tool',
      covers: 'every other tool',
      provenance: 'inferred',
      evidence: 'no cap on other tools seen or reported: passed whole',
      applies: () => true,
      give: whole,
    },
  ],
};
