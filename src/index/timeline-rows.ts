/**
 * What the index stores of a session's model calls, for the timeline layer (src/timeline): rows in,
 * rows out. No pricing, no replay, no guard here; the timeline layer reads these and builds on them.
 *
 * | entry          | gives                                                                                   |
 * | -------------- | --------------------------------------------------------------------------------------- |
 * | session        | a session's id, client kind and name                                                    |
 * | turns          | its turns (written by the importers, turns.ts), the results a listing only placed read  |
 * |                | back from their transcript lines and kept in the rows                                   |
 * | compactions    | its compactions; `sources`: its baseline and notes                                      |
 * | results        | its tool results by call id, with their stored ledgers                                  |
 * | writeEntered   | writes the ledger's measured "entered" on the rows (and a joined spill's)                |
 * | announce       | tells the views a session's figures changed                                             |
 * | subagents, key | its sub-agents; the state of its turns, so a kept replay knows it is still current      |
 * | warm, idle     | the indexing's background phase: estimates of what a listing placed, then the measurer |
 * | contextWarnings| sessions that compacted or came within 10% of their client's trigger                    |
 */
import { adapterOf, unknownContext } from '../agents/index.js';
import type { IndexCore } from './core.js';
import { readerOf } from './clients.js';
import { BUSY_TIMEOUT_MS } from './db.js';
import { ledgerOfRow, type LedgerDbRow } from './ledger.js';
import { readRange } from './lines.js';
import type { PayloadLedger } from './rows.js';
import type { CompactionRecord, TurnRecord, TurnTool, TurnToolAt } from './turns.js';
import { IndexStopping, Yielder } from './yielder.js';

/** Sessions whose re-read estimates are kept (the last ones asked). */
const KEEP_SESSIONS = 8;
/** Re-reading the lines of results a listing only placed (TurnTool.at): at most this many bytes a read, lines this close read together. */
const REREAD_SPAN_BYTES = 8 * 1024 * 1024;
const REREAD_GAP_BYTES = 64 * 1024;
/** Sessions within this share of their trigger are flagged in the session list. */
export const NEAR_TRIGGER_SHARE = 0.1;

/** One tool result of a session as the index stores it, keyed by the call it answers. */
export interface StoredResult {
  id: string;
  tool: string;
  path: string;
  tokens: number;
  action: string;
  /** What the model got instead, for a spill. */
  message: string | null;
  binary: boolean;
  /** The largest of the index's estimates of the whole payload. */
  most: number;
  /** The tool call it answers. */
  callId: string;
  /** Its ledger as stored; undefined for a row written before the ledger. */
  ledger: PayloadLedger | undefined;
  /** The ledger's "as the client would give it" (null: not known). */
  clientTokens: number | null;
  keptAssets: number;
  images: number;
  /** The row's "entered" when it is measured already, else null. */
  entered: number | null;
  /** The joined spill's `<tokens>:<how>` (null when unset); undefined when the payload has no joined spill. */
  spillEntered?: string | null;
}

interface TurnRow {
  seq: number;
  at: string;
  model: string | null;
  context: number | null;
  input: number | null;
  cache_write: number | null;
  cache_read: number | null;
  output: number | null;
  window: number | null;
  kind: TurnRecord['kind'];
  parts_json: string;
  tools_json: string;
  line: number;
  source_id: number;
}

type ResultRow = LedgerDbRow & {
  id: string;
  tool: string;
  path: string;
  tokens: number;
  action: string;
  message: string | null;
  binary: number;
  most: number;
  tid: string | null;
  spill_entered: string | null;
  spill_id: string | null;
};

export class TimelineRows {
  /**
   * The tool results of the last sessions asked (estimatePlaced), so a transcript listed again takes
   * their estimates over: kept as the turns were read (their source and tools), and put in a map by
   * place only when a request finds results to estimate. Most requests find none (the background
   * phase estimated them): building 5,000 place keys each time cost more than the rest of the check.
   */
  private readonly estimates = new Map<string, { sources: number[]; tools: TurnTool[][] } | Map<string, number>>();
  /** The background pass (warm), and the sessions it has still to do. */
  private warming: Promise<void> | undefined;
  private readonly toWarm = new Set<string>();
  /** The timeline layer's measure of the ledger's "entered" (measureWith); none: the background phase only estimates. */
  private measurer: ((sessionId: string) => Promise<number>) | undefined;

