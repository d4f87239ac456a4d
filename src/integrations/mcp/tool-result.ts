import { MAX_MESSAGE_CHARS, PREVIEW_CHARS } from '../../pipeline/index.js';
import type { GuardOptions, GuardResult, SummarizeHook } from '../../pipeline/index.js';
import { STRUCTURED_EXTRA_BUDGET_CHARS, shrinkStructured, type Validate } from './structured.js';

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
}

export interface GuardDeps {
  guard: GuardFn;
  /** Creates the session folder on first use and returns it. */
  session: () => Promise<string>;
  limitTokens?: number;
  contextWindowTokens?: number;
  summarize?: SummarizeHook;
  /** Sentence appended to the message telling the model how to drill down (empty: none). */
  drillDownHint?: (g: GuardResult) => string;
  log: (msg: string) => void;
  signal?: AbortSignal;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

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
  return clip(text, PREVIEW_CHARS);
}

/** First JSON value the result carries: structuredContent, else a text block that parses as JSON. */
function jsonValueOf(result: Obj): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
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
  return undefined;
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
    g = await deps.guard(result, {
      sessionPath,
      toolName: ctx.toolName,
      toolInput: ctx.toolInput,
      intent: ctx.intent,
      limitTokens: deps.limitTokens,
      contextWindowTokens: deps.contextWindowTokens,
      summarize: deps.summarize,
      signal: deps.signal,
    });
  } catch (err) {
    g = null;
    failure = err instanceof Error ? err.message : String(err);
    deps.log(`guard failed on ${ctx.toolName}: ${failure}`);
  }
  if (!g && failure === undefined) return null;

  let message: string;
  if (g) {
    message = g.message;
    const hint = deps.drillDownHint?.(g);
    if (hint) message = `${message}\n${hint}`;
  } else {
    message =
      `Spillway: the result of ${ctx.toolName} was too large for the context and could not be saved ` +
      `(${clip(failure ?? 'unknown error', 300)}). Preview:\n${previewOf(result)}`;
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
      deps.log(`projection failed on ${ctx.toolName}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  message = clip(message, MAX_MESSAGE_CHARS);

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
    let projected: unknown;
    try {
      projected = ctx.project?.(result.structuredContent);
    } catch {
      projected = undefined;
    }
    const kept = shrinkStructured(result.structuredContent, {
      validate: ctx.outputSchema.validate,
      message,
      budgetChars: message.length + STRUCTURED_EXTRA_BUDGET_CHARS,
      projected,
    });
    if (kept) out.structuredContent = kept.value;
    else if (!out.isError) {
      // No small value satisfies the schema. An error result is the one shape a client accepts
      // without structuredContent, and it still carries the message with the path.
      out.isError = true;
      (out.content as Obj[]).push({
        type: 'text',
        text: "Spillway: marked as an error only because this tool's output schema admits no small value; the call itself succeeded.",
      });
    }
  }
  // Without a declared schema the client validates nothing, so structuredContent is dropped: the message is the result.
  return out;
}
