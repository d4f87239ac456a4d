import crypto from 'node:crypto';
import path from 'node:path';
import { appPaths, guardLargeResult, type GuardResult, type ToolCallRef } from '../../pipeline/index.js';
import type { GuardSettings } from '../settings.js';
import type { CallRule } from '../rules/index.js';
import { errMessage, isObj } from '../../pipeline/values.js';
import { HookEvent } from '../verb-input.js';

/**
 * Codex's PostToolUse command hook (Codex 0.171.0, `[hooks]` in config.toml or hooks.json; measured
 * with the real binary in test/clients/codex-hooks.test.ts). Codex hands the hook
 * `{session_id, turn_id, transcript_path, cwd, hook_event_name, model, permission_mode, tool_name,
 * tool_input, tool_response, tool_use_id}`: for its shell `tool_name` is `Bash`, `tool_input.command`
 * the command, `tool_response` the output as a string. An answer `{"decision":"block","reason":R}`
 * makes R the whole tool output the model reads (no frame, no output), which is where the guard's
 * message goes. No answer: the output is left as Codex gives it.
 */
export interface CodexHookOptions {
  /** Guard settings (limit, profile, summarizer…), as the CLI flags give them. */
  guard?: GuardSettings;
  /** Session folder; default `<app data>/sessions/codex_<session_id>/`. */
  sessionDir?: string;
  sessionsRoot?: string;
  /** The guard rules of the event's project folder (its `cwd`), after the flags (docs/config.md). Without it, the flags alone. */
  rules?: (cwd: string | undefined) => Promise<{ forCall(tool: string, server?: string, clientName?: string): CallRule; readonly errors: readonly string[] }>;
}

export interface CodexHookOutcome {
  /** What to print on stdout for Codex. */
  output?: { decision: 'block'; reason: string };
  guard?: GuardResult;
  /** A line for stderr. */
  note?: string;
}

/** How the rollout names a tool the hook calls `Bash` (the ledger's Codex shell rule is keyed on it). */
const ROLLOUT_NAMES: Record<string, string> = { Bash: 'exec_command' };

/**
 * The head Codex puts on a shell output it already cut (observed in 0.171.0: the hook gets the cut
 * output, ~40,000 bytes of head and tail, never the whole).
 */
const CODEX_CUT_RE = /^Warning: truncated output \(original token count: (\d+)\)\n/;

const PLAIN_SESSION_ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

/** `<sessions>/codex_<session id>`; an id that is not plain gets a folder named by its hash (never another session's). */
export function codexSessionDir(sessionId: string | undefined, sessionsRoot = appPaths(process.env).sessions): string {
  if (!sessionId) return path.join(sessionsRoot, 'codex_unknown');
  if (PLAIN_SESSION_ID_RE.test(sessionId)) return path.join(sessionsRoot, `codex_${sessionId}`);
  return path.join(sessionsRoot, `codex_unsafe.${crypto.createHash('sha256').update(sessionId).digest('hex').slice(0, 32)}`);
}

/** One hook event: stdin's JSON in, the answer out. Never throws (a failing hook must not disturb the agent). */
export async function handleCodexHook(stdin: string | HookEvent, opts: CodexHookOptions = {}): Promise<CodexHookOutcome> {
  // The event the hook's entry already parsed, or a text (stdin is parsed once).
  const parsed = (typeof stdin === 'string' ? new HookEvent(stdin) : stdin).parsed;
  if (!parsed.ok) return { note: `hook input is not JSON (${errMessage(parsed.error)}); ignored` };
  if (!isObj(parsed.value)) return { note: 'hook input is not a JSON object; ignored' };
  const input = parsed.value;
  if (input.hook_event_name !== undefined && input.hook_event_name !== 'PostToolUse') return {};
  const response = input.tool_response;
  if (response === undefined || response === null) return {};
  const s = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const hookName = s(input.tool_name) ?? 'tool';
  const toolName = ROLLOUT_NAMES[hookName] ?? hookName;
  const call: ToolCallRef = { client: 'codex', toolCallId: s(input.tool_use_id), clientSessionId: s(input.session_id), transcriptPath: s(input.transcript_path), cwd: s(input.cwd) };
  const cut = typeof response === 'string' ? CODEX_CUT_RE.exec(response) : null;
  const incomplete = cut
    ? `Codex had already cut this output to its head and tail (it was ~${Number(cut[1]).toLocaleString('en-US')} tokens) before the hook got it; the middle is lost. Re-run the command with a narrower output (head, tail, grep) to see it.`
    : undefined;
  // The tool's rule: matched on the hook's name (`Bash`) and the rollout's (`exec_command`). A bad file is a note.
  let rule: CallRule | undefined;
  const notes: string[] = [];
  if (opts.rules) {
    try {
      const rules = await opts.rules(s(input.cwd));
      rule = rules.forCall(hookName, undefined, toolName);
      notes.push(...rules.errors, ...(rule.error ? [rule.error] : []));
    } catch (err) {
      notes.push(`rules left out: ${errMessage(err)}`);
    }
  }
  const noted = (o: CodexHookOutcome): CodexHookOutcome => (notes.length ? { ...o, note: [...notes, o.note].filter(Boolean).join('; ') } : o);
  const focus = rule?.focusArg && isObj(input.tool_input) ? input.tool_input[rule.focusArg] : undefined;
  try {
    const g = await guardLargeResult(response, {
      ...(incomplete ? { incomplete } : {}),
      ...opts.guard,
      ...(rule ? { limitTokens: rule.limitTokens, summarize: rule.summarize, rule: rule.rule } : {}),
      ...(typeof focus === 'string' && focus.trim() ? { intent: focus.trim() } : {}),
      sessionPath: opts.sessionDir ? path.resolve(opts.sessionDir) : codexSessionDir(s(input.session_id), opts.sessionsRoot),
      toolName,
      toolInput: input.tool_input,
      call,
    });
    if (!g) return noted({});
    return noted({ output: { decision: 'block', reason: g.message }, guard: g });
  } catch (err) {
    return noted({ note: `${toolName}: left unchanged: ${errMessage(err)}` });
  }
}
