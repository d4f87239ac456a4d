import { errText } from './errors.js';
import { hasBase64Run } from './base64.js';
import { binaryStringForm } from './detect.js';
import { MIN_BINARY_STRING_CHARS } from './limits.js';

/**
 * JSON for the guard: a size bound that never builds the string, and serializers that never throw.
 *
 * | call | for |
 * | --- | --- |
 * | {@link jsonBytesUpperBound} | "can this value be over the limit?" without serializing it |
 * | {@link jsonShape} | the same bound, and whether a string in it may hold base64, in one walk |
 * | {@link serializeValue} | the text of a parsed tool result: JSON.stringify, else {@link safeStringify} with a note |
 * | {@link safeStringify} | JSON of values JSON.stringify refuses (cycles, BigInt, 100,000-deep nesting) |
 * | {@link jsonSafe} | a tool input made storable in a sidecar |
 */

/**
 * Upper bound of the UTF-8 bytes of JSON.stringify(value), walking without building the string;
 * stops as soon as it passes `cap`. Infinity when it cannot tell (toJSON, cycles, BigInt…).
 */
export function jsonBytesUpperBound(value: unknown, cap: number): number {
  return jsonShape(value, cap).bytes;
}

/**
 * {@link jsonBytesUpperBound}, and whether a string value holds a run of `runChars` chars base64
 * could be made of (see hasBase64Run) or is binary read as text (asked only with `runChars`), found on the same walk. `longRun` is only complete when
 * `bytes` is within `cap` (the walk stops past it).
 */
export function jsonShape(value: unknown, cap: number, runChars = Infinity): { bytes: number; longRun: boolean } {
  let total = 0;
  let longRun = false;
  const stack: unknown[] = [value];
  let visited = 0;
  while (stack.length) {
    const v = stack.pop();
    if (++visited > cap) return { bytes: Infinity, longRun };
    const t = typeof v;
    if (t === 'string') {
      total += plainJsonChars(v as string) + 2;
      if (!longRun && (v as string).length >= runChars) longRun = hasBase64Run(v as string, runChars);
      // A string that is binary read as text is cut out at any size (extract.ts binaryLiteral).
      if (!longRun && runChars !== Infinity && (v as string).length >= MIN_BINARY_STRING_CHARS) longRun = binaryStringForm(v as string) !== undefined;
    }
    else if (t === 'number') total += numberChars(v as number);
    else if (t === 'boolean') total += 5;
    else if (v === null || t === 'undefined' || t === 'function' || t === 'symbol') total += 4; // "null" (or dropped)
    else if (t === 'object') {
      if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return { bytes: Infinity, longRun };
      if (Array.isArray(v)) {
        total += 2 + v.length;
        for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
      } else {
        const keys = Object.keys(v as object);
        total += 2 + keys.length;
        for (let i = 0; i < keys.length; i++) {
          const k = keys[i]!;
          total += plainJsonChars(k) + 3;
          stack.push((v as Record<string, unknown>)[k]);
        }
      }
    } else return { bytes: Infinity, longRun };
    if (total > cap) return { bytes: total, longRun };
  }
  return { bytes: total, longRun };
}

/** Bytes of a string's JSON text without its quotes: exact for printable ASCII, else at most 6 per char. */
function plainJsonChars(s: string): number {
  const n = s.length;
  if (n > 64) return PLAIN_JSON_RE.test(s) ? 6 * n : n;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 34 || c === 92) return 6 * n;
  }
  return n;
}
/** Any character but printable ASCII other than `"` and `\`: then a string may take up to 6 bytes per char. */
const PLAIN_JSON_RE = /[^\x20\x21\x23-\x5b\x5d-\x7e]/;

function digits(x: number): number {
  let d = 1;
  for (; x >= 10; x = Math.floor(x / 10)) d++;
  return d;
}

