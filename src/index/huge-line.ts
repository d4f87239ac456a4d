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
 * - consecutive text blocks of one type (`{"type":"text","text":…}`, Codex's `input_text` and
 *   `output_text`) become one block of that type, their texts joined by `\n` (what every reader of
 *   content blocks joins them with);
 * - any other consecutive elements become one merged block (`isMergedBlock`), holding their JSON as
 *   the transcript wrote it, which `jsonOf` writes back in place;
 * - a `tool_use` or `tool_result` block stays a block of its own (each is a record), and so does an
 *   image (`image`, `input_image`: readers count it by its pixels, never by its base64), up to
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
/** tool_use / tool_result / image blocks kept as blocks of their own past that budget, per line. */
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

/** What a transcript's reader of calls counts of the lines it read. */
export interface LineCounts {
  badLines: number;
  mergedLines: number;
  mergedBlocks: number;
}

/** What a turns reader hears of a line it wanted: merged past the budget, or not JSON. */
export interface TurnsLineEvents {
  merged(): void;
  unparsable(index: number): void;
}

/**
 * One transcript line decoded once for both of its readers (the turns and the calls): a long one in
 * slices, its blocks past a budget merged. Merges are counted in `counts` (and said to the turns
 * when they wanted the line); a line that is not JSON is counted by each reader that wanted it, and
 * gives `undefined`.
 */
export async function decodeForReaders(
  buf: Buffer,
  index: number,
  yielder: Yielder | undefined,
  want: { turns: boolean; calls: boolean },
  counts: LineCounts,
  turns: TurnsLineEvents,
): Promise<{ value: unknown } | undefined> {
  try {
    const d = await decodeLine(buf, yielder);
    if (d.merged) {
      counts.mergedLines++;
      counts.mergedBlocks += d.merged;
      // Said where the figures are shown: the session's notes.
      if (want.turns) turns.merged();
    }
    return { value: d.value };
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    if (want.turns) turns.unparsable(index);
    if (want.calls) counts.badLines++;
    return undefined;
  }
}

