import fs from 'node:fs';
import path from 'node:path';
import {
  appPaths,
  buildPreview,
  resolveLimit,
  MAX_MESSAGE_CHARS,
  PREVIEW_CHARS,
  sanitizeToolName,
  truncate,
  type GuardOptions,
  type GuardResult,
  type SummarizeHook,
} from '../../pipeline/index.js';
import { mcpAwareSummarizer } from '../mcp/tool-result.js';

/**
 * `spillway hook claude-code`: a Claude Code PostToolUse hook that spills oversized tool results.
 *
 * Input (stdin), as Claude Code sends it to a PostToolUse command hook:
 *   { session_id, transcript_path, cwd, permission_mode, hook_event_name: "PostToolUse",
 *     tool_name, tool_input, tool_response, tool_use_id }
 * `tool_response` is tool-specific: Bash gives `{stdout, stderr, interrupted, isImage}`, Read gives
 * `{type: "text", file: {filePath, content, numLines, startLine, totalLines}}`, an MCP tool
 * (`mcp__<server>__<tool>`) gives its content blocks `[{type: "text", text}, …]`.
 *
 * Output (stdout), per the Claude Code hooks reference, "PostToolUse decision control"
 * (https://code.claude.com/docs/en/hooks#posttooluse-decision-control):
 *   { "hookSpecificOutput": { "hookEventName": "PostToolUse",
 *       "updatedToolOutput": "<replacement>",          // any tool, Claude Code ≥ 2.1.121 (changelog: "PostToolUse hooks
 *                                                       //   can now replace tool output for all tools via
 *                                                       //   hookSpecificOutput.updatedToolOutput (previously MCP-only)")
 *       "updatedMCPToolOutput": [{type:"text",text}]  // MCP tools, the older field ("For MCP tools only: replaces the
 *   } }                                               //   tool's output with the provided value"), still honoured
 * Both are sent for MCP tools so older and newer Claude Code versions replace the output; the Agent
 * SDKs do the same (they emit both when a replacement is set).
 *
 * Small results: exit 0, no output (Claude Code keeps the original). Any internal error: exit 0,
 * a line on stderr, and no output, so the agent is never blocked (exit 2 would block).
 *
 * Where spills go: `<app data>/sessions/claude-code_<session_id>/long_responses/…` by default (the
 * inspector's sessions root, one folder per Claude Code session, kept across `--resume`), or `--session DIR`.
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
    updatedToolOutput: string;
    updatedMCPToolOutput?: unknown;
  };
}

export interface ClaudeCodeHookOptions {
  guard: (result: unknown, options: GuardOptions) => Promise<GuardResult | null>;
  /** Session folder; default `<sessionsRoot>/claude-code_<session_id>`. */
  sessionDir?: string;
  sessionsRoot?: string;
  limitTokens?: number;
  contextWindowTokens?: number;
  summarize?: SummarizeHook;
  /** A tool-input argument carrying the caller's focus (as with `spillway mcp --focus-arg`). */
  focusArg?: string;
  now?: () => Date;
}

