import fs from 'node:fs';
import { ADAPTERS, CLIENT_IDS, type ClientId } from '../../agents/index.js';
import { buildPreview, MAX_MESSAGE_CHARS, PREVIEW_CHARS, truncate } from '../../pipeline/index.js';
import type { DrillDownToolNames, GuardOptions, GuardResult, Profile, ReadMoreTools, SummarizeHook, ToolCallRef } from '../../pipeline/index.js';
import type { SpillRule } from '../../pipeline/types.js';
import { STRUCTURED_EXTRA_BUDGET_CHARS, shrinkStructured, type Validate } from './structured.js';
import { mcpContentText } from '../../summarize/index.js';
import { errMessage, isObj } from '../../pipeline/values.js';

/** The guard entry point (`guardLargeResult` from src/pipeline), injectable for tests of failure paths. */
export type GuardFn = (result: unknown, options: GuardOptions) => Promise<GuardResult | null>;

/** `_meta` key on a replaced result: where the full result went. */
export const SPILL_META_KEY = 'spillway/spill';
/** Longest projected JSON (chars) quoted in the message; a larger projection is left to the drill-down tools. */
export const MAX_PROJECTION_IN_MESSAGE_CHARS = 6_000;

export interface ToolCallContext {
  toolName: string;
  toolInput?: unknown;
  intent?: string;
  /** The tool's declared outputSchema, with its compiled validator. */
  outputSchema?: { validate: Validate };
  /** `(value) => projected value` for this tool, from `--projection`. */
  project?: (value: unknown) => unknown;
  /** The client's tool call (its id, client, session), recorded in the sidecar. */
  call?: ToolCallRef;
}

/**
 * What the MCP client shows its model of a tool result, which decides when a result is too large: its
 * adapter's `mcp.shows` (src/agents/<client>/index.ts says what was seen with which version):
 * - `structured-first`: the serialized structuredContent when there is one, the content blocks only
 *   when there is not (images in content reach the model as images, priced by pixels).
 * - `content-only`: the content blocks' text, structuredContent ignored.
 * - `generic`: an unknown client may show either or both, so both are counted (the safe bound).
 */
export type McpClientKind = ClientId | 'generic';
export const MCP_CLIENT_KINDS: readonly McpClientKind[] = [...CLIENT_IDS, 'generic'];

/** The tokenizer family a client's models count with (its adapter's), o200k for a client not known. */
export function mcpProfileOf(client: McpClientKind | undefined): Profile {
  return client && client !== 'generic' ? ADAPTERS[client].mcp.profile : 'o200k';
}

/** What each client shows its model, in words for `--client`'s help. */
export function mcpClientsHelp(): string {
  return CLIENT_IDS.map((id) => `${id}: ${ADAPTERS[id].mcp.shows === 'structured-first' ? 'the serialized structuredContent, not the content blocks' : 'the content blocks'}`).join('; ');
}

/** The text `client` shows the model of `result`, or undefined when that is the whole result (generic). */
export function shownText(result: Obj, client: McpClientKind): string | undefined {
  if (client === 'generic') return undefined;
  if (ADAPTERS[client].mcp.shows === 'structured-first' && result.structuredContent !== undefined) {
    try {
      return JSON.stringify(result.structuredContent) ?? '';
    } catch {
      return undefined;
    }
  }
  const blocks = Array.isArray(result.content) ? result.content : [];
  return blocks
    .map((b) => {
      if (!isObj(b)) return '';
      if (b.type === 'text' && typeof b.text === 'string') return b.text;
      if (b.type === 'image' || b.type === 'audio') return `[${b.type}]`;
      try {
        return JSON.stringify(b) ?? '';
      } catch {
        return '';
      }
    })
    .join('\n');
}

export interface GuardDeps {
  guard: GuardFn;
  /** What the client shows the model (default `generic`). */
  client?: McpClientKind;
  /** The tools the model has to read a spill (the message's advice). */
  readMore?: ReadMoreTools;
  /** Creates the session folder on first use and returns it. */
  session: () => Promise<string>;
  limitTokens?: number;
  contextWindowTokens?: number;
  summarize?: SummarizeHook;
  /** The guard rule that set this call's limit and summarizer, for the sidecar (docs/config.md). */
  rule?: SpillRule;
  /** Sentence appended to the message telling the model how to drill down (empty: none). */
  drillDownHint?: (g: GuardResult) => string;
  /** The drill-down tools' names as registered (asked at each spill: a later tools/list may change them); the guard's message names these. */
  drillDownNames?: () => DrillDownToolNames | undefined;
  log: (msg: string) => void;
  signal?: AbortSignal;
}

type Obj = Record<string, unknown>;

function previewOf(result: Obj): string {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const texts = blocks.filter((b): b is Obj => isObj(b) && b.type === 'text' && typeof b.text === 'string').map((b) => b.text as string);
  let text = texts.join('\n');
  if (!text) {
    try {
      text = JSON.stringify(result.structuredContent ?? result) ?? '';
    } catch {
      text = '';
    }
  }
  // The guard's own preview: structure first, base64 masked, never a split surrogate pair.
  return buildPreview(text, undefined, PREVIEW_CHARS);
}

/** The JSON a projection spec is written against: what the model reads (a text block that is JSON), else structuredContent. */
function jsonValueOf(result: Obj): unknown {
  const blocks = Array.isArray(result.content) ? result.content : [];
  for (const b of blocks) {
    if (isObj(b) && b.type === 'text' && typeof b.text === 'string') {
      const t = b.text.trimStart();
      if (t.startsWith('{') || t.startsWith('[')) {
        try {
          return JSON.parse(b.text);
        } catch {
          /* not JSON */
        }
      }
    }
  }
  return result.structuredContent;
}

