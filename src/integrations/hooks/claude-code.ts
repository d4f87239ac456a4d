import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  appPaths,
  buildPreview,
  fmtBytes,
  guardLargeResult,
  isBinaryBytes,
  isBinaryString,
  isInside,
  normalizeGuardOptions,
  readUntrusted,
  UntrustedFileError,
  MAX_MESSAGE_CHARS,
  PREVIEW_CHARS,
  truncate,
  type GuardOptions,
  type GuardResult,
  type NormalizedGuardOptions,
  type ToolCallRef,
} from '../../pipeline/index.js';
import { mcpAwareSummarizer } from '../mcp/tool-result.js';
import type { CallRule } from '../rules/index.js';
import { MCP_IMAGE_TOKENS, readToolResponse, type PersistedOutput, type Reading } from './claude-code-shapes.js';
import { fitsAsText, sizeOf } from '../../pipeline/quick.js';
import { HookEvent } from '../verb-input.js';
import { errMessage, isObj } from '../../pipeline/values.js';

export { MCP_IMAGE_TOKENS } from './claude-code-shapes.js';

/**
 * `spillway hook claude-code`: a Claude Code PostToolUse hook that spills oversized tool results.
 *
 * Input (stdin), as Claude Code 2.1.328 sends it to a PostToolUse command hook:
 *   { session_id, transcript_path, cwd, prompt_id, permission_mode, effort: {level},
 *     hook_event_name: "PostToolUse", tool_name, tool_input, tool_response, tool_use_id, duration_ms }
 * `tool_response` is the tool's own output object (see claude-code-shapes.ts for each tool).
 *
 * Output (stdout): { "hookSpecificOutput": { "hookEventName": "PostToolUse", "updatedToolOutput": <the
 * tool's own shape, carrying the message> } }. Claude Code validates it against the tool's output
 * schema and drops it (keeping the original) when it does not match, so a shape Spillway does not
 * know is never answered: the output is left alone and a line on stderr says why.
 *
 * Bash past 30,000 chars: the hook gets the first 30,000 and `persistedOutputPath`, where Claude Code
 * kept the whole output. The hook reads that file, confined to this session's `tool-results/`
 * folder, so the spill is complete and `spillway restore` gives back every byte. When it cannot,
 * the message says exactly what was saved. Claude Code's own notice for an MCP result it saved to
 * `tool-results/` is followed the same way, so the model gets Spillway's summary of the whole
 * result instead of the notice.
 *
 * Small results: exit 0, no output. Any internal error: exit 0, a line on stderr, no output (exit 2
 * would block the agent).
 *
 * Spills go to `<app data>/sessions/claude-code_<session_id>/long_responses/…` by default (one
 * folder per Claude Code session, kept across `--resume`), or `--session DIR`.
 */

export interface ClaudeCodeHookInput {
  session_id?: string;
  transcript_path?: string;
  cwd?: string;
  permission_mode?: string;
  hook_event_name?: string;
  tool_name?: string;
  tool_input?: unknown;
  tool_response?: unknown;
  tool_use_id?: string;
}

export interface ClaudeCodeHookOutput {
  hookSpecificOutput: {
    hookEventName: 'PostToolUse';
    updatedToolOutput: unknown;
  };
}

/** The guard options the hook's flags set, the same for every event (`--limit`, `--profile`, `--store`, `--cut-media`, the summarizer…). */
export type ClaudeCodeHookGuardOptions = Omit<GuardOptions, 'sessionPath' | 'toolName' | 'toolInput' | 'intent' | 'call' | 'incomplete' | 'knownLarge' | 'readMore' | 'localCopy' | 'shown'>;

export interface ClaudeCodeHookOptions {
  /**
   * What every guard call gets. The hook adds the event's own (session, tool, input, focus, what
   * Claude Code cut or judged too large), normalises the whole once, and decides with it too.
   */
  guard?: ClaudeCodeHookGuardOptions;
  /** Session folder; default `<sessionsRoot>/claude-code_<session_id>`. */
  sessionDir?: string;
  sessionsRoot?: string;
  /** A tool-input argument carrying the caller's focus (as with `spillway mcp --focus-arg`). */
  focusArg?: string;
  /**
   * The guard rules of the event's project folder (its `cwd`): per tool, the limit, the summarizer
   * and the focus argument, after the flags (docs/config.md). Without it, the flags alone.
   */
  rules?: (cwd: string | undefined) => Promise<{ forCall(tool: string): CallRule; readonly errors: readonly string[] }>;
  /** The guard itself (tests give one that fails). */
  run?: (result: unknown, options: NormalizedGuardOptions) => Promise<GuardResult | null>;
}

