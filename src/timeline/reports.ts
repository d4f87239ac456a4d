/**
 * The limit tuner's data and a session's waste report: views of the Timeline's replay, so "what
 * would another limit do" has one answer. Per session with model calls: tokens × calls in
 * context, at the session's own cache prices, under its client's rule, as `getTimeline` replays
 * it (timelines.ts, replay.ts). Sessions without calls (bare spill folders) have nothing
 * to multiply: they get their payload sizes only, each once, and say so.
 *
 * | entry            | for                                                                      |
 * | ---------------- | ------------------------------------------------------------------------ |
 * | limitTunerData   | sizes histogram + each session's replay at a limit, a page at a time    |
 * | wasteReport      | one session: per tool tokens × calls and cost, costliest calls, replays  |
 */
import { DEFAULT_LIMIT_TOKENS, DEFAULT_PROFILE, DEFAULT_STRATEGY, limitForContextWindow } from '../pipeline/index.js';
import type { Profile, StrategyName } from '../pipeline/types.js';
import {
  IndexError,
  type ReportRows,
  type SessionMeta,
} from '../index/index.js';
import type {
  CallRow,
  LimitTunerRequest,
  LimitTunerResponse,
  ReplayResult,
  ReplayTotals,
  SessionReplay,
  TimelineData,
  TimelineRequest,
  ToolCost,
  WasteReport,
  WasteReportRequest,
} from '../index/rows.js';
import { guardReachOf, type TimelineOptions } from './timelines.js';
import { reGuardable, type GuardCandidate } from './guard.js';

/** `limitTunerData` returns at most this many per-payload sizes. */
export const MAX_TUNER_SIZES = 100_000;
export const DEFAULT_TUNER_BUCKETS = 24;
/** Rows in the waste report's "costliest calls" list. */
export const WASTE_BIGGEST_ROWS = 20;
/** Sessions one tuner request replays at most; the view asks for the next page. */
export const MAX_TUNER_SESSIONS_PER_PAGE = 20;
/**
 * Time one tuner request spends replaying sessions before it answers with the rest as a next page
 * (each session's replay is the Timeline's, with its own guard budget; the event loop gets a turn between sessions).
 */
export const TUNER_PAGE_BUDGET_MS = 400;
/** Guard time per session in the tuner (the Timeline's slider move gets 100 ms; a full request 250). */
export const TUNER_GUARD_BUDGET_MS = 100;
/** Rows of calls whose decision flips, per tuner page. */
export const MAX_TUNER_CALL_ROWS = 200;

/** The real guard's decision for a payload at the replay's settings, as the replay reads it (timelines.ts). */
export type GuardDecision = (payload: GuardCandidate & { tokens: number; reached: boolean; binary?: boolean }, limit: number, strategy: StrategyName | undefined, profile: Profile) => 'spill' | 'pass' | 'pending';

/** Log-spaced buckets from 1 token to the largest size; every value lands in exactly one bucket. */
export function logHistogram(values: number[], buckets: number, max: number): LimitTunerResponse['histogram'] {
  if (!values.length) return [];
  const hi = Math.max(2, max + 1);
  const edges: number[] = [0];
  for (let i = 1; i <= buckets; i++) edges.push(Math.round(Math.exp((Math.log(hi) * i) / buckets)));
  // Rounding can make low edges repeat: keep them strictly increasing.
  for (let i = 1; i < edges.length; i++) if (edges[i]! <= edges[i - 1]!) edges[i] = edges[i - 1]! + 1;
  edges[edges.length - 1] = Math.max(edges[edges.length - 1]!, hi);
  const out = edges.slice(0, -1).map((from, i) => ({ from, to: edges[i + 1]!, count: 0 }));
  let b = 0;
  for (const v of values) {
    // values are sorted ascending
    while (b < out.length - 1 && v >= out[b]!.to) b++;
    out[b]!.count++;
  }
  return out;
}

/** A replay's figures as every view shows them: tokens sent over all calls (tokens × calls in context), cost, peak. */
export function totalsOf(r: ReplayResult): ReplayTotals {
  return {
    sentTokens: r.inputTokens + r.cacheWriteTokens + r.cacheReadTokens,
    cacheReadTokens: r.cacheReadTokens,
    costUsd: r.costUsd,
    peak: r.peak,
    compactions: r.compactionsAt.length,
    replaced: r.replaced,
    pending: r.pending ?? 0,
  };
}

/** A result's cost over the calls it stayed in, at the session's prices (the split the Timeline's costliest list shows). */
function costOf(c: ToolCost, prices: TimelineData['prices']): number {
  return (c.inputTokens * prices.input + c.cacheWriteTokens * prices.cacheWrite + c.cacheReadTokens * prices.cacheRead) / 1e6;
}