  constructor(private readonly core: IndexCore) {}

  /**
   * The layer above that measures the ledger's "entered" from a session's turns (the timeline's): the
   * background phase runs it on each session after its estimates, and announces what it wrote.
   */
  measureWith(measure: (sessionId: string) => Promise<number>): void {
    this.measurer = measure;
  }

  session(sessionId: string): { id: string; kind: string; name: string } | undefined {
    return this.core.q('SELECT id, kind, name FROM sessions WHERE id = ?').get(sessionId) as { id: string; kind: string; name: string } | undefined;
  }

  private turnRows(sessionId: string): TurnRow[] {
    return this.core.q('SELECT * FROM turns WHERE session_id = ? ORDER BY source_id, seq').all(sessionId) as TurnRow[];
  }

  /** A session's turns, the placed results estimated (and kept in the rows); `lost`: how many could not be found where they were placed. */
  async turns(sessionId: string): Promise<{ turns: TurnRecord[]; lost: number }> {
    const rows = this.turnRows(sessionId);
    const turns: TurnRecord[] = rows.map((r) => ({
      seq: r.seq,
      at: r.at,
      model: r.model ?? undefined,
      context: r.context,
      input: r.input,
      cacheWrite: r.cache_write,
      cacheRead: r.cache_read,
      output: r.output,
      window: r.window ?? undefined,
      kind: r.kind,
      parts: JSON.parse(r.parts_json),
      tools: JSON.parse(r.tools_json),
      line: r.line,
    }));
    const lost = await this.estimatePlaced(sessionId, rows, turns);
    return { turns, lost };
  }

  compactions(sessionId: string): CompactionRecord[] {
    return (this.core.q('SELECT * FROM compactions WHERE session_id = ? ORDER BY source_id, n').all(sessionId) as any[]).map(
      (c): CompactionRecord => ({
        seq: c.seq,
        at: c.at,
        kind: c.kind,
        trigger: c.trigger ?? undefined,
        preTokens: c.pre_tokens ?? undefined,
        postTokens: c.post_tokens ?? undefined,
        tokensSaved: c.tokens_saved ?? undefined,
        toolIds: JSON.parse(c.tool_ids_json),
        line: c.line,
      }),
    );
  }

  /** What the turn readers noted of a session's transcripts: the first recorded baseline, the notes; `read`: how many transcripts had turns. */
  sources(sessionId: string): { baselineTokens: number | undefined; notes: string[]; read: number } {
    const src = this.core.q('SELECT baseline_tokens, notes_json FROM turn_sources WHERE session_id = ?').all(sessionId) as Array<{ baseline_tokens: number | null; notes_json: string }>;
    return {
      baselineTokens: src.find((s) => s.baseline_tokens !== null)?.baseline_tokens ?? undefined,
      notes: src.flatMap((s) => JSON.parse(s.notes_json) as string[]),
      read: src.length,
    };
  }

  /** A session's tool results that answer a known call, with their stored ledgers. */
  results(sessionId: string): StoredResult[] {
    const rows = this.core
      .q(
        "SELECT id, tool, path, tokens, bytes, action, CASE WHEN action = 'spill' THEN message END AS message, (binary = 1 OR kind = 'binary') AS binary, max(tokens, coalesce(t_chars4, 0), coalesce(t_craft_density, 0), coalesce(t_calibrated, 0), coalesce(t_o200k, 0), coalesce(t_cl100k, 0), coalesce(t_claude, 0)) AS most, coalesce(call_id, json_extract(source_json, '$.toolUseId')) AS tid, " +
          'l_full, l_client, l_client_rule, l_entered, l_entered_how, l_kept_assets, l_kept_bytes, l_kept_tokens, l_images, ' +
          // The joined spill's stored figure (in the proxy's or hook's own session), so a figure already written is not written again.
          "(SELECT j.l_entered || ':' || j.l_entered_how FROM payloads j WHERE j.id = payloads.spill_id) AS spill_entered, spill_id FROM payloads WHERE session_id = ?",
      )
      .all(sessionId) as ResultRow[];
    const out: StoredResult[] = [];
    for (const p of rows) {
      if (!p.tid) continue;
      out.push({
        id: p.id,
        tool: p.tool,
        path: p.path,
        tokens: p.tokens,
        action: p.action,
        message: p.message,
        binary: p.binary === 1,
        most: p.most,
        callId: p.tid,
        ledger: ledgerOfRow(p),
        clientTokens: p.l_client,
        keptAssets: p.l_kept_assets,
        images: p.l_images,
        entered: p.l_entered_how === 'measured' ? p.l_entered : null,
        ...(p.spill_id === null ? {} : { spillEntered: p.spill_entered }),
      });
    }
    return out;
  }

