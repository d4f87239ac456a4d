import { isObj } from '../../pipeline/values.js';
import { fitsAsText, resolveLimit, sizeOf } from '../../pipeline/quick.js';
import { DEFAULT_LIMIT_TOKENS } from '../../pipeline/limits.js';
/**
 * Claude Code's built-in tools, as a PostToolUse hook sees them and as it must answer.
 *
 * Claude Code (≥ 2.1.121) takes `hookSpecificOutput.updatedToolOutput` for any tool, but for a
 * built-in tool it parses the value with that tool's own output schema and then renders it with
 * the tool's own mapper; a value that fails either is dropped, the original output goes to the
 * model, and the only trace is a `hook_error_during_execution` attachment in the transcript
 * ("…does not match Read's output shape; using original output"). So every answer here is the
 * tool's own shape with the message put where the tool's output text goes.
 *
 * Learned from runs of the real binary (2.1.328, native linux-x64); see test/clients/. What the
 * model reads is the mapper's rendering, noted per tool.
 *
 * | tool | tool_response (as the hook gets it) | model reads | answer |
 * |---|---|---|---|
 * | Read text | {type:"text", file:{filePath, content, numLines, startLine, totalLines, truncatedByTokenCap?}} | content, line-numbered (cut at the token cap: the first numLines lines) | same shape, content = message |
 * | Read notebook | {type:"notebook", file:{filePath, cells:[{cellType, source, outputs…}]}} | cells as blocks | the text shape |
 * | Read image/pdf | {type:"image", file:{base64, type, originalSize, dimensions}} … | an image/document block (priced by pixels or pages, not by base64 length) | left alone |
 * | Bash | {stdout, stderr, interrupted, isImage, noOutputExpected, persistedOutputPath?, persistedOutputSize?} | stdout (+ stderr); past 30,000 chars Claude Code shows a 2 KB `<persisted-output>` preview and keeps the whole in `tool-results/` | {stdout: message, stderr: "", interrupted, isImage:false, noOutputExpected:false} |
 * | Grep | {mode:"content", numFiles, filenames, content, numLines, appliedLimit?} or {mode:"files_with_matches"|"count", filenames, numFiles, …} | content, or file names one per line | {mode:"content", numFiles:0, filenames:[], content: message, numLines} |
 * | Glob | {filenames, durationMs, numFiles, truncated, …} | file names one per line | filenames = the message's lines |
 * | WebFetch | {bytes, code, codeText, result, durationMs, url} | result | result = message |
 * | WebSearch | {query, results:[{tool_use_id, content:[{title,url}]} | string], durationSeconds, searchCount} | "Web search results for query…" + links + texts | results = [message] |
 * | Agent (Task) | {status:"completed", content:[{type:"text",text}], agentId, usage, …} | content texts | content = [{type:"text", text: message}] |
 * | mcp__* | a string, or API-format blocks [{type:"text",text} | {type:"image",source:{type:"base64",media_type,data}}] | the same | a string, or blocks: the kept images + the message |
 *
 * Edit, Write, NotebookEdit and friends return the whole file in tool_response but show the model
 * one line: they are never measured by their tool_response. Anything else is unknown: measured, and
 * if large, left alone with a note on stderr (an answer in a guessed shape would be dropped silently).
 */

type Obj = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** What the hook makes of one tool response. */
export type Reading =
  /** The model reads `text` (what the guard measures and saves); `replace` answers in the tool's shape. */
  | { kind: 'text'; text: string; replace: (message: string) => unknown; persisted?: PersistedOutput; partial?: string }
  /** An MCP result as API-format blocks: texts and images apart (images are priced by pixels). */
  | { kind: 'mcp-blocks'; blocks: Obj[]; text: string; images: Obj[]; replace: (message: string, keptImages: Obj[]) => unknown }
  /** The client renders it in a way its size does not tell (images, PDFs), or it shows the model one line. */
  | { kind: 'leave'; why: string }
  /** A shape Spillway does not know: never answered. */
  | { kind: 'unknown'; why: string };

