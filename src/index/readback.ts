/**
 * Read-backs: a later tool call that reads a spill (the proxy's drill-down tools, the client's Read
 * with an offset, `grep`/`sed -n`/`jq` in a shell on the spill's path), linked to that spill and to
 * the part it read. They are the evidence of what the agent needed that the message did not hold.
 *
 * | export | for |
 * | --- | --- |
 * | `linkReadBacks(core)` | rebuild the `read_backs` table from the payload rows (after every listing, inside its transaction: join.ts `relink`) |
 * | `readBacksOf(core, spillIds)` | the read-backs of these spills, oldest first |
 * | `readBacksBy(core, readerId)` | the read-backs one call made (its own header's "reads back") |
 * | `readBacksIn(core, sessionIds?)` | every read-back of these sessions (a reader's or a spill's), oldest first |
 *
 * What a call reads is parsed per client (src/agents/<client>/readback.ts, the shared drill-down
 * and shell parsers in src/agents/readback.ts). A read is linked when the file it names is a spill
 * the index holds (by file name: spill names are unique, and a call may name it relative, absolute
 * or bare as the drill-down tools allow; a sidecar's name counts as its payload's), and the call
 * came after the spill. A call that reads any other file is not linked. Grep patterns are run on
 * the spill's file here, so each read-back names the exact lines it matched.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readAccessesOf, type ReadPart } from '../agents/index.js';
import { openUntrustedSync } from '../pipeline/index.js';
import { type IndexCore } from './core.js';
import type { ReadBack, ReadBackPart } from './rows.js';

/** A spill's file is read (to find a grep's lines, a tail's start) only up to this size. */
export const MAX_READBACK_SCAN_BYTES = 32 * 1024 * 1024;
/** Matched line numbers kept per read-back (a grep of a common word lists the first ones). */
export const MAX_READBACK_LINES = 500;
/** Clocks of the client and of Spillway may differ a little: a read may seem this much earlier than its spill. */
export const READBACK_CLOCK_SLACK_MS = 60_000;

interface SpillRow {
  id: string;
  session_id: string;
  path: string;
  linked_path: string | null;
  meta_path: string | null;
  created_at: string;
}

interface ReaderRow {
  id: string;
  session_id: string;
  tool: string;
  input_json: string;
  call_id: string | null;
  created_at: string;
  tokens: number;
  message: string | null;
  client: string | null;
}

const SIDECAR = /\.(meta|linked)\.json$/;
/** A spill's key: its file name without extension, so `x.txt`, `x.meta.json` and `x.linked.json` are one spill. */
function stemOf(p: string): string {
  const base = p.replace(/\\/g, '/').split('/').pop() ?? p;
  return base.replace(SIDECAR, '').replace(/\.[A-Za-z0-9]{1,8}$/, '');
}

/** grep's pattern as a JavaScript RegExp: basic regexps swap which of `+?|(){}` need a backslash. */
export function grepRegExp(part: Extract<ReadPart, { kind: 'grep' }>): RegExp {
  const flags = part.ignoreCase ? 'i' : '';
  const literal = (s: string) => new RegExp(s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), flags);
  if (part.regex === 'fixed') return literal(part.pattern);
  let src = part.pattern;
  if (part.regex === 'basic') src = src.replace(/\\([+?|(){}])|([+?|(){}])/g, (_m, esc: string | undefined, bare: string | undefined) => (esc ? esc : `\\${bare}`));
  try {
    return new RegExp(src, flags);
  } catch {
    return literal(part.pattern);
  }
}

/** A spill's text as lines, read once per linking pass; null when it cannot be read here (gone, remote, too big). */
function linesReader(): (file: string) => string[] | null {
  const cache = new Map<string, string[] | null>();
  return (file) => {
    if (cache.has(file)) return cache.get(file)!;
    let lines: string[] | null = null;
    if (path.isAbsolute(file)) {
      try {
        const { fd, stat } = openUntrustedSync(file);
        try {
          if (stat.size <= MAX_READBACK_SCAN_BYTES) {
            const buf = Buffer.alloc(stat.size);
            let off = 0;
            while (off < stat.size) {
              const n = fs.readSync(fd, buf, off, stat.size - off, off);
              if (n === 0) break;
              off += n;
            }
            const text = buf.subarray(0, off).toString('utf8');
            lines = text.split('\n');
            if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
          }
        } finally {
          fs.closeSync(fd);
        }
      } catch {
        lines = null;
      }
    }
    cache.set(file, lines);
    return lines;
  };
}