export interface ClaudeCodeHookOutcome {
  /** What to print on stdout (nothing: keep the original output). */
  output?: ClaudeCodeHookOutput;
  /** A line for stderr. */
  note?: string;
  guard?: GuardResult;
}

/** Largest file read back from Claude Code's `tool-results/` (a persisted Bash or MCP output). */
export const MAX_PERSISTED_OUTPUT_BYTES = 512 * 1024 * 1024;
/** Images of an MCP result kept in the answer beside the message (the model sees them natively). */
export const MAX_KEPT_IMAGES = 4;

/** The session folder a hook event spills into. */
export function claudeCodeSessionDir(sessionId: string | undefined, sessionsRoot = appPaths(process.env).sessions): string {
  if (!sessionId) return path.join(sessionsRoot, 'claude-code_unknown');
  if (PLAIN_SESSION_ID_RE.test(sessionId)) return path.join(sessionsRoot, `claude-code_${sessionId}`);
  // Sanitising `../<other id>` would give `<other id>`: another session's folder. A name that is not
  // a plain id gets its own folder instead, named by its hash; the `.` keeps it apart from every plain id.
  return path.join(sessionsRoot, `claude-code_unsafe.${crypto.createHash('sha256').update(sessionId).digest('hex').slice(0, 32)}`);
}

/** A session id as Claude Code makes them (a UUID); anything else is not used as a folder name. */
const PLAIN_SESSION_ID_RE = /^[A-Za-z0-9_-]{1,128}$/;

function intentOf(input: unknown, focusArg: string | undefined): string | undefined {
  if (!isObj(input)) return undefined;
  if (focusArg && typeof input[focusArg] === 'string' && input[focusArg].trim()) return input[focusArg].trim();
  // Bash's `description` says what the command was run for: the best focus a hook can get.
  if (typeof input.description === 'string' && input.description.trim()) return input.description.trim();
  return undefined;
}

/**
 * This session's `tool-results/` folder: `<transcript without .jsonl>/tool-results`, where Claude
 * Code keeps outputs too large to show. Undefined when the input does not name a session plainly.
 */
export function toolResultsDir(input: ClaudeCodeHookInput): string | undefined {
  const id = input.session_id;
  const t = input.transcript_path;
  if (typeof id !== 'string' || !PLAIN_SESSION_ID_RE.test(id) || typeof t !== 'string' || !path.isAbsolute(t)) return undefined;
  if (path.basename(t) !== `${id}.jsonl`) return undefined;
  return path.join(path.dirname(t), id, 'tool-results');
}

/**
 * Read a file Claude Code persisted, only if it lies in this session's `tool-results/` folder, is
 * a regular file with one name, and is not huge. Opened the one safe way (safe-open.ts), as the
 * index opens the same files: no component from Claude Code's `projects/` folder down may be a
 * link (a linked `<session>/` or `tool-results/` folder is refused, not only a linked file), and a
 * FIFO or device is never opened. Never throws.
 */
export async function readPersisted(input: ClaudeCodeHookInput, file: string): Promise<{ bytes: Buffer } | { error: string }> {
  const dir = toolResultsDir(input);
  if (!dir) return { error: 'the hook input names no session transcript, so its tool-results folder is unknown' };
  const target = path.resolve(dir, file);
  const outside = { error: `${JSON.stringify(file)} is outside this session's tool-results folder` };
  if (!isInside(dir, target) || target === dir) return outside;
  try {
    // `<projects>/<project>/<session>/tool-results/<file>`: the root is Claude Code's projects folder.
    return { bytes: await readUntrusted(target, { root: path.dirname(path.dirname(path.dirname(dir))), maxBytes: MAX_PERSISTED_OUTPUT_BYTES }) };
  } catch (err) {
    if (err instanceof UntrustedFileError) {
      if (err.code === 'OUTSIDE' || err.code === 'LINK') return outside;
      if (err.code === 'TOO_BIG') return { error: `it is more than the hook reads (${fmtBytes(MAX_PERSISTED_OUTPUT_BYTES)})` };
    }
    return { error: errMessage(err) };
  }
}

/** What the guard gets for a reading, and what it lacks. */
interface Subject {
  value: string | Buffer | unknown;
  incomplete?: string;
  /** The full output could not be had and what the hook has is small: nothing to spill. */
  skip?: string;
  /** Claude Code already judged it too large to show: spill it whatever the hook's own count says. */
  knownLarge?: boolean;
}