/** Claude Code kept the whole output in a file of the session's `tool-results/` and handed the hook a cut. */
export interface PersistedOutput {
  path: string;
  /** Size Claude Code reported, in bytes. */
  bytes?: number;
  /** How much of it the hook got inline (chars). */
  inlineChars: number;
  /** The model would see only Claude Code's short preview of it. */
  source: 'bash' | 'mcp-notice';
}

/** Tools whose tool_response carries whole files but whose model-facing result is one line. */
export const ONE_LINE_TOOLS: ReadonlySet<string> = new Set([
  'Edit',
  'MultiEdit',
  'Write',
  'NotebookEdit',
  'TodoWrite',
  'TaskCreate',
  'TaskUpdate',
  'ExitPlanMode',
  'EnterWorktree',
  'ExitWorktree',
]);

function lineCount(s: string): number {
  if (!s) return 0;
  let n = 1;
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++;
  return s.endsWith('\n') ? n - 1 : n;
}

/** Read's text shape, with the message as the file's content. */
function readTextShape(filePath: string, message: string): Obj {
  const n = Math.max(1, lineCount(message));
  return { type: 'text', file: { filePath, content: message, numLines: n, startLine: 1, totalLines: n } };
}

function notebookText(cells: unknown[]): string {
  const parts: string[] = [];
  for (const c of cells) {
    if (!isObj(c)) continue;
    if (typeof c.source === 'string') parts.push(c.source);
    for (const o of Array.isArray(c.outputs) ? c.outputs : []) {
      if (!isObj(o)) continue;
      if (typeof o.text === 'string') parts.push(o.text);
      else if (o.image !== undefined || o.data !== undefined) parts.push(JSON.stringify(o.data ?? o.image) ?? '');
    }
  }
  return parts.join('\n');
}

function fmtLines(start: unknown, n: number): string {
  const first = typeof start === 'number' && start > 0 ? start : 1;
  return `${first.toLocaleString('en-US')}–${(first + n - 1).toLocaleString('en-US')}`;
}

function readTool(r: Obj): Reading {
  const file = isObj(r.file) ? r.file : undefined;
  const filePath = str(file?.filePath) ?? '';
  if (r.type === 'text' && file && typeof file.content === 'string') {
    // Claude Code stopped the Read at its token cap (2.1.328: `truncatedByTokenCap`, numLines < totalLines).
    const partial =
      file.truncatedByTokenCap === true && typeof file.numLines === 'number' && typeof file.totalLines === 'number'
        ? `Claude Code's Read showed only lines ${fmtLines(file.startLine, file.numLines)} of ${file.totalLines.toLocaleString('en-US')} (its token cap), and that part is what was saved; the whole file is ${filePath}.`
        : undefined;
    return { kind: 'text', text: file.content, replace: (m) => readTextShape(filePath, m), ...(partial ? { partial } : {}) };
  }
  if (r.type === 'notebook' && file && Array.isArray(file.cells)) {
    return { kind: 'text', text: notebookText(file.cells), replace: (m) => readTextShape(filePath, m) };
  }
  if (r.type === 'image' || r.type === 'pdf' || r.type === 'parts' || r.type === 'file_unchanged') {
    return { kind: 'leave', why: `Read of type ${String(r.type)} reaches the model as ${r.type === 'file_unchanged' ? 'a one-line note' : 'an image or document block, priced by its pixels or pages'}` };
  }
  return { kind: 'unknown', why: `Read returned type ${JSON.stringify(r.type)}` };
}

function bashTool(r: Obj): Reading {
  if (typeof r.stdout !== 'string' && typeof r.stderr !== 'string') return { kind: 'unknown', why: 'Bash response without stdout or stderr' };
  if (r.isImage === true) return { kind: 'leave', why: 'Bash output is an image, which reaches the model as an image block' };
  const out = str(r.stdout) ?? '';
  const err = str(r.stderr) ?? '';
  const text = err ? `${out}${out && !out.endsWith('\n') ? '\n' : ''}--- stderr ---\n${err}` : out;
  const persistedPath = str(r.persistedOutputPath);
  const replace = (m: string): Obj => {
    // The persisted fields would make Claude Code show its own preview of the file instead of the message.
    const { persistedOutputPath: _p, persistedOutputSize: _s, stdout: _o, stderr: _e, ...rest } = r;
    return { ...rest, stdout: m, stderr: '', interrupted: r.interrupted === true, isImage: false, noOutputExpected: false };
  };
  return {
    kind: 'text',
    text,
    replace,
    ...(persistedPath
      ? { persisted: { path: persistedPath, bytes: typeof r.persistedOutputSize === 'number' ? r.persistedOutputSize : undefined, inlineChars: out.length, source: 'bash' as const } }
      : {}),
  };
}