  /**
   * Write the ledger's measured "entered" on these rows (and on each one's joined spill), where it
   * changed; never waiting for another writer (a first listing's bulk load): the next request writes
   * it. Returns how many were written (0 when the write could not be made now).
   */
  writeEntered(measured: ReadonlyArray<readonly [payloadId: string, tokens: number]>): number {
    if (!measured.length || !this.core.db.open) return 0;
    const upd = this.core.q(
      "UPDATE payloads SET l_entered = ?, l_entered_how = 'measured' WHERE (id = ? OR id = (SELECT spill_id FROM payloads WHERE id = ?)) AND (l_entered IS NOT ? OR l_entered_how IS NOT 'measured')",
    );
    const ok = this.withoutWaiting(() => {
      for (const [id, n] of measured) upd.run(n, id, id, n);
    });
    return ok ? measured.length : 0;
  }

  /** Tell the views that figures changed: this session's rows, and the spills joined to them (their own sessions). */
  announce(sessionId: string): void {
    const joined = this.core
      .q('SELECT DISTINCT j.session_id AS id FROM payloads p JOIN payloads j ON j.id = p.spill_id WHERE p.session_id = ?')
      .all(sessionId) as Array<{ id: string }>;
    this.core.emit({ event: 'onDidIndex', payload: { sessionIds: [sessionId, ...joined.map((j) => j.id)], added: 0, changed: 0, removed: 0 } });
  }

  /** A session's sub-agents, with their calls and peak context. */
  subagents(sessionId: string): Array<{ sessionId: string; name: string; calls: number; peak: number }> {
    return (this.core.q('SELECT id, name FROM sessions WHERE parent_id = ? ORDER BY name').all(sessionId) as Array<{ id: string; name: string }>).map((s) => {
      const r = this.core.q('SELECT count(*) AS n, coalesce(max(context), 0) AS peak FROM turns WHERE session_id = ?').get(s.id) as { n: number; peak: number };
      return { sessionId: s.id, name: s.name, calls: r.n, peak: r.peak };
    });
  }

  /** The state of a session's turns: it changes when a listing adds or rewrites them. */
  key(sessionId: string): string {
    const r = this.core.q('SELECT count(*) AS n, coalesce(max(line), -1) AS l, coalesce(sum(context), 0) AS c FROM turns WHERE session_id = ?').get(sessionId) as { n: number; l: number; c: number };
    return `${r.n}:${r.l}:${r.c}`;
  }

  /**
   * Estimate, in the background, the tool results a listing of these sessions only placed, and
   * have their ledgers measured (a third phase, after the listing and the full text): the listing
   * stays cheap, and a timeline opened after it reads stored numbers. One pass at a time; sessions
   * asked for during it join it. A scan that waits for the full text waits for this too (Scanner.search).
   */
  warm(sessionIds: Iterable<string>): Promise<void> {
    for (const id of sessionIds) this.toWarm.add(id);
    this.warming ??= (async () => {
      const check = this.core.q(`SELECT EXISTS(SELECT 1 FROM turns WHERE session_id = ? AND instr(tools_json, '"tokens":0,"at":') > 0) AS n`);
      const hasTurns = this.core.q('SELECT EXISTS(SELECT 1 FROM turns WHERE session_id = ?) AS n');
      while (this.toWarm.size && !this.core.closed && !this.core.stopping) {
        const id = this.toWarm.values().next().value!;
        this.toWarm.delete(id);
        try {
          // A placed result is written `"tokens":0,"at":{…}` (turns-claude.ts): the check only picks candidates.
          if ((check.get(id) as { n: number }).n) {
            const rows = this.turnRows(id);
            await this.estimatePlaced(id, rows, rows.map((r) => ({ tools: JSON.parse(r.tools_json) as TurnTool[] })));
          }
          // Then the ledger's "entered", measured from the API's usage, written on the rows once here
          // (issue 29: one figure per result, from indexing on; the Timeline only reads it).
          if (this.measurer && (hasTurns.get(id) as { n: number }).n && (await this.measurer(id))) this.announce(id);
        } catch {
          /* the timeline request estimates them itself */
        }
      }
    })().finally(() => (this.warming = undefined));
    return this.warming;
  }

