/**
 * Claude Code's own caps on tool results (as 2.1.x handles them), each a rule of ../rules.ts.
 * Thresholds are in characters of the result's text, except MCP and Read (tokens). Each is
 * `observed` in Claude Code 2.1.328 by test/clients/client-rules.test.ts (docs/client-rules.md has the
 * exact shapes) unless it says otherwise.
 */
import { type ClientRule, type ClientRules, NOTE_TOKENS, imagesTokens, keptTokens, whole } from '../rules.js';

/** Bash output over this many characters is saved to a file; the model gets a preview. */
export const CLAUDE_BASH_PERSIST_CHARS = 30_000;
/** Grep's threshold. */
export const CLAUDE_GREP_PERSIST_CHARS = 20_000;
/** Other built-in tools' threshold. */
export const CLAUDE_TOOL_PERSIST_CHARS = 50_000;
/** The preview a persisted output shows (its first ~2 KB). */
export const CLAUDE_PREVIEW_CHARS = 2_000;
/** MAX_MCP_OUTPUT_TOKENS' default: an MCP result over it is saved to a file, the model gets a notice. */
export const CLAUDE_MCP_MAX_TOKENS = 25_000;
/** Read's token cap: the model gets the first lines that fit it, and a system note on how to page on. */
export const CLAUDE_READ_MAX_TOKENS = 25_000;
/** Read refuses a file over this many bytes with an error (offset and limit, or allow_large). */
export const CLAUDE_READ_MAX_BYTES = 262_144;
/** MCP's token notice ("exceeds maximum allowed tokens. Output has been saved to …"): ~1,750 characters, no preview. */
const MCP_NOTICE_TOKENS = 440;

const persisted = (id: string, covers: string, threshold: number, applies: (tool: string) => boolean, evidence: string, provenance: ClientRule['provenance'] = 'observed'): ClientRule => ({
  id,
  covers,
  provenance,
  evidence,
  applies,
  give(r, provider) {
    if (r.chars <= threshold) return whole(r, provider);
    return { tokens: keptTokens(r, CLAUDE_PREVIEW_CHARS) + NOTE_TOKENS + imagesTokens(r.images, provider), treatment: 'persisted' };
  },
});

export const CLAUDE_CODE_RULES: ClientRules = {
  client: 'claude-code',
  // The PostToolUse hook `spillway setup claude-code` installs sees every tool's result.
  guardReaches: () => true,
  rules: [
    {
      id: 'claude-code.read',
      covers: 'Read',
      provenance: 'observed',
      evidence: 'Read of a file over 262,144 bytes is refused with an error; over 25,000 tokens the model gets the first lines that fit the cap and a system note "[Truncated: PARTIAL view …]" (not an error); an image is sent as an image block scaled to fit 2,000 px (observed in 2.1.328, test/clients/client-rules.test.ts)',
      applies: (tool) => tool === 'Read',
      give(r, provider) {
        // Text only: an image Read is judged by its pixels, not by this size.
        if (r.chars > CLAUDE_READ_MAX_BYTES) return { tokens: NOTE_TOKENS + imagesTokens(r.images, provider), treatment: 'error' };
        if (r.tokens > CLAUDE_READ_MAX_TOKENS) return { tokens: CLAUDE_READ_MAX_TOKENS + NOTE_TOKENS + imagesTokens(r.images, provider), treatment: 'truncated' };
        return whole(r, provider);
      },
    },
    {
      id: 'claude-code.mcp',
      covers: 'MCP tools (mcp__<server>__<tool>)',
      provenance: 'observed',
      evidence: 'MAX_MCP_OUTPUT_TOKENS (default 25,000), checked first: a bigger result is saved to tool-results/ and the model gets a ~1,750-character notice with no preview; else over 50,000 characters it is persisted with a 2,000-character preview (observed in 2.1.328, test/clients/client-rules.test.ts)',
      applies: (tool) => tool.startsWith('mcp__'),
      give(r, provider) {
        if (r.tokens > CLAUDE_MCP_MAX_TOKENS) return { tokens: MCP_NOTICE_TOKENS + imagesTokens(r.images, provider), treatment: 'persisted' };
        if (r.chars > CLAUDE_TOOL_PERSIST_CHARS) return { tokens: keptTokens(r, CLAUDE_PREVIEW_CHARS) + NOTE_TOKENS + imagesTokens(r.images, provider), treatment: 'persisted' };
        return whole(r, provider);
      },
    },
    persisted('claude-code.bash', 'Bash', CLAUDE_BASH_PERSIST_CHARS, (t) => t === 'Bash', 'Bash output over 30,000 characters is persisted to a file, the model gets a <persisted-output> block with the first 2,000 characters (observed in 2.1.328, test/clients/client-rules.test.ts)'),
    persisted('claude-code.grep', 'Grep', CLAUDE_GREP_PERSIST_CHARS, (t) => t === 'Grep', 'Grep output over 20,000 characters is persisted with a 2,000-character preview (observed in 2.1.328, test/clients/client-rules.test.ts)'),
    persisted('claude-code.tool', 'other built-in tools', CLAUDE_TOOL_PERSIST_CHARS, () => true, 'other built-in tools persist output over 50,000 characters with a preview (reported; not observed here: the binary holds a per-tool maxResultSizeChars)', 'inferred'),
  ],
};
