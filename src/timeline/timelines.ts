/**
 * A session's timeline from the index: its turns, compactions and notes (written by the importers,
 * turns.ts), its payload rows by tool call id, its sub-agents; built by timeline.ts. The replay
 * input of the last sessions asked is kept, so a slider move replays without reading rows again.
 */
import type { IndexCore } from './core.js';
import type { PayloadContent } from './queries.js';
import type { ContextRule, PayloadLedger, Prices, ReplayResult, ReplayScenario, TimelineData, TimelineRequest } from './rows.js';
import { type LedgerDbRow, ledgerOfRow, spilledRemainder } from './ledger.js';
import { type GuardLookup, type PayloadLink, type ReplaySeries, buildTimeline, contextRule, observedTrigger, replay, scenarioLabel } from './timeline.js';
import { OfflineGuard, guardAnswer, reGuardable, settingsOf, GUARD_CANDIDATE_SHARE, type GuardTarget } from './timeline-guard.js';
import { BUSY_TIMEOUT_MS } from './db.js';
import { readerOf } from './clients.js';
import { UNKNOWN_CLIENT_PRICES, adapterOf, isClientId, rulesOf } from '../agents/index.js';
import { estimateText, type CompactionRecord, type TurnRecord, type TurnTool, type TurnToolAt } from './turns.js';
import { IndexStopping, Yielder } from './yielder.js';
import { readRange } from './lines.js';
import { profileOfMessage } from '../pipeline/index.js';
import type { Profile } from '../pipeline/types.js';

const KEEP_SERIES = 8;
/** Time a full request may spend building the guard's messages offline; a slider move, less (it asks again for the rest). */
const GUARD_BUDGET_MS = 250;
const GUARD_BUDGET_REPLAY_MS = 100;
/** Re-reading the lines of results a listing only placed (TurnTool.at): at most this many bytes a read, lines this close read together. */
const REREAD_SPAN_BYTES = 8 * 1024 * 1024;
const REREAD_GAP_BYTES = 64 * 1024;

export interface TimelineOptions {
  /**
   * Time to spend building the guard's messages offline before replying (default: short, as a
   * view that asks again while some are pending wants; the CLI waits for all of them).
   */
  guardBudgetMs?: number;
}

interface Guardable extends GuardTarget {
  /** The largest of the index's estimates of the whole payload. */
  tokens: number;
}

interface StoredEntered {
  /** The row's "entered" when it is measured already, else null. */
  entered: number | null;
  /** The joined spill's `<tokens>:<how>` (null when unset); undefined when the payload has no joined spill. */
  spill?: string | null;
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

function clientOf(kind: string): ContextRule['client'] {
  return isClientId(kind) ? kind : 'unknown';
}

/** Which tools' results Spillway's guard can reach in this client (its adapter says; an unknown client: every tool). */
export function guardReachOf(client: string): (tool: string) => boolean {
  return rulesOf(client)?.guardReaches ?? (() => true);
}

export function scenariosOf(req: TimelineRequest): ReplayScenario[] {
  const out: ReplayScenario[] = [{ noGuard: true }];
  for (const limit of req.limits ?? []) out.push({ limit });
  for (const keepLast of req.keepLast ?? []) out.push({ keepLast });
  return out;
}

export class TimelineQueries {
  private readonly series = new Map<string, { key: string; series: ReplaySeries; guardable: Guardable[] }>();
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
  readonly guard: OfflineGuard;

  constructor(
    private readonly core: IndexCore,
    content: (payloadId: string) => Promise<PayloadContent>,
  ) {
    this.guard = new OfflineGuard(content);
  }

  private turnRows(sessionId: string): TurnRow[] {
    return this.core.q('SELECT * FROM turns WHERE session_id = ? ORDER BY source_id, seq').all(sessionId) as TurnRow[];
  }

