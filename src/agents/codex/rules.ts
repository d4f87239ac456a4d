/**
 * Codex CLI's own caps on tool results, each a rule of ../rules.ts. Shell output is cut to its head
 * and tail; other results reach the model whole as far as we know.
 */
import { type ClientRules, NOTE_TOKENS, imagesTokens, keptTokens, whole } from '../rules.js';

/** Shell output shown to the model: at most this many bytes... */
export const CODEX_SHELL_MAX_BYTES = 10 * 1024;
/** ...and this many lines (half from the head, half from the tail). */
export const CODEX_SHELL_MAX_LINES = 256;

const SHELL_TOOLS = new Set(['shell', 'local_shell', 'container.exec', 'exec_command', 'shell_command', 'unified_exec']);

export const CODEX_RULES: ClientRules = {
  client: 'codex',
  rules: [
    {
      id: 'codex.shell',
      covers: 'shell, exec_command and the other shell tools',
      provenance: 'reported',
      evidence: 'shell output is cut to about 10 KiB or 256 lines, head and tail kept, with an "omitted" note (reported, issue 29; newer versions may budget by tokens per model family)',
      applies: (tool) => SHELL_TOOLS.has(tool),
      give(r, provider) {
        const share = Math.min(1, CODEX_SHELL_MAX_BYTES / Math.max(1, r.chars), CODEX_SHELL_MAX_LINES / Math.max(1, r.lines));
        if (share >= 1) return whole(r, provider);
        return { tokens: keptTokens(r, Math.floor(r.chars * share)) + NOTE_TOKENS / 3 + imagesTokens(r.images, provider), treatment: 'truncated' };
      },
    },
    {
      id: 'codex.tool',
      covers: 'every other tool (MCP included)',
      provenance: 'inferred',
      evidence: 'no cap on other tools seen or reported: passed whole',
      applies: () => true,
      give: whole,
    },
  ],
};
