import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import {
  appPaths,
  fmtBytes,
  guardLargeResult,
  isInside,
  normalizeGuardOptions,
  readUntrusted,
  UntrustedFileError,
  type GuardOptions,
  type GuardResult,
  type NormalizedGuardOptions,
} from '../../pipeline/index.js';
import { errMessage, isObj } from '../../pipeline/values.js';
import type { CallRule } from '../../integrations/rules/index.js';

/**
 * The guard inside OpenCode: what `spillway hook opencode` does with one `tool.execute.after` event,
 * which Spillway's OpenCode plugin (plugin.ts) pipes to it.
 *
 * Input (stdin), as the plugin forwards OpenCode 1.18.33's hook arguments:
 *   { input: { tool, sessionID, callID, args }, output: { title, output, metadata } }
 * For bash over OpenCode's own cut (2,000 lines / 50 KB, rules.ts) `output.output` is already
 * truncated ("...output truncated... Full output saved to: <file>" and the last lines) and
 * `metadata.outputPath` names the file with every byte, in `<data>/opencode/tool-output/`. The
 * guard reads that file, confined to that folder, so the spill is whole, as the Claude Code hook
 * reads `persistedOutputPath`.
 *
 * Output (stdout): `{ "output": "<the guard's message>" }`, which the plugin sets as
 * `output.output`: that is what OpenCode stores and what the model gets. A small result: no output
 * (the plugin leaves it alone). Errors: a line on stderr, no output, exit 0.
 *
 * Spills go to `<app data>/sessions/opencode_<sessionID>/long_responses/`.
 */

export interface OpenCodeToolEvent {
  input?: { tool?: unknown; sessionID?: unknown; callID?: unknown; args?: unknown };
  output?: { title?: unknown; output?: unknown; metadata?: unknown };
  /** The project folder OpenCode runs in (the plugin's `directory`); a plugin written before it was sent leaves it out. */
  directory?: unknown;
}

export interface OpenCodeHookOptions {
  guard?: Omit<GuardOptions, 'sessionPath' | 'toolName' | 'toolInput' | 'intent' | 'call' | 'incomplete' | 'knownLarge'>;
  sessionDir?: string;
  sessionsRoot?: string;
  env?: NodeJS.ProcessEnv;
  /** How long to wait for OpenCode to finish writing a full output (default {@link OUTPUT_SETTLE_MS}). */
  settleMs?: number;
  /**
   * The guard rules of the project folder (the event's `directory`, else undefined: the caller's
   * working folder), after the flags (docs/config.md), as the Claude Code and Codex hooks take them.
   * Without it, the flags alone.
   */
  rules?: (cwd: string | undefined) => Promise<{ forCall(tool: string): CallRule; readonly errors: readonly string[] }>;
}

export interface OpenCodeHookOutcome {
  output?: { output: string };
  note?: string;
  guard?: GuardResult;
}

/** Largest file read back from OpenCode's `tool-output/`. */
export const MAX_OPENCODE_OUTPUT_BYTES = 512 * 1024 * 1024;
/** Session ids as OpenCode makes them (`ses_…`); anything else gets a hashed folder name. */
const PLAIN_SESSION_ID_RE = /^[A-Za-z0-9_-]{1,128}$/;

/** OpenCode's data folder: `$XDG_DATA_HOME/opencode`, default `~/.local/share/opencode` (it uses this path on every OS). */
export function opencodeDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME ? path.resolve(env.XDG_DATA_HOME) : path.join(env.HOME || os.homedir(), '.local', 'share');
  return path.join(base, 'opencode');
}

export function opencodeSessionDir(sessionId: unknown, sessionsRoot = appPaths(process.env).sessions): string {
  if (typeof sessionId !== 'string' || !sessionId) return path.join(sessionsRoot, 'opencode_unknown');
  if (PLAIN_SESSION_ID_RE.test(sessionId)) return path.join(sessionsRoot, `opencode_${sessionId}`);
  return path.join(sessionsRoot, `opencode_unsafe.${crypto.createHash('sha256').update(sessionId).digest('hex').slice(0, 32)}`);
}

/** The whole output OpenCode kept in `tool-output/`, read only from there and only as a plain file. */
export async function readFullOutput(file: string, env: NodeJS.ProcessEnv): Promise<{ bytes: Buffer } | { error: string }> {
  const data = opencodeDataDir(env);
  const dir = path.join(data, 'tool-output');
  const target = path.resolve(dir, file);
  if (!isInside(dir, target) || target === dir) return { error: `${JSON.stringify(file)} is outside OpenCode's tool-output folder (${dir})` };
  try {
    return { bytes: await readUntrusted(target, { root: data, maxBytes: MAX_OPENCODE_OUTPUT_BYTES }) };
  } catch (err) {
    if (err instanceof UntrustedFileError && err.code === 'TOO_BIG') return { error: `it is more than the hook reads (${fmtBytes(MAX_OPENCODE_OUTPUT_BYTES)})` };
    return { error: errMessage(err) };
  }
}

/** The head OpenCode 1.18.33 puts on a bash output it cut; what follows it is the end of the full output. */
const CUT_HEAD_RE = /^\.\.\.output truncated\.\.\.\r?\n\r?\nFull output saved to: [^\n]*\n\r?\n/;
/** How long the hook waits for OpenCode to finish writing the full output. */
export const OUTPUT_SETTLE_MS = 10_000;
const SETTLE_STEP_MS = 50;

