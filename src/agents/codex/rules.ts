/**
 * Codex CLI's own caps on tool results, each a rule of ../rules.ts. Shell output is cut to its head
 * and tail, MCP results likewise at their own budget; other results reach the model whole as far as we know.
 */
import { type ClientRules, NOTE_TOKENS, imagesTokens, keptTokens, whole } from '../rules.js';

/** Shell output shown to the model: 10,000 tokens counted as bytes / 4, half head and half tail (no line rule). */
export const CODEX_SHELL_MAX_BYTES = 40_000;
/** An MCP result's text (with its frame) is kept to 12,000 tokens = 48,000 bytes, head and tail. */
export const CODEX_MCP_MAX_BYTES = 48_000;

const SHELL_TOOLS = new Set(['shell', 'local_shell', 'container.exec', 'exec_command', 'shell_command', 'unified_exec']);

export const CODEX_RULES: ClientRules = {
  client: 'codex',
  rules: [
    {
      id: 'codex.shell',
      covers: 'shell, exec_command and the other shell tools',
      provenance: 'observed',
      evidence: 'exec_command output over 10,000 tokens (bytes / 4 = 40,000 bytes) is cut to ~40,000 bytes of head and tail with a "truncated output" warning; 2,000 short lines pass whole, so there is no line rule (observed in 0.171.0, test/clients/client-rules.test.ts)',
      applies: (tool) => SHELL_TOOLS.has(tool),
      give(r, provider) {
        if (r.chars <= CODEX_SHELL_MAX_BYTES) return whole(r, provider);
        return { tokens: keptTokens(r, CODEX_SHELL_MAX_BYTES) + NOTE_TOKENS / 3 + imagesTokens(r.images, provider), treatment: 'truncated' };
      },
    },
    {
      id: 'codex.mcp',
      covers: 'MCP tools',
      provenance: 'observed',
      evidence: 'an MCP result\'s text, with its "Wall time … Output:" frame, is kept to 12,000 tokens (48,000 bytes), head and tail, with "…N tokens truncated…" (observed in 0.171.0, test/clients/client-rules.test.ts)',
      applies: (tool) => tool.startsWith('mcp__') || tool.includes('/'),
      give(r, provider) {
        if (r.chars <= CODEX_MCP_MAX_BYTES) return whole(r, provider);
        return { tokens: keptTokens(r, CODEX_MCP_MAX_BYTES) + NOTE_TOKENS / 3 + imagesTokens(r.images, provider), treatment: 'truncated' };
      },
    },
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
