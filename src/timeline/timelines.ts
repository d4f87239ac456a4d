/**
 * A session's timeline from what the index stores (src/index/timeline-rows.ts): its turns,
 * compactions and notes, its tool results by call id with their ledgers, its sub-agents; assembled
 * and replayed by replay.ts, with the real guard's messages (guard.ts). The replay input of the last
 * sessions asked is kept, so a slider move replays without reading rows again.
 */
import {
  estimateText,
  spilledRemainder,
  type PayloadContent,
  type StoredToolResult as StoredResult,
  type TimelineRows,
} from '../index/index.js';
import type {
  ContextRule,
  PayloadLedger,
  Prices,
  ReplayResult,
  ReplayScenario,
  TimelineData,
  TimelineRequest,
} from '../index/rows.js';
import { type GuardLookup, type PayloadLink, type ReplaySeries, buildTimeline, contextRule, observedTrigger, replay, scenarioLabel } from './replay.js';
import { OfflineGuard, guardAnswer, reGuardable, settingsOf, GUARD_CANDIDATE_SHARE, type GuardTarget } from './guard.js';
import { UNKNOWN_CLIENT_PRICES, adapterOf, isClientId, rulesOf } from '../agents/index.js';
import { profileOfMessage } from '../pipeline/index.js';
import type { Profile } from '../pipeline/types.js';

/** Sessions whose replay input is kept for a slider move. */
const KEEP_SERIES = 8;
/** Time a full request may spend building the guard's messages offline; a slider move, less (it asks again for the rest). */
const GUARD_BUDGET_MS = 250;
const GUARD_BUDGET_REPLAY_MS = 100;

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
  readonly guard: OfflineGuard;

  constructor(
    private readonly rows: TimelineRows,
    content: (payloadId: string) => Promise<PayloadContent>,
  ) {
    this.guard = new OfflineGuard(content);
  }

  async timeline(req: TimelineRequest, o: TimelineOptions = {}): Promise<TimelineData | undefined> {
    const built = await this.build(req);
    if (!built) return undefined;
    const { data, series, guardable, session } = built;
    if (built.written) this.rows.announce(session.id);
    this.remember(session.id, this.keyOf(session.id, req), series, guardable);
    data.replays = [data.replays[0]!, ...(await this.replayAll(series, guardable, req, o.guardBudgetMs ?? GUARD_BUDGET_MS))];
    data.subagents = this.rows.subagents(session.id);
    return data;
  }

  /**
   * Measure the ledger's "entered" of a session's results and write it on their rows: the indexing's
   * last phase (the index runs it in the background, TimelineRows.measureWith), so every view reads
   * the measured figure from the start and opening the Timeline changes none. Returns how many rows it wrote.
   */
  async measure(sessionId: string): Promise<number> {
    return (await this.build({ sessionId }))?.written ?? 0;
  }

  /** The timeline without its replays: turns, results, the measured ledgers (written back when they changed). */
  private async build(req: TimelineRequest): Promise<{ data: TimelineData; series: ReplaySeries; guardable: Guardable[]; session: { id: string }; written: number } | undefined> {
    const session = this.rows.session(req.sessionId);
    if (!session) return undefined;
    const { turns, lost } = await this.rows.turns(session.id);
    const compactions = this.rows.compactions(session.id);
    const src = this.rows.sources(session.id);
    const notes = src.notes;
    if (lost) notes.push(`${lost} tool result(s) not found where the listing saw them (the transcript changed since?): counted as 0 until it is listed again`);
    if (!src.read) notes.push('no turns indexed for this session (not a transcript of a known client, or indexed before turns were)');
    const client = clientOf(session.kind);
    const reaches = guardReachOf(client);
    const { payloads, ledgers, stored, guardable, guardProfile } = linksOf(this.rows.results(session.id), reaches);
    const rule = contextRule(client, turns, { ...req, observed: observedTrigger(turns, compactions) });
    const prices: Prices = { ...(adapterOf(client)?.prices ?? UNKNOWN_CLIENT_PRICES), ...req.prices };
    const { data, series } = buildTimeline({ sessionId: session.id, client, turns, compactions, baselineTokens: src.baselineTokens, notes, payloads, rule, prices, guardReaches: reaches }, []);
    if (guardProfile) series.guardProfile = data.guardProfile = guardProfile;
    const written = this.rows.writeEntered(measuredLedgers(data, ledgers, stored));
    return { data, series, guardable, session, written };
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
      // The one rule (guard.ts guardAnswer), as the tuner's decisions read it.
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
    return `${this.rows.key(sessionId)}:${req.autoCompactPct ?? ''}:${req.autoCompactDisabled ?? ''}:${req.autoCompactLimit ?? ''}`;
  }

  private remember(sessionId: string, key: string, series: ReplaySeries, guardable: Guardable[]): void {
    this.series.delete(sessionId);
    this.series.set(sessionId, { key, series, guardable });
    while (this.series.size > KEEP_SERIES) this.series.delete(this.series.keys().next().value!);
  }
}

