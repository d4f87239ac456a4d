/**
 * Decoding one transcript line without stalling the process that reads it.
 *
 * | entry        | for                                                                          |
 * | ------------ | ---------------------------------------------------------------------------- |
 * | `decodeLine` | a JSONL line as a value: JSON.parse for an ordinary line, in slices for a long one |
 * | `jsonOf`     | JSON.stringify of a decoded value, merged runs written as the transcript had them |
 * | `isMergedBlock` | whether a content block is a run of blocks `decodeLine` merged             |
 *
 * Why: a Claude Code line can hold millions of small content blocks (an MCP result of thousands
 * of blocks, a Read of a huge notebook, a hostile line of `{}`). JSON.parse of such a line is one
 * uninterruptible piece of work that builds millions of objects, and everything after it did work
 * per block (a 50 MB line kept `serve` from answering for 20 s; a 250 MB one took 6 GB). The cost is
 * per block, not per byte: one 200 MB string is cheap.
 *
 * So a line longer than SLICED_LINE_BYTES is decoded here, in slices that give the event loop a
 * turn (the caller's Yielder), into the same value JSON.parse gives, with one difference: once
 * MAX_BUILT_BLOCKS_PER_LINE array elements have been built, an array's further elements are
 * parsed in batches and kept as runs:
 * - consecutive text blocks (`{"type":"text","text":…}`) become one text block, their texts joined
 *   by `\n` (what every reader of content blocks joins them with);
 * - any other consecutive elements become one merged block (`isMergedBlock`), holding their JSON as
 *   the transcript wrote it, which `jsonOf` writes back in place;
 * - a `tool_use` or `tool_result` block stays a block of its own (each is a record), up to
 *   MAX_KEPT_BLOCKS_PER_LINE of them; past that they are merged too.
 * `merged` in the result counts the blocks merged, so a reader can say its estimate of them was
 * made in bulk. The work per line is then a byte scan plus native JSON.parse of bounded batches,
 * and what is held is the line and its text, not an object per block.
 */
import type { Yielder } from './yielder.js';

/** Lines up to this size are decoded with one JSON.parse (a few milliseconds at most). */
export const SLICED_LINE_BYTES = 1024 * 1024;
/** Array elements built as values per line; past this, further elements are merged into runs. */
export const MAX_BUILT_BLOCKS_PER_LINE = 20_000;
/** tool_use / tool_result blocks kept as blocks of their own past that budget, per line. */
export const MAX_KEPT_BLOCKS_PER_LINE = 10_000;
/** Merged elements are parsed in batches of about this many bytes (one JSON.parse each). */
const MERGE_BATCH_BYTES = 256 * 1024;
/** An element bigger than this is not merged: it is decoded as a value of its own. */
const MERGE_ELEMENT_MAX_BYTES = 64 * 1024;
/** A string longer than this is decoded in pieces of this size, with a turn for the event loop between. */
const STRING_PIECE_BYTES = 4 * 1024 * 1024;
/** Bytes of structure scanned between two looks at the clock. */
const CHECK_EVERY_STEPS = 2048;

export const MERGED_BLOCK_TYPE = 'spillway:merged-blocks';

/** A run of consecutive array elements kept as the JSON the transcript wrote (comma-separated, no brackets). */
export interface MergedBlock {
  type: typeof MERGED_BLOCK_TYPE;
  blocks: number;
  json: string;
}

export interface DecodedLine {
  value: unknown;
  /** Array elements merged into runs (0 for an ordinary line). */
  merged: number;
}

/** The merged blocks decodeLine made (a transcript cannot forge one), and every container holding one. */
const MERGED = new WeakSet<object>();
const HOLDS_MERGED = new WeakSet<object>();

export function isMergedBlock(b: unknown): b is MergedBlock {
  return typeof b === 'object' && b !== null && MERGED.has(b);
}

/** JSON.stringify, except that a merged run is written as the JSON it stands for. */
export function jsonOf(v: unknown): string {
  if (typeof v !== 'object' || v === null || !HOLDS_MERGED.has(v)) return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) {
    const parts: string[] = [];
    for (const e of v) parts.push(isMergedBlock(e) ? e.json : e === undefined ? 'null' : jsonOf(e));
    return `[${parts.join(',')}]`;
  }
  const parts: string[] = [];
  for (const [k, x] of Object.entries(v)) if (x !== undefined) parts.push(`${JSON.stringify(k)}:${jsonOf(x)}`);
  return `{${parts.join(',')}}`;
}