  /**
   * Estimate, in the background, the tool results a listing of these sessions only placed, and
   * measure their ledgers (a third phase, after the listing and the full text): the listing stays
   * cheap, and a timeline opened after it reads stored numbers. One pass at a time; sessions asked
   * for during it join it. A scan that waits for the full text waits for this too (Scanner.search).
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
          if ((hasTurns.get(id) as { n: number }).n && (await this.measure(id))) this.announce(id);
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

  async timeline(req: TimelineRequest, o: TimelineOptions = {}): Promise<TimelineData | undefined> {
    const built = await this.build(req);
    if (!built) return undefined;
    const { data, series, guardable, session } = built;
    if (built.written) this.announce(session.id);
    this.remember(session.id, this.keyOf(session.id, req), series, guardable);
    data.replays = [data.replays[0]!, ...(await this.replayAll(series, guardable, req, o.guardBudgetMs ?? GUARD_BUDGET_MS))];
    data.subagents = (this.core.q('SELECT id, name FROM sessions WHERE parent_id = ? ORDER BY name').all(session.id) as Array<{ id: string; name: string }>).map((s) => {
      const r = this.core.q("SELECT count(*) AS n, coalesce(max(context), 0) AS peak FROM turns WHERE session_id = ?").get(s.id) as { n: number; peak: number };
      return { sessionId: s.id, name: s.name, calls: r.n, peak: r.peak };
    });
    return data;
  }

  /**
   * Measure the ledger's "entered" of a session's results and write it on their rows: the indexing's
   * last phase (warm), so every view reads the measured figure from the start and opening the
   * Timeline changes none. Returns how many rows it wrote.
   */
  async measure(sessionId: string): Promise<number> {
    return (await this.build({ sessionId }))?.written ?? 0;
  }

  /** Tell the views that figures changed: this session's rows, and the spills joined to them (their own sessions). */
  private announce(sessionId: string): void {
    const joined = this.core
      .q('SELECT DISTINCT j.session_id AS id FROM payloads p JOIN payloads j ON j.id = p.spill_id WHERE p.session_id = ?')
      .all(sessionId) as Array<{ id: string }>;
    this.core.emit({ event: 'onDidIndex', payload: { sessionIds: [sessionId, ...joined.map((j) => j.id)], added: 0, changed: 0, removed: 0 } });
  }