async function subjectOf(input: ClaudeCodeHookInput, reading: Reading & { kind: 'text' | 'mcp-blocks' }): Promise<Subject> {
  if (reading.kind === 'mcp-blocks') {
    const cut = /\[OUTPUT TRUNCATED - exceeded ([\d,]+) token limit\]/.exec(reading.text);
    return {
      value: reading.blocks,
      ...(cut
        ? { incomplete: `Claude Code had already cut this result at ${Number(cut[1]!.replace(/,/g, '')).toLocaleString('en-US')} tokens before the hook got it (its own copy of any image is in the session's tool-results folder).` }
        : {}),
    };
  }
  const p: PersistedOutput | undefined = reading.persisted;
  if (!p) return { value: reading.text, ...(reading.partial ? { incomplete: reading.partial } : {}) };
  const full = await readPersisted(input, p.path);
  if ('bytes' in full) {
    if (p.source === 'bash') {
      const stderr = isObj(input.tool_response) && typeof input.tool_response.stderr === 'string' ? input.tool_response.stderr : '';
      // The file holds stdout exactly; stderr (never persisted) follows it as the model would see it.
      return { value: stderr ? `${full.bytes.toString('utf8')}\n--- stderr ---\n${stderr}` : full.bytes };
    }
    return { value: full.bytes };
  }
  if (p.source === 'mcp-notice') return { value: reading.text, skip: `Claude Code's saved copy could not be read (${full.error})` };
  const whole = p.bytes !== undefined ? `${fmtBytes(p.bytes)} (${p.bytes} bytes)` : 'an unknown size';
  return {
    value: reading.text,
    knownLarge: true,
    incomplete:
      `Claude Code kept the whole output, ${whole}, in ${p.path}, which the hook could not read (${truncate(full.error, 200)}); ` +
      `saved here are only the first ${p.inlineChars} chars it received.`,
  };
}

/** The tool call this hook event is about, as the sidecar records it (the inspector joins the transcript's tool_use to the spill by its id). */
function callOf(input: ClaudeCodeHookInput): ToolCallRef {
  const s = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  return { client: 'claude-code', toolCallId: s(input.tool_use_id), clientSessionId: s(input.session_id), transcriptPath: s(input.transcript_path), cwd: s(input.cwd) };
}

/** The guard options of one event: the flags' and the event's own, and the tool's rule, normalised once (the pre-checks read the limit from it). */
function optionsOf(input: ClaudeCodeHookInput, toolName: string, opts: ClaudeCodeHookOptions, rule: CallRule | undefined, subject?: Subject): NormalizedGuardOptions {
  const base = opts.guard ?? {};
  const summarize = rule ? rule.summarize : base.summarize;
  return normalizeGuardOptions({
    ...base,
    ...(rule ? { limitTokens: rule.limitTokens, rule: rule.rule } : {}),
    sessionPath: opts.sessionDir ? path.resolve(opts.sessionDir) : claudeCodeSessionDir(input.session_id, opts.sessionsRoot),
    toolName,
    toolInput: input.tool_input,
    intent: intentOf(input.tool_input, rule ? rule.focusArg : opts.focusArg),
    summarize: toolName.startsWith('mcp__') ? mcpAwareSummarizer(summarize) : summarize,
    readMore: 'claude-code',
    // Claude Code's Read and Bash open local files only: with a bucket, a local copy is what the message names.
    localCopy: true,
    call: callOf(input),
    ...(subject?.incomplete ? { incomplete: subject.incomplete } : {}),
    ...(subject?.knownLarge ? { knownLarge: true } : {}),
  });
}

/**
 * Whether the guard need not see it: what the model would read fits the limit as text. For MCP
 * blocks, images are priced by pixels and left to the model, unless media is to be cut.
 */
function fitsAsIs(reading: Reading & { kind: 'text' | 'mcp-blocks' }, subject: Subject, o: NormalizedGuardOptions): boolean {
  if (subject.knownLarge) return false;
  if (reading.kind === 'mcp-blocks') {
    if (o.cutMediaBlocks && reading.images.length) return false;
    // What the model reads as text, plus what its images cost (by pixels, not base64).
    if (fitsAsText(reading.text, o.limit - reading.images.length * MCP_IMAGE_TOKENS)) return true;
    // Binary in a text block: the guard cuts it out of the blocks, whatever their size.
    if (isBinaryString(reading.text)) return false;
  } else if (!reading.persisted && fitsAsText(reading.text, o.limit)) return true;
  const v = subject.value;
  if (typeof v === 'string') return fitsAsText(v, o.limit);
  // A persisted output read back whole: Claude Code's own preview of binary would reach the model.
  if (v instanceof Uint8Array) return v.byteLength <= o.limit && !isBinaryBytes(v);
  return sizeOf(v) <= o.limit;
}