/** One JSONL line as a value; throws a SyntaxError where JSON.parse would. */
export async function decodeLine(line: Buffer, yielder?: Yielder): Promise<DecodedLine> {
  if (line.length <= SLICED_LINE_BYTES) return { value: JSON.parse(line.toString('utf8')) as unknown, merged: 0 };
  return new LineDecoder(line, yielder).run();
}

/** The sliced decoder whatever the line's length (for tests and benches: it must agree with JSON.parse). */
export function decodeSliced(line: Buffer, yielder?: Yielder): Promise<DecodedLine> {
  return new LineDecoder(line, yielder).run();
}

const bad = (what: string, at: number) => new SyntaxError(`${what} at byte ${at} of the line`);

const isWs = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

interface Run {
  text: boolean;
  parts: string[];
  blocks: number;
}

interface Frame {
  arr: boolean;
  value: Record<string, unknown> | unknown[];
  key: string | undefined;
  /** Merged elements not yet parsed: [start, end) of the line, and how many. */
  batchStart: number;
  batchEnd: number;
  batchCount: number;
  run: Run | undefined;
}

const enum S {
  Value,
  After,
  FirstKey,
  Key,
}

class LineDecoder {
  private i = 0;
  private steps = 0;
  private built = 0;
  private kept = 0;
  private merged = 0;
  private readonly stack: Frame[] = [];

  constructor(
    private readonly b: Buffer,
    private readonly y: Yielder | undefined,
  ) {}

  /** Whether it is time to give the event loop a turn (looked at every CHECK_EVERY_STEPS steps). */
  private due(): boolean {
    if (++this.steps < CHECK_EVERY_STEPS) return false;
    this.steps = 0;
    return this.y?.due === true;
  }

  private ws(): void {
    const b = this.b;
    let i = this.i;
    while (i < b.length && isWs(b[i]!)) i++;
    this.i = i;
  }

  async run(): Promise<DecodedLine> {
    const b = this.b;
    const n = b.length;
    const stack = this.stack;
    let state: S = S.Value;
    let result: unknown;
    for (;;) {
      if (this.due()) await this.y!.now();
      this.ws();
      const i = this.i;
      if (state === S.Value) {
        if (i >= n) throw bad('unexpected end', i);
        const top = stack[stack.length - 1];
        if (top?.arr && this.built >= MAX_BUILT_BLOCKS_PER_LINE && this.mergeElement(top)) {
          state = S.After;
          continue;
        }
        const c = b[i]!;
        if (c === 0x7b || c === 0x5b) {
          this.i++;
          stack.push({ arr: c === 0x5b, value: c === 0x5b ? [] : {}, key: undefined, batchStart: -1, batchEnd: -1, batchCount: 0, run: undefined });
          this.ws();
          if (c === 0x5b && b[this.i] === 0x5d) {
            this.i++;
            result = this.close();
            state = S.After;
          } else state = c === 0x5b ? S.Value : S.FirstKey;
          if (stack.length === 0) break;
          continue;
        }
        let v: unknown = c === 0x22 ? this.string() : this.scalar();
        if (v instanceof Promise) v = await v;
        if (stack.length === 0) {
          result = v;
          break;
        }
        this.attach(v);
        state = S.After;
        continue;
      }
      if (state === S.After) {
        const top = stack[stack.length - 1];
        if (!top) break;
        const c = b[i];
        if (c === 0x2c) {
          this.i++;
          state = top.arr ? S.Value : S.Key;
        } else if (c === (top.arr ? 0x5d : 0x7d)) {
          this.i++;
          result = this.close();
          if (stack.length === 0) break;
        } else throw bad(i >= n ? 'unexpected end' : `unexpected ${JSON.stringify(String.fromCharCode(c!))}`, i);
        continue;
      }
      // A key, or (right after `{`) the end of an empty object.
      if (state === S.FirstKey && b[i] === 0x7d) {
        this.i++;
        result = this.close();
        if (stack.length === 0) break;
        state = S.After;
        continue;
      }
      if (b[i] !== 0x22) throw bad('expected a key', i);
      let key = this.string();
      if (typeof key !== 'string') key = await key;
      this.ws();
      if (b[this.i] !== 0x3a) throw bad('expected ":"', this.i);
      this.i++;
      stack[stack.length - 1]!.key = key;
      state = S.Value;
    }
    this.ws();
    if (this.i < n) throw bad('unexpected data after the value', this.i);
    return { value: result, merged: this.merged };
  }

