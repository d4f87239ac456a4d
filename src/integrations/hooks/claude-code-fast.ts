import fs from 'node:fs';
import { isBinaryString, mayCarryInlineAssets, resolveLimit } from '../../pipeline/quick.js';
import { DEFAULT_LIMIT_TOKENS } from '../../pipeline/limits.js';
import { rulesFilePaths } from '../../pipeline/config.js';
import { readToolResponse } from './claude-code-shapes.js';
import { isObj } from '../../pipeline/values.js';
import { PROFILES, STRATEGY_NAMES, type Profile, type StrategyName } from '../../pipeline/vocab.js';

/**
 * The pass-through fast path of `spillway hook claude-code`, run by bin/spillway.js before the CLI
 * loads. Claude Code runs the hook on every tool call and nearly every result is small; loading the
 * whole CLI (commander, every verb, zod, SQLite bindings: ~280 modules) cost several times a bare
 * `node -e 0` per call. This module loads only the hook's shapes and the pipeline's cheap checks.
 *
 * It says "pass" only where `handleClaudeCodeHook` returns nothing at all (no answer, no note)
 * before calling the guard: the same early checks, on the same limit. Everything else — anything
 * that may be over the limit, carry base64 worth cutting, be binary in a string, a Bash result
 * Claude Code persisted, bad JSON, options it does not know or that commander would reject — goes
 * to the full CLI, which gets the stdin already read. test/integrations/hook-fast.test.ts checks
 * the two against each other; change them together.
 *
 * Guard rules (docs/config.md) may lower a tool's limit. Without `--limit`, the fast path looks for
 * the two rules files (two `stat` calls); only when one exists does it load the rules' light half
 * (rules/match.ts, no package) and take the smallest limit any rule for this tool states in either
 * file, valid or not: the full hook never resolves a lower one, so "pass" stays safe.
 */

/** Hook input larger than this is not read whole: Claude Code sends the full tool response, which can be huge. */
export const MAX_HOOK_INPUT_BYTES = 512 * 1024 * 1024;
/** Same as claude-code.ts's MCP_IMAGE_TOKENS (a test holds them equal; that module is too heavy to load here). */
export const FAST_MCP_IMAGE_TOKENS = 1_600;
/** The strategies and summarizer names the CLI accepts (tests hold them equal to ALL_STRATEGIES and PROVIDER_NAMES). */
export const FAST_STRATEGIES: readonly string[] = STRATEGY_NAMES;
export const FAST_SUMMARIZERS: readonly string[] = ['structural', 'anthropic', 'openai', 'local', 'none', 'off'];

/** What the decision needs of the command line. */
export interface FastHookOptions {
  limitTokens?: number;
  contextWindowTokens?: number;
}

const positive = (v: string): number | undefined => {
  const n = Number(v);
  return Number.isInteger(n) && n > 0 ? n : undefined;
};
const oneOf = (allowed: readonly string[]) => (v: string) => (allowed.includes(v) ? v : undefined);
const anyText = (v: string) => v;

/**
 * Each option of `spillway hook claude-code`: the key commander stores it under, and what commander
 * would accept (undefined: it would refuse).
 */
const OPTIONS: Record<string, [key: keyof HookCliOptions, check: (v: string) => unknown]> = {
  '--limit': ['limit', positive],
  '--context-window': ['contextWindow', positive],
  '--profile': ['profile', oneOf(PROFILES)],
  '--strategy': ['strategy', oneOf(FAST_STRATEGIES)],
  '--summarizer': ['summarizer', oneOf(FAST_SUMMARIZERS)],
  '--provider': ['provider', oneOf(FAST_SUMMARIZERS)],
  '--session': ['session', anyText],
  '--store': ['store', anyText],
  '--model': ['model', anyText],
  '--template': ['template', anyText],
  '--focus-arg': ['focusArg', anyText],
};

/** The options of `spillway hook claude-code` as commander hands them to its action (GuardCliOptions' keys). */
export interface HookCliOptions {
  limit?: number;
  contextWindow?: number;
  profile?: Profile;
  strategy?: StrategyName;
  summarizer?: string;
  provider?: string;
  session?: string;
  store?: string;
  model?: string;
  template?: string;
  focusArg?: string;
  cutMedia?: boolean;
}

/**
 * The options after `hook claude-code` as commander would read them (a repeated option: the last
 * one), or undefined when the full CLI must see them: an option not listed, a value commander would
 * refuse, help, a stray argument, a value that looks like a flag.
 */
export function parseHookArgs(args: readonly string[]): HookCliOptions | undefined {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    // the one flag without a value (commander refuses `--cut-media=x`)
    if (a === '--cut-media') {
      out.cutMedia = true;
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 2 ? a.slice(0, eq) : a;
    const option = Object.hasOwn(OPTIONS, name) ? OPTIONS[name] : undefined;
    if (!option) return undefined;
    let value: string | undefined;
    if (name !== a) value = a.slice(eq + 1);
    else {
      value = args[++i];
      if (value === undefined || value.startsWith('-')) return undefined;
    }
    const parsed = option[1](value);
    if (parsed === undefined) return undefined;
    out[option[0]] = parsed;
  }
  return out as HookCliOptions;
}

/** What the pass decision needs of the command line ({@link parseHookArgs}), or undefined. */
export function parseFastArgs(args: readonly string[]): FastHookOptions | undefined {
  const o = parseHookArgs(args);
  // --cut-media cuts MCP media out of results that fit: the pass checks do not know that rule
  if (!o || o.cutMedia) return undefined;
  const out: FastHookOptions = {};
  if (o.limit !== undefined) out.limitTokens = o.limit;
  if (o.contextWindow !== undefined) out.contextWindowTokens = o.contextWindow;
  return out;
}

