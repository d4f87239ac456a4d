import fs from 'node:fs';
import { rulesFilePaths } from '../pipeline/config.js';
import { isObj } from '../pipeline/values.js';
import type { Profile } from '../pipeline/vocab.js';
import { HookEvent, readFlags, readHookStdin, summarizerKnown, type GuardCliOptions } from '../integrations/verb-input.js';
import { claudeCodePasses, type PassLimits, type RuleLimitLookup } from '../integrations/hooks/claude-code-shapes.js';

/**
 * `spillway hook <client>`: the one entry of every hooked client, without commander. The package
 * exports it as `spillway/hook`, and bin/spillway.js runs it before it loads the CLI; the CLI's
 * `hook` verbs (commands/hook.ts) run the same {@link runHookVerb} with what commander read.
 *
 * The client runs the hook on every tool call, and nearly every result passes: the start-up is
 * the budget (issue 20: the whole CLI, ~290 modules, cost several times a bare `node -e 0`). So:
 *
 * 1. the command line is read once, with the flags table commander's options are built from
 *    (integrations/verb-input.ts); what it cannot read as commander would (help, an unknown flag,
 *    a value commander refuses) is left to the CLI, which prints its usage message;
 * 2. stdin is read once and parsed once (a {@link HookEvent}), and handed on parsed;
 * 3. a client with a pass check (Claude Code's, in its shapes module) decides there, with the
 *    pipeline's cheap checks and the rules files' limits: a pass prints nothing and loads nothing
 *    more (11 modules with bin/spillway.js, no package; test/integrations/hook-fast.test.ts);
 * 4. anything else loads that client's hook (integrations/hooks/run.ts: the hook, the guard and the
 *    summarizer, not commander, zod or the index) and answers.
 */

/** One hooked client: its default tokenizer, its pass check if it has one, and its hook. */
interface HookedClient {
  /** The profile its limit is measured with unless `--profile` says otherwise. */
  readonly defaultProfile: Profile;
  /** True only where its hook would print nothing; judged without loading the guard. */
  readonly passes?: (input: unknown, limits: PassLimits, ruleLimit?: RuleLimitLookup) => boolean;
  /** Its hook on an event (undefined: stdin was over the size read), loaded only now. */
  readonly run: (event: HookEvent | undefined, opts: GuardCliOptions, defaultProfile: Profile) => Promise<void>;
}

/** Every client with a `spillway hook <client>` verb: one row each. */
export const HOOKED_CLIENTS = {
  // Claude Code runs Claude models: measured with Claude's tokenizer unless told otherwise.
  'claude-code': {
    defaultProfile: 'claude',
    passes: claudeCodePasses,
    run: async (event, opts, profile) => (await import('../integrations/hooks/run.js')).runClaudeCodeHook(event, opts, profile),
  },
  codex: {
    defaultProfile: 'o200k',
    run: async (event, opts, profile) => (await import('../integrations/hooks/run.js')).runCodexHook(event, opts, profile),
  },
  // OpenCode runs many model families. Its hook reads the stdin the entry read, and parses it itself (once).
  opencode: {
    defaultProfile: 'o200k',
    run: async (_event, opts, profile) => (await import('../agents/opencode/plugin.js')).runOpenCodeHook({ ...opts, profile: opts.profile ?? profile }),
  },
} as const satisfies Record<string, HookedClient>;

export type HookedClientName = keyof typeof HOOKED_CLIENTS;

export const isHookedClient = (name: string | undefined): name is HookedClientName => name !== undefined && Object.hasOwn(HOOKED_CLIENTS, name);

/**
 * bin/spillway.js calls this with the arguments after `hook`: true when the hook ran (whatever
 * the result: exit 0, a line on stderr for what went wrong); false when the CLI must read them.
 */
export async function runHookCommand(args: readonly string[]): Promise<boolean> {
  const client = args[0];
  if (!isHookedClient(client)) return false;
  const opts = readFlags(args.slice(1));
  if (!opts) return false;
  await runHookVerb(client, opts);
  return true;
}

/** One hook event for `client` with the verb's options: pass it unchanged, or answer with the client's hook. */
export async function runHookVerb(client: HookedClientName, opts: GuardCliOptions): Promise<void> {
  const c: HookedClient = HOOKED_CLIENTS[client];
  const text = await readHookStdin();
  const event = text === undefined ? undefined : new HookEvent(text);
  if (event && (await eventPasses(client, event, opts))) return;
  // As the CLI's main() does before any verb: a reader that went away ends the process quietly (exit 141).
  (await import('./pipes.js')).quietBrokenPipes();
  await c.run(event, opts, c.defaultProfile);
}

/**
 * Whether `client`'s event passes unchanged, as the entry decides before loading any hook: the
 * client's pass check, with the flags' limit and the rules files' (from the event's `cwd` and
 * `env`). False for a client without one. Never throws.
 */
export async function eventPasses(client: HookedClientName, event: HookEvent, opts: GuardCliOptions, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const c: HookedClient = HOOKED_CLIENTS[client];
  const check = c.passes;
  // --cut-media cuts MCP media out of results that fit; a summarizer that cannot load is a note on any result.
  if (!check || opts.cutMedia || !summarizerKnown(opts)) return false;
  try {
    const parsed = event.parsed;
    if (!parsed.ok) return false;
    const ruleLimit = opts.limit === undefined ? await rulesLookup(parsed.value, env) : undefined;
    return check(parsed.value, { limitTokens: opts.limit, contextWindowTokens: opts.contextWindow }, ruleLimit);
  } catch {
    return false;
  }
}

/**
 * The rules files' limits for this event's project folder (its `cwd`, as the full hook reads it),
 * or undefined when neither file exists: two `stat` calls, and nothing more is loaded. Only when
 * one exists does the rules' light half (rules/match.ts, no package) load.
 */
export async function rulesLookup(input: unknown, env: NodeJS.ProcessEnv = process.env): Promise<RuleLimitLookup | undefined> {
  const cwd = isObj(input) && typeof input.cwd === 'string' && input.cwd ? input.cwd : process.cwd();
  const paths = rulesFilePaths(cwd, env);
  const present = [paths.project, paths.user].filter((p) => fs.statSync(p, { throwIfNoEntry: false }) !== undefined);
  if (!present.length) return undefined;
  const { readRulesFile, strictestLimit, toolTarget } = await import('../integrations/rules/match.js');
  const texts: string[] = [];
  for (const p of present) {
    const t = readRulesFile(p);
    // Not readable: the full hook says why, and decides with what is left.
    if (t.state === 'error') return () => Number.NaN;
    if (t.state === 'read') texts.push(t.text);
  }
  return (toolName) => strictestLimit(texts, toolTarget(toolName));
}
