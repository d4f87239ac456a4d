/**
 * JSON that was cut short: a Read that Claude Code stopped at its token cap (`[Truncated: PARTIAL
 * view …]`), a head of a large file. It does not parse, but its opening is JSON, and its schema is
 * worth more to the model than a summary of it as code.
 *
 * | call | for |
 * | --- | --- |
 * | {@link scanJsonPrefix} | is this text a JSON value cut short (or whole, or not JSON)? |
 * | {@link closeJsonPrefix} | the longest cut at a value boundary, with its brackets closed: parses |
 *
 * One pass, no recursion (hostile nesting is just a deep stack of bytes), never throws.
 */

export type JsonPrefixState = 'complete' | 'prefix' | 'invalid';

export interface JsonPrefixScan {
  state: JsonPrefixState;
  /** For a prefix: where the last complete value ends (the text is cut back to here) … */
  cutAt: number;
  /** … and what closes the containers open there, innermost first. */
  closers: string;
}

const WS = new Set([0x20, 0x0a, 0x0d, 0x09]);
const NUM_RE = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERALS = ['true', 'false', 'null'];
/** Longest number or literal that may be cut at the end of a text (longer ones are judged whole). */
const MAX_CUT_TOKEN_CHARS = 400;
const PARTIAL_NUM_RE = /^-?\d*(?:\.\d*)?(?:[eE][+-]?\d*)?$/;

/** What a frame waits for next. */
const enum Want {
  Value,
  Key,
  Colon,
  CommaOrEnd,
  /** After `{` or `[`: a first member/element, or the end. */
  FirstOrEnd,
}

/**
 * Scan `text` as JSON. `complete`: one whole value (JSON.parse would take it); `prefix`: a valid
 * start that ends inside an open container; `invalid`: anything else (including an empty text).
 */
export function scanJsonPrefix(text: string): JsonPrefixScan {
  const open: number[] = []; // 0x7b or 0x5b per open container
  const wants: Want[] = [];
  let top: Want = Want.Value;
  let done = false;
  let cutAt = -1;
  let cutDepth = 0;
  const n = text.length;
  let i = 0;
  const invalid: JsonPrefixScan = { state: 'invalid', cutAt: 0, closers: '' };
  /** A value ended at `end`: the frame above it moves on, and the text may be cut here. */
  const valueDone = (end: number) => {
    if (open.length === 0) {
      done = true;
      return;
    }
    wants[wants.length - 1] = Want.CommaOrEnd;
    cutAt = end;
    cutDepth = open.length;
  };
  while (i < n) {
    const c = text.charCodeAt(i);
    if (WS.has(c)) {
      i++;
      continue;
    }
    if (done) return invalid; // something after a whole value
    const want = open.length ? wants[wants.length - 1]! : top;
    const inObject = open[open.length - 1] === 0x7b;
    // Where a value may start: after `:` or `,` in an array, first in an array, or at the top.
    const valueHere = want === Want.Value || (want === Want.FirstOrEnd && !inObject);
    if (c === 0x7b || c === 0x5b) {
      if (!valueHere) return invalid;
      if (open.length === 0) top = Want.CommaOrEnd;
      else wants[wants.length - 1] = Want.CommaOrEnd;
      open.push(c);
      wants.push(Want.FirstOrEnd);
      i++;
      cutAt = i;
      cutDepth = open.length;
      continue;
    }
    if (c === 0x7d || c === 0x5d) {
      const o = open[open.length - 1];
      if (o === undefined || (c === 0x7d) !== (o === 0x7b) || (want !== Want.CommaOrEnd && want !== Want.FirstOrEnd)) return invalid;
      open.pop();
      wants.pop();
      i++;
      valueDone(i);
      continue;
    }
    if (c === 0x2c /* , */) {
      if (want !== Want.CommaOrEnd || open.length === 0) return invalid;
      wants[wants.length - 1] = open[open.length - 1] === 0x7b ? Want.Key : Want.Value;
      i++;
      continue;
    }
    if (c === 0x3a /* : */) {
      if (want !== Want.Colon) return invalid;
      wants[wants.length - 1] = Want.Value;
      i++;
      continue;
    }
    const isKey = inObject && (want === Want.Key || want === Want.FirstOrEnd);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      for (;;) {
        const q = text.indexOf('"', j);
        if (q === -1) return open.length ? prefixAt(cutAt, cutDepth, open) : invalid;
        let bs = 0;
        for (let k = q - 1; k > i && text.charCodeAt(k) === 0x5c; k--) bs++;
        if (bs % 2 === 0) {
          j = q + 1;
          break;
        }
        j = q + 1;
      }
      if (isKey) wants[wants.length - 1] = Want.Colon;
      else if (valueHere) valueDone(j);
      else return invalid;
      i = j;
      continue;
    }
    if (!valueHere) return invalid;
    // A number or a literal cut at the end of the text ("-", "1.", "2e-", "tr", "nul"): only the last few chars can be.
    if (open.length && n - i <= MAX_CUT_TOKEN_CHARS) {
      const rest = text.slice(i);
      if (PARTIAL_NUM_RE.test(rest) || LITERALS.some((l) => l !== rest && l.startsWith(rest))) return prefixAt(cutAt, cutDepth, open);
    }
    NUM_RE.lastIndex = i;
    const m = NUM_RE.exec(text);
    if (m) {
      const end = i + m[0].length;
      // A number that runs to the end of the text may have been cut mid-digits: not a safe cut.
      if (end >= n) return open.length ? prefixAt(cutAt, cutDepth, open) : { state: 'complete', cutAt: n, closers: '' };
      if (open.length === 0) top = Want.CommaOrEnd;
      valueDone(end);
      i = end;
      continue;
    }
    const lit = LITERALS.find((l) => text.startsWith(l, i));
    if (lit) {
      if (open.length === 0) top = Want.CommaOrEnd;
      valueDone(i + lit.length);
      i += lit.length;
      continue;
    }
    return invalid;
  }
  if (done) return { state: 'complete', cutAt: n, closers: '' };
  return open.length ? prefixAt(cutAt, cutDepth, open) : invalid;
}

function prefixAt(cutAt: number, depth: number, open: number[]): JsonPrefixScan {
  if (cutAt < 0) return { state: 'invalid', cutAt: 0, closers: '' };
  let closers = '';
  for (let d = depth - 1; d >= 0; d--) closers += open[d] === 0x7b ? '}' : ']';
  return { state: 'prefix', cutAt, closers };
}

/**
 * A JSON text cut short, made whole: cut back to the last complete value and its open containers
 * closed. Undefined when the text is not a JSON prefix (or is whole already).
 */
export function closeJsonPrefix(text: string): { json: string; cutAt: number } | undefined {
  const s = scanJsonPrefix(text);
  if (s.state !== 'prefix') return undefined;
  // After a `,` nothing is pending: the cut is at the last value, so only closers follow.
  return { json: text.slice(0, s.cutAt) + s.closers, cutAt: s.cutAt };
}
