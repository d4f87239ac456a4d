/**
 * Gemini CLI's own caps on tool results, each a rule of ../rules.ts, as its code says
 * (`@google/gemini-cli` 0.61.0, `truncateOutputIfNeeded` and `formatTruncatedToolOutput`): a shell
 * output, or an MCP result of one text part, over `truncateToolOutputThreshold` characters
 * (default 40,000, and never more than 4 × the tokens left in the window) is saved to a file and the
 * model gets its first 20% and last 80% of that many characters, under a one-line header.
 */
import { type ClientRules, NOTE_TOKENS, imagesTokens, keptTokens, whole } from '../rules.js';

/** DEFAULT_TRUNCATE_TOOL_OUTPUT_THRESHOLD in the client's code. */
export const GEMINI_TRUNCATE_CHARS = 40_000;

const truncated = (r: Parameters<typeof whole>[0], provider: Parameters<typeof whole>[1]) =>
  r.chars <= GEMINI_TRUNCATE_CHARS
    ? whole(r, provider)
    : { tokens: keptTokens(r, GEMINI_TRUNCATE_CHARS) + NOTE_TOKENS / 2 + imagesTokens(r.images, provider), treatment: 'truncated' as const };

const EVIDENCE = 'read in @google/gemini-cli 0.61.0 (truncateOutputIfNeeded: 40,000 characters, head 20% and tail 80%; the threshold also shrinks to 4 × the tokens left in the window, not modelled)';

export const GEMINI_CLI_RULES: ClientRules = {
  client: 'gemini',
  // No hook: only MCP results (server-qualified, `server__tool`) pass through Spillway's proxy.
  guardReaches: (t) => t.includes('__'),
  rules: [
    { id: 'gemini-cli.shell', covers: 'run_shell_command', provenance: 'inferred', evidence: EVIDENCE, applies: (t) => t === 'run_shell_command', give: truncated },
    {
      id: 'gemini-cli.mcp',
      covers: 'MCP tools of one text part',
      provenance: 'inferred',
      evidence: EVIDENCE,
      // An MCP tool reaches the transcript under its server-qualified name (`server__tool`).
      applies: (t) => t.includes('__'),
      give: (r, provider) => (r.images.length ? whole(r, provider) : truncated(r, provider)),
    },
    { id: 'gemini-cli.tool', covers: 'every other tool', provenance: 'inferred', evidence: 'no cap on other tools in its code: passed whole', applies: () => true, give: whole },
  ],
};
