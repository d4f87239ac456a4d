import type { ContentKind } from '../../pipeline/types.js';
import { FocusCollector, matchMask, popcount, type FocusTerm } from '../focus.js';
import { FOCUS_LINES_PER_BUCKET, MAX_RANKED_SENTENCES } from '../limits.js';
import { Budget, fmt, quoteLine, renderFocus } from './out.js';

const STOP = new Set(
  'the a an and or of to in on for with is are was were be been it its this that as at by from not but have has had will would can could should we you they he she i our your their there here which who what when where how all any each more most other some such no nor only own same so than too very just also into over under then once'.split(
    ' ',
  ),
);

interface Sentence {
  line: number;
  text: string;
  index: number;
}

const DECL_RE =
  /^\s*(export\s+)?(default\s+)?(async\s+)?((function\*?|class|interface|type|enum|struct|trait|impl|module|namespace|def|fn|func|pub\s+fn|pub\s+struct|public|private|protected|static|abstract)\b|(const|let)\s+\w+\s*=\s*(async\s*)?\()/;

/** Extractive summary: an outline (headings / declarations) and the sentences that carry the most content words, numbers and focus terms. */
export function summarizeProse(text: string, kind: ContentKind, b: Budget, terms: readonly FocusTerm[], focus: string | undefined): void {
  const sentences: Sentence[] = [];
  const outline: string[] = [];
  const urls = new Map<string, number>();
  const hits = new FocusCollector<{ n: number; line: string; at: number }>(terms, FOCUS_LINES_PER_BUCKET);
  const todo: string[] = [];
  let lineNo = 0;
  let pos = 0;
  const len = text.length;
  let inFence = false;
  while (pos < len) {
    let end = text.indexOf('\n', pos);
    if (end === -1) end = len;
    const line = text.slice(pos, end);
    pos = end + 1;
    lineNo++;
    const t = line.trim();
    if (!t) continue;
    if (terms.length) {
      const lower = t.toLowerCase();
      const n = lineNo;
      hits.offer(lower, () => ({ n, line: t, at: Math.max(0, lower.indexOf(terms[0]!.stem)) }));
    }
    if (urls.size < 200) for (const m of t.matchAll(/https?:\/\/[^\s<>"')\]]+/g)) urls.set(m[0], (urls.get(m[0]) ?? 0) + 1);
    if (kind === 'markdown' && t.startsWith('```')) inFence = !inFence;
    if (kind === 'markdown' && !inFence && /^#{1,4} /.test(t)) {
      if (outline.length < 200) outline.push(`  L${lineNo}: ${quoteLine(t, 0, 160)}`);
      continue;
    }
    if (kind === 'code' || inFence) {
      if (DECL_RE.test(line) && outline.length < 400) outline.push(`  L${lineNo}: ${quoteLine(t, 0, 160)}`);
      if (/\b(TODO|FIXME|XXX|HACK)\b/.test(t) && todo.length < 50) todo.push(`  L${lineNo}: ${quoteLine(t, 0, 200)}`);
      continue;
    }
    if (sentences.length >= MAX_RANKED_SENTENCES) continue;
    // Sentences within the line; a paragraph is often one long line.
    let start = 0;
    for (const m of t.matchAll(/[.!?](?=\s+["'([]?[A-Z0-9])/g)) {
      const s = t.slice(start, m.index! + 1).trim();
      if (s) sentences.push({ line: lineNo, text: s, index: sentences.length });
      start = m.index! + 1;
    }
    const rest = t.slice(start).trim();
    if (rest) sentences.push({ line: lineNo, text: rest, index: sentences.length });
  }

  if (terms.length) renderFocus(b, hits, focus ?? '', 'line', (it) => `L${it.n}: ${quoteLine(it.line, it.at, 300)}`, { top: 15 });
  if (outline.length) b.section(kind === 'code' ? 'Declarations:' : 'Outline:', outline.slice(0, 60), { reserve: Math.max(300, Math.floor(b.remaining * 0.45)), moreLabel: 'entries' });
  if (todo.length) b.section('TODO/FIXME:', todo, { reserve: 300 });

  if (sentences.length) {
    const picked = rankSentences(sentences, terms);
    const lines: string[] = [];
    let chars = 0;
    const share = Math.max(400, b.remaining - 300);
    for (const s of picked) {
      const l = `  L${s.line}: ${quoteLine(s.text, 0, 320)}`;
      if (chars + l.length > share) break;
      lines.push(l);
      chars += l.length + 1;
    }
    lines.sort((a, c) => Number(/L(\d+)/.exec(a)![1]) - Number(/L(\d+)/.exec(c)![1]));
    b.section(`Key sentences (${fmt(lines.length)} of ${fmt(sentences.length)}, in order):`, lines, { reserve: 150, moreLabel: 'sentences' });
  }
  if (urls.size) {
    const top = [...urls.entries()].sort((a, c) => c[1] - a[1]).slice(0, 10).map(([u]) => `  ${u}`);
    b.section(`Links (${fmt(urls.size)}${urls.size >= 200 ? '+' : ''} distinct):`, top, { moreLabel: 'links' });
  }
}

function words(s: string): string[] {
  return s.toLowerCase().match(/[\p{L}\p{N}_]{3,}/gu) ?? [];
}

/** Rank by average content-word frequency (words the document repeats are its topic), plus numbers, opening position and focus terms. */
export function rankSentences(sentences: Sentence[], terms: readonly FocusTerm[]): Sentence[] {
  const tf = new Map<string, number>();
  const sw = sentences.map((s) => words(s.text).filter((w) => !STOP.has(w)));
  for (const ws of sw) for (const w of ws) tf.set(w, (tf.get(w) ?? 0) + 1);
  const scored = sentences.map((s, i) => {
    const ws = sw[i]!;
    let score = 0;
    for (const w of ws) score += Math.log(1 + (tf.get(w) ?? 0));
    score /= Math.max(ws.length, 1) ** 0.6;
    if (ws.length < 4) score *= 0.4;
    if (ws.length > 70) score *= 0.6;
    if (/\d/.test(s.text)) score *= 1.25;
    if (i < 3) score *= 1.5;
    if (terms.length) score *= 1 + 3 * popcount(matchMask(s.text.toLowerCase(), terms));
    return { s, score };
  });
  scored.sort((a, c) => c.score - a.score || a.s.index - c.s.index);
  const seen = new Set<string>();
  const out: Sentence[] = [];
  for (const { s } of scored) {
    const key = s.text.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(s);
    if (out.length >= 200) break;
  }
  return out;
}

/** HTML/XML: title, headings, element counts; the visible text then goes through the prose summary. Nothing is ever rendered. */
export function htmlToText(html: string): { title?: string; headings: string[]; text: string; links: number; elements: Map<string, number> } {
  const elements = new Map<string, number>();
  for (const m of html.matchAll(/<([a-zA-Z][\w:-]{0,40})[\s>/]/g)) {
    const tag = m[1]!.toLowerCase();
    if (elements.size < 500 || elements.has(tag)) elements.set(tag, (elements.get(tag) ?? 0) + 1);
  }
  const title = /<title[^>]*>([^<]{0,300})/i.exec(html)?.[1]?.trim();
  const headings: string[] = [];
  for (const m of html.matchAll(/<h([1-3])[^>]*>([\s\S]{0,400}?)<\/h\1>/gi)) {
    const t = decode(m[2]!.replace(/<[^>]*>/g, '')).replace(/\s+/g, ' ').trim();
    if (t && headings.length < 100) headings.push(`${'#'.repeat(Number(m[1]))} ${t}`);
  }
  const text = decode(
    html
      .replace(/<(script|style|noscript|svg|template)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
      .replace(/<!--[\s\S]*?-->/g, ' ')
      .replace(/<h([1-4])\b[^>]*>/gi, (_, n: string) => `\n${'#'.repeat(Number(n))} `)
      .replace(/<\/(p|div|li|tr|h[1-6]|section|article|header|footer|pre|br|table|ul|ol|dd|dt|blockquote)\s*>|<br\s*\/?>/gi, '\n')
      .replace(/<[^>]{0,2000}>/g, ' '),
  )
    .replace(/[ \t\f\v]+/g, ' ')
    .replace(/\n\s*\n+/g, '\n');
  return { title: title ? decode(title) : undefined, headings, text, links: elements.get('a') ?? 0, elements };
}

function decode(s: string): string {
  return s
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&#(\d{1,6});/g, (_, d: string) => safeChar(Number(d)))
    .replace(/&#x([0-9a-f]{1,6});/gi, (_, h: string) => safeChar(parseInt(h, 16)))
    .replace(/&amp;/g, '&');
}

function safeChar(cp: number): string {
  return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : '\uFFFD';
}
