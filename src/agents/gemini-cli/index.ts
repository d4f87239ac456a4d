/** Gemini CLI's adapter (../adapter.ts): `~/.gemini/tmp/<project hash>/chats/session-*.json(l)`, the MCP proxy. */
import path from 'node:path';
import type { ClientAdapter } from '../adapter.js';
import { CLIENTS } from '../clients.js';
import { unknownContext } from '../context.js';
import { GEMINI_CLI_RULES } from './rules.js';

export const GEMINI_CLI: ClientAdapter = {
  meta: CLIENTS.gemini,
  files: {
    recognise: (name, head) =>
      // 0.61's chat log opens with {"sessionId", "projectHash", …}; older ones are one JSON object with messages.
      (name.endsWith('.jsonl') && name.startsWith('session-') && /^\s*\{[^\n]*"projectHash"\s*:/.test(head)) ||
      (name.endsWith('.json') && /^\s*\{/.test(head) && /"sessionId"\s*:/.test(head) && /"messages"\s*:/.test(head)),
    // Before Claude Code's test, which `sessionId` would pass.
    recognisePriority: 10,
    homeRoots: (home) => [path.join(home, ...CLIENTS.gemini.homeSuffix)],
    // Only tmp/<project hash>/chats/ holds chats; the rest is settings and credentials (oauth_creds.json).
    guardedHome: { dir: '.gemini', chatDirs: ['tmp'] },
    hint: '~/.gemini/tmp',
  },
  rules: GEMINI_CLI_RULES,
  provider: 'gemini',
  prices: { input: 1.25, cacheWrite: 1.25, cacheRead: 0.31, output: 10 },
  // Its transcripts record no window and no compaction rule we have read.
  context: unknownContext,
  // The name it introduces itself with was not recorded in a run here: its sidecars keep the name it sent.
  mcp: { shows: 'content-only', names: [], profile: 'o200k' },
};
