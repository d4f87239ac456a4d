/**
 * Keeping a spilled result valid for the tool's `outputSchema`.
 *
 * MCP says a tool with an output schema MUST return `structuredContent` that conforms to it, and the
 * SDK's Client rejects a non-error result that lacks it or breaks it. So when a result is spilled,
 * its structuredContent is not dropped but cut down: strings shortened, arrays and maps trimmed,
 * and the spill message put in the largest string (clients that show the model structuredContent
 * rather than content then still see it). Every candidate is checked with the same validator the
 * SDK Client uses (Ajv), from the most useful to the most bare, and the first valid one that fits
 * the budget wins. When nothing small is valid, the caller falls back (see `guardToolResult`).
 */

/** Extra chars a cut-down structuredContent may take on top of the spill message. */
export const STRUCTURED_EXTRA_BUDGET_CHARS = 4_000;
/** Deepest nesting walked while cutting; deeper values are kept only if small. */
const MAX_SHRINK_DEPTH = 64;

export type Validate = (value: unknown) => { valid: boolean; error?: string };

interface CutLevel {
  name: string;
  /** Longest string kept (chars); longer ones are cut and end with an ellipsis. */
  stringChars: number;
  /** Array items kept. */
  arrayItems: number;
  /** Object members kept (maps with thousands of keys). */
  objectKeys: number;
  /** Put the message into the largest string leaf. */
  withMessage: boolean;
}

const LEVELS: CutLevel[] = [
  { name: 'message+trimmed', stringChars: 200, arrayItems: 3, objectKeys: 50, withMessage: true },
  { name: 'message+bare', stringChars: 40, arrayItems: 1, objectKeys: 20, withMessage: true },
  { name: 'trimmed', stringChars: 200, arrayItems: 3, objectKeys: 50, withMessage: false },
  { name: 'bare', stringChars: 40, arrayItems: 1, objectKeys: 20, withMessage: false },
  { name: 'empty', stringChars: 0, arrayItems: 0, objectKeys: 1_000, withMessage: false },
];

export interface ShrinkResult {
  value: unknown;
  /** Which candidate was kept: `projection`, `original`, or a cut level's name. */
  strategy: string;
}

export interface ShrinkOptions {
  validate: Validate;
  /** The spill message, written into the largest string when the schema allows it. */
  message: string;
  /** Largest serialized size (chars) accepted for the kept structuredContent. */
  budgetChars: number;
  /** A projection of the value (from `--projection`), tried first. */
  projected?: unknown;
}

function jsonSize(v: unknown): number {
  try {
    return JSON.stringify(v)?.length ?? 0;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Path (as keys) of the longest string leaf, to carry the message. */
function largestStringPath(value: unknown): Array<string | number> | undefined {
  let best: { len: number; path: Array<string | number> } | undefined;
  const walk = (v: unknown, p: Array<string | number>, depth: number) => {
    if (depth > MAX_SHRINK_DEPTH) return;
    if (typeof v === 'string') {
      if (!best || v.length > best.len) best = { len: v.length, path: p };
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...p, i], depth + 1));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, [...p, k], depth + 1);
  };
  walk(value, [], 0);
  return best?.path;
}

function cut(v: unknown, level: CutLevel, messagePath: Array<string | number> | undefined, message: string, path: Array<string | number>, depth: number): unknown {
  const isMessageLeaf = messagePath !== undefined && messagePath.length === path.length && messagePath.every((k, i) => k === path[i]);
  if (typeof v === 'string') {
    if (isMessageLeaf) return message;
    if (v.length <= level.stringChars) return v;
    return level.stringChars === 0 ? '' : `${v.slice(0, level.stringChars)}…`;
  }
  if (depth > MAX_SHRINK_DEPTH) return jsonSize(v) <= level.stringChars ? v : null;
  if (Array.isArray(v)) {
    // Keep the branch that carries the message even when it lies past the kept items.
    const keep = new Set<number>();
    for (let i = 0; i < Math.min(v.length, level.arrayItems); i++) keep.add(i);
    const onPath = messagePath && messagePath.length > path.length && path.every((k, i) => k === messagePath[i]) ? messagePath[path.length] : undefined;
    if (typeof onPath === 'number') keep.add(onPath);
    return [...keep].sort((a, b) => a - b).map((i) => cut(v[i], level, messagePath, message, [...path, i], depth + 1));
  }
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    const entries = Object.entries(v);
    const onPath = messagePath && messagePath.length > path.length && path.every((k, i) => k === messagePath[i]) ? messagePath[path.length] : undefined;
    entries.forEach(([k, x], i) => {
      if (i < level.objectKeys || k === onPath) out[k] = cut(x, level, messagePath, message, [...path, k], depth + 1);
    });
    return out;
  }
  return v;
}

/** The smallest useful structuredContent that still validates, or undefined when none fits. */
export function shrinkStructured(value: unknown, opts: ShrinkOptions): ShrinkResult | undefined {
  const ok = (v: unknown) => {
    if (jsonSize(v) > opts.budgetChars) return false;
    try {
      return opts.validate(v).valid;
    } catch {
      return false;
    }
  };
  // A structuredContent that is already small stays whole: the bulk was in `content`.
  if (jsonSize(value) <= STRUCTURED_EXTRA_BUDGET_CHARS && ok(value)) return { value, strategy: 'original' };
  if (opts.projected !== undefined && ok(opts.projected)) return { value: opts.projected, strategy: 'projection' };
  const messagePath = largestStringPath(value);
  for (const level of LEVELS) {
    if (level.withMessage && messagePath === undefined) continue;
    const candidate = cut(value, level, level.withMessage ? messagePath : undefined, opts.message, [], 0);
    if (ok(candidate)) return { value: candidate, strategy: level.name };
  }
  return undefined;
}
