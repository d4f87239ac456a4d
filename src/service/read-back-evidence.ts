/**
 * A payload's read-backs (the index links them: src/index/readback.ts) as the plain data the
 * scores take (src/summarize/scores.ts `ReadBackEvidence`): the lines of the payload each one read.
 * The scores never see the index; this is where its rows become lines.
 */
import type { ReadBackEvidence } from '../summarize/index.js';
import type { ReadBack, ReadBackPart } from './contract.js';

/** How a person names the part read: "lines 120–180", "grep ERROR". */
export function readBackLabel(part: ReadBackPart): string {
  switch (part.kind) {
    case 'whole':
      return 'the whole file';
    case 'lines':
      return `lines ${part.start}–${part.end ?? 'end'}`;
    case 'tail':
      return `the last ${part.count} lines`;
    case 'bytes':
      return `bytes ${part.start}–${part.end ?? 'end'}`;
    case 'chars':
      return `chars ${part.start}–${part.end ?? 'end'}`;
    case 'grep':
      return `grep ${part.pattern}`;
    case 'json':
      return `json ${part.path}`;
    case 'query':
      return `query ${part.query}`;
  }
}

/** The 1-based lines overlapping the window [start, end), `starts[i]` being where line i+1 starts, in the window's unit. */
function linesOverlapping(lines: string[], starts: number[], start: number, end: number): Array<{ n: number; text: string }> {
  const out: Array<{ n: number; text: string }> = [];
  for (let i = 0; i < lines.length; i++) {
    const s = starts[i]!;
    const e = s + lines[i]!.length;
    if (e >= start && s < end) out.push({ n: i + 1, text: lines[i]! });
    if (s >= end) break;
  }
  return out;
}

/**
 * Each read-back with the payload's lines it read: a line range, a tail, a grep's matched lines,
 * the lines a byte or char window overlaps. A whole-file read, a JSON path, a handle query and a
 * grep whose lines were not resolved at indexing say nothing about which lines were needed: `lines: null`.
 */
export function readBackEvidence(readBacks: readonly ReadBack[] | undefined, text: string): ReadBackEvidence[] {
  if (!readBacks?.length) return [];
  const lines = text.split('\n');
  if (lines.length > 1 && lines.at(-1) === '') lines.pop();
  const at = (n: number) => (n >= 1 && n <= lines.length ? [{ n, text: lines[n - 1]! }] : []);
  let charStarts: number[] | undefined;
  let byteStarts: number[] | undefined;
  const starts = (bytes: boolean): number[] => {
    const cached = bytes ? byteStarts : charStarts;
    if (cached) return cached;
    const out: number[] = [];
    let off = 0;
    for (const l of lines) {
      out.push(off);
      off += (bytes ? Buffer.byteLength(l, 'utf8') : l.length) + 1;
    }
    return bytes ? (byteStarts = out) : (charStarts = out);
  };
  return readBacks.map((rb) => {
    const p = rb.part;
    const label = readBackLabel(p);
    switch (p.kind) {
      case 'lines': {
        const end = Math.min(p.end ?? lines.length, lines.length);
        const out: Array<{ n: number; text: string }> = [];
        for (let n = Math.max(1, p.start); n <= end; n++) out.push(...at(n));
        return { label, lines: out };
      }
      case 'tail':
        return { label, lines: lines.slice(Math.max(0, lines.length - p.count)).map((t, i) => ({ n: Math.max(0, lines.length - p.count) + i + 1, text: t })) };
      case 'grep':
        return { label, lines: p.matched ? p.matched.flatMap(at) : null };
      case 'bytes':
      case 'chars':
        return { label, lines: linesOverlapping(lines, starts(p.kind === 'bytes'), p.start, p.end ?? Number.POSITIVE_INFINITY) };
      default:
        return { label, lines: null };
    }
  });
}
