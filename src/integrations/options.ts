import { InvalidArgumentError, type Command } from 'commander';
import { guardLargeResult, type GuardOptions, type GuardResult, type Profile, type ToolResult } from '../pipeline/index.js';
import type { GuardSettings } from './settings.js';
import { FlagValueError, FOCUS_ARG_FLAG, LIMIT_FLAGS, oneOfValues, positiveWhole, SESSION_FLAG, type GuardFlag } from './verb-input.js';

export { defaultProvider, guardSettingsOf, loadSummarizer, type GuardCliOptions, type GuardSettings } from './settings.js';

/** A check of verb-input.ts as a commander parser: a refused value is commander's usage error (message, exit 2). */
function commanderParser<T>(parse: (v: string) => T) {
  return (v: string): T => {
    try {
      return parse(v);
    } catch (err) {
      if (err instanceof FlagValueError) throw new InvalidArgumentError(err.message);
      throw err;
    }
  };
}

/** A commander parser for whole numbers > 0, for any verb's flag. */
export const positiveInt = (flag: string) => commanderParser(positiveWhole(flag));

/** A commander parser that accepts only `allowed` values (a usage error otherwise). */
export const oneOf = <T extends string>(flag: string, allowed: readonly T[]) => commanderParser(oneOfValues(flag, allowed));

/** Add `flags` (verb-input.ts's table: the one the hook's entry reads too) to `cmd`. */
function addFlags(cmd: Command, flags: readonly GuardFlag[], defaultProfile: Profile): Command {
  for (const f of flags) {
    if (f.parse) cmd.option(f.flags, f.help(defaultProfile), commanderParser(f.parse));
    else cmd.option(f.flags, f.help(defaultProfile));
  }
  return cmd;
}

/**
 * The options every guarding verb (`guard`, `mcp`, `hook`) takes: the limit, how it is measured, and
 * what writes the summary. `defaultProfile` is the verb's (the hook for Claude Code measures with
 * Claude's tokenizer; the others do not know their client's model).
 */
export function addLimitOptions(cmd: Command, defaultProfile: Profile = 'o200k'): Command {
  return addFlags(cmd, LIMIT_FLAGS, defaultProfile);
}

/** {@link addLimitOptions} for the verbs that guard an agent's stream of results (`mcp`, `hook`). */
export function addGuardOptions(cmd: Command, defaultProfile: Profile = 'o200k'): Command {
  return addFlags(cmd, [SESSION_FLAG, ...LIMIT_FLAGS, FOCUS_ARG_FLAG], defaultProfile);
}

/** The guard with `settings` applied to every call (for the MCP proxy, whose calls add session, tool and input). */
export function guardWith(settings: GuardSettings) {
  return (result: ToolResult, options: GuardOptions): Promise<GuardResult | null> => guardLargeResult(result, { ...options, ...settings });
}