/**
 * The full output once OpenCode has finished writing it. Measured with the real binary: the hook can
 * run while `tool-output/<id>` is still being written (a 400 KB output read back as its first 256 KiB),
 * so when the shown text is OpenCode's cut (its head, then the output's last lines) the file is read
 * until it ends with those lines; past {@link OUTPUT_SETTLE_MS} what is there is kept, said to be partial.
 */
export async function readSettledOutput(
  file: string,
  shown: string,
  env: NodeJS.ProcessEnv,
  settleMs = OUTPUT_SETTLE_MS,
): Promise<{ bytes: Buffer; unsettled?: boolean } | { error: string }> {
  const m = CUT_HEAD_RE.exec(shown);
  const tail = m ? shown.slice(m[0].length).slice(-1000) : '';
  const deadline = Date.now() + settleMs;
  for (;;) {
    const full = await readFullOutput(file, env);
    if (!('bytes' in full) || !tail) return full;
    const end = full.bytes.subarray(Math.max(0, full.bytes.length - Buffer.byteLength(tail) - 8)).toString('utf8');
    if (end.endsWith(tail)) return full;
    if (Date.now() >= deadline) return { bytes: full.bytes, unsettled: true };
    await new Promise((r) => setTimeout(r, SETTLE_STEP_MS));
  }
}

export async function handleOpenCodeEvent(raw: string, o: OpenCodeHookOptions = {}): Promise<OpenCodeHookOutcome> {
  let ev: OpenCodeToolEvent;
  try {
    ev = JSON.parse(raw) as OpenCodeToolEvent;
  } catch (err) {
    return { note: `input is not JSON (${errMessage(err)}); result left unchanged` };
  }
  if (!isObj(ev) || !isObj(ev.input) || !isObj(ev.output)) return { note: 'input is not an OpenCode tool.execute.after event; result left unchanged' };
  const env = o.env ?? process.env;
  const tool = typeof ev.input.tool === 'string' && ev.input.tool ? ev.input.tool : 'tool';
  const shown = ev.output.output;
  if (typeof shown !== 'string') return { note: `${tool}: output is not text; left unchanged` };
  const meta = isObj(ev.output.metadata) ? ev.output.metadata : {};
  let value: string | Buffer = shown;
  let incomplete: string | undefined;
  let knownLarge = false;
  if (typeof meta.outputPath === 'string' && meta.outputPath) {
    const full = await readSettledOutput(meta.outputPath, shown, env, o.settleMs);
    if ('bytes' in full) {
      value = full.bytes;
      if (full.unsettled) {
        knownLarge = true;
        incomplete = `OpenCode was still writing the whole output to ${meta.outputPath} after ${(o.settleMs ?? OUTPUT_SETTLE_MS) / 1000} s; saved here is what it held then.`;
      }
    } else {
      knownLarge = true;
      incomplete = `OpenCode kept the whole output in ${meta.outputPath}, which the hook could not read (${full.error}); saved here is only what OpenCode showed.`;
    }
  }
  const args = ev.input.args;
  // The tool's rule (OpenCode's own name for it: `bash`, `read`, an MCP tool's `<server>_<tool>`); a bad rules file is a note.
  let rule: CallRule | undefined;
  const notes: string[] = [];
  if (o.rules) {
    try {
      const dir = typeof ev.directory === 'string' && path.isAbsolute(ev.directory) ? ev.directory : undefined;
      const rules = await o.rules(dir);
      rule = rules.forCall(tool);
      notes.push(...rules.errors, ...(rule.error ? [rule.error] : []));
    } catch (err) {
      notes.push(`rules left out: ${errMessage(err)}`);
    }
  }
  const focus = rule?.focusArg && isObj(args) ? args[rule.focusArg] : undefined;
  const description =
    typeof focus === 'string' && focus.trim() ? focus.trim() : isObj(args) && typeof args.description === 'string' && args.description.trim() ? args.description.trim() : undefined;
  const options: NormalizedGuardOptions = normalizeGuardOptions({
    ...(o.guard ?? {}),
    ...(rule ? { limitTokens: rule.limitTokens, summarize: rule.summarize, rule: rule.rule } : {}),
    sessionPath: o.sessionDir ? path.resolve(o.sessionDir) : opencodeSessionDir(ev.input.sessionID, o.sessionsRoot ?? appPaths(env).sessions),
    toolName: tool,
    toolInput: args,
    intent: description,
    call: {
      client: 'opencode',
      toolCallId: typeof ev.input.callID === 'string' ? ev.input.callID : undefined,
      clientSessionId: typeof ev.input.sessionID === 'string' ? ev.input.sessionID : undefined,
    },
    ...(incomplete ? { incomplete } : {}),
    ...(knownLarge ? { knownLarge: true } : {}),
  });
  const g = await guardLargeResult(value, options);
  const noted = (note: string | undefined) => [...notes, note].filter(Boolean).join('; ') || undefined;
  if (!g) return notes.length ? { note: noted(undefined) } : {};
  return { output: { output: g.message }, guard: g, note: noted(g.payloadPath ? `${tool}: spilled to ${g.payloadPath}` : undefined) };
}