function grepTool(r: Obj): Reading {
  const filenames = Array.isArray(r.filenames) ? r.filenames.filter((f): f is string => typeof f === 'string') : undefined;
  const text = typeof r.content === 'string' ? r.content : filenames ? filenames.join('\n') : undefined;
  if (text === undefined) return { kind: 'unknown', why: 'Grep response without content or filenames' };
  return { kind: 'text', text, replace: (m) => ({ mode: 'content', numFiles: 0, filenames: [], content: m, numLines: lineCount(m) }) };
}

function globTool(r: Obj): Reading {
  if (!Array.isArray(r.filenames)) return { kind: 'unknown', why: 'Glob response without filenames' };
  const names = r.filenames.filter((f): f is string => typeof f === 'string');
  return {
    kind: 'text',
    text: names.join('\n'),
    replace: (m) => {
      const lines = m.split('\n');
      return { ...r, filenames: lines, numFiles: lines.length, truncated: false, ...('totalMatches' in r ? { totalMatches: lines.length } : {}) };
    },
  };
}

function webFetchTool(r: Obj): Reading {
  if (typeof r.result !== 'string') return { kind: 'unknown', why: 'WebFetch response without result' };
  return { kind: 'text', text: r.result, replace: (m) => ({ ...r, result: m }) };
}

function webSearchTool(r: Obj): Reading {
  if (!Array.isArray(r.results)) return { kind: 'unknown', why: 'WebSearch response without results' };
  const text = r.results.map((x) => (typeof x === 'string' ? x : JSON.stringify(x) ?? '')).join('\n');
  return { kind: 'text', text, replace: (m) => ({ ...r, results: [m] }) };
}

function agentTool(r: Obj): Reading {
  if (!Array.isArray(r.content)) {
    // An agent launched in the background answers with a receipt; its report arrives later.
    return r.status === 'async_launched' ? { kind: 'leave', why: 'the agent runs in the background; this is its receipt' } : { kind: 'unknown', why: 'Agent response without content' };
  }
  const texts = r.content.filter((b): b is Obj => isObj(b) && b.type === 'text' && typeof b.text === 'string').map((b) => b.text as string);
  if (texts.length !== r.content.length) return { kind: 'unknown', why: 'Agent content with non-text blocks' };
  return { kind: 'text', text: texts.join('\n'), replace: (m) => ({ ...r, content: [{ type: 'text', text: m }] }) };
}

/** Claude Code's own notice for an MCP result it saved to a file instead of showing it. */
const MCP_SPILL_NOTICE_RE = /^Error: result \(([\d,]+) characters\) exceeds maximum allowed tokens\. Output has been saved to (\/[^\n]+?)\.?\n/;

function mcpTool(r: unknown): Reading {
  if (typeof r === 'string') {
    const m = MCP_SPILL_NOTICE_RE.exec(r);
    return { kind: 'text', text: r, replace: (msg) => msg, ...(m ? { persisted: { path: m[2]!, inlineChars: r.length, source: 'mcp-notice' as const } } : {}) };
  }
  const blocks = Array.isArray(r) ? r : isObj(r) && Array.isArray(r.content) ? r.content : undefined;
  if (!blocks || !blocks.every(isObj)) return { kind: 'unknown', why: 'MCP response that is neither a string nor content blocks' };
  const images = (blocks as Obj[]).filter((b) => b.type === 'image');
  const text = (blocks as Obj[])
    .filter((b) => b.type !== 'image')
    .map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : JSON.stringify(b) ?? ''))
    .join('\n');
  const wrapped = !Array.isArray(r);
  return {
    kind: 'mcp-blocks',
    blocks: blocks as Obj[],
    text,
    images,
    replace: (msg, kept) => {
      const out = [...kept, { type: 'text', text: msg }];
      return wrapped ? { ...(r as Obj), content: out } : out;
    },
  };
}