  /** Resolves when the background estimates asked for so far are done (or stopped by closing). */
  async idle(): Promise<void> {
    await this.warming;
  }

  /** Sessions that compacted, or whose peak came within 10% of their client's trigger: id → the warning. */
  contextWarnings(): Map<string, string> {
    const out = new Map<string, string>();
    for (const r of this.core.q("SELECT session_id, count(*) AS n FROM compactions WHERE kind = 'compact' GROUP BY session_id").all() as Array<{ session_id: string; n: number }>) {
      out.set(r.session_id, `compacted ${r.n}×`);
    }
    const peaks = this.core.q('SELECT t.session_id, max(t.context) AS peak, max(t.window) AS window, max(t.model) AS model, s.kind FROM turns t JOIN sessions s ON s.id = t.session_id GROUP BY t.session_id').all() as Array<{
      session_id: string;
      peak: number | null;
      window: number | null;
      model: string | null;
      kind: string;
    }>;
    for (const p of peaks) {
      if (out.has(p.session_id) || !p.peak) continue;
      // The client's own rule, as the registry states it (the timeline's contextRule asks the same).
      const model = p.model ?? undefined;
      const rule = (adapterOf(p.kind)?.context ?? unknownContext)(model, [{ model, window: p.window ?? undefined }], {});
      if (rule.trigger && p.peak >= rule.trigger * (1 - NEAR_TRIGGER_SHARE)) out.set(p.session_id, `peak ${p.peak.toLocaleString('en-US')} within 10% of the trigger (${rule.trigger.toLocaleString('en-US')})`);
    }
    return out;
  }

