/** Claude Code's adapter (../adapter.ts): `~/.claude/projects/<project>/<session>.jsonl`, a PostToolUse hook. */
import path from 'node:path';
import type { ClientAdapter } from '../adapter.js';
import { CLIENTS } from '../clients.js';
import { claudeContext } from './context.js';
import { claudeParentTranscript, claudeToolResultsDir } from './files.js';
import { CLAUDE_CODE_RULES } from './rules.js';

export const CLAUDE_CODE: ClientAdapter = {
  meta: CLIENTS['claude-code'],
  files: {
    // Its lines carry parentUuid/sessionId/leafUuid, or open with a summary or a file-history snapshot.
    recognise: (name, head) =>
      name.endsWith('.jsonl') && (/"(parentUuid|sessionId|leafUuid)"\s*:/.test(head) || /"type"\s*:\s*"(summary|file-history-snapshot)"/.test(head)),
    // Loosest test of the three: `sessionId` is in Gemini's .jsonl too, so it goes last.
    recognisePriority: 30,
    // $CLAUDE_CONFIG_DIR moves the whole `.claude` folder.
    homeRoots: (home, env) => [env.CLAUDE_CONFIG_DIR ? path.join(path.resolve(env.CLAUDE_CONFIG_DIR), 'projects') : path.join(home, ...CLIENTS['claude-code'].homeSuffix)],
    hint: '~/.claude/projects',
    around: (t) => ({ parent: claudeParentTranscript(t), sideFilesDir: claudeToolResultsDir(t) }),
  },
  rules: CLAUDE_CODE_RULES,
  provider: 'anthropic',
  prices: { input: 5, cacheWrite: 6.25, cacheRead: 0.5, output: 25 },
  context: claudeContext,
  mcp: { shows: 'structured-first', names: ['claude-code'], profile: 'claude', callIdKey: 'claudecode/toolUseId' },
};
