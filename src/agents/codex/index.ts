/** Codex CLI's adapter (../adapter.ts): `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, the MCP proxy. */
import path from 'node:path';
import type { ClientAdapter } from '../adapter.js';
import { CLIENTS } from '../clients.js';
import { codexContext } from './context.js';
import { CODEX_RULES } from './rules.js';

export const CODEX: ClientAdapter = {
  meta: CLIENTS.codex,
  files: {
    recognise: (name, head) =>
      name.endsWith('.jsonl') &&
      (/"type"\s*:\s*"(session_meta|response_item|turn_context|event_msg)"/.test(head) || (name.startsWith('rollout-') && /"(record_type|call_id|instructions)"/.test(head))),
    recognisePriority: 20,
    homeRoots: (home, env) => [path.join(env.CODEX_HOME ? path.resolve(env.CODEX_HOME) : path.join(home, '.codex'), 'sessions')],
    hint: '~/.codex/sessions',
  },
  rules: CODEX_RULES,
  provider: 'openai',
  prices: { input: 1.25, cacheWrite: 1.25, cacheRead: 0.125, output: 10 },
  context: codexContext,
  mcp: 'structured-first',
};
