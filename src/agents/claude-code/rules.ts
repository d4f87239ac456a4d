/**
 * Claude Code's own caps on tool results (as 2.1.x handles them), each a rule of ../rules.ts.
 * Thresholds are in characters of the result's text, except MCP and Read (tokens). Labels are
 * `reported` until a run of the real binary here shows them (test/clients records those runs).
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
/** Read's cap: a file over it is refused with an error telling the model to use offset and limit. */
export const CLAUDE_READ_MAX_TOKENS = 25_000;

const persisted = (id: string, covers: string, threshold: number, applies: (tool: string) => boolean, evidence: string): ClientRule => ({
  id,
  covers,
  provenance: 'reported',
  evidence,
  applies,
  give(r, provider) {
    if (r.chars <= threshold) return whole(r, provider);
    return { tokens: keptTokens(r, CLAUDE_PREVIEW_CHARS) + NOTE_TOKENS + imagesTokens(r.images, provider), treatment: 'persisted' };
  },
});

export const CLAUDE_CODE_RULES: ClientRules = {
  client: 'claude-code',
  rules: [
    {
      id: 'claude-code.read',
      covers: 'Read',
      provenance: 'reported',
      evidence: 'Read refuses a file over 25,000 tokens ("exceeds maximum allowed tokens … use offset and limit"); images are sent as images (reported, issue 29)',
      applies: (tool) => tool === 'Read',
      give(r, provider) {
        if (r.tokens > CLAUDE_READ_MAX_TOKENS) return { tokens: NOTE_TOKENS + imagesTokens(r.images, provider), treatment: 'error' };
        return whole(r, provider);
      },
    },
    {
      id: 'claude-code.mcp',
      covers: 'MCP tools (mcp__<server>__<tool>)',
      provenance: 'reported',
      evidence: 'MAX_MCP_OUTPUT_TOKENS (default 25,000): a bigger result is saved to tool-results/ and the model gets a notice ("exceeds maximum allowed tokens. Output has been saved to …") (reported, issue 29; the notice is seen in real transcripts)',
      applies: (tool) => tool.startsWith('mcp__'),
      give(r, provider) {
        if (r.tokens > CLAUDE_MCP_MAX_TOKENS) return { tokens: NOTE_TOKENS + imagesTokens(r.images, provider), treatment: 'persisted' };
        return whole(r, provider);
      },
    },
    persisted('claude-code.bash', 'Bash', CLAUDE_BASH_PERSIST_CHARS, (t) => t === 'Bash', 'Bash output over 30,000 characters is persisted to a file, the model gets a ~2,000-character preview (reported, issue 29; seen in 2.1.328 runs there)'),
    persisted('claude-code.grep', 'Grep', CLAUDE_GREP_PERSIST_CHARS, (t) => t === 'Grep', 'Grep output over 20,000 characters is persisted with a preview (reported, issue 29)'),
    persisted('claude-code.tool', 'other built-in tools', CLAUDE_TOOL_PERSIST_CHARS, () => true, 'other built-in tools persist output over 50,000 characters with a preview (reported, issue 29)'),
  ],
};
