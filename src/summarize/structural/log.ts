import { FocusCollector, type FocusTerm } from '../focus.js';
import { FOCUS_LINES_PER_BUCKET, MAX_LOG_TEMPLATES } from '../limits.js';
import { LEVEL_RE, TIMESTAMP_RE } from '../../pipeline/detect.js';
import { Budget, fmt, pct, quoteLine, renderFocus } from './out.js';

const LEVEL_NAMES: Record<string, string> = {
  trace: 'TRACE',
  debug: 'DEBUG',
  info: 'INFO',
  notice: 'INFO',
  warn: 'WARN',
  warning: 'WARN',
  error: 'ERROR',
  err: 'ERROR',
  severe: 'ERROR',
  fatal: 'FATAL',
  critical: 'FATAL',
  crit: 'FATAL',
  panic: 'FATAL',
  emerg: 'FATAL',
  alert: 'FATAL',
};
const LEVEL_ORDER = ['FATAL', 'ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE', '(none)'];
/** Chars of a line looked at for its level and message template. */
const HEAD_CHARS = 240;

interface Template {
  count: number;
  firstLine: number;
  lastLine: number;
  example: string;
  level: string;
}

const DIGITS_RE = /\d+/g;
const VARYING_RE = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b|\d+/gi;

/** Replace what varies between occurrences of one message (times, numbers, ids) so they group. One regex pass. */
export function messageTemplate(head: string): string {
  return head.replace(VARYING_RE, (m) => (m.length === 36 && m[8] === '-' ? '<uuid>' : m.length >= 8 && /[a-f]/i.test(m) ? '<hex>' : '#')).trim();
}

/** One pass over the lines of a log: levels, time span, error/warning kinds with verbatim examples, focus hits. */
export function summarizeLog(text: string, b: Budget, terms: readonly FocusTerm[], focus: string | undefined): void {
  const levels = new Map<string, number>();
  const problems = new Map<string, Template>();
  const common = new Map<string, Template>();
  let problemOverflow = 0;
  const focusHits = new FocusCollector<{ n: number; line: string; at: number }>(terms, FOCUS_LINES_PER_BUCKET);
  let firstTs: string | undefined;
  let lastTs: string | undefined;
  let firstLine = '';
  let lastLine = '';
  let n = 0;
  let pos = 0;
  const len = text.length;
  while (pos < len) {
    let end = text.indexOf('\n', pos);
    if (end === -1) end = len;
    const line = text.slice(pos, end);
    pos = end + 1;
    n++;
    if (!line.trim()) continue;
    if (!firstLine) firstLine = line;
    lastLine = line;
    const head = line.length > HEAD_CHARS ? line.slice(0, HEAD_CHARS) : line;
    const ts = TIMESTAMP_RE.exec(head.slice(0, 80));
    if (ts) {
      firstTs ??= ts[1];
      lastTs = ts[1];
    }
    const lm = LEVEL_RE.exec(head);
    const level = lm ? (LEVEL_NAMES[(lm[1] ?? lm[2] ?? '').toLowerCase()] ?? 'INFO') : '(none)';
    levels.set(level, (levels.get(level) ?? 0) + 1);
    const problem = level === 'ERROR' || level === 'FATAL' || level === 'WARN';
    // Full templating (uuids, hex ids) for the few problem lines; digits only for the rest, which is much cheaper.
    const tpl = problem ? messageTemplate(head) : head.replace(DIGITS_RE, '#');
    const map = problem ? problems : common;
    let t = map.get(tpl);
    if (!t) {
      if (map.size >= MAX_LOG_TEMPLATES) {
        if (problem) problemOverflow++;
      } else map.set(tpl, (t = { count: 0, firstLine: n, lastLine: n, example: line, level }));
    }
    if (t) {
      t.count++;
      t.lastLine = n;
    }
    if (terms.length) {
      const lower = line.length > 100_000 ? line.slice(0, 100_000).toLowerCase() : line.toLowerCase();
      const lineNo = n;
      focusHits.offer(lower, () => ({ n: lineNo, line, at: Math.max(0, lower.indexOf(terms[0]!.stem)) }));
    }
  }
  const total = [...levels.values()].reduce((a, c) => a + c, 0);
  if (firstTs) b.line(`Time span: ${firstTs} → ${lastTs}`);
  b.line(
    `Levels: ${LEVEL_ORDER.filter((l) => levels.has(l))
      .map((l) => `${l} ${fmt(levels.get(l)!)} (${pct(levels.get(l)!, total)})`)
      .join(', ')}`,
  );

  if (terms.length) renderFocus(b, focusHits, focus ?? '', 'line', (it) => `L${it.n}: ${quoteLine(it.line, it.at)}`);

  const byLevel = (lvls: string[]) =>
    [...problems.values()].filter((t) => lvls.includes(t.level)).sort((a, c) => c.count - a.count || a.firstLine - c.firstLine);
  for (const [label, lvls] of [
    ['Errors', ['FATAL', 'ERROR']],
    ['Warnings', ['WARN']],
  ] as const) {
    const ts = byLevel([...lvls]);
    if (!ts.length) continue;
    const lines = ts.reduce((a, t) => a + t.count, 0);
    b.line(`${label}: ${fmt(lines)} lines of ${fmt(ts.length)} kinds, verbatim, most frequent first:`, 200);
    b.section(
      null,
      ts.map((t) =>
        t.count === 1 ? `  L${t.firstLine}: ${quoteLine(t.example)}` : `  ×${fmt(t.count)} (L${t.firstLine}…L${t.lastLine}) e.g. ${quoteLine(t.example)}`,
      ),
      { reserve: 200, moreLabel: `${label.toLowerCase()} kinds` },
    );
  }
  if (problemOverflow) b.line(`  (+ ${fmt(problemOverflow)} more error/warning lines of rarer kinds)`);
  const frequent = [...common.values()].sort((a, c) => c.count - a.count).slice(0, 8);
  if (frequent.length) {
    b.section(
      'Most frequent messages:',
      frequent.map((t) => `  ×${fmt(t.count)} e.g. L${t.firstLine}: ${quoteLine(t.example, 0, 200)}`),
      { reserve: 120, moreLabel: 'messages' },
    );
  }
  if (firstLine) b.line(`First line: ${quoteLine(firstLine, 0, 300)}`);
  if (lastLine && n > 1) b.line(`Last line (L${n}): ${quoteLine(lastLine, 0, 300)}`);
}