/** The warning a reader gives for the lines whose blocks were merged, or nothing. */
export function mergedWarning(key: string, counts: LineCounts): string[] {
  if (!counts.mergedLines) return [];
  return [
    `${key}: ${counts.mergedLines} line(s) with more than ${MAX_BUILT_BLOCKS_PER_LINE.toLocaleString('en-US')} content blocks: ${counts.mergedBlocks.toLocaleString('en-US')} block(s) past that were merged into runs and estimated in bulk`,
  ];
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

/** Block types whose consecutive blocks are joined into one block of the type (their `text`s joined by `\n`). */
const TEXT_TYPES: ReadonlySet<unknown> = new Set(['text', 'input_text', 'output_text']);
/** Block types kept as blocks of their own while the line's budget lasts: records (tool calls and results) and images. */
const KEPT_TYPES: ReadonlySet<unknown> = new Set(['tool_use', 'tool_result', 'image', 'input_image']);

interface Run {
  /** The text type of a run of text blocks; undefined for a run of other blocks kept as JSON. */
  text: string | undefined;
  parts: string[];
  blocks: number;
  /**
   * A stretch of the line not yet in `parts`, [from, to): consecutive batches kept as written are
   * adjacent in the line (a comma apart), so a run of them is decoded once when it ends, not per batch.
   */
  from: number;
  to: number;
}

interface Frame {
  arr: boolean;
  value: Record<string, unknown> | unknown[];
  key: string | undefined;
  /** Merged elements not yet parsed: [start, end) of the line, and how many. */
  batchStart: number;
  batchEnd: number;
  batchCount: number;
  /** Whether an element of the pending batch may be a text or kept block (else the batch needs no JSON.parse). */
  batchLooks: boolean;
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
          stack.push({ arr: c === 0x5b, value: c === 0x5b ? [] : {}, key: undefined, batchStart: -1, batchEnd: -1, batchCount: 0, batchLooks: false, run: undefined });
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

  /**
   * Add the element at `i`, and the elements after it, to the array's batch of merged elements
   * (one call per batch, not per element: a block of `{}` is 3 bytes); false when the element at `i`
   * is too big to merge (then it is built). Stops before the comma of an element too big to merge,
   * at the end of the array, at a full batch, or when the event loop is due a turn.
   */
  private mergeElement(f: Frame): boolean {
    const b = this.b;
    let end = this.scanElement(this.i);
    if (end < 0) {
      this.flushBatch(f);
      this.endRun(f);
      return false;
    }
    for (;;) {
      if (f.batchStart < 0) f.batchStart = this.i;
      f.batchEnd = end;
      f.batchCount++;
      if (this.looks) f.batchLooks = true;
      this.i = end;
      if (f.batchEnd - f.batchStart >= MERGE_BATCH_BYTES) {
        this.flushBatch(f);
        // Look at the clock at the next step.
        this.steps = CHECK_EVERY_STEPS;
        return true;
      }
      let j = end;
      while (j < b.length && isWs(b[j]!)) j++;
      if (b[j] !== 0x2c) return true;
      if (this.due()) {
        // The main loop looks at the clock first thing, and yields.
        this.steps = CHECK_EVERY_STEPS;
        return true;
      }
      j++;
      while (j < b.length && isWs(b[j]!)) j++;
      end = this.scanElement(j);
      // Too big to merge: the main loop reads the comma, then builds it.
      if (end < 0) return true;
      this.i = j;
    }
  }

  /** Whether the element scanElement last read is an object whose `type` may make it a text or kept block. */
  private looks = false;
  /** Open containers of the element being scanned: 1 an object, 2 an array. */
  private kinds = new Uint8Array(64);

  /**
   * End of the JSON value at `i`, checked as JSON.parse would check it (a SyntaxError where it
   * fails), without building it: one pass over its bytes. -1 when it runs past
   * MERGE_ELEMENT_MAX_BYTES or the line (it is then decoded as a value of its own, which says where
   * it fails). Sets `looks` when the value is an object whose `type` is one of TEXT_TYPES or
   * KEPT_TYPES (or is written with an escape): only such a batch is parsed into values. So a run of
   * millions of `{}` costs a byte scan, not an object per block.
   */
  private scanElement(i: number): number {
    const b = this.b;
    const stop = Math.min(b.length, i + MERGE_ELEMENT_MAX_BYTES);
    let depth = 0;
    /** The next value is the element's `type` (a key `type` at depth 1). */
    let typeNext = false;
    this.looks = false;
    for (;;) {
      // A value.
      while (i < stop && isWs(b[i]!)) i++;
      if (i >= stop) return -1;
      const c = b[i]!;
      if (c === 0x7b || c === 0x5b) {
        i++;
        if (++depth >= this.kinds.length) {
          const k = new Uint8Array(this.kinds.length * 2);
          k.set(this.kinds);
          this.kinds = k;
        }
        this.kinds[depth] = c === 0x7b ? 1 : 2;
        while (i < stop && isWs(b[i]!)) i++;
        if (i >= stop) return -1;
        if (b[i] === (c === 0x7b ? 0x7d : 0x5d)) {
          i++;
          depth--;
        } else if (c === 0x7b) {
          const k = this.scanKey(i, stop, depth);
          if (k < 0) return -1;
          typeNext = this.keyIsType;
          i = k;
          continue;
        } else continue;
      } else if (c === 0x22) {
        const e = scanString(b, i, stop);
        if (e < 0) return -1;
        if (typeNext && depth === 1 && looksKept(b, i + 1, e - 1)) this.looks = true;
        i = e;
      } else {
        i = scanScalar(b, i, stop);
        if (i < 0) return -1;
      }
      typeNext = false;
      // After a value: the end of the element, a comma, or the end of its container.
      for (;;) {
        if (depth === 0) return i;
        while (i < stop && isWs(b[i]!)) i++;
        if (i >= stop) return -1;
        const d = b[i]!;
        const obj = this.kinds[depth] === 1;
        if (d === 0x2c) {
          i++;
          if (obj) {
            while (i < stop && isWs(b[i]!)) i++;
            const k = this.scanKey(i, stop, depth);
            if (k < 0) return -1;
            typeNext = this.keyIsType;
            i = k;
          }
          break;
        }
        if (d !== (obj ? 0x7d : 0x5d)) throw bad(`unexpected ${JSON.stringify(String.fromCharCode(d))}`, i);
        i++;
        depth--;
      }
    }
  }

  /** Whether the key scanKey last read is `type` at depth 1 (or written with an escape there, to be safe). */
  private keyIsType = false;

  /** A key at `i` and its colon; returns where its value begins, -1 past `stop`. */
  private scanKey(i: number, stop: number, depth: number): number {
    const b = this.b;
    if (i >= stop) return -1;
    if (b[i] !== 0x22) throw bad('expected a key', i);
    const e = scanString(b, i, stop);
    if (e < 0) return -1;
    this.keyIsType = depth === 1 && (e - i === 6 ? b[i + 1] === 0x74 && b[i + 2] === 0x79 && b[i + 3] === 0x70 && b[i + 4] === 0x65 : hasBackslash(b, i, e));
    i = e;
    while (i < stop && isWs(b[i]!)) i++;
    if (i >= stop) return -1;
    if (b[i] !== 0x3a) throw bad('expected ":"', i);
    return i + 1;
  }

  /** Parse the pending batch of merged elements into runs (or kept blocks). */
  private flushBatch(f: Frame): void {
    if (f.batchStart < 0) return;
    const start = f.batchStart;
    const end = f.batchEnd;
    const count = f.batchCount;
    const looks = f.batchLooks;
    f.batchStart = f.batchEnd = -1;
    f.batchCount = 0;
    f.batchLooks = false;
    this.merged += count;
    if (!looks) {
      // Checked by scanElement, and no element is a text or kept block: one stretch of the run, as written.
      this.appendStretch(f, start, end, count);
      return;
    }
    const raw = this.b.toString('utf8', start, end);
    const items = JSON.parse(`[${raw}]`) as unknown[];
    let allOther = true;
    for (const e of items) if (textType(e) !== undefined || this.keeps(e)) allOther = false;
    if (allOther) {
      // Nothing to look into: the batch is one stretch of the run, as written.
      this.appendStretch(f, start, end, count);
      return;
    }
    // Consecutive texts (or JSONs) of the batch are joined here, so a run holds a string per batch,
    // not one per block (millions of small strings would make every garbage collection long).
    let pending: string[] = [];
    let pendingText: string | undefined;
    const put = () => {
      if (pending.length) this.append(f, pendingText, pending.join(pendingText !== undefined ? '\n' : ','), pending.length);
      pending = [];
    };
    for (const e of items) {
      const text = textType(e);
      if (text === undefined && this.keeps(e)) {
        put();
        this.endRun(f);
        this.merged--;
        this.kept++;
        (f.value as unknown[]).push(e);
        continue;
      }
      if (text !== pendingText) put();
      pendingText = text;
      pending.push(text !== undefined ? (e as { text: string }).text : (JSON.stringify(e) ?? 'null'));
    }
    put();
  }

  /** A tool_use, tool_result or image block is a block of its own, while the line's budget for them lasts. */
  private keeps(e: unknown): boolean {
    return this.kept < MAX_KEPT_BLOCKS_PER_LINE && typeof e === 'object' && e !== null && KEPT_TYPES.has((e as { type?: unknown }).type);
  }

  private append(f: Frame, text: string | undefined, part: string, blocks: number): void {
    if (f.run && f.run.text !== text) this.endRun(f);
    f.run ??= { text, parts: [], blocks: 0, from: -1, to: -1 };
    this.decodeStretch(f.run);
    f.run.parts.push(part);
    f.run.blocks += blocks;
  }

  /** A stretch [start, end) of elements kept as written, joined to the run's pending stretch when only a comma (and spaces) lies between. */
  private appendStretch(f: Frame, start: number, end: number, blocks: number): void {
    if (f.run && f.run.text !== undefined) this.endRun(f);
    const r = (f.run ??= { text: undefined, parts: [], blocks: 0, from: -1, to: -1 });
    r.blocks += blocks;
    if (r.from >= 0 && this.onlyComma(r.to, start)) {
      r.to = end;
      return;
    }
    this.decodeStretch(r);
    r.from = start;
    r.to = end;
  }

  /** Whether the bytes [from, to) are one comma and white space. */
  private onlyComma(from: number, to: number): boolean {
    let commas = 0;
    for (let i = from; i < to; i++) {
      const c = this.b[i]!;
      if (c === 0x2c) commas++;
      else if (!isWs(c)) return false;
    }
    return commas === 1;
  }

  private decodeStretch(r: Run): void {
    if (r.from < 0) return;
    r.parts.push(this.b.toString('utf8', r.from, r.to));
    r.from = r.to = -1;
  }

  private endRun(f: Frame): void {
    const r = f.run;
    if (!r) return;
    f.run = undefined;
    this.decodeStretch(r);
    if (r.text !== undefined) {
      (f.value as unknown[]).push({ type: r.text, text: r.parts.join('\n') });
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

/** The type of a text block (one of TEXT_TYPES, with a string `text`), else undefined. */
function textType(e: unknown): string | undefined {
  if (typeof e !== 'object' || e === null || typeof (e as { text?: unknown }).text !== 'string') return undefined;
  const t = (e as { type?: unknown }).type;
  return TEXT_TYPES.has(t) ? (t as string) : undefined;
}

/** The JSON escapes after a backslash, other than `u`: " \\ / b f n r t. */
const ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const isHex = (c: number | undefined) => c !== undefined && ((c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66));
const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;

/** Past the string opened at `i` (its closing quote), checked as JSON.parse checks it; -1 when it runs past `stop`. */
function scanString(b: Buffer, i: number, stop: number): number {
  let j = i + 1;
  while (j < stop) {
    const c = b[j]!;
    if (c === 0x22) return j + 1;
    if (c === 0x5c) {
      const x = b[j + 1];
      if (j + 1 >= stop) return -1;
      if (x === 0x75) {
        if (j + 5 >= stop) return -1;
        if (!(isHex(b[j + 2]) && isHex(b[j + 3]) && isHex(b[j + 4]) && isHex(b[j + 5]))) throw bad('bad unicode escape', j);
        j += 6;
      } else if (ESCAPES.has(x!)) j += 2;
      else throw bad('bad escape', j);
      continue;
    }
    if (c < 0x20) throw bad('control character in a string', j);
    j++;
  }
  return -1;
}

/** Past the number or literal at `i`, checked as JSON.parse checks it; -1 when it runs past `stop`. */
function scanScalar(b: Buffer, i: number, stop: number): number {
  const c = b[i]!;
  for (const lit of LITERALS) {
    if (c !== lit[0]) continue;
    if (i + lit.length > stop) return -1;
    for (let k = 1; k < lit.length; k++) if (b[i + k] !== lit[k]) throw bad('expected a value', i);
    return i + lit.length;
  }
  let j = i;
  if (b[j] === 0x2d) j++;
  if (j >= stop) return -1;
  if (b[j] === 0x30) j++;
  else if (isDigit(b[j]) && b[j] !== 0x30) while (j < stop && isDigit(b[j])) j++;
  else throw bad('expected a value', i);
  if (b[j] === 0x2e) {
    j++;
    if (!isDigit(b[j])) throw bad('expected a digit', j);
    while (j < stop && isDigit(b[j])) j++;
  }
  if (b[j] === 0x65 || b[j] === 0x45) {
    j++;
    if (b[j] === 0x2b || b[j] === 0x2d) j++;
    if (!isDigit(b[j])) throw bad('expected a digit', j);
    while (j < stop && isDigit(b[j])) j++;
  }
  return j >= stop ? -1 : j;
}
const LITERALS = ['true', 'false', 'null'].map((w) => Buffer.from(w));

/** Whether a `type` value's bytes [from, to) may name a text or kept block (an escape in it: maybe). */
function looksKept(b: Buffer, from: number, to: number): boolean {
  if (hasBackslash(b, from, to)) return true;
  if (to - from > 16) return false;
  const v = b.toString('latin1', from, to);
  return TEXT_TYPES.has(v) || KEPT_TYPES.has(v);
}

/** Whether a backslash lies in [from, to) (a loop: indexOf would look past `to`, to the end of the line). */
function hasBackslash(b: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (b[i] === 0x5c) return true;
  return false;
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
