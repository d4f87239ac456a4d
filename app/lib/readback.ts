/**
 * Read-backs as the views word them: a later call that read a spill back (the contract's ReadBack,
 * linked by the index: src/index/readback.ts). Pure, so the payload's header and the Timeline say
 * the same thing, and tests read it without a DOM. Everything here is plain text: a grep pattern
 * or a jq path comes from a transcript and is rendered by React as text, never as HTML.
 *
 * | export | for |
 * | --- | --- |
 * | `partText(part)` | the part read, in words: `lines 120–180`, grep `ERROR` (3 lines) |
 * | `readBackCost(rb)` | the tokens it cost in context (entered, else the whole result) |
 * | `readBackTotals(list)` | how many read-backs, by how many calls, costing how many tokens |
 * | `spillTarget(rb, sessionId)` | what "open the spill" opens: the call it answered in this session, else the spill itself |
 * | `readBackTitle(rb)` | the tooltip: who read what, when, and what it cost |
 */
import type { ReadBack, ReadBackPart } from '../../src/service/contract.js';
import { formatInt } from './format.js';

/** Matched line numbers a tooltip names before "…". */
const MAX_TITLE_LINES = 12;

const plural = (n: number, one: string, many = `${one}s`) => `${formatInt(n)} ${n === 1 ? one : many}`;

/** The part of the spill a read-back read, in words (lines are 1-based and inclusive). */
export function partText(p: ReadBackPart): string {
  switch (p.kind) {
    case 'whole':
      return 'the whole file';
    // Line numbers as an editor shows them (no thousands separator), so "lines 1230–1240" can be typed into one.
    case 'lines':
      return p.end === undefined ? `lines ${p.start}–end` : p.end === p.start ? `line ${p.start}` : `lines ${p.start}–${p.end}`;
    case 'tail':
      return `last ${plural(p.count, 'line')}`;
    case 'bytes':
      return p.start < 0 ? `last ${plural(-p.start, 'byte')}` : `bytes ${formatInt(p.start)}–${p.end === undefined ? 'end' : formatInt(p.end)}`;
    case 'chars':
      return `chars ${formatInt(p.start)}–${p.end === undefined ? 'end' : formatInt(p.end)}`;
    case 'grep':
      return `grep \`${p.pattern}\`${p.matchCount === undefined ? '' : ` (${plural(p.matchCount, 'line')})`}`;
    case 'json':
      return `jq \`${p.path}\``;
    case 'query':
      return `query \`${p.query}\`${p.handle ? ` on ${p.handle}` : ''}`;
  }
}

/** What a read-back cost in the model's context: the reader's entered tokens (the Timeline's and the table's figure), else its whole result. */
export function readBackCost(rb: ReadBack): number {
  return rb.entered ?? rb.tokens;
}

/** A list's totals: read-backs, the calls that made them, and those calls' tokens (a call that read twice counts once). */
export function readBackTotals(list: readonly ReadBack[]): { count: number; calls: number; tokens: number } {
  const calls = new Map<string, number>();
  for (const rb of list) calls.set(rb.readerId, readBackCost(rb));
  let tokens = 0;
  for (const t of calls.values()) tokens += t;
  return { count: list.length, calls: calls.size, tokens };
}

/**
 * Where "open the spill" goes from a view of `sessionId`: the transcript's call the spill answered
 * when it is in that session (its row shows the spill's content and its read-backs, and the table
 * stays on the session), else the spill's own row in its own session.
 */
export function spillTarget(rb: ReadBack, sessionId: string | null): { payloadId: string; sessionId?: string } {
  if (rb.spillCalledIn && (rb.spillCalledIn.sessionId === sessionId || !rb.spillSessionId)) return rb.spillCalledIn;
  return { payloadId: rb.spillId, sessionId: rb.spillSessionId };
}

const VIA: Record<ReadBack['via'], string> = {
  'drill-down': "the proxy's drill-down tool",
  read: "the client's file read",
  search: "the client's search",
  shell: 'a shell command',
};

/** The tooltip of a read-back: the call, when, what it read (a grep's lines), and its tokens. */
export function readBackTitle(rb: ReadBack, at?: string): string {
  const p = rb.part;
  const lines =
    p.kind === 'grep' && p.matched?.length
      ? `, matching line${p.matched.length === 1 ? '' : 's'} ${p.matched.slice(0, MAX_TITLE_LINES).join(', ')}${p.matched.length > MAX_TITLE_LINES || (p.matchCount ?? 0) > p.matched.length ? ', …' : ''}`
      : '';
  const cost = rb.entered !== undefined ? `${formatInt(rb.entered)} tokens entered the model's context (whole result ${formatInt(rb.tokens)})` : `${formatInt(rb.tokens)} tokens`;
  return `${rb.tool}${rb.toolUseId ? ` (${rb.toolUseId})` : ''}${at ? ` at ${at}` : ''} read ${partText(p)}${lines} of the spill, by ${VIA[rb.via]}: ${cost}.`;
}