export interface ClaudeCodeHookOutcome {
  /** What to print on stdout (nothing: keep the original output). */
  output?: ClaudeCodeHookOutput;
  /** A line for stderr. */
  note?: string;
  guard?: GuardResult;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The session folder a hook event spills into. */
export function claudeCodeSessionDir(sessionId: string | undefined, sessionsRoot = appPaths().sessions): string {
  return path.join(sessionsRoot, `claude-code_${sanitizeToolName(sessionId || 'unknown')}`);
}

/**
 * What the model actually reads from a tool response: the text of the built-in tools, the content
 * blocks of MCP tools, and the value itself for anything else.
 */
export function resultOf(toolName: string, response: unknown): unknown {
  if (typeof response === 'string' || !isObj(response)) return response;
  switch (toolName) {
    case 'Bash': {
      const out = typeof response.stdout === 'string' ? response.stdout : '';
      const err = typeof response.stderr === 'string' ? response.stderr : '';
      if (typeof response.stdout !== 'string' && typeof response.stderr !== 'string') return response;
      return err ? `${out}${out && !out.endsWith('\n') ? '\n' : ''}--- stderr ---\n${err}` : out;
    }
    case 'Read': {
      const file = response.file;
      if (isObj(file) && typeof file.content === 'string') return file.content;
      return response;
    }
    case 'WebFetch':
      return typeof response.result === 'string' ? response.result : response;
    case 'Grep':
      if (typeof response.content === 'string') return response.content;
      if (Array.isArray(response.filenames)) return response.filenames.join('\n');
      return response;
    case 'Glob':
      return Array.isArray(response.filenames) ? response.filenames.join('\n') : response;
    default:
      return response;
  }
}

function sizeOf(v: unknown): number {
  if (typeof v === 'string') return Buffer.byteLength(v);
  try {
    return Buffer.byteLength(JSON.stringify(v) ?? '');
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

function intentOf(input: unknown, focusArg: string | undefined): string | undefined {
  if (!isObj(input)) return undefined;
  if (focusArg && typeof input[focusArg] === 'string' && input[focusArg].trim()) return input[focusArg].trim();
  // Bash's `description` says what the command was run for: the best focus a hook can get.
  if (typeof input.description === 'string' && input.description.trim()) return input.description.trim();
  return undefined;
}

export async function handleClaudeCodeHook(stdin: string, opts: ClaudeCodeHookOptions): Promise<ClaudeCodeHookOutcome> {
  let input: ClaudeCodeHookInput;
  try {
    const parsed = JSON.parse(stdin) as unknown;
    if (!isObj(parsed)) return { note: 'hook input is not a JSON object; ignored' };
    input = parsed as ClaudeCodeHookInput;
  } catch (err) {
    return { note: `hook input is not JSON (${err instanceof Error ? err.message : String(err)}); ignored` };
  }
  if (input.hook_event_name !== undefined && input.hook_event_name !== 'PostToolUse') return {};
  if (input.tool_response === undefined || input.tool_response === null) return {};
  const toolName = typeof input.tool_name === 'string' && input.tool_name ? input.tool_name : 'tool';
  const result = resultOf(toolName, input.tool_response);
  // The limit the guard will use (an explicit limit is still narrowed by a context window).
  const limit = resolveLimit({ limitTokens: opts.limitTokens, contextWindowTokens: opts.contextWindowTokens });
  // A tokenizer never makes more tokens than bytes: results this small need no measuring.
  if (sizeOf(result) <= limit) return {};

  const sessionPath = opts.sessionDir ? path.resolve(opts.sessionDir) : claudeCodeSessionDir(input.session_id, opts.sessionsRoot);
  let g: GuardResult | null = null;
  let message: string;
  try {
    await fs.promises.mkdir(sessionPath, { recursive: true });
    g = await opts.guard(result, {
      sessionPath,
      toolName,
      toolInput: input.tool_input,
      intent: intentOf(input.tool_input, opts.focusArg),
      limitTokens: opts.limitTokens,
      contextWindowTokens: opts.contextWindowTokens,
      summarize: toolName.startsWith('mcp__') ? mcpAwareSummarizer(opts.summarize) : opts.summarize,
      now: opts.now,
    });
    if (!g) return {};
    message = g.message;
  } catch (err) {
    // The guard never throws by contract; if it does, the model still gets a bounded message, not the payload.
    const why = err instanceof Error ? err.message : String(err);
    const preview = typeof result === 'string' ? result : (JSON.stringify(result) ?? '');
    message = `Spillway: this ${toolName} result was too large for the context and could not be saved (${truncate(why, 300)}). Preview:\n${buildPreview(preview, undefined, PREVIEW_CHARS)}`;
  }
  message = truncate(message, MAX_MESSAGE_CHARS);
  const isMcp = toolName.startsWith('mcp__');
  const output: ClaudeCodeHookOutput = { hookSpecificOutput: { hookEventName: 'PostToolUse', updatedToolOutput: message } };
  if (isMcp) {
    const block = { type: 'text', text: message };
    output.hookSpecificOutput.updatedMCPToolOutput =
      isObj(input.tool_response) && Array.isArray(input.tool_response.content) ? { content: [block] } : [block];
  }
  return { output, ...(g ? { guard: g } : {}), note: g?.payloadPath ? `spilled ${toolName} to ${g.payloadPath}` : undefined };
}
