import { FocusCollector, type FocusTerm } from '../focus.js';
import { FOCUS_LINES_PER_BUCKET, MAX_DISTINCT_TRACKED, MAX_DISTINCT_VALUE_CHARS } from '../limits.js';
import { Budget, fmt, quoteLine, renderFocus, sampleOf } from './out.js';
import { detectDelimiter, splitCsvLine } from '../../pipeline/detect.js';

interface Col {
  name: string;
  filled: number;
  numeric: number;
  min: number;
  max: number;
  sum: number;
  chars: number;
  distinct: Map<string, number> | null;
  samples: string[];
}

const NUM_RE = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** Columns with stats (filled, numeric ranges, distinct values, samples) and focus-matching rows, in one pass. */
export function summarizeCsv(text: string, b: Budget, terms: readonly FocusTerm[], focus: string | undefined): void {
  const firstLines = text.slice(0, 64 * 1024).split('\n').slice(0, 20);
  const delim = detectDelimiter(firstLines) ?? ',';
  let pos = 0;
  const len = text.length;
  let header: string[] | null = null;
  const cols: Col[] = [];
  let rows = 0;
  let ragged = 0;
  const hits = new FocusCollector<{ n: number; line: string }>(terms, FOCUS_LINES_PER_BUCKET);
  let lineNo = 0;
  while (pos < len) {
    let end = text.indexOf('\n', pos);
    if (end === -1) end = len;
    let line = text.slice(pos, end);
    pos = end + 1;
    lineNo++;
    // A quoted field may span lines: keep reading while the quotes are unbalanced.
    while (countQuotes(line) % 2 === 1 && pos < len) {
      let e2 = text.indexOf('\n', pos);
      if (e2 === -1) e2 = len;
      line += '\n' + text.slice(pos, e2);
      pos = e2 + 1;
      lineNo++;
    }
    if (!line.trim()) continue;
    const cells = splitCsvLine(line, delim);
    if (!header) {
      header = cells.map((c, i) => c.trim() || `column${i + 1}`);
      for (const name of header) cols.push({ name, filled: 0, numeric: 0, min: Infinity, max: -Infinity, sum: 0, chars: 0, distinct: new Map(), samples: [] });
      continue;
    }
    rows++;
    if (cells.length !== header.length) ragged++;
    for (let i = 0; i < cols.length && i < cells.length; i++) {
      const v = cells[i]!.trim();
      if (v === '') continue;
      const c = cols[i]!;
      c.filled++;
      c.chars += v.length;
      if (NUM_RE.test(v)) {
        const x = Number(v);
        c.numeric++;
        if (x < c.min) c.min = x;
        if (x > c.max) c.max = x;
        c.sum += x;
      }
      if (c.distinct) {
        if (v.length > MAX_DISTINCT_VALUE_CHARS) c.distinct = null;
        else {
          c.distinct.set(v, (c.distinct.get(v) ?? 0) + 1);
          if (c.distinct.size > MAX_DISTINCT_TRACKED) c.distinct = null;
        }
      }
      if (c.samples.length < 3 && !c.samples.includes(v)) c.samples.push(v);
    }
    if (terms.length) {
      const n = lineNo;
      hits.offer(line.toLowerCase(), () => ({ n, line }));
    }
  }
  b.line(`Table: ${fmt(rows)} rows × ${fmt(cols.length)} columns (delimiter ${JSON.stringify(delim)})${ragged ? `, ${fmt(ragged)} rows with a different cell count` : ''}`);
  if (terms.length) {
    if (header && hits.matched) b.line(`Header: ${quoteLine(header.join(delim), 0, 300)}`);
    renderFocus(b, hits, focus ?? '', 'row', (it) => `L${it.n}: ${quoteLine(it.line)}`);
  }
  b.section(
    'Columns:',
    cols.map((c) => {
      const parts = [`${fmt(c.filled)} filled`];
      if (c.numeric && c.numeric === c.filled) parts.push(`numeric ${fmt(c.min)} … ${fmt(c.max)}, mean ${fmt(Math.round((c.sum / c.numeric) * 100) / 100)}`);
      else if (c.numeric) parts.push(`${fmt(c.numeric)} numeric`);
      if (c.distinct) {
        const d = c.distinct.size;
        if (d <= 8 && c.filled > d) {
          parts.push(`${d} distinct: ${[...c.distinct.entries()].sort((a, b2) => b2[1] - a[1]).map(([v, k]) => `${sampleOf(v, 40)} ×${fmt(k)}`).join(', ')}`);
        } else parts.push(`${fmt(d)} distinct, e.g. ${c.samples.map((s) => sampleOf(s, 40)).join(', ')}`);
      } else parts.push(`≥${fmt(MAX_DISTINCT_TRACKED)} distinct, e.g. ${c.samples.map((s) => sampleOf(s, 40)).join(', ')}`);
      if (!c.numeric && c.filled) parts.push(`avg ${fmt(Math.round(c.chars / c.filled))} chars`);
      return `  ${c.name}: ${parts.join('; ')}`;
    }),
    { moreLabel: 'columns' },
  );
}

function countQuotes(s: string): number {
  let n = 0;
  for (let i = s.indexOf('"'); i !== -1; i = s.indexOf('"', i + 1)) n++;
  return n;
}
