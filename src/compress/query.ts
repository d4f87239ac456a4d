/**
 * The drill-down query language of reference handles, parsed and checked without SQLite, so the
 * CLI, the MCP proxy tools and the library share one grammar:
 *   where:   `field=value`, `field!=value`, `field>n`, `field<n`, `field>=n`, `field<=n`, `field~text`, `field!~text`
 *            (`~text` alone matches anywhere in the row); conditions are ANDed
 *   sort:    `field` or `-field` (descending), several allowed
 *   group:   group-by fields + aggregates `count`, `sum:F`, `avg:F`, `min:F`, `max:F`
 *   distinct, select (project), offset/limit
 */

export type Op = '=' | '!=' | '>' | '<' | '>=' | '<=' | '~' | '!~';

export interface Condition {
  /** Field name, dotted for nested fields (`user.login`); empty for "anywhere in the row". */
  field: string;
  op: Op;
  value: string | number | boolean | null;
}

export type AggName = 'count' | 'sum' | 'avg' | 'min' | 'max';

export interface Aggregate {
  fn: AggName;
  field?: string;
  /** Output name, exactly as given: `count`, `sum:amount`. */
  as: string;
}

export interface HandleQuery {
  where?: Array<string | Condition>;
  /** Fields to return (project). */
  select?: string[];
  /** `field` / `-field`, or a list. */
  sort?: string | string[];
  groupBy?: string | string[];
  /** `count`, `sum:F`, `avg:F`, `min:F`, `max:F` (default `count` when grouping). */
  agg?: string | string[];
  /** Distinct values (combinations) of these fields. */
  distinct?: string | string[];
  offset?: number;
  limit?: number;
}

export class QueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'QueryError';
  }
}

const COND_RE = /^\s*([^=!<>~]*?)\s*(!=|>=|<=|!~|=|>|<|~)\s*([\s\S]*)$/;
const FIELD_RE = /^[^\u0000-\u001f]{1,200}$/;

export function parseCondition(s: string | Condition): Condition {
  if (typeof s !== 'string') {
    if (!s || typeof s !== 'object' || typeof s.field !== 'string' || !['=', '!=', '>', '<', '>=', '<=', '~', '!~'].includes(s.op)) {
      throw new QueryError(`bad condition ${JSON.stringify(s)}`);
    }
    return s;
  }
  const m = COND_RE.exec(s);
  if (!m) throw new QueryError(`bad condition ${JSON.stringify(s)}: use field=value, field!=value, field>n, field<n, field~text`);
  const field = m[1]!.trim();
  const op = m[2] as Op;
  const raw = m[3]!;
  if (!field && op !== '~' && op !== '!~') throw new QueryError(`bad condition ${JSON.stringify(s)}: missing field name`);
  if (field && !FIELD_RE.test(field)) throw new QueryError(`bad field name ${JSON.stringify(field)}`);
  return { field, op, value: op === '~' || op === '!~' ? raw : coerce(raw) };
}

/** `42` → 42, `true` → true, `null` → null, `"42"` → "42" (quotes force text). */
export function coerce(raw: string): string | number | boolean | null {
  const t = raw.trim();
  if (/^".*"$/s.test(t)) return t.slice(1, -1);
  if (t === 'null') return null;
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) return Number(t);
  return raw;
}

export function parseAggregate(s: string): Aggregate {
  const m = /^(count|sum|avg|min|max)(?::(.+))?$/.exec(s.trim());
  if (!m) throw new QueryError(`bad aggregate ${JSON.stringify(s)}: use count, sum:F, avg:F, min:F or max:F`);
  const fn = m[1] as AggName;
  if (fn !== 'count' && !m[2]) throw new QueryError(`aggregate ${fn} needs a field: ${fn}:FIELD`);
  return { fn, field: m[2]?.trim(), as: s.trim() };
}

export function parseSort(s: string | string[] | undefined): Array<{ field: string; desc: boolean }> {
  if (!s) return [];
  const list = (Array.isArray(s) ? s : [s]).flatMap((x) => x.split(',')).map((x) => x.trim()).filter(Boolean);
  return list.map((x) => (x.startsWith('-') ? { field: x.slice(1), desc: true } : { field: x.replace(/^\+/, ''), desc: false }));
}

export const asList = (x: string | string[] | undefined): string[] =>
  x === undefined ? [] : (Array.isArray(x) ? x : [x]).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
