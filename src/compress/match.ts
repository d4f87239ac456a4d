import { Worker } from 'node:worker_threads';

/**
 * Text matching for grep and `~` filters, safe against patterns from users and models.
 * Plain, case-insensitive substring matching is the default. Regexes are opt-in: refused up
 * front when they are the classic catastrophic shapes (nested quantifiers, backreferences,
 * lookarounds), and always run in a worker thread on a bounded slice of each line, with a time
 * budget per batch; a pattern that blows it is stopped (the worker is killed), so no pattern can
 * stall the process.
 */

/** Longest pattern accepted (chars). */
export const MAX_PATTERN_CHARS = 500;
/** Chars of one line a regex is run on; the rest of a very long line is not searched by regex. */
export const MAX_REGEX_LINE_CHARS = 8_000;
/** Time one batch of lines may take under a regex before the scan is stopped (the worker is killed). */
export const REGEX_BATCH_TIMEOUT_MS = 2_000;
/** Lines and chars sent to the regex worker at once. */
const REGEX_BATCH_LINES = 5_000;
const REGEX_BATCH_CHARS = 2 * 1024 * 1024;

export class PatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PatternError';
  }
}

export interface MatchOptions {
  /** Treat the pattern as a regular expression (default: plain text). */
  regex?: boolean;
  /** Default true. */
  ignoreCase?: boolean;
}

/** Returns the match position in `line`, or -1. */
export type Matcher = (line: string) => number;

/** Refuse regexes that can take exponential time on some input. */
export function checkRegexSafety(pattern: string): void {
  if (pattern.length > MAX_PATTERN_CHARS) throw new PatternError(`pattern longer than ${MAX_PATTERN_CHARS} chars`);
  if (/\\[1-9]|\\k</.test(pattern)) throw new PatternError('backreferences are not allowed in patterns');
  if (/\(\?<?[=!]/.test(pattern)) throw new PatternError('lookarounds are not allowed in patterns');
  // A quantified group whose body itself has a quantifier or an alternation: (a+)+, (a|aa)*, (x*y){2,}
  const quantifiedInside: boolean[] = [];
  const altInside: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === '(') {
      quantifiedInside.push(false);
      altInside.push(false);
    } else if (c === '|') {
      if (altInside.length) altInside[altInside.length - 1] = true;
    } else if (c === ')') {
      const q = quantifiedInside.pop() ?? false;
      const alt = altInside.pop() ?? false;
      const next = pattern[i + 1];
      const quantified = next === '*' || next === '+' || next === '{';
      if (quantified && (q || alt)) throw new PatternError('nested quantifiers like (a+)+ or (a|b)* are not allowed: they can backtrack for ever');
      if ((quantified || q) && quantifiedInside.length) quantifiedInside[quantifiedInside.length - 1] = true;
    } else if (c === '*' || c === '+' || c === '{') {
      if (quantifiedInside.length) quantifiedInside[quantifiedInside.length - 1] = true;
    }
  }
}

export function makeMatcher(pattern: string, opts: MatchOptions = {}): Matcher {
  if (typeof pattern !== 'string' || pattern === '') throw new PatternError('empty pattern');
  if (pattern.length > MAX_PATTERN_CHARS) throw new PatternError(`pattern longer than ${MAX_PATTERN_CHARS} chars`);
  const ignoreCase = opts.ignoreCase ?? true;
  if (!opts.regex) {
    if (!ignoreCase) return (line) => line.indexOf(pattern);
    const needle = pattern.toLowerCase();
    return (line) => line.toLowerCase().indexOf(needle);
  }
  checkRegexSafety(pattern);
  let re: RegExp;
  try {
    re = new RegExp(pattern, ignoreCase ? 'iu' : 'u');
  } catch (err) {
    throw new PatternError(`bad regular expression: ${(err as Error).message}`);
  }
  return (line) => {
    const m = re.exec(line.length > MAX_REGEX_LINE_CHARS ? line.slice(0, MAX_REGEX_LINE_CHARS) : line);
    return m ? m.index : -1;
  };
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re = new RegExp(workerData.source, workerData.flags);
parentPort.on('message', (lines) => {
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const m = re.exec(lines[i]);
    if (m) out.push(i, m.index);
  }
  parentPort.postMessage(out);
});
`;

/**
 * Match positions for batches of lines: plain text in-process, regexes in a worker with a time
 * budget per batch. Always `close()` it (or use {@link scanLines}).
 */
export class LineScanner {
  private worker?: Worker;
  private readonly plain?: Matcher;

  constructor(
    readonly pattern: string,
    readonly opts: MatchOptions & { timeoutMs?: number } = {},
  ) {
    if (!opts.regex) {
      this.plain = makeMatcher(pattern, opts);
      return;
    }
    makeMatcher(pattern, opts); // validates: safety rules and syntax
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { source: pattern, flags: (opts.ignoreCase ?? true) ? 'iu' : 'u' } });
    this.worker.unref();
  }

  /** For each line, the match position or -1. */
  async scan(lines: readonly string[]): Promise<Int32Array> {
    const out = new Int32Array(lines.length).fill(-1);
    if (this.plain) {
      for (let i = 0; i < lines.length; i++) out[i] = this.plain(lines[i]!);
      return out;
    }
    for (let start = 0; start < lines.length; ) {
      const batch: string[] = [];
      let chars = 0;
      while (start + batch.length < lines.length && batch.length < REGEX_BATCH_LINES && chars < REGEX_BATCH_CHARS) {
        const l = lines[start + batch.length]!;
        const cut = l.length > MAX_REGEX_LINE_CHARS ? l.slice(0, MAX_REGEX_LINE_CHARS) : l;
        batch.push(cut);
        chars += cut.length;
      }
      const found = await this.runBatch(batch);
      for (let k = 0; k < found.length; k += 2) out[start + found[k]!] = found[k + 1]!;
      start += batch.length;
    }
    return out;
  }

  private runBatch(batch: string[]): Promise<number[]> {
    const w = this.worker!;
    const ms = this.opts.timeoutMs ?? REGEX_BATCH_TIMEOUT_MS;
    return new Promise<number[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        void w.terminate();
        this.worker = undefined;
        reject(new PatternError(`the regular expression took longer than ${ms} ms on ${batch.length} lines and was stopped: use plain text or a simpler pattern`));
      }, ms);
      const onMsg = (m: number[]) => {
        cleanup();
        resolve(m);
      };
      const onErr = (e: Error) => {
        cleanup();
        reject(new PatternError(`regular expression failed: ${e.message}`));
      };
      const cleanup = () => {
        clearTimeout(timer);
        w.off('message', onMsg);
        w.off('error', onErr);
      };
      w.on('message', onMsg);
      w.on('error', onErr);
      w.postMessage(batch);
    });
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    if (w) await w.terminate();
  }
}