/** The part as stored: a grep with the lines it matched, a tail as the lines it was, when the file could be read. */
function resolvePart(part: ReadPart, lines: string[] | null): ReadBackPart {
  if (!lines) return part;
  if (part.kind === 'grep') {
    const re = grepRegExp(part);
    const matched: number[] = [];
    let count = 0;
    lines.forEach((l, i) => {
      if (re.test(l)) {
        count++;
        if (matched.length < MAX_READBACK_LINES) matched.push(i + 1);
      }
    });
    return { ...part, matched, matchCount: count };
  }
  if (part.kind === 'tail') return { kind: 'lines', start: Math.max(1, lines.length - part.count + 1), end: lines.length };
  return part;
}

/** Rebuild every read-back from the rows (called with the scan's transaction open). */
export function linkReadBacks(core: IndexCore): void {
  core.q('DELETE FROM read_backs').run();
  const spills = core
    .q(
      `SELECT id, session_id, path, linked_path, meta_path, created_at FROM payloads
        WHERE action = 'spill' AND path != coalesce(json_extract(source_json, '$.transcript'), '')`,
    )
    .all() as SpillRow[];
  if (!spills.length) return;
  const byStem = new Map<string, SpillRow[]>();
  const dirs = new Set<string>();
  for (const s of spills) {
    const stem = stemOf(s.path);
    const list = byStem.get(stem);
    if (list) list.push(s);
    else byStem.set(stem, [s]);
    dirs.add(path.basename(path.dirname(s.path)));
  }
  // Only calls whose input names a spill's folder (or a bare spill name, through the drill-down tools) are parsed.
  const likes = [...dirs].filter((d) => d && d !== '.' && d !== '/').map(() => 'p.input_json LIKE ?');
  const readers = core
    .q(
      `SELECT p.id, p.session_id, p.tool, p.input_json, p.call_id, p.created_at, p.tokens, p.message, s.client
         FROM payloads p LEFT JOIN sessions s ON s.id = p.session_id
        WHERE p.input_json IS NOT NULL AND p.source_json IS NOT NULL
          AND (p.tool LIKE '%spillway\\_%' ESCAPE '\\' ${likes.length ? `OR ${likes.join(' OR ')}` : ''})
        ORDER BY p.created_at, p.id`,
    )
    .all(...[...dirs].filter((d) => d && d !== '.' && d !== '/').map((d) => `%${d}%`)) as ReaderRow[];
  // `LIKE ?` above has no ESCAPE: a folder name with % or _ only widens the candidates, never narrows them.
  const insert = core.q(
    `INSERT INTO read_backs (reader_id, n, spill_id, session_id, call_id, tool, at, via, path, part_json, tokens)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const linesOf = linesReader();
  // A handle from an earlier query's answer, to the spill that query read (a later query may give only the handle).
  const handles: Array<{ session: string; message: string; spill: SpillRow }> = [];
  for (const r of readers) {
    let input: unknown;
    try {
      input = JSON.parse(r.input_json);
    } catch {
      continue;
    }
    const accesses = readAccessesOf(r.client ?? undefined, r.tool, input);
    let n = 0;
    for (const a of accesses) {
      let spill: SpillRow | undefined;
      if (a.path) {
        const candidates = byStem.get(stemOf(a.path));
        // Same name in two sessions (a copied folder): the reader's own session, else the nearest earlier one.
        spill = candidates?.find((c) => c.session_id === r.session_id) ?? candidates?.filter((c) => c.created_at <= r.created_at).pop() ?? candidates?.[0];
      } else if (a.part.kind === 'query' && a.part.handle) {
        const h = a.part.handle;
        spill = handles.filter((x) => x.session === r.session_id && x.message.includes(h)).pop()?.spill;
      }
      if (!spill) continue;
      if (Date.parse(r.created_at) < Date.parse(spill.created_at) - READBACK_CLOCK_SLACK_MS) continue;
      const needsFile = a.part.kind === 'grep' || a.part.kind === 'tail';
      const part = resolvePart(a.part, needsFile ? linesOf(spill.path) : null);
      insert.run(r.id, n++, spill.id, r.session_id, r.call_id, r.tool, r.created_at, a.via, a.path, JSON.stringify(part), r.tokens);
      if (a.part.kind === 'query' && r.message) handles.push({ session: r.session_id, message: r.message, spill });
    }
  }
}

interface ReadBackDbRow {
  reader_id: string;
  entered: number | null;
  spill_tool: string | null;
  spill_session: string | null;
  called_in: string | null;
  called_in_session: string | null;
  n: number;
  spill_id: string;
  session_id: string;
  call_id: string | null;
  tool: string;
  at: string;
  via: string;
  path: string;
  part_json: string;
  tokens: number;
}

const toReadBack = (r: ReadBackDbRow): ReadBack => ({
  readerId: r.reader_id,
  ...(r.call_id ? { toolUseId: r.call_id } : {}),
  sessionId: r.session_id,
  tool: r.tool,
  at: r.at,
  via: r.via as ReadBack['via'],
  path: r.path,
  spillId: r.spill_id,
  part: JSON.parse(r.part_json) as ReadBackPart,
  tokens: r.tokens,
  ...(r.entered !== null ? { entered: r.entered } : {}),
  ...(r.spill_tool !== null ? { spillTool: r.spill_tool } : {}),
  ...(r.spill_session !== null ? { spillSessionId: r.spill_session } : {}),
  ...(r.called_in !== null && r.called_in_session !== null ? { spillCalledIn: { payloadId: r.called_in, sessionId: r.called_in_session } } : {}),
});

/**
 * A read-back with what the views show beside it, read from the rows now (not stored, so a re-joined
 * spill or a ledger filled in later is seen): the reader's entered tokens, the spill's tool and
 * session, and the transcript's call the spill answered (the row whose spill_id is it, as `joinedTo`).
 */
const SELECT_READ_BACKS = `SELECT rb.*, r.l_entered AS entered, s.tool AS spill_tool, s.session_id AS spill_session,
       c.id AS called_in, c.session_id AS called_in_session
  FROM read_backs rb
  LEFT JOIN payloads r ON r.id = rb.reader_id
  LEFT JOIN payloads s ON s.id = rb.spill_id
  LEFT JOIN payloads c ON c.id = (SELECT t.id FROM payloads t WHERE t.spill_id = rb.spill_id LIMIT 1)`;

/** The read-backs of these spills (a transcript row's id counts as the spill it joined), oldest first. */
export function readBacksOf(core: IndexCore, ids: string[]): ReadBack[] {
  if (!ids.length) return [];
  const marks = ids.map(() => '?').join(',');
  const rows = core.q(`${SELECT_READ_BACKS} WHERE rb.spill_id IN (${marks}) ORDER BY rb.at, rb.reader_id, rb.n`).all(...ids) as ReadBackDbRow[];
  return rows.map(toReadBack);
}

/** The read-backs this call made (a call may read several parts, or several spills), in its order. */
export function readBacksBy(core: IndexCore, readerId: string): ReadBack[] {
  return (core.q(`${SELECT_READ_BACKS} WHERE rb.reader_id = ? ORDER BY rb.n`).all(readerId) as ReadBackDbRow[]).map(toReadBack);
}

/** Every read-back read in, or of a spill in, these sessions (all without), oldest first. */
export function readBacksIn(core: IndexCore, sessionIds?: string[]): ReadBack[] {
  if (!sessionIds) return (core.q(`${SELECT_READ_BACKS} ORDER BY rb.at, rb.reader_id, rb.n`).all() as ReadBackDbRow[]).map(toReadBack);
  if (!sessionIds.length) return [];
  const marks = sessionIds.map(() => '?').join(',');
  const rows = core
    .q(
      `${SELECT_READ_BACKS} WHERE rb.session_id IN (${marks})
          OR rb.spill_id IN (SELECT id FROM payloads WHERE session_id IN (${marks}))
        ORDER BY rb.at, rb.reader_id, rb.n`,
    )
    .all(...sessionIds, ...sessionIds) as ReadBackDbRow[];
  return rows.map(toReadBack);
}

/** A part in words, as the payload's detail lists it: `lines 120–180`, `grep \`ERROR\` (3 lines)`. */
export function describePart(p: ReadBackPart): string {
  switch (p.kind) {
    case 'whole':
      return 'whole';
    case 'lines':
      return p.end !== undefined ? `lines ${p.start}–${p.end}` : `lines ${p.start}–end`;
    case 'tail':
      return `last ${p.count} lines`;
    case 'bytes':
      return p.start < 0 ? `last ${-p.start} bytes` : `bytes ${p.start}–${p.end ?? 'end'}`;
    case 'chars':
      return `chars ${p.start}–${p.end ?? 'end'}`;
    case 'grep':
      return `grep \`${p.pattern}\`${p.matchCount !== undefined ? ` (${p.matchCount} line${p.matchCount === 1 ? '' : 's'})` : ''}`;
    case 'json':
      return `jq \`${p.path}\``;
    case 'query':
      return p.handle ? `query ${p.handle}` : 'query';
  }
}