function sizeOf(v: unknown): number {
  if (typeof v === 'string') return Buffer.byteLength(v);
  try {
    return Buffer.byteLength(JSON.stringify(v) ?? '');
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Bytes bound tokens from above (no tokenizer makes more tokens than bytes), so this fits whatever counts it. */
const fitsAsText = (text: string, limit: number) => Buffer.byteLength(text) <= limit && !mayCarryInlineAssets(text) && !isBinaryString(text);

/**
 * The smallest limit the rules files give a tool (undefined: none; NaN: a file the fast path cannot
 * judge, so the full hook must), as rules/match.ts's strictestLimit computes it.
 */
export type RuleLimitLookup = (toolName: string) => number | undefined;

/** 'pass': the result goes to the model unchanged, print nothing. 'hook': run the full hook. Never throws. */
export function fastVerdict(stdin: string, opts: FastHookOptions, ruleLimit?: RuleLimitLookup): 'pass' | 'hook' {
  try {
    return fastVerdictOf(JSON.parse(stdin) as unknown, opts, ruleLimit);
  } catch {
    return 'hook';
  }
}

/** {@link fastVerdict} on the parsed hook input. */
export function fastVerdictOf(input: unknown, opts: FastHookOptions, ruleLimit?: RuleLimitLookup): 'pass' | 'hook' {
  try {
    if (!isObj(input)) return 'hook';
    if (input.hook_event_name !== undefined && input.hook_event_name !== 'PostToolUse') return 'pass';
    if (input.tool_response === undefined || input.tool_response === null) return 'pass';
    const toolName = typeof input.tool_name === 'string' && input.tool_name ? input.tool_name : 'tool';
    let limit = resolveLimit(opts);
    // A --limit flag comes before every rule; without it, a rule may lower the limit.
    if (ruleLimit && opts.limitTokens === undefined) {
      const strictest = ruleLimit(toolName);
      if (strictest !== undefined) {
        if (!(strictest > 0)) return 'hook';
        limit = resolveLimit({ ...opts, limitTokens: Math.min(strictest, DEFAULT_LIMIT_TOKENS) });
      }
    }
    const reading = readToolResponse(toolName, input.tool_response);
    switch (reading.kind) {
      case 'leave':
        return 'pass';
      case 'unknown':
        return sizeOf(input.tool_response) <= limit ? 'pass' : 'hook';
      case 'mcp-blocks':
        return fitsAsText(reading.text, limit - reading.images.length * FAST_MCP_IMAGE_TOKENS) ? 'pass' : 'hook';
      case 'text':
        return !reading.persisted && fitsAsText(reading.text, limit) ? 'pass' : 'hook';
    }
  } catch {
    return 'hook';
  }
}

/**
 * Stdin can be read once per process, and the full CLI must get what the fast path read. The read
 * is kept on the process, not in this module, so a second copy of the module (the source run
 * through tsx beside the built one) still finds it instead of reading an empty stream.
 */
const STDIN_KEY = Symbol.for('spillway.hook.stdin');

async function readAll(): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of process.stdin) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    bytes += b.length;
    if (bytes > MAX_HOOK_INPUT_BYTES) return undefined;
    chunks.push(b);
  }
  return Buffer.concat(chunks, bytes).toString('utf8');
}

/** The hook's stdin, read once: undefined when it is over {@link MAX_HOOK_INPUT_BYTES}. */
export function readHookStdin(): Promise<string | undefined> {
  const g = globalThis as { [STDIN_KEY]?: Promise<string | undefined> };
  return (g[STDIN_KEY] ??= readAll());
}

/**
 * bin/spillway.js calls this for `spillway hook claude-code <args>`: true when the result passes
 * and nothing is to be printed; false when the full CLI must run (it reads the same stdin).
 */
export async function runFastHook(args: readonly string[]): Promise<boolean> {
  try {
    const opts = parseFastArgs(args);
    if (!opts) return false;
    const stdin = await readHookStdin();
    if (stdin === undefined) return false;
    const input = JSON.parse(stdin) as unknown;
    const ruleLimit = opts.limitTokens === undefined ? await rulesLookup(input) : undefined;
    return fastVerdictOf(input, opts, ruleLimit) === 'pass';
  } catch {
    return false;
  }
}

/**
 * The rules files' limits for this event's project folder, or undefined when neither file exists
 * (then nothing more is loaded). The project is the event's `cwd`, as the full hook reads it.
 */
export async function rulesLookup(input: unknown, env: NodeJS.ProcessEnv = process.env): Promise<RuleLimitLookup | undefined> {
  const cwd = isObj(input) && typeof input.cwd === 'string' && input.cwd ? input.cwd : process.cwd();
  const paths = rulesFilePaths(cwd, env);
  const present = [paths.project, paths.user].filter((p) => fs.statSync(p, { throwIfNoEntry: false }) !== undefined);
  if (!present.length) return undefined;
  const { readRulesFile, strictestLimit, toolTarget } = await import('../rules/match.js');
  const texts: string[] = [];
  for (const p of present) {
    const t = readRulesFile(p);
    // Not readable: the full hook says why, and decides with what is left.
    if (t.state === 'error') return () => Number.NaN;
    if (t.state === 'read') texts.push(t.text);
  }
  return (toolName) => strictestLimit(texts, toolTarget(toolName));
}