  /** Put a finished value into the open container. */
  private attach(v: unknown): void {
    const top = this.stack[this.stack.length - 1]!;
    if (top.arr) {
      (top.value as unknown[]).push(v);
      this.built++;
      return;
    }
    const o = top.value as Record<string, unknown>;
    // As JSON.parse does: "__proto__" is an own property, never the prototype.
    if (top.key === '__proto__') Object.defineProperty(o, '__proto__', { value: v, writable: true, enumerable: true, configurable: true });
    else o[top.key!] = v;
  }

  /** Close the innermost container and attach it to its parent; returns it. */
  private close(): unknown {
    const f = this.stack[this.stack.length - 1]!;
    if (f.arr) {
      this.flushBatch(f);
      this.endRun(f);
    }
    this.stack.pop();
    if (this.stack.length) {
      const top = this.stack[this.stack.length - 1]!;
      // A closing container's elements were counted as they were built: the container is one more.
      if (top.arr) {
        (top.value as unknown[]).push(f.value);
        this.built++;
      } else {
        this.attach(f.value);
      }
    }
    return f.value;
  }

  /** Add the element at `i` to the array's batch of merged elements; false when it is too big to merge (then it is built). */
  private mergeElement(f: Frame): boolean {
    const end = this.skip(this.i);
    if (end < 0) {
      this.flushBatch(f);
      this.endRun(f);
      return false;
    }
    if (f.batchStart < 0) f.batchStart = this.i;
    f.batchEnd = end;
    f.batchCount++;
    this.i = end;
    if (f.batchEnd - f.batchStart >= MERGE_BATCH_BYTES) {
      this.flushBatch(f);
      // Look at the clock at the next step.
      this.steps = CHECK_EVERY_STEPS;
    }
    return true;
  }

