import type { FocusCollector } from '../focus.js';
import { MAX_QUOTED_LINE_CHARS } from '../limits.js';

/** Thousands separators: "1,234,567". */
export const fmt = (n: number): string =>
  Number.isInteger(n) ? n.toLocaleString('en-US') : n.toLocaleString('en-US', { maximumFractionDigits: 4 });

export const pct = (part: number, whole: number): string => (whole > 0 ? `${((100 * part) / whole).toFixed(part / whole < 0.1 ? 1 : 0)}%` : '0%');

/** One line quoted verbatim, cut around `center` (a match position) when it is too long. */
export function quoteLine(line: string, center = 0, max = MAX_QUOTED_LINE_CHARS): string {
  const clean = line.replace(/\r$/, '');
  if (clean.length <= max) return clean;
  const start = Math.max(0, Math.min(center - Math.floor(max / 3), clean.length - max));
  const head = start > 0 ? `…[${fmt(start)} chars] ` : '';
  const tailChars = clean.length - (start + max);
  const tail = tailChars > 0 ? ` …[+${fmt(tailChars)} chars]` : '';
  return head + clean.slice(start, start + max) + tail;
}

/** Short, single-line rendering of a value for schema samples. */
export function sampleOf(v: unknown, max = 60): string {
  let s: string;
  try {
    s = typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/**
 * Sections in priority order; the writer keeps whole lines while the char budget lasts and
 * says how many it dropped, so a summary is always bounded and never silently partial.
 */
export class Budget {
  private readonly parts: string[] = [];
  private used = 0;
  private dropped = 0;

  constructor(readonly maxChars: number) {}

  get remaining(): number {
    return this.maxChars - this.used;
  }

  /** Add one line; returns false (and counts it as dropped) when it would not fit. */
  line(text: string, reserve = 0): boolean {
    const cost = text.length + 1;
    if (this.used + cost + reserve > this.maxChars) {
      this.dropped++;
      return false;
    }
    this.parts.push(text);
    this.used += cost;
    return true;
  }

  /** Add lines of one section; stops at the first that does not fit and reports the rest. */
  section(title: string | null, lines: string[], opts: { reserve?: number; moreLabel?: string } = {}): number {
    const reserve = opts.reserve ?? 0;
    if (lines.length === 0) return 0;
    if (title && !this.line(title, reserve + 40)) return 0;
    let n = 0;
    for (const l of lines) {
      if (!this.line(l, reserve + 40)) break;
      n++;
    }
    if (n === 0) {
      if (title) this.unline();
      return 0;
    }
    if (n < lines.length) {
      this.dropped -= 1; // the failed line is accounted in the note below
      this.line(`  … ${fmt(lines.length - n)} more ${opts.moreLabel ?? 'lines'} not shown`, 0);
    }
    return n;
  }

  private unline(): void {
    const last = this.parts.pop();
    if (last !== undefined) this.used -= last.length + 1;
  }

  toString(): string {
    return this.parts.join('\n');
  }
}

/**
 * The focus section shared by every kind: the lines matching the best combination of terms
 * in full, then a few examples (and the count) of each weaker combination, so one line that
 * matches every term is never buried under thousands that match one common word.
 */
export function renderFocus<T>(
  b: Budget,
  hits: FocusCollector<T>,
  focus: string,
  unit: string,
  show: (item: T) => string,
  opts: { top?: number; perWeaker?: number; weakerGroups?: number; reserve?: number } = {},
): void {
  // Terms that match nearly every line rank nothing and only crowd out the rest of the summary;
  // terms that match nothing say nothing. Neither is used, and the line says which terms were.
  const common = hits.common();
  const all = hits;
  if (common.length) hits = hits.without(common.map((c) => c.word));
  const missing = hits.missing();
  const used = hits.terms.map((t) => t.word).filter((w) => !missing.includes(w));
  const left = [
    ...common.map((c) => `"${c.word}" (in ${fmt(c.hits)} of ${fmt(all.seen)} ${unit}s: too common)`),
    ...missing.map((w) => `"${w}" (no match)`),
  ];
  if (!hits.matched) {
    b.line(`Focus "${focus}": not used${left.length ? `; left out: ${left.join(', ')}` : `: no ${unit} matches`}.`);
    return;
  }
  const groups = hits.groups();
  b.line(`Focus "${focus}": ${fmt(hits.matched)} matching ${unit}${hits.matched === 1 ? '' : 's'}; terms used: ${used.join(', ')}${left.length ? `; left out: ${left.join(', ')}` : ''}.`);
  const reserve = opts.reserve ?? 300;
  for (const [i, g] of groups.slice(0, 1 + (opts.weakerGroups ?? 3)).entries()) {
    const max = i === 0 ? (opts.top ?? 20) : (opts.perWeaker ?? 3);
    const label = hits.terms.length > 1 ? `matching ${g.words.map((w) => JSON.stringify(w)).join(' + ')}` : 'matching';
    const head = `  ${fmt(g.count)} ${unit}${g.count === 1 ? '' : 's'} ${label}${g.count > max ? `, first ${fmt(Math.min(max, g.items.length))}` : ''}:`;
    // The best group may take most of the budget, but leaves some for the rest of the summary.
    const r = i === 0 ? Math.floor(b.maxChars * 0.3) : reserve;
    if (!b.line(head, r)) return;
    if (b.section(null, g.items.slice(0, max).map((it) => `    ${show(it)}`), { reserve: r, moreLabel: `${unit}s` }) === 0) return;
  }
  if (groups.length > 1 + (opts.weakerGroups ?? 3)) b.line(`  (+ ${fmt(groups.length - 1 - (opts.weakerGroups ?? 3))} weaker combinations of terms)`, reserve);
}