/** The words every replay view says about its numbers (docs/inspector.md repeats them). */
export const REPLAY_ASSUMPTIONS = [
  "Per session with model calls, the Timeline's replay: each tool result costs its tokens × the calls it stays in context, until a compaction or the end.",
  "Priced in the session's own caching proportions (its cache reads and writes as measured) at each client's list prices; the Timeline lets you edit them.",
  "\"No guard\" is the client's own behaviour with every result as the client would have given it; \"at the limit\", each result goes through the real guard offline at that limit.",
  "The client's compaction rule is replayed: a limit that keeps the context lower can save a compaction, or cost one.",
  'Simulated: the model might have acted differently had it seen other results.',
];
const PAYLOAD_ONLY_NOTE = 'Sessions without model calls (bare spill folders) have no calls to multiply: only their payload sizes are shown, each counted once, with no cost.';

export class Reports {
  constructor(
    private readonly rows: ReportRows,
    /** The Timeline's entry point (Index.timeline): every replay here is one of its replays. */
    private readonly timeline: (req: TimelineRequest, o?: TimelineOptions) => Promise<TimelineData | undefined>,
    private readonly decide: GuardDecision,
  ) {}

  /**
   * One session's replay at `limit`, as the Timeline computes it, and its calls as rows: each with
   * its arguments, tokens × calls at the session's prices, and the real guard's decision at the limit.
   */
  private async sessionView(meta: SessionMeta, limit: number, o: { strategy?: StrategyName; profile?: Profile; guardBudgetMs?: number }): Promise<{ view: SessionReplay; calls: CallRow[] } | undefined> {
    const t = await this.timeline({ sessionId: meta.id, limits: [limit], strategy: o.strategy, profile: o.profile }, { guardBudgetMs: o.guardBudgetMs });
    if (!t) return undefined;
    const asRan = t.replays[0]!;
    const noGuard = t.replays.find((r) => r.scenario.noGuard)!;
    const atLimit = t.replays.find((r) => r.scenario.limit === limit)!;
    const profile = o.profile ?? t.guardProfile ?? DEFAULT_PROFILE;
    const view: SessionReplay = {
      sessionId: meta.id,
      name: meta.name,
      client: t.rule.client,
      calls: asRan.contexts.length,
      profile,
      prices: t.prices,
      asRan: totalsOf(asRan),
      noGuard: totalsOf(noGuard),
      atLimit: totalsOf(atLimit),
    };
    if (meta.title) view.title = meta.title;
    const info = this.rows.payloadFacts(meta.id);
    const reaches = guardReachOf(t.rule.client);
    const calls = t.topCosts.map((c): CallRow => {
      const p = c.payloadId ? info.get(c.payloadId) : undefined;
      const row: CallRow = {
        id: c.id,
        sessionId: meta.id,
        tool: c.name,
        tokens: c.tokens,
        calls: c.turnsInContext,
        tokensTimesCalls: c.tokens * c.turnsInContext,
        costUsd: costOf(c, t.prices),
      };
      if (c.payloadId) row.payloadId = c.payloadId;
      if (p) {
        if (p.input_excerpt) row.args = p.input_excerpt;
        row.fullTokens = p.tokens;
        row.action = p.action;
        const reached = reaches(p.tool);
        const guardable = reGuardable({ binary: p.binary === 1, images: p.l_images ?? 0, action: p.action, reached });
        // Sized as the replay sizes it (replay.ts buildTimeline `full`): a result that passed by what entered, measured (an image Read by its pixels, not its base64).
        const size = p.action === 'pass' && c.tokens > 0 ? c.tokens : p.tokens;
        row.atLimit = this.decide({ payloadId: p.id, most: p.most, tokens: size, guardable, reached, binary: p.binary === 1 }, limit, o.strategy, profile);
      }
      return row;
    });
    return { view, calls };
  }

