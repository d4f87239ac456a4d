import type { ContentKind } from '../../pipeline/types.js';

/** Chars looked at to guess the kind; the rest of a payload never changes the guess. */
const SNIFF_CHARS = 64 * 1024;
const SNIFF_LINES = 200;

export const TIMESTAMP_RE =
  /\b(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2}|\d{2}\/(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\/\d{4}:\d{2}:\d{2}:\d{2}(?: [+-]\d{4})?)/;
export const LEVEL_RE =
  /\b(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|CRIT|PANIC|SEVERE|EMERG|ALERT)\b|\blevel["']?\s*[:=]\s*["']?(trace|debug|info|notice|warn|warning|error|fatal|critical|panic)\b/i;

/** Guess what a text payload is, cheapest check first. */
export function sniffKind(text: string): ContentKind {
  const head = text.slice(0, SNIFF_CHARS);
  // NUL bytes or many replacement chars: bytes read as text, not text
  if (head.includes('\u0000') || (head.match(/\uFFFD/g)?.length ?? 0) > head.length / 20) return 'binary';
  const trimmed = head.trimStart();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    const lines = head.split('\n', 6).filter((l) => l.trim());
    if (lines.length >= 2 && lines.slice(0, -1).every((l) => isJsonLine(l))) {
      // One JSON value per line (the last sniffed line may be cut mid-way).
      if (!isWholeJson(text)) return 'ndjson';
    }
    if (trimmed.startsWith('{') || /^\[\s*[[{"\d\-tfn\]]/.test(trimmed)) return 'json';
  }
  if (/^<\?xml/i.test(trimmed)) return 'xml';
  if (/^<!doctype html|^<html[\s>]|<body[\s>]|<\/(div|p|span|table|head)>/i.test(head.slice(0, 4096))) return 'html';
  const lines = head.split('\n').slice(0, SNIFF_LINES).filter((l) => l.trim() !== '');
  if (lines.length === 0) return 'text';
  let ts = 0;
  let lvl = 0;
  for (const l of lines) {
    if (TIMESTAMP_RE.test(l.slice(0, 64))) ts++;
    if (LEVEL_RE.test(l.slice(0, 200))) lvl++;
  }
  if (ts / lines.length >= 0.5 || (lvl / lines.length >= 0.5 && lines.length >= 3)) return 'log';
  if (looksCsv(lines)) return 'csv';
  if (/^<[a-zA-Z][\w:-]*[\s>]/.test(trimmed) && /<\/[a-zA-Z][\w:-]*>/.test(head)) return 'xml';
  const mdHints = lines.filter((l) => /^(#{1,6} |[-*+] |\d+\. |```|> )/.test(l)).length;
  const codeHints = lines.filter((l) =>
    /^\s*(import |export |from \S+ import|def |class |function |const |let |var |package |#include|public |private |fn |func |return\b)|[;{}]\s*$/.test(l),
  ).length;
  if (codeHints / lines.length >= 0.3) return 'code';
  if (mdHints >= 2 || /^#{1,3} /.test(trimmed)) return 'markdown';
  return 'text';
}

function isJsonLine(l: string): boolean {
  const t = l.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return false;
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}

function isWholeJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export function detectDelimiter(lines: string[]): string | null {
  let best: string | null = null;
  let bestCols = 1;
  for (const d of [',', '\t', ';', '|']) {
    const counts = lines.slice(0, 20).map((l) => splitCsvLine(l, d).length);
    if (counts.length < 2) continue;
    const first = counts[0]!;
    const consistent = counts.filter((c) => c === first).length / counts.length;
    if (first > bestCols && consistent >= 0.8) {
      best = d;
      bestCols = first;
    }
  }
  return best;
}

function looksCsv(lines: string[]): boolean {
  return lines.length >= 2 && detectDelimiter(lines) !== null;
}

/** Split one CSV record (RFC 4180 quotes; records spanning lines are handled by the caller). */
export function splitCsvLine(line: string, delim: string): string[] {
  if (!line.includes('"')) return (line.endsWith('\r') ? line.slice(0, -1) : line).split(delim);
  const out: string[] = [];
  let cur = '';
  let q = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (q) {
      if (c === '"') {
        if (line[i + 1] === '"') {
          cur += '"';
          i++;
        } else q = false;
      } else cur += c;
    } else if (c === '"' && cur === '') q = true;
    else if (c === delim) {
      out.push(cur);
      cur = '';
    } else if (c !== '\r') cur += c;
  }
  out.push(cur);
  return out;
}