/** One event: its text, or the event the hook's entry already parsed (stdin is parsed once). */
export async function handleClaudeCodeHook(stdin: string | HookEvent, opts: ClaudeCodeHookOptions): Promise<ClaudeCodeHookOutcome> {
  const parsed = (typeof stdin === 'string' ? new HookEvent(stdin) : stdin).parsed;
  if (!parsed.ok) return { note: `hook input is not JSON (${errMessage(parsed.error)}); ignored` };
  if (!isObj(parsed.value)) return { note: 'hook input is not a JSON object; ignored' };
  const input = parsed.value as ClaudeCodeHookInput;
  if (input.hook_event_name !== undefined && input.hook_event_name !== 'PostToolUse') return {};
  if (input.tool_response === undefined || input.tool_response === null) return {};
  const toolName = typeof input.tool_name === 'string' && input.tool_name ? input.tool_name : 'tool';
  const reading = readToolResponse(toolName, input.tool_response);
  if (reading.kind === 'leave') return {};
  // The tool's rule, from the project folder Claude Code runs in: a bad rules file is a note, and the flags and defaults apply.
  let rule: CallRule | undefined;
  const ruleNotes: string[] = [];
  if (opts.rules) {
    try {
      const rules = await opts.rules(typeof input.cwd === 'string' && input.cwd ? input.cwd : undefined);
      rule = rules.forCall(toolName);
      ruleNotes.push(...rules.errors);
      if (rule.error) ruleNotes.push(rule.error);
    } catch (err) {
      ruleNotes.push(`rules left out: ${errMessage(err)}`);
    }
  }
  const noted = (o: ClaudeCodeHookOutcome): ClaudeCodeHookOutcome => (ruleNotes.length ? { ...o, note: [...ruleNotes, o.note].filter(Boolean).join('; ') } : o);
  if (reading.kind === 'unknown') {
    const bytes = sizeOf(input.tool_response);
    // A tokenizer never makes more tokens than bytes: a response this small fits whatever it is.
    if (bytes <= optionsOf(input, toolName, opts, rule).limit) return noted({});
    return noted({
      note:
        `${toolName}: output left unchanged (${Number.isFinite(bytes) ? fmtBytes(bytes) : 'unmeasurable'}); ${reading.why}, ` +
        'and Claude Code drops an answer that is not in the tool’s own shape.',
    });
  }
  const subject = await subjectOf(input, reading);
  if (subject.skip) return noted({ note: `${toolName}: left unchanged: ${subject.skip}` });
  const options = optionsOf(input, toolName, opts, rule, subject);
  if (fitsAsIs(reading, subject, options)) return noted({});

  let g: GuardResult | null = null;
  let message: string;
  try {
    // Private from the first spill: the app-data folder, sessions/ and this session's folder (0700).
    await fs.promises.mkdir(options.sessionPath, { recursive: true, mode: 0o700 });
    g = await (opts.run ?? guardLargeResult)(subject.value, options);
    if (!g) return noted({});
    message = g.message;
  } catch (err) {
    // The guard never throws by contract; if it does, the model still gets a bounded message, not the payload.
    const why = errMessage(err);
    const v = subject.value;
    const preview = typeof v === 'string' ? v : v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : (JSON.stringify(v) ?? '');
    message = `[spillway] This ${toolName} result was too large for the context and could not be saved (${truncate(why, 300)}). Preview:\n${buildPreview(preview, undefined, PREVIEW_CHARS)}`;
  }
  message = truncate(message, MAX_MESSAGE_CHARS);
  let replacement: unknown;
  if (reading.kind === 'mcp-blocks') {
    // Images the model sees as images stay beside the message, unless media is being cut.
    const keep = !options.cutMediaBlocks && reading.images.length <= MAX_KEPT_IMAGES && reading.images.length * MCP_IMAGE_TOKENS <= options.limit / 2 ? reading.images : [];
    replacement = reading.replace(message, keep);
  } else {
    replacement = reading.replace(message);
  }
  const output: ClaudeCodeHookOutput = { hookSpecificOutput: { hookEventName: 'PostToolUse', updatedToolOutput: replacement } };
  const notes = [g?.payloadPath ? `spilled ${toolName} to ${g.payloadPath}` : undefined, subject.incomplete].filter(Boolean);
  return noted({ output, ...(g ? { guard: g } : {}), note: notes.length ? notes.join('; ') : undefined });
}