/** The session folder a payload's path is in (a spill: `<session>/long_responses/<file>`; a transcript: its folder). */
function sessionFolder(p: string): string {
  const parts = p.split(/[\\/]/);
  const i = parts.lastIndexOf('long_responses');
  return (i > 0 ? parts.slice(0, i) : parts.slice(0, -1)).join('/') || '.';
}

/** What the rows hold already of a result: a measured "entered" (and the joined spill's, `<tokens>:<how>`), so only what changed is written. */
interface StoredEntered {
  entered: number | null;
  spill?: string | null;
}

/** A session's stored results as the replay links them to its calls, with their ledgers and the ones the guard is asked about again. */
function linksOf(results: StoredResult[], reaches: (tool: string) => boolean) {
  const payloads = new Map<string, PayloadLink>();
  const ledgers = new Map<string, PayloadLedger>();
  const stored = new Map<string, StoredEntered>();
  let guardProfile: Profile | undefined;
  const guardable: Guardable[] = [];
  const folders = new Map<string, string>();
  for (const p of results) {
    const link: PayloadLink = { payloadId: p.id, tokens: p.tokens, action: p.action, messageTokens: p.action === 'spill' && p.message ? estimateText(p.message, 'claude') : undefined };
    if (p.clientTokens !== null) link.clientTokens = p.clientTokens;
    if (p.keptAssets) link.keptAssets = p.keptAssets;
    payloads.set(p.callId, link);
    if (p.ledger) ledgers.set(p.id, p.ledger);
    stored.set(p.id, { entered: p.entered, spill: p.spillEntered });
    if (guardProfile === undefined && p.action === 'spill' && p.message) guardProfile = profileOfMessage(p.message);
    // The one rule the tuner's decisions read too (guard.ts reGuardable).
    if (reGuardable({ binary: p.binary, images: p.images, action: p.action, reached: reaches(p.tool) })) {
      // A session's results mostly share one path (its transcript): split it once.
      let folder = folders.get(p.path);
      if (folder === undefined) folders.set(p.path, (folder = sessionFolder(p.path)));
      guardable.push({ payloadId: p.id, tool: p.tool, sessionPath: folder, tokens: p.most });
    }
  }
  guardable.sort((a, b) => b.tokens - a.tokens);
  return { payloads, ledgers, stored, guardable, guardProfile };
}

/**
 * The ledger's "entered", measured: each result's share of its call's growth as the API counted it
 * (the calibrated breakdown scaled to the usage delta). Returned to be written back on the payload rows
 * (and a joined spill's), so the table, the sidebar, the payload's header and `spillway context` show
 * this one figure; each of the timeline's results carries its ledger. A call without usage leaves the estimate.
 */
function measuredLedgers(data: TimelineData, ledgers: Map<string, PayloadLedger>, stored: Map<string, StoredEntered>): Array<[string, number]> {
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
  return measured;
}