const BUILT_IN: Record<string, (r: Obj) => Reading> = {
  Read: readTool,
  Bash: bashTool,
  Grep: grepTool,
  Glob: globTool,
  WebFetch: webFetchTool,
  WebSearch: webSearchTool,
  Agent: agentTool,
  // The Agent tool's name before 2.x.
  Task: agentTool,
};

/** How the hook reads `response` of `toolName`. */
export function readToolResponse(toolName: string, response: unknown): Reading {
  if (toolName.startsWith('mcp__')) return mcpTool(response);
  if (ONE_LINE_TOOLS.has(toolName)) return { kind: 'leave', why: `${toolName} shows the model a one-line result` };
  const read = Object.hasOwn(BUILT_IN, toolName) ? BUILT_IN[toolName] : undefined;
  if (!read) return { kind: 'unknown', why: `Spillway does not know the output shape of ${toolName}` };
  if (!isObj(response)) return { kind: 'unknown', why: `${toolName} returned ${Array.isArray(response) ? 'an array' : typeof response}, not its usual object` };
  return read(response);
}

/**
 * Tokens one image block may cost the model: Claude scales images to about 1.15 megapixels, about
 * 1,600 tokens (width × height / 750). Images are priced by pixels, never by their base64 length.
 */
export const MCP_IMAGE_TOKENS = 1_600;

/** The limit options the pass check reads (from `--limit` and `--context-window`). */
export interface PassLimits {
  limitTokens?: number;
  contextWindowTokens?: number;
}

/**
 * The smallest limit the rules files give a tool (undefined: none; NaN: a file the pass check
 * cannot judge, so the full hook must), as rules/match.ts's strictestLimit computes it.
 */
export type RuleLimitLookup = (toolName: string) => number | undefined;

/**
 * Whether Claude Code's event passes unchanged, judged with the hook's shapes and the pipeline's
 * cheap checks alone (the hook's entry asks this before it loads the guard). True only where
 * handleClaudeCodeHook returns nothing at all (no answer, no note) before calling the guard: the
 * same early checks, on the same limit. Anything that may be over the limit, carry base64 worth
 * cutting, be binary in a string, or be a Bash result Claude Code persisted: false, and the full
 * hook decides. test/integrations/hook-fast.test.ts checks the two against each other; change them
 * together. Never throws.
 *
 * A rule (docs/config.md) may lower a tool's limit: `ruleLimit` gives the smallest limit any rule
 * for this tool states, valid or not (the full hook never resolves a lower one, so a pass stays
 * safe). A `--limit` flag comes before every rule.
 */
export function claudeCodePasses(input: unknown, opts: PassLimits, ruleLimit?: RuleLimitLookup): boolean {
  try {
    if (!isObj(input)) return false;
    if (input.hook_event_name !== undefined && input.hook_event_name !== 'PostToolUse') return true;
    if (input.tool_response === undefined || input.tool_response === null) return true;
    const toolName = typeof input.tool_name === 'string' && input.tool_name ? input.tool_name : 'tool';
    let limit = resolveLimit(opts);
    if (ruleLimit && opts.limitTokens === undefined) {
      const strictest = ruleLimit(toolName);
      if (strictest !== undefined) {
        if (!(strictest > 0)) return false;
        limit = resolveLimit({ ...opts, limitTokens: Math.min(strictest, DEFAULT_LIMIT_TOKENS) });
      }
    }
    const reading = readToolResponse(toolName, input.tool_response);
    switch (reading.kind) {
      case 'leave':
        return true;
      case 'unknown':
        return sizeOf(input.tool_response) <= limit;
      case 'mcp-blocks':
        return fitsAsText(reading.text, limit - reading.images.length * MCP_IMAGE_TOKENS);
      case 'text':
        return !reading.persisted && fitsAsText(reading.text, limit);
    }
  } catch {
    return false;
  }
}
