/**
 * OpenCode's own cut of tool results, each a rule of ../rules.ts. OpenCode 1.18.33 passes every tool's
 * output (its own tools and MCP tools alike) through one truncation: over 2,000 lines or 50 KB
 * (51,200 bytes) it writes the whole output to `<data>/opencode/tool-output/tool_<id>`, and the model
 * gets a part of it under a head that names that file. Bash keeps the end of the output
 * ("...output truncated...\n\nFull output saved to: <file>\n\n", then the last lines); the others keep
 * the start. Read (the file tool) pages by itself: at most 2,000 lines and 50 KB from an offset, and
 * says which offset to continue from.
 */
import { type ClientRules, NOTE_TOKENS, type ResultShape, type Treatment, imagesTokens, keptTokens, whole } from '../rules.js';
import type { Provider } from '../media.js';

/** Truncate.MAX_LINES in OpenCode 1.18.33 (read in its binary: `MAX_LINES = 2000`). */
export const OPENCODE_MAX_LINES = 2_000;
/** Truncate.MAX_BYTES in OpenCode 1.18.33 (read in its binary: `MAX_BYTES = 51200`). */
export const OPENCODE_MAX_BYTES = 51_200;

/**
 * What is left of a result after the cut: at most OPENCODE_MAX_BYTES (counted here as characters) and
 * OPENCODE_MAX_LINES lines, whichever keeps less, plus the head that names the file.
 */
function cut(r: ResultShape, provider: Provider): { tokens: number; treatment: Treatment } {
  if (r.chars <= OPENCODE_MAX_BYTES && r.lines <= OPENCODE_MAX_LINES) return whole(r, provider);
  const byLines = r.lines > OPENCODE_MAX_LINES ? (r.chars * OPENCODE_MAX_LINES) / r.lines : r.chars;
  const kept = Math.min(OPENCODE_MAX_BYTES, byLines);
  return { tokens: keptTokens(r, kept) + NOTE_TOKENS / 2 + imagesTokens(r.images, provider), treatment: 'truncated' };
}

const BINARY = 'read in the opencode-linux-x64 1.18.33 binary: Truncate.MAX_LINES = 2000, MAX_BYTES = 51200, applied to every tool output (MCP results too, their text blocks joined)';

export const OPENCODE_RULES: ClientRules = {
  client: 'opencode',
  // Spillway's plugin (plugin.ts) runs on `tool.execute.after`, which OpenCode fires for every tool it runs.
  guardReaches: () => true,
  rules: [
    {
      id: 'opencode.bash',
      covers: 'bash',
      provenance: 'observed',
      evidence:
        'a real OpenCode 1.18.33 run (test/clients/opencode-sessions.test.ts): `cat` of a 6,000-line, 256,889-byte file gave the model the last 51,200 bytes (1,193 lines) under a 117-character head naming tool-output/tool_<id>, which held every byte; ' +
        BINARY,
      applies: (t) => t === 'bash',
      give: cut,
    },
    {
      id: 'opencode.read',
      covers: 'read',
      provenance: 'inferred',
      evidence: 'seen in a probe of OpenCode 1.18.33 (issue 31: the first 50 KB, and the offset to continue from), not asserted by a test here; ' + BINARY,
      applies: (t) => t === 'read',
      give: cut,
    },
    { id: 'opencode.tool', covers: 'every other tool, MCP tools included', provenance: 'inferred', evidence: BINARY, applies: () => true, give: cut },
  ],
};