  /** Run a write now or not at all: a writer thread holding the lock (a first listing's bulk load) would block this thread for the busy timeout. */
  private withoutWaiting(write: () => void): boolean {
    const db = this.core.db;
    const own = db.inTransaction;
    if (!own) db.pragma('busy_timeout = 0');
    try {
      db.transaction(write)();
      return true;
    } catch {
      /* kept for this request only: the next one writes it */
      return false;
    } finally {
      if (!own) db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /**
   * Estimate the tool results a listing only placed (TurnTool.at, tokens 0), from their transcript
   * lines, and keep the numbers in their turn rows: the first timeline of a session pays for its
   * estimates, the next ones read them. A transcript that grew is listed again whole, every result
   * placed again: the numbers of the places this session's last timeline saw are taken over (a
   * transcript is only appended to: the same place is the same line), only the new lines are read.
   * Returns how many results could not be found where they were placed.
   */
  private async estimatePlaced(sessionId: string, rows: TurnRow[], turns: Pick<TurnRecord, 'tools'>[]): Promise<number> {
    const last = this.estimates.get(sessionId);
    this.estimates.delete(sessionId);
    // Kept as read (the numbers are on the tools); a request that has results to estimate makes the map.
    this.estimates.set(sessionId, { sources: rows.map((r) => r.source_id), tools: turns.map((t) => t.tools) });
    while (this.estimates.size > KEEP_SESSIONS) this.estimates.delete(this.estimates.keys().next().value!);
    if (!turns.some((t) => t.tools.some((x) => x.at && x.tokens <= 0))) return 0;
    /** The numbers of the places this session's last timeline saw (estimated then, or read from its rows). */
    let known: Map<string, number>;
    if (last instanceof Map) known = last;
    else {
      known = new Map();
      last?.tools.forEach((tools, i) => {
        for (const x of tools) if (x.at && x.tokens > 0) known.set(placeOf(last.sources[i]!, x as Placed['tool']), x.tokens);
      });
    }
    this.estimates.set(sessionId, known);
    const bySource = new Map<number, Placed[]>();
    const done = new Set<number>();
    turns.forEach((t, turn) => {
      for (const tool of t.tools) {
        if (!tool.at) continue;
        const sourceId = rows[turn]!.source_id;
        const place = placeOf(sourceId, tool as Placed['tool']);
        if (tool.tokens > 0) {
          known.set(place, tool.tokens);
          continue;
        }
        const was = known.get(place);
        if (was !== undefined) {
          tool.tokens = was;
          done.add(turn);
          continue;
        }
        let list = bySource.get(sourceId);
        if (!list) bySource.set(sourceId, (list = []));
        list.push({ turn, tool: tool as Placed['tool'] });
      }
    });
    let lost = 0;
    // A closing index stops this at its next slice, even inside a huge line (IndexStopping).
    const yielder = new Yielder(undefined, undefined, () => this.core.stopping);
    for (const [sourceId, placed] of bySource) lost += await this.reread(sourceId, placed, known, done, yielder);
    if (this.core.db.open) this.keepEstimates(sessionId, rows, turns, done);
    return lost;
  }

  /** One transcript's placed results read back, its neighbouring lines in spans; returns how many were not found. */
  private async reread(sourceId: number, placed: Placed[], known: Map<string, number>, done: Set<number>, yielder: Yielder): Promise<number> {
    let lost = 0;
    const src = this.core.q('SELECT key, kind FROM sources WHERE id = ?').get(sourceId) as { key: string; kind: string } | undefined;
    const file = src?.key;
    // Only a client whose turn reader places results (TurnTool.at) reads them back; another's stay lost.
    const tokensAt = readerOf(src?.kind)?.toolTokensAt;
    // One transcript line per place, read in spans of neighbouring lines.
    const lines = new Map<number, Placed[]>();
    for (const p of placed) {
      const at = lines.get(p.tool.at.offset);
      if (at) at.push(p);
      else lines.set(p.tool.at.offset, [p]);
    }
    const offsets = [...lines.keys()].sort((a, b) => a - b);
    for (let i = 0; i < offsets.length; ) {
      // A closing index stops a background pass between reads (what is estimated so far is kept).
      if (this.core.closed) break;
      const start = offsets[i]!;
      let end = start;
      let j = i;
      for (; j < offsets.length; j++) {
        const o = offsets[j]!;
        const e = o + lines.get(o)![0]!.tool.at.length;
        if (j > i && (o - end > REREAD_GAP_BYTES || e - start > REREAD_SPAN_BYTES)) break;
        end = Math.max(end, e);
      }
      let bytes: Buffer | undefined;
      try {
        // In pieces when long (a line of millions of blocks), with turns for the event loop (lines.ts).
        if (file !== undefined) bytes = await readRange(this.core.source, file, start, end - start, yielder);
      } catch (err) {
        if (err instanceof IndexStopping) throw err;
        /* gone since it was listed */
      }
      for (const o of offsets.slice(i, j)) {
        const ps = lines.get(o)!;
        const len = ps[0]!.tool.at.length;
        const line = bytes && o - start + len <= bytes.length ? bytes.subarray(o - start, o - start + len) : undefined;
        const tokens = line && tokensAt ? await tokensAt(line, ps.map((p) => p.tool), yielder) : ps.map(() => null);
        ps.forEach((p, k) => {
          const n = tokens[k];
          if (n === null || n === undefined) return void lost++;
          p.tool.tokens = n;
          known.set(placeOf(sourceId, p.tool), n);
          done.add(p.turn);
        });
      }
      i = j;
      await yielder.maybe();
    }
    return lost;
  }

  /** Write the estimated tools of these turns back, unless a listing rewrote the rows meanwhile; never waiting for another writer. */
  private keepEstimates(sessionId: string, rows: TurnRow[], turns: Pick<TurnRecord, 'tools'>[], done: Set<number>): void {
    if (!done.size) return;
    const upd = this.core.q('UPDATE turns SET tools_json = ? WHERE session_id = ? AND source_id = ? AND seq = ? AND tools_json = ?');
    this.withoutWaiting(() => {
      for (const i of done) upd.run(JSON.stringify(turns[i]!.tools), sessionId, rows[i]!.source_id, rows[i]!.seq, rows[i]!.tools_json);
    });
  }
}

type Placed = { turn: number; tool: TurnTool & { at: TurnToolAt } };

const placeOf = (sourceId: number, x: TurnTool & { at: TurnToolAt }) => `${sourceId}:${x.at.offset}:${x.at.length}:${x.at.block}:${x.id}`;