  /** The timeline without its replays: turns, results, the measured ledgers (written back when they changed). */
  private async build(req: TimelineRequest): Promise<{ data: TimelineData; series: ReplaySeries; guardable: Guardable[]; session: { id: string }; written: number } | undefined> {
    const session = this.core.q('SELECT id, kind, name FROM sessions WHERE id = ?').get(req.sessionId) as { id: string; kind: string; name: string } | undefined;
    if (!session) return undefined;
    const rows = this.turnRows(session.id);
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
    const lost = await this.estimatePlaced(session.id, rows, turns);
    const compactions = (this.core.q('SELECT * FROM compactions WHERE session_id = ? ORDER BY source_id, n').all(session.id) as any[]).map(
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
    const src = this.core.q('SELECT baseline_tokens, notes_json FROM turn_sources WHERE session_id = ?').all(session.id) as Array<{ baseline_tokens: number | null; notes_json: string }>;
    const notes = src.flatMap((s) => JSON.parse(s.notes_json) as string[]);
    if (lost) notes.push(`${lost} tool result(s) not found where the listing saw them (the transcript changed since?): counted as 0 until it is listed again`);
    if (!src.length) notes.push('no turns indexed for this session (not a transcript of a known client, or indexed before turns were)');
    const payloads = new Map<string, PayloadLink>();
    const ledgers = new Map<string, PayloadLedger>();
    /** What the rows hold already: a measured "entered" (and the joined spill's, `<tokens>:<how>`), so measureLedgers writes only what changed. */
    const stored = new Map<string, StoredEntered>();
    let guardProfile: Profile | undefined;
    const guardable: Guardable[] = [];
    const client = clientOf(session.kind);
    const reaches = guardReachOf(client);
    const folders = new Map<string, string>();
    for (const p of this.core.q(
      "SELECT id, tool, path, tokens, bytes, action, CASE WHEN action = 'spill' THEN message END AS message, (binary = 1 OR kind = 'binary') AS binary, max(tokens, coalesce(t_chars4, 0), coalesce(t_craft_density, 0), coalesce(t_calibrated, 0), coalesce(t_o200k, 0), coalesce(t_cl100k, 0), coalesce(t_claude, 0)) AS most, coalesce(call_id, json_extract(source_json, '$.toolUseId')) AS tid, " +
        'l_full, l_client, l_client_rule, l_entered, l_entered_how, l_kept_assets, l_kept_bytes, l_kept_tokens, l_images, ' +
        // The joined spill's stored figure (in the proxy's or hook's own session), so a figure already written is not written again.
        "(SELECT j.l_entered || ':' || j.l_entered_how FROM payloads j WHERE j.id = payloads.spill_id) AS spill_entered, spill_id FROM payloads WHERE session_id = ?",
    ).all(session.id) as Array<LedgerDbRow & {
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
    }>) {
      if (!p.tid) continue;
      const link: PayloadLink = { payloadId: p.id, tokens: p.tokens, action: p.action, messageTokens: p.action === 'spill' && p.message ? estimateText(p.message, 'claude') : undefined };
      if (p.l_client !== null) link.clientTokens = p.l_client;
      if (p.l_kept_assets) link.keptAssets = p.l_kept_assets;
      payloads.set(p.tid, link);
      const ledger = ledgerOfRow(p);
      if (ledger) ledgers.set(p.id, ledger);
      stored.set(p.id, { entered: p.l_entered_how === 'measured' ? p.l_entered : null, spill: p.spill_id === null ? undefined : p.spill_entered });
      if (guardProfile === undefined && p.action === 'spill' && p.message) guardProfile = profileOfMessage(p.message);
      // The one rule the tuner's decisions read too (timeline-guard.ts reGuardable).
      if (reGuardable({ binary: p.binary === 1, images: p.l_images, action: p.action, reached: reaches(p.tool) })) {
        // A session's results mostly share one path (its transcript): split it once.
        let folder = folders.get(p.path);
        if (folder === undefined) folders.set(p.path, (folder = sessionFolder(p.path)));
        guardable.push({ payloadId: p.id, tool: p.tool, sessionPath: folder, tokens: p.most });
      }
    }
    guardable.sort((a, b) => b.tokens - a.tokens);
    const rule = contextRule(client, turns, { ...req, observed: observedTrigger(turns, compactions) });
    const prices: Prices = { ...(adapterOf(client)?.prices ?? UNKNOWN_CLIENT_PRICES), ...req.prices };
    const { data, series } = buildTimeline(
      { sessionId: session.id, client, turns, compactions, baselineTokens: src.find((s) => s.baseline_tokens !== null)?.baseline_tokens ?? undefined, notes, payloads, rule, prices, guardReaches: reaches },
      [],
    );
    if (guardProfile) series.guardProfile = data.guardProfile = guardProfile;
    const written = this.measureLedgers(data, ledgers, stored);
    return { data, series, guardable, session, written };
  }

  /**
   * The ledger's "entered", measured: each result's share of its call's growth as the API counted it
   * (the calibrated breakdown scaled to the usage delta). Written back on the payload rows (and a joined
   * spill's), so the table, the sidebar, the payload's header and `spillway context` show this one
   * figure; each of the timeline's results carries its ledger. A call without usage leaves the estimate.
   */
  private measureLedgers(data: TimelineData, ledgers: Map<string, PayloadLedger>, stored: Map<string, StoredEntered>): number {
    const measured: Array<[string, number]> = [];
    for (const t of data.turns) {
      const known = t.delta !== null && t.delta > 0;
      for (const x of t.tools) {
        if (!x.payloadId) continue;
        const l = ledgers.get(x.payloadId);
        if (!l) continue;
        if (known) {
          l.entered = { tokens: x.tokens, provenance: 'measured' };
          l.keptOut.spilled = spilledRemainder({ full: l.full.tokens, entered: x.tokens, keptTokens: l.keptOut.assetTokens });
          // Written once: when first measured, or when the figure changed (a transcript that grew, a new calibration).
          const was = stored.get(x.payloadId);
          if (!was || was.entered !== x.tokens || (was.spill !== undefined && was.spill !== `${x.tokens}:measured`)) measured.push([x.payloadId, x.tokens]);
        }
        x.ledger = l;
      }
    }
    if (!measured.length || !this.core.db.open) return 0;
    const upd = this.core.q(
      "UPDATE payloads SET l_entered = ?, l_entered_how = 'measured' WHERE (id = ? OR id = (SELECT spill_id FROM payloads WHERE id = ?)) AND (l_entered IS NOT ? OR l_entered_how IS NOT 'measured')",
    );
    const db = this.core.db;
    // As keepEstimates: never wait for another writer (a first listing's bulk load); the next request writes it.
    const own = db.inTransaction;
    if (!own) db.pragma('busy_timeout = 0');
    try {
      db.transaction(() => {
        for (const [id, n] of measured) upd.run(n, id, id, n);
      })();
      return measured.length;
    } catch {
      /* kept for this request only */
      return 0;
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
    type Placed = { turn: number; tool: TurnTool & { at: TurnToolAt } };
    const placeOf = (sourceId: number, x: TurnTool & { at: TurnToolAt }) => `${sourceId}:${x.at.offset}:${x.at.length}:${x.at.block}:${x.id}`;
    const last = this.estimates.get(sessionId);
    this.estimates.delete(sessionId);
    // Kept as read (the numbers are on the tools); a request that has results to estimate makes the map.
    this.estimates.set(sessionId, { sources: rows.map((r) => r.source_id), tools: turns.map((t) => t.tools) });
    while (this.estimates.size > KEEP_SERIES) this.estimates.delete(this.estimates.keys().next().value!);
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
    for (const [sourceId, placed] of bySource) {
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
    }
    if (this.core.db.open) this.keepEstimates(sessionId, rows, turns, done);
    return lost;
  }

  /** Write the estimated tools of these turns back, unless a listing rewrote the rows meanwhile; never waiting for another writer. */
  private keepEstimates(sessionId: string, rows: TurnRow[], turns: Pick<TurnRecord, 'tools'>[], done: Set<number>): void {
    if (!done.size) return;
    const db = this.core.db;
    const upd = this.core.q('UPDATE turns SET tools_json = ? WHERE session_id = ? AND source_id = ? AND seq = ? AND tools_json = ?');
    // A writer thread holding the lock (a first listing's bulk load) would block this thread for the busy timeout: the next request tries again.
    const own = db.inTransaction;
    if (!own) db.pragma('busy_timeout = 0');
    try {
      db.transaction(() => {
        for (const i of done) upd.run(JSON.stringify(turns[i]!.tools), sessionId, rows[i]!.source_id, rows[i]!.seq, rows[i]!.tools_json);
      })();
    } catch {
      /* kept for this request only */
    } finally {
      if (!own) db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /** Replays only (a slider move), from the series kept at the last full request when it still matches. */
  async replays(req: TimelineRequest, o: TimelineOptions = {}): Promise<TimelineData | undefined> {
    const kept = this.series.get(req.sessionId);
    if (!kept || kept.key !== this.keyOf(req.sessionId, req)) return this.timeline(req, o);
    const prices = { ...kept.series.prices, ...req.prices };
    const series = { ...kept.series, prices };
    const replays = [replay(series, {}, 'as it ran (rule replayed)'), ...(await this.replayAll(series, kept.guardable, req, o.guardBudgetMs ?? GUARD_BUDGET_REPLAY_MS))];
    return { sessionId: req.sessionId, rule: series.rule, turns: [], compactions: [], baselineTokens: null, baselineSource: 'measured', topCosts: [], measured: { peak: 0, compactions: 0, inputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0, outputTokens: 0, costUsd: 0, calls: 0 }, replays, prices, subagents: [], notes: [] };
  }

  /**
   * The scenarios asked, each guard limit with the real guard's messages: those not kept yet are
   * built first (within the budget), and what is still missing falls back to the saved message or
   * the usual size, counted as `pending`.
   */
  private async replayAll(series: ReplaySeries, guardable: Guardable[], req: TimelineRequest, budgetMs: number): Promise<ReplayResult[]> {
    const out: ReplayResult[] = [];
    const start = performance.now();
    for (const s of scenariosOf(req)) {
      if (s.limit === undefined) {
        out.push(replay(series, s));
        continue;
      }
      // Unless asked otherwise, the guard replays count with the profile the session's own guard used.
      const settings = settingsOf(s.limit, { strategy: req.strategy, profile: req.profile ?? series.guardProfile });
      const targets = guardable.filter((g) => g.tokens >= s.limit! * GUARD_CANDIDATE_SHARE);
      const pending = await this.guard.build(targets, settings, Math.max(0, budgetMs - (performance.now() - start)));
      const byId = new Map(guardable.map((g) => [g.payloadId, g]));
      // The one rule (timeline-guard.ts guardAnswer), as the tuner's decisions read it.
      const lookup: GuardLookup = (payloadId) => {
        const g = byId.get(payloadId);
        return g ? guardAnswer(this.guard, { payloadId, most: g.tokens, guardable: true }, settings) : undefined;
      };
      const r = replay(series, s, scenarioLabel(s), lookup);
      if (pending) r.pending = pending;
      out.push(r);
    }
    return out;
  }

  private keyOf(sessionId: string, req: TimelineRequest): string {
    const r = this.core.q('SELECT count(*) AS n, coalesce(max(line), -1) AS l, coalesce(sum(context), 0) AS c FROM turns WHERE session_id = ?').get(sessionId) as { n: number; l: number; c: number };
    return `${r.n}:${r.l}:${r.c}:${req.autoCompactPct ?? ''}:${req.autoCompactDisabled ?? ''}:${req.autoCompactLimit ?? ''}`;
  }

  private remember(sessionId: string, key: string, series: ReplaySeries, guardable: Guardable[]): void {
    this.series.delete(sessionId);
    this.series.set(sessionId, { key, series, guardable });
    while (this.series.size > KEEP_SERIES) this.series.delete(this.series.keys().next().value!);
  }

  /** Sessions that compacted, or whose peak came within 10% of the trigger: id → the warning. */
  contextWarnings(): Map<string, string> {
    const out = new Map<string, string>();
    for (const r of this.core.q('SELECT session_id, count(*) AS n FROM compactions WHERE kind = \'compact\' GROUP BY session_id').all() as Array<{ session_id: string; n: number }>) {
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
      const rule = contextRule(clientOf(p.kind), [{ model: p.model ?? undefined, window: p.window ?? undefined }]);
      if (rule.trigger && p.peak >= rule.trigger * 0.9) out.set(p.session_id, `peak ${p.peak.toLocaleString('en-US')} within 10% of the trigger (${rule.trigger.toLocaleString('en-US')})`);
    }
    return out;
  }
}

/** The session folder a payload's path is in (a spill: `<session>/long_responses/<file>`; a transcript: its folder). */
function sessionFolder(p: string): string {
  const parts = p.split(/[\\/]/);
  const i = parts.lastIndexOf('long_responses');
  return (i > 0 ? parts.slice(0, i) : parts.slice(0, -1)).join('/') || '.';
}
