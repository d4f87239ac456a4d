import type { GuardSettings } from '../options.js';
import { terminalSafe } from '../../pipeline/terminal.js';
import { createSummarizer, defaultProviderName, isProviderName, PROVIDER_NAMES } from '../../summarize/index.js';
import { handleClaudeCodeHook } from './claude-code.js';
import { MAX_HOOK_INPUT_BYTES, parseHookArgs, readHookStdin, type HookCliOptions } from './claude-code-fast.js';

/**
 * `spillway hook claude-code` for a result the fast path did not pass, without the CLI: the hook,
 * the guard and the summarizer load, not commander, the other verbs, zod or the index (~70 modules
 * instead of ~290; issue 20: a spill cost 6-7x `node -e 0`, most of it loading). bin/spillway.js
 * runs it after the fast path (claude-code-fast.ts) and before the CLI.
 *
 * It does what the verb's action in src/cli/commands/hook.ts does with what commander hands it
 * (guardSettingsOf and loadSummarizer of integrations/options.ts included),
 * and what main() around it does, and must print the same bytes, write the same spill and exit
 * with the same code: test/integrations/hook-entry.test.ts runs both on the same stdin. A command
 * line that parseHookArgs cannot read as commander would (help, an unknown option, a value
 * commander refuses) is left to the CLI, which prints its usage message.
 */

/** Claude Code runs Claude models: the same default as HOOK_DEFAULT_PROFILE (src/cli/commands/hook.ts; a test holds them equal). */
export const ENTRY_DEFAULT_PROFILE = 'claude' as const;

/** As integrations/options.ts's loadSummarizer (that module loads commander). */
function summarizerFor(o: HookCliOptions) {
  const name = o.summarizer ?? o.provider ?? defaultProviderName(process.env);
  if (name === 'none' || name === 'off') return undefined;
  if (!isProviderName(name)) throw new Error(`unknown summarizer ${JSON.stringify(name)}: use ${PROVIDER_NAMES.join(', ')} or none`);
  return createSummarizer({ provider: name, model: o.model, template: o.template });
}

/** As integrations/options.ts's guardSettingsOf: the flags as guard options, built once. */
function settingsOf(o: HookCliOptions): GuardSettings {
  return {
    limitTokens: o.limit,
    contextWindowTokens: o.contextWindow,
    profile: o.profile ?? ENTRY_DEFAULT_PROFILE,
    ...(o.strategy ? { strategy: o.strategy } : {}),
    ...(o.store ? { store: o.store } : {}),
    ...(o.cutMedia ? { cutMediaBlocks: true } : {}),
    summarize: summarizerFor(o),
  };
}

/**
 * Run the hook for `spillway hook claude-code <args>`: true when it ran (whatever the result, as
 * the verb: exit 0, a line on stderr for what went wrong); false when the CLI must read the args.
 */
export async function runHookEntry(args: readonly string[]): Promise<boolean> {
  const opts = parseHookArgs(args);
  if (!opts) return false;
  // Whatever happens, exit 0: a failing PostToolUse hook must not disturb the agent.
  try {
    const stdin = await readHookStdin();
    if (stdin === undefined) {
      process.stderr.write(`spillway hook: input over ${MAX_HOOK_INPUT_BYTES} bytes; left unchanged\n`);
      return true;
    }
    const outcome = await handleClaudeCodeHook(stdin, { guard: settingsOf(opts), sessionDir: opts.session, focusArg: opts.focusArg });
    if (outcome.note) process.stderr.write(`spillway hook: ${terminalSafe(outcome.note)}\n`);
    if (outcome.output) process.stdout.write(`${JSON.stringify(outcome.output)}\n`);
  } catch (err) {
    process.stderr.write(`spillway hook: ${terminalSafe(err instanceof Error ? err.message : String(err))}; result left unchanged\n`);
  }
  process.exitCode = 0;
  return true;
}