/**
 * Upper bound of a number's chars in JSON without String(v): exact for integers; for values with
 * at most two decimals, a two-decimal string round-trips so the shortest one is no longer;
 * otherwise the longest double (25, e.g. `-0.0000010020268901341902`).
 */
function numberChars(v: number): number {
  if (!(v > -1e15 && v < 1e15)) return 25;
  if (Number.isInteger(v)) return digits(Math.abs(v)) + (v < 0 ? 1 : 0);
  const n = Math.round(v * 100);
  if (n / 100 === v) return digits(Math.abs(n)) + 3;
  return 25;
}

/**
 * JSON for values JSON.stringify refuses (cycles, BigInt, nesting deeper than the stack):
 * iterative, so depth is bounded only by memory; a cycle becomes "[Circular]", BigInt a string.
 * Elsewhere it writes what JSON.stringify would.
 */
export function safeStringify(value: unknown): string {
  type Task = { v: unknown; inArray: boolean } | { lit: string } | { leave: object };
  const out: string[] = [];
  const stack: Task[] = [{ v: value, inArray: true }];
  const ancestors = new Set<object>();
  while (stack.length) {
    const t = stack.pop()!;
    if ('lit' in t) {
      out.push(t.lit);
      continue;
    }
    if ('leave' in t) {
      ancestors.delete(t.leave);
      continue;
    }
    let v = t.v;
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      try {
        v = (v as { toJSON: () => unknown }).toJSON();
      } catch {
        v = String(v);
      }
    }
    if (v === null || v === undefined || typeof v === 'function' || typeof v === 'symbol') out.push('null');
    else if (typeof v === 'bigint') out.push(JSON.stringify(v.toString()));
    else if (typeof v === 'number') out.push(Number.isFinite(v) ? String(v) : 'null');
    else if (typeof v === 'boolean') out.push(String(v));
    else if (typeof v === 'string') out.push(JSON.stringify(v));
    else if (typeof v === 'object' && ancestors.has(v)) out.push('"[Circular]"');
    else if (typeof v === 'object') {
      if (v instanceof Number || v instanceof String || v instanceof Boolean) {
        out.push(JSON.stringify(v.valueOf()));
        continue;
      }
      ancestors.add(v);
      const tasks: Task[] = [];
      if (Array.isArray(v)) {
        tasks.push({ lit: '[' });
        for (let i = 0; i < v.length; i++) {
          if (i) tasks.push({ lit: ',' });
          tasks.push({ v: v[i], inArray: true });
        }
        tasks.push({ lit: ']' });
      } else {
        tasks.push({ lit: '{' });
        let first = true;
        for (const k of Object.keys(v)) {
          const x = (v as Record<string, unknown>)[k];
          if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
          tasks.push({ lit: `${first ? '' : ','}${JSON.stringify(k)}:` });
          tasks.push({ v: x, inArray: false });
          first = false;
        }
        tasks.push({ lit: '}' });
      }
      tasks.push({ leave: v });
      for (let i = tasks.length - 1; i >= 0; i--) stack.push(tasks[i]!);
    } else out.push('null');
  }
  return out.join('');
}

/** The text the guard saves for a parsed value, and a note when JSON.stringify could not make it. */
export function serializeValue(value: unknown): { text: string; note?: string } {
  try {
    const s = JSON.stringify(value);
    if (typeof s === 'string') return { text: s };
    return { text: String(value) };
  } catch (err) {
    return { text: safeStringify(value), note: `JSON.stringify failed (${errText(err)}); saved with a cycle- and depth-safe serializer` };
  }
}

/** Tool input as stored in the sidecar: any value, made JSON-safe. */
export function jsonSafe(v: unknown): unknown {
  try {
    const s = JSON.stringify(v);
    return s === undefined ? String(v) : JSON.parse(s);
  } catch {
    try {
      return JSON.parse(safeStringify(v));
    } catch {
      return String(v);
    }
  }
}