  /**
   * The limit tuner: a log-spaced histogram of payload sizes (each once, for the strategy), and
   * the Timeline's replay of every session with calls at the limit, a page of sessions at a time
   * (at most MAX_TUNER_SESSIONS_PER_PAGE, within TUNER_PAGE_BUDGET_MS; `replay.next` says where to go on).
   */
  async limitTunerData(req: LimitTunerRequest): Promise<LimitTunerResponse> {
    const strategy = req.strategy ?? DEFAULT_STRATEGY;
    const limitTokens = limitForContextWindow(req.contextWindowTokens, req.limitTokens);
    const rows = this.rows.payloadSizes(req, strategy);
    let fallbacks = 0;
    for (const r of rows) fallbacks += r.fb;
    const max = rows.length ? rows[rows.length - 1]!.t : 0;

    const sessions = this.rows.sessionsWithCalls(req);
    const offset = Math.min(req.offset ?? 0, sessions.length);
    const pageMax = Math.min(req.maxSessions ?? MAX_TUNER_SESSIONS_PER_PAGE, MAX_TUNER_SESSIONS_PER_PAGE);
    const page: SessionReplay[] = [];
    const flips: CallRow[] = [];
    const start = performance.now();
    let i = offset;
    for (; i < sessions.length && page.length < pageMax; i++) {
      if (page.length > 0 && performance.now() - start > TUNER_PAGE_BUDGET_MS) break;
      const v = await this.sessionView(sessions[i]!, limitTokens, { strategy: req.strategy, profile: req.profile, guardBudgetMs: TUNER_GUARD_BUDGET_MS });
      if (v) {
        page.push(v.view);
        for (const c of v.calls) if (c.atLimit && c.atLimit !== 'pending' && (c.action === 'spill') !== (c.atLimit === 'spill')) flips.push(c);
      }
      // Between sessions the event loop gets a turn: a folder of sessions never holds the thread for its whole replay.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    flips.sort((a, b) => (b.tokensTimesCalls ?? 0) - (a.tokensTimesCalls ?? 0));
    const profiles = page.map((s) => s.profile);
    const profile = req.profile ?? mostCommon(profiles) ?? DEFAULT_PROFILE;
    const payloadsOnly = this.rows.payloadsOnly(req, strategy, limitTokens);
    const replay: LimitTunerResponse['replay'] = { sessionsTotal: sessions.length, offset, sessions: page, flips: flips.slice(0, MAX_TUNER_CALL_ROWS) };
    if (i < sessions.length) replay.next = i;
    return {
      strategy,
      profile,
      limitTokens,
      histogram: logHistogram(
        rows.map((r) => r.t),
        req.buckets ?? DEFAULT_TUNER_BUCKETS,
        max,
      ),
      sizes: rows.slice(0, MAX_TUNER_SIZES).map((r) => ({ id: r.id, tokens: r.t, tool: r.tool })),
      total: rows.length,
      fallbacks,
      replay,
      payloadsOnly,
      assumptions: [...REPLAY_ASSUMPTIONS, PAYLOAD_ONLY_NOTE],
    };
  }

  /**
   * What a session's tool results cost. With model calls: per tool, the tokens that entered × the
   * calls they stayed in, at the session's cache prices; the costliest calls with their arguments;
   * the session as it ran, with no guard and at `limitTokens`, as the Timeline replays them.
   * Without: each payload's size once (labelled so), and no cost. Inline base64 is per payload either way.
   */
  async wasteReport(req: WasteReportRequest): Promise<WasteReport> {
    const meta = this.rows.session(req.sessionId);
    if (!meta) throw new IndexError('NOT_FOUND', `no session with id ${JSON.stringify(req.sessionId)}`);
    const strategy = req.strategy ?? DEFAULT_STRATEGY;
    const limitTokens = req.limitTokens ?? DEFAULT_LIMIT_TOKENS;
    const inlineBase64 = this.rows.inlineBase64(req.sessionId);
    const withCalls = this.rows.sessionsWithCalls({ sessionId: meta.id }).length > 0;
    const v = withCalls ? await this.sessionView(meta, limitTokens, { strategy: req.strategy, profile: req.profile }) : undefined;
    if (v) {
      const byTool = new Map<string, WasteReport['byTool'][number]>();
      for (const c of v.calls) {
        const t = byTool.get(c.tool) ?? { tool: c.tool, calls: 0, tokens: 0, maxTokens: 0, tokensTimesCalls: 0, costUsd: 0 };
        t.calls++;
        t.tokens += c.tokens;
        t.maxTokens = Math.max(t.maxTokens, c.tokens);
        t.tokensTimesCalls! += c.tokensTimesCalls!;
        t.costUsd! += c.costUsd!;
        byTool.set(c.tool, t);
      }
      const tools = [...byTool.values()].sort((a, b) => b.tokensTimesCalls! - a.tokensTimesCalls! || a.tool.localeCompare(b.tool));
      return {
        sessionId: meta.id,
        strategy,
        limitTokens,
        basis: 'replay',
        totalTokens: tools.reduce((a, t) => a + t.tokensTimesCalls!, 0),
        totalUsd: tools.reduce((a, t) => a + t.costUsd!, 0),
        byTool: tools,
        biggest: v.calls.slice(0, WASTE_BIGGEST_ROWS),
        inlineBase64,
        replay: v.view,
        assumptions: REPLAY_ASSUMPTIONS,
      };
    }
    const byTool = this.rows.sizesByTool(meta.id, strategy);
    const biggest = this.rows.biggest(meta.id, strategy, WASTE_BIGGEST_ROWS).map((r): CallRow => {
      const row: CallRow = { id: r.id, payloadId: r.id, sessionId: meta.id, tool: r.tool, tokens: r.tokens, action: r.action };
      if (r.args) row.args = r.args;
      return row;
    });
    return {
      sessionId: meta.id,
      strategy,
      limitTokens,
      basis: 'payload-sizes',
      totalTokens: byTool.reduce((a, t) => a + t.tokens, 0),
      byTool,
      biggest,
      inlineBase64,
      assumptions: [PAYLOAD_ONLY_NOTE],
    };
  }
}

function mostCommon<T>(xs: T[]): T | undefined {
  const n = new Map<T, number>();
  let best: T | undefined;
  for (const x of xs) {
    n.set(x, (n.get(x) ?? 0) + 1);
    if (best === undefined || n.get(x)! > n.get(best)!) best = x;
  }
  return best;
}