  /** End of the JSON value at `i`, or -1 when it runs past MERGE_ELEMENT_MAX_BYTES (or the line). */
  private skip(i: number): number {
    const b = this.b;
    const stop = Math.min(b.length, i + MERGE_ELEMENT_MAX_BYTES);
    const c0 = b[i];
    if (c0 !== 0x7b && c0 !== 0x5b && c0 !== 0x22) {
      // A number or a literal: up to the next delimiter (JSON.parse of the batch checks it).
      while (i < stop && b[i] !== 0x2c && b[i] !== 0x5d && !isWs(b[i]!)) i++;
      return i < stop ? i : -1;
    }
    let depth = 0;
    while (i < stop) {
      const c = b[i]!;
      if (c === 0x22) {
        const e = stringEnd(b, i);
        if (e < 0 || e >= stop) return -1;
        i = e + 1;
        if (depth === 0) return i;
        continue;
      }
      if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return -1;
  }

  /** Parse the pending batch of merged elements into runs (or kept blocks). */
  private flushBatch(f: Frame): void {
    if (f.batchStart < 0) return;
    const raw = this.b.toString('utf8', f.batchStart, f.batchEnd);
    const count = f.batchCount;
    f.batchStart = f.batchEnd = -1;
    f.batchCount = 0;
    const items = JSON.parse(`[${raw}]`) as unknown[];
    this.merged += count;
    let allOther = true;
    for (const e of items) if (isTextBlock(e) || this.keeps(e)) allOther = false;
    if (allOther) {
      // Nothing to look into: the batch is one stretch of the run, as written.
      this.append(f, false, raw, count);
      return;
    }
    // Consecutive texts (or JSONs) of the batch are joined here, so a run holds a string per batch,
    // not one per block (millions of small strings would make every garbage collection long).
    let pending: string[] = [];
    let pendingText = false;
    const put = () => {
      if (pending.length) this.append(f, pendingText, pending.join(pendingText ? '\n' : ','), pending.length);
      pending = [];
    };
    for (const e of items) {
      const text = isTextBlock(e);
      if (!text && this.keeps(e)) {
        put();
        this.endRun(f);
        this.merged--;
        this.kept++;
        (f.value as unknown[]).push(e);
        continue;
      }
      if (text !== pendingText) put();
      pendingText = text;
      pending.push(text ? e.text : (JSON.stringify(e) ?? 'null'));
    }
    put();
  }

  /** A tool_use or tool_result block is a record of its own, while the line's budget for them lasts. */
  private keeps(e: unknown): boolean {
    return this.kept < MAX_KEPT_BLOCKS_PER_LINE && typeof e === 'object' && e !== null && ((e as { type?: unknown }).type === 'tool_result' || (e as { type?: unknown }).type === 'tool_use');
  }

  private append(f: Frame, text: boolean, part: string, blocks: number): void {
    if (f.run && f.run.text !== text) this.endRun(f);
    f.run ??= { text, parts: [], blocks: 0 };
    f.run.parts.push(part);
    f.run.blocks += blocks;
  }

  private endRun(f: Frame): void {
    const r = f.run;
    if (!r) return;
    f.run = undefined;
    if (r.text) {
      (f.value as unknown[]).push({ type: 'text', text: r.parts.join('\n') });
      return;
    }
    const block: MergedBlock = { type: MERGED_BLOCK_TYPE, blocks: r.blocks, json: r.parts.join(',') };
    MERGED.add(block);
    (f.value as unknown[]).push(block);
    for (const open of this.stack) HOLDS_MERGED.add(open.value);
  }

  /** A string value or key at `i` (its opening quote), decoded as JSON.parse would; a promise only for a long one. */
  private string(): string | Promise<string> {
    const b = this.b;
    const i = this.i;
    const q = stringEnd(b, i);
    if (q < 0) throw bad('unterminated string', i);
    this.i = q + 1;
    if (q - i - 1 <= STRING_PIECE_BYTES) return JSON.parse(b.toString('utf8', i, q + 1)) as string;
    return this.longString(i, q);
  }

  private async longString(i: number, q: number): Promise<string> {
    const b = this.b;
    // A long string in pieces, each cut where no character or escape is split; lone surrogates of
    // an escaped pair cut in two are joined again by the concatenation.
    const parts: string[] = [];
    let p = i + 1;
    while (p < q) {
      let e = Math.min(q, p + STRING_PIECE_BYTES);
      while (e < q && (b[e]! & 0xc0) === 0x80) e++;
      e = pastEscape(b, i + 1, p, e, q);
      parts.push(JSON.parse(`"${b.toString('utf8', p, e)}"`) as string);
      p = e;
      if (this.y?.due) await this.y.now();
    }
    return parts.join('');
  }

  private scalar(): unknown {
    const b = this.b;
    const i = this.i;
    let e = i;
    while (e < b.length && b[e] !== 0x2c && b[e] !== 0x5d && b[e] !== 0x7d && !isWs(b[e]!)) e++;
    if (e === i) throw bad('expected a value', i);
    this.i = e;
    return JSON.parse(b.toString('latin1', i, e)) as unknown;
  }
}

function isTextBlock(e: unknown): e is { type: 'text'; text: string } {
  return typeof e === 'object' && e !== null && (e as { type?: unknown }).type === 'text' && typeof (e as { text?: unknown }).text === 'string';
}

/** Index of the quote closing the string opened at `i`, or -1. */
function stringEnd(b: Buffer, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = b.indexOf(0x22, j);
    if (q < 0) return -1;
    let k = q - 1;
    while (b[k] === 0x5c) k--;
    if ((q - 1 - k) % 2 === 0) return q;
    j = q + 1;
  }
}

/** `e`, moved past an escape sequence it would cut (`\n`, `\uXXXX`); `from` is where the string's content begins. */
function pastEscape(b: Buffer, from: number, p: number, e: number, q: number): number {
  for (let t = e - 1; t >= Math.max(p, e - 6); t--) {
    if (b[t] !== 0x5c) continue;
    let s = t;
    while (s >= from && b[s] === 0x5c) s--;
    // An odd run of backslashes ending at t: the last one begins an escape.
    if ((t - s) % 2 === 1) {
      const len = b[t + 1] === 0x75 ? 6 : 2;
      if (t + len > e) return Math.min(q, t + len);
    }
    return e;
  }
  return e;
}
