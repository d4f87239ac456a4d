import { isObj } from '../../pipeline/values.js';
/**
 * Keeping a spilled result valid for the tool's `outputSchema`, with the message inside.
 *
 * MCP says a tool with an output schema MUST return `structuredContent` that conforms to it, and the
 * SDK's Client rejects a non-error result that lacks it or breaks it. Claude Code and Codex also show
 * the model the serialized structuredContent rather than the content blocks, so the message (where
 * the result went, how to read it, the summary) has to be in structuredContent to be read at all.
 *
 * So a spilled result's structuredContent is the original's skeleton: the message in one string
 * field outside any array, short strings and numbers kept (they are the tool's real values), long
 * strings emptied, and every array emptied. No array item is ever made up or kept as a sample: a
 * trimmed or invented record is something a model takes for data. Each candidate is checked with the
 * server's own schema (the validator the SDK Client uses), and the first that validates within the
 * budget wins. When none does (the schema wants items, or has no string field outside an array),
 * the caller falls back to an error result without structuredContent (see `guardToolResult`).
 */

/** Extra chars a structuredContent may take on top of the spill message. */
export const STRUCTURED_EXTRA_BUDGET_CHARS = 4_000;
/** Strings this short are kept in the skeleton: ids, paths, statuses, the tool's own small values. */
export const KEPT_STRING_CHARS = 200;
/** Deepest nesting walked; deeper values are emptied. */
const MAX_SHRINK_DEPTH = 64;
/** String fields tried for the message (longest first); each try is one validation. */
const MAX_MESSAGE_FIELD_TRIES = 20;
/** Name of the field added for the message when the schema allows one and no string field can carry it. */
export const MESSAGE_FIELD = 'spillway';

export type Validate = (value: unknown) => { valid: boolean; error?: string };

export interface ShrinkResult {
  value: unknown;
  /** Which candidate was kept: `original` (already small), `message-in-field`, `message-added`. */
  strategy: 'original' | 'message-in-field' | 'message-added';
}

export interface ShrinkOptions {
  validate: Validate;
  /** The spill message, header and summary. */
  message: string;
  /** Largest serialized size (chars) accepted. */
  budgetChars: number;
  /** Whether a small, valid value may be kept as it is (false when it still holds what was cut out). */
  keepSmall?: boolean;
}

type Path = Array<string>;
type Obj = Record<string, unknown>;

function jsonSize(v: unknown): number {
  try {
    return JSON.stringify(v)?.length ?? 0;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Paths of string leaves that are not inside an array, longest first. */
function stringFieldsOutsideArrays(value: unknown): Path[] {
  const found: Array<{ path: Path; len: number }> = [];
  const walk = (v: unknown, p: Path, depth: number) => {
    if (depth > MAX_SHRINK_DEPTH) return;
    if (typeof v === 'string') found.push({ path: p, len: v.length });
    else if (isObj(v)) for (const [k, x] of Object.entries(v)) walk(x, [...p, k], depth + 1);
  };
  walk(value, [], 0);
  return found.sort((a, b) => b.len - a.len).map((f) => f.path);
}

/** The skeleton of `v`: arrays emptied, long strings emptied, `message` at `at`. */
function skeleton(v: unknown, at: Path | undefined, message: string, p: Path, depth: number): unknown {
  if (at && at.length === p.length && at.every((k, i) => k === p[i])) return message;
  if (typeof v === 'string') return v.length <= KEPT_STRING_CHARS ? v : '';
  if (Array.isArray(v)) return [];
  if (isObj(v)) {
    if (depth > MAX_SHRINK_DEPTH) return {};
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) out[k] = skeleton(x, at, message, [...p, k], depth + 1);
    return out;
  }
  return v;
}

/** The structuredContent to send with a spill, or undefined when no valid one carries the message. */
export function shrinkStructured(value: unknown, opts: ShrinkOptions): ShrinkResult | undefined {
  const ok = (v: unknown) => {
    if (jsonSize(v) > opts.budgetChars) return false;
    try {
      return opts.validate(v).valid;
    } catch {
      return false;
    }
  };
  // Already small: the bulk was in `content`, and a client that shows structuredContent sees exactly
  // what it would have seen without Spillway.
  if (opts.keepSmall !== false && jsonSize(value) <= STRUCTURED_EXTRA_BUDGET_CHARS && ok(value)) return { value, strategy: 'original' };
  for (const at of stringFieldsOutsideArrays(value).slice(0, MAX_MESSAGE_FIELD_TRIES)) {
    const candidate = skeleton(value, at, opts.message, [], 0);
    if (ok(candidate)) return { value: candidate, strategy: 'message-in-field' };
  }
  if (isObj(value) && !(MESSAGE_FIELD in value)) {
    const candidate = { ...(skeleton(value, undefined, opts.message, [], 0) as Obj), [MESSAGE_FIELD]: opts.message };
    if (ok(candidate)) return { value: candidate, strategy: 'message-added' };
  }
  return undefined;
}
