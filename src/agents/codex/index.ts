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
    // $CODEX_HOME moves the whole `.codex` folder.
    homeRoots: (home, env) => [env.CODEX_HOME ? path.join(path.resolve(env.CODEX_HOME), 'sessions') : path.join(home, ...CLIENTS.codex.homeSuffix)],
    hint: '~/.codex/sessions',
  },
  rules: CODEX_RULES,
  provider: 'openai',
  prices: { input: 1.25, cacheWrite: 1.25, cacheRead: 0.125, output: 10 },
  context: codexContext,
  mcp: { shows: 'structured-first', names: ['codex-mcp-client', 'codex'], profile: 'o200k', callIdKey: 'callId' },
};
