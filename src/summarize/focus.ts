import { MAX_FOCUS_TERMS, MIN_ITEMS_TO_JUDGE_TERMS, WEAK_TERM_SHARE } from './limits.js';

/**
 * A focus ("payment failures", "why did the deploy fail?") becomes a few lowercase stems that
 * are matched as substrings, so "failures" finds "failed", "FAIL" and "failure". Rare terms
 * weigh more than common ones (idf), so a line that matches every term beats one that matches
 * only the most frequent word.
 */

const STOPWORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have how i if in into is it its ' +
    'me my no not of on or our show shows so some than that the their them then there these they this those to ' +
    'us was we were what when where which who why will with would you your all any about list find give tell ' +
    'please get only just which whose there here ' +
    // What a request asks the tool to do, not what the output holds: a Bash `description` such as
    // "Print the server log" or "Grep the big folder" starts with one.
    'print display grep search read run view dump inspect look see check'
  ).split(' '),
);

export interface FocusTerm {
  /** What the user typed (lowercased). */
  word: string;
  /** The substring actually searched for. */
  stem: string;
}

/** Strip common English inflections. Deliberately light: a shorter stem only widens a substring match. */
export function stem(word: string): string {
  let w = word.toLowerCase();
  if (/^\d/.test(w) || w.length <= 4) return w;
  const rules: Array<[RegExp, string]> = [
    [/ies$/, 'y'],
    [/sses$/, 'ss'],
    [/([^s])s$/, '$1'],
  ];
  for (const [re, rep] of rules) if (re.test(w)) { w = w.replace(re, rep); break; }
  for (const suf of ['ures', 'ure', 'ing', 'ed', 'ions', 'ion', 'ly']) {
    if (w.endsWith(suf) && w.length - suf.length >= 4) {
      w = w.slice(0, -suf.length);
      break;
    }
  }
  return w;
}

export function focusTerms(focus: string | undefined): FocusTerm[] {
  if (!focus) return [];
  const seen = new Set<string>();
  const out: FocusTerm[] = [];
  for (const m of focus.toLowerCase().matchAll(/[\p{L}\p{N}_][\p{L}\p{N}_.:/-]*/gu)) {
    const word = m[0].replace(/[.:/-]+$/, '');
    if (!word || STOPWORDS.has(word)) continue;
    if (word.length < 2 && !/\d/.test(word)) continue;
    const s = stem(word);
    if (seen.has(s)) continue;
    seen.add(s);
    out.push({ word, stem: s });
    if (out.length >= MAX_FOCUS_TERMS) break;
  }
  return out;
}

/** Bitmask of the terms a (lowercased) text contains. */
export function matchMask(lower: string, terms: readonly FocusTerm[]): number {
  let mask = 0;
  for (let i = 0; i < terms.length; i++) if (lower.includes(terms[i]!.stem)) mask |= 1 << i;
  return mask;
}

export function popcount(n: number): number {
  let c = 0;
  while (n) {
    n &= n - 1;
    c++;
  }
  return c;
}

/**
 * Collects the best-matching items of a stream in one pass with bounded memory: the first
 * `perBucket` items of each term combination, plus how often each term occurred, so the final
 * ranking can weigh rare terms higher (idf) without a second pass.
 */
export class FocusCollector<T> {
  private readonly buckets = new Map<number, { count: number; items: T[] }>();
  readonly termHits: number[];
  seen = 0;

  constructor(
    readonly terms: readonly FocusTerm[],
    private readonly perBucket: number,
  ) {
    this.termHits = terms.map(() => 0);
  }

  /** Offer an item; returns the mask so callers can reuse it. */
  offer(lower: string, item: () => T): number {
    this.seen++;
    if (this.terms.length === 0) return 0;
    const mask = matchMask(lower, this.terms);
    if (!mask) return 0;
    for (let i = 0; i < this.terms.length; i++) if (mask & (1 << i)) this.termHits[i]!++;
    let b = this.buckets.get(mask);
    if (!b) this.buckets.set(mask, (b = { count: 0, items: [] }));
    b.count++;
    if (b.items.length < this.perBucket) b.items.push(item());
    return mask;
  }

  get matched(): number {
    let n = 0;
    for (const b of this.buckets.values()) n += b.count;
    return n;
  }

  private weight(mask: number): number {
    const n = Math.max(this.seen, 1);
    let w = 0;
    for (let i = 0; i < this.terms.length; i++) {
      if (mask & (1 << i)) w += 1 + Math.log((n + 1) / (this.termHits[i]! + 1));
    }
    return w;
  }

  /** Term combinations, best first, with their counts and the items kept for each. */
  groups(): Array<{ mask: number; count: number; items: T[]; words: string[] }> {
    return [...this.buckets.entries()]
      .sort((a, b) => this.weight(b[0]) - this.weight(a[0]) || a[1].count - b[1].count)
      .map(([mask, b]) => ({ mask, count: b.count, items: b.items, words: this.terms.filter((_, i) => mask & (1 << i)).map((t) => t.word) }));
  }

  /** Items from the best term combinations first, at most `max`. */
  best(max: number): Array<{ item: T; mask: number; bucketCount: number }> {
    const ranked = [...this.buckets.entries()].sort((a, b) => this.weight(b[0]) - this.weight(a[0]) || a[1].count - b[1].count);
    const out: Array<{ item: T; mask: number; bucketCount: number }> = [];
    for (const [mask, b] of ranked) {
      for (const item of b.items) {
        if (out.length >= max) return out;
        out.push({ item, mask, bucketCount: b.count });
      }
    }
    return out;
  }

  /** Terms that matched nothing. */
  missing(): string[] {
    return this.terms.filter((_, i) => this.termHits[i] === 0).map((t) => t.word);
  }

  /**
   * Terms too common to rank by: each matched at least WEAK_TERM_SHARE of the items offered
   * ("big" in a listing where every path holds "bigdir"), once there are enough items to judge.
   */
  common(): Array<{ word: string; hits: number }> {
    if (this.seen < MIN_ITEMS_TO_JUDGE_TERMS) return [];
    return this.terms.flatMap((t, i) => (this.termHits[i]! >= this.seen * WEAK_TERM_SHARE ? [{ word: t.word, hits: this.termHits[i]! }] : []));
  }

  /**
   * The same hits as if the terms named in `words` had never been asked for: their bits cleared and
   * the buckets merged (items that matched only those terms are gone).
   */
  without(words: readonly string[]): FocusCollector<T> {
    const keep = this.terms.map((t, i) => ({ t, i })).filter(({ t }) => !words.includes(t.word));
    const out = new FocusCollector<T>(keep.map(({ t }) => t), this.perBucket);
    out.seen = this.seen;
    keep.forEach(({ i }, j) => (out.termHits[j] = this.termHits[i]!));
    for (const [mask, b] of this.buckets) {
      let m = 0;
      keep.forEach(({ i }, j) => {
        if (mask & (1 << i)) m |= 1 << j;
      });
      if (!m) continue;
      let nb = out.buckets.get(m);
      if (!nb) out.buckets.set(m, (nb = { count: 0, items: [] }));
      nb.count += b.count;
      for (const it of b.items) if (nb.items.length < this.perBucket) nb.items.push(it);
    }
    return out;
  }
}