/** The structuredContent of a spilled result's linked form (assets replaced by references), if it has one. */
async function linkedStructured(g: GuardResult): Promise<unknown> {
  const file = g.linkedPath ?? g.payloadPath;
  if (!file?.endsWith('.linked.json')) return undefined;
  try {
    const v = JSON.parse(await fs.promises.readFile(file, 'utf8')) as unknown;
    return isObj(v) ? v.structuredContent : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Guard one tools/call (or tasks/result) result. Returns the result the client should get instead,
 * or null to forward the original untouched. Never throws: when the guard itself fails, the client
 * still gets a bounded message (with a preview), never the oversized payload.
 */
export async function guardToolResult(result: Obj, ctx: ToolCallContext, deps: GuardDeps): Promise<Obj | null> {
  let g: GuardResult | null;
  let failure: string | undefined;
  try {
    const sessionPath = await deps.session();
    const names = deps.readMore === 'drill-down' ? deps.drillDownNames?.() : undefined;
    const shown = shownText(result, deps.client ?? 'generic');
    g = await deps.guard(result, {
      sessionPath,
      toolName: ctx.toolName,
      toolInput: ctx.toolInput,
      intent: ctx.intent,
      limitTokens: deps.limitTokens,
      contextWindowTokens: deps.contextWindowTokens,
      summarize: deps.summarize,
      signal: deps.signal,
      readMore: deps.readMore,
      ...(names ? { drillDownNames: names } : {}),
      ...(ctx.call ? { call: ctx.call } : {}),
      ...(deps.rule ? { rule: deps.rule } : {}),
      ...(shown !== undefined ? { shown } : {}),
    });
  } catch (err) {
    g = null;
    failure = errMessage(err);
    deps.log(`guard failed on ${ctx.toolName}: ${failure}`);
  }
  if (!g && failure === undefined) return null;

  let message: string;
  if (g) {
    // The guard's message already names the drill-down tools as registered (drillDownNames), as its sidecar records it.
    message = g.message;
    const hint = deps.drillDownHint?.(g);
    if (hint) message = `${message}\n${hint}`;
  } else {
    message =
      `Spillway: the result of ${ctx.toolName} was too large for the context and could not be saved ` +
      `(${truncate(failure ?? 'unknown error', 300)}). Preview:\n${previewOf(result)}`;
  }

  if (ctx.project) {
    try {
      const value = jsonValueOf(result);
      if (value !== undefined) {
        const projected = ctx.project(value);
        const text = JSON.stringify(projected);
        if (text !== undefined && text.length <= MAX_PROJECTION_IN_MESSAGE_CHARS) message += `\nProjected fields:\n${text}`;
      }
    } catch (err) {
      deps.log(`projection failed on ${ctx.toolName}: ${errMessage(err)}`);
    }
  }
  message = truncate(message, MAX_MESSAGE_CHARS);

  const out: Obj = { content: [{ type: 'text', text: message }] };
  if (result.isError === true) out.isError = true;
  const meta: Obj = isObj(result._meta) ? { ...result._meta } : {};
  if (g) {
    meta[SPILL_META_KEY] = {
      action: g.action,
      tokens: g.estimate.tokens,
      limitTokens: g.limitTokens,
      ...(g.payloadPath ? { payloadPath: g.payloadPath } : {}),
      ...(g.metaPath ? { metaPath: g.metaPath } : {}),
    };
  }
  if (Object.keys(meta).length) out._meta = meta;

  if (result.structuredContent !== undefined && ctx.outputSchema) {
    // structuredContent is what a structured-first client shows the model: it carries the whole message.
    // When assets were cut out of a result that fits, its linked form (references instead of the
    // base64) may stand as it is; the original never does, or the model reads the blob after all.
    const linked = g?.action === 'inline-assets' ? await linkedStructured(g) : undefined;
    const kept = shrinkStructured(linked ?? result.structuredContent, {
      validate: ctx.outputSchema.validate,
      message,
      budgetChars: message.length + STRUCTURED_EXTRA_BUDGET_CHARS,
      keepSmall: g?.action !== 'inline-assets' || linked !== undefined,
    });
    if (kept) out.structuredContent = kept.value;
    else if (!out.isError) {
      // No valid value carries the message without making up records. An error result is the one
      // shape a client accepts without structuredContent, and clients then show its content.
      out.isError = true;
      (out.content as Obj[]).push({
        type: 'text',
        text: "Spillway: marked as an error only because this tool's output schema admits no small value that can carry this message; the call itself succeeded.",
      });
    }
  }
  // Without a declared schema the client validates nothing, so structuredContent is dropped: the message is the result.
  return out;
}

/**
 * What a summarizer should read of an MCP tool result: the text it carries, not its JSON envelope
 * (src/summarize/mcp.ts; every summarizer made by createSummarizer reads results so, which is how
 * `spillway summarize` and the inspector's re-run agree with the guard).
 */
export const summaryTextOfMcp = mcpContentText;

/** A summarizer that reads the text of MCP results rather than their JSON (see {@link summaryTextOfMcp}). */
export function mcpAwareSummarizer(hook: SummarizeHook | undefined): SummarizeHook | undefined {
  if (!hook || typeof hook === 'function') return hook; // a bare prompt function gets the built prompt: leave it
  return {
    provider: hook.provider,
    summarize: (req, o) => {
      const text = summaryTextOfMcp(req.text);
      // The guard's figure counts the whole result, not the content read out of it.
      return hook.summarize({ ...req, text, estimate: text === req.text ? req.estimate : undefined }, o);
    },
  };
}
