import { guardSettingsOf } from '../settings.js';
import { GuardRules, loadRules, ruleFlagsOf } from '../rules/index.js';
import { terminalSafe } from '../../pipeline/terminal.js';
import { errMessage } from '../../pipeline/values.js';
import type { Profile } from '../../pipeline/vocab.js';
import { MAX_HOOK_INPUT_BYTES, type GuardCliOptions, type HookEvent } from '../verb-input.js';

/**
 * A hook event that did not pass unchanged, answered with the client's hook: loaded by the hook's
 * entry (src/cli/hook-entry.ts) only then, so a pass loads none of the guard. One way for every
 * client and for both ways in (bin/spillway.js and the CLI's `hook` verbs): stdin in (read and parsed
 * once, by the entry), the answer on stdout, notes on stderr, and exit 0 whatever happens (a failing
 * PostToolUse hook must not disturb the agent).
 */

// Each client's hook loads when its event comes (the Claude Code hook does not load Codex's).

/** The client's answer to one event, as its hook returns it. */
export interface HookAnswer {
  output?: unknown;
  note?: string;
}

/** Run `handle` on the event and print what it answers; `prefix` starts every line on stderr. */
export async function answerHook(prefix: string, event: HookEvent | undefined, handle: (event: HookEvent) => Promise<HookAnswer>): Promise<void> {
  try {
    if (!event) {
      process.stderr.write(`${prefix}: input over ${MAX_HOOK_INPUT_BYTES} bytes; left unchanged\n`);
      return;
    }
    const outcome = await handle(event);
    if (outcome.note) process.stderr.write(`${prefix}: ${terminalSafe(outcome.note)}\n`);
    if (outcome.output) process.stdout.write(`${JSON.stringify(outcome.output)}\n`);
  } catch (err) {
    process.stderr.write(`${prefix}: ${terminalSafe(errMessage(err))}; result left unchanged\n`);
  } finally {
    process.exitCode = 0;
  }
}

/** The guard rules of the event's project folder (the client sends its cwd), after the flags (docs/config.md). */
const rulesFor = (opts: GuardCliOptions) => async (cwd: string | undefined) => new GuardRules(await loadRules(cwd ?? process.cwd(), process.env), ruleFlagsOf(opts));

/** `spillway hook claude-code` on an event that did not pass. */
export function runClaudeCodeHook(event: HookEvent | undefined, opts: GuardCliOptions, defaultProfile: Profile): Promise<void> {
  return answerHook('spillway hook', event, async (e) =>
    (await import('./claude-code.js')).handleClaudeCodeHook(e, { guard: guardSettingsOf(opts, defaultProfile), sessionDir: opts.session, focusArg: opts.focusArg, rules: rulesFor(opts) }),
  );
}

/** `spillway hook codex` on an event. */
export function runCodexHook(event: HookEvent | undefined, opts: GuardCliOptions, defaultProfile: Profile): Promise<void> {
  return answerHook('spillway hook codex', event, async (e) =>
    (await import('./codex.js')).handleCodexHook(e, { guard: guardSettingsOf(opts, defaultProfile), sessionDir: opts.session, rules: rulesFor(opts) }),
  );
}
