/**
 * The context timeline of a session, from its indexed turns: the window and trigger by the
 * client's rule, what filled the context (Spillway's estimates scaled to the API's deltas), what
 * each tool result cost, and replays of the session under another limit. Pure functions over
 * rows; the replay runs per slider move, so it is one pass over the calls (docs/timeline.md).
 */
import {
  ESTIMATED_SPILL_MESSAGE_TOKENS,
  NEAR_TRIGGER_SHARE,
  type CompactionRecord,
  type TurnRecord,
  type TurnTool,
} from '../index/index.js';
import type {
  ContextRule,
  Prices,
  ReplayResult,
  ReplayScenario,
  TimelineCompaction,
  TimelineData,
  TimelineTool,
  TimelineTurn,
  ToolCost,
} from '../index/rows.js';
import { adapterOf, unknownContext } from '../agents/index.js';
import type { Profile } from '../pipeline/types.js';

/** Tokens of the guard's message when the saved payload's message is not known. */
export const GUARD_MESSAGE_TOKENS_DEFAULT = ESTIMATED_SPILL_MESSAGE_TOKENS;
/** Bounds on the estimate→API factor applied to text the API never saw (a plausible tokenizer correction, not a double's inflation). */
const SCALE_MIN = 0.5;
const SCALE_MAX = 3;
/** What a masked tool result leaves in context ("[result cleared]"). */
export const MASKED_RESULT_TOKENS = 12;
/** Context right after a compaction when the transcript did not say: the baseline plus a summary of this size. */
export const SUMMARY_TOKENS_DEFAULT = 3_000;

export interface RuleOptions {
  autoCompactPct?: number;
  autoCompactDisabled?: boolean;
  autoCompactLimit?: number;
  /** What the session's own auto compactions say about its trigger (observedTrigger); used when no setting above is given. */
  observed?: ObservedTrigger;
}

/**
 * Bounds on a trigger from the compactions a client really made by itself: above the context of
 * every main call it made without compacting first (its check let that call through), and at or
 * below the tokens it counted when it did compact (`preTokens`).
 */
export interface ObservedTrigger {
  above: number;
  atMost: number;
  count: number;
}

export function observedTrigger(turns: Pick<TurnRecord, 'seq' | 'kind' | 'context'>[], compactions: Pick<CompactionRecord, 'seq' | 'kind' | 'trigger' | 'preTokens'>[]): ObservedTrigger | undefined {
  const main = turns.filter((t) => t.kind === 'main');
  const auto = compactions.filter((c) => c.kind === 'compact' && c.trigger === 'auto' && c.preTokens !== undefined);
  if (!auto.length || !main.length) return undefined;
  // The first main call at or after each compaction was let through only by compacting first.
  const after = new Set(compactions.filter((c) => c.kind === 'compact').map((c) => main.find((t) => t.seq >= c.seq)?.seq));
  let above = 0;
  for (const t of main) if (t.context !== null && !after.has(t.seq)) above = Math.max(above, t.context);
  const atMost = Math.min(...auto.map((c) => c.preTokens!));
  return atMost > above ? { above, atMost, count: auto.length } : undefined;
}

/** The window and the auto-compact trigger of a session, by its client's rule (the adapter's `context`, src/agents; docs/timeline.md says which parts were seen in a run). */
export function contextRule(client: ContextRule['client'], turns: Pick<TurnRecord, 'model' | 'window'>[], o: RuleOptions = {}): ContextRule {
  const model = turns.find((t) => t.model)?.model;
  const ins = turns.map((t) => ({ model: t.model ?? undefined, window: t.window ?? undefined }));
  return { client, model, ...(adapterOf(client)?.context ?? unknownContext)(model, ins, o) };
}

export function toolGroup(name: string): string {
  const m = /^mcp__([^_]+(?:_[^_]+)*?)__/.exec(name);
  return m ? `mcp:${m[1]}` : name;
}

export interface PayloadLink {
  payloadId: string;
  tokens: number;
  action: string;
  /** Estimated tokens of what the guard (or the client's own spill) gave the model instead, when known. */
  messageTokens?: number;
  /** The ledger's "as the client would give it": what the client's own caps let in without Spillway (src/agents). */
  clientTokens?: number;
  /** Assets Spillway cut out of it (the ledger's kept out). */
  keptAssets?: number;
}

export interface BuildInput {
  sessionId: string;
  client: ContextRule['client'];
  turns: TurnRecord[];
  compactions: CompactionRecord[];
  baselineTokens?: number;
  notes: string[];
  payloads: Map<string, PayloadLink>;
  rule: ContextRule;
  prices: Prices;
  /** Whether Spillway's guard can reach a tool's results in this client (its adapter's `guardReaches`); default every tool. */
  guardReaches?: (tool: string) => boolean;
}

/**
 * Calls on the session's main line: sub-agent files are all sidechain; a main file's sidechain
 * lines are not its context. What entered with a summarisation call (Codex: the output that
 * pushed it over) enters the main call after it instead, so the rule sees it.
 */
function mainLine(turns: TurnRecord[]): { line: TurnRecord[]; carried: Map<number, TurnTool[]> } {
  const hasMain = turns.some((t) => t.kind === 'main');
  const line: TurnRecord[] = [];
  const carried = new Map<number, TurnTool[]>();
  let carry: TurnTool[] = [];
  for (const t of turns) {
    if (t.kind === 'summary') {
      carry.push(...t.tools);
      continue;
    }
    if (t.kind !== (hasMain ? 'main' : 'sidechain')) continue;
    if (carry.length) carried.set(line.length, carry);
    carry = [];
    line.push(t);
  }
  return { line, carried };
}

/** One tool result in the replay, in the API's units. */
export interface ReplayTool {
  /** What entered (measured: its share of the call's growth). */
  seen: number;
  /** The whole result: what a guard that passes it hands the client. */
  full: number;
  /**
   * What the client would have let in without Spillway (its own caps, the ledger's "as the client"):
   * "no guard", and what a result the guard passes becomes once the client's caps apply. Never more
   * than `full`. Absent in a series built before the ledger (then `full`).
   */
  client?: number;
  message: number;
  messageFrom: 'saved' | 'fixed';
  payloadId?: string;
  /** Assets the session's guard cut out of it: a guard that passes the rest cuts them again (its message stands). */
  keptAssets?: number;
  /** Spillway's guard cannot reach it in this client (no hook: only MCP results pass the proxy): every limit leaves it as the client gave it. */
  unguarded?: true;
}

/** The replay's input: per call, what entered (measured) and the tool results with what would enter instead. */
export interface ReplaySeries {
  /** Measured context per call (null: unknown, carried). */
  contexts: number[];
  /** Measured growth per call: the new content only, the summary of a real compaction left out. */
  growth: number[];
  outputs: number[];
  /**
   * Tool results entering per call: as seen, whole, and the message that would replace them when
   * the real guard's is not known (`messageFrom` says which that is).
   */
  tools: Array<Array<ReplayTool>>;
  /** The estimate→API factor for text the API never saw (a guard's message, a whole result). */
  scale: number;
  /** Tokens that entered just before a call's compaction was decided (Codex: the output that pushed it over), gone after it. */
  pending: number[];
  /** Calls before which the session really compacted. */
  realCompactions: number[];
  /** Context right after a compaction (the real one's where known). */
  post: number;
  /** The profile the session's own guard counted with (its spills' messages say), the replay's default. */
  guardProfile?: Profile;
  /**
   * The share of each call's repeated prefix the session really read from the cache (its cache
   * reads over the prefixes it sent): ~1 for a client that caches, 0 for one (or a model API) that
   * reports none. The replay prices its calls the same way, so "as it ran" costs what was measured.
   */
  cacheHit: number;
  /** Of what the session sent that was not read from the cache, the share it wrote to the cache (the rest plain input). */
  writeShare: number;
  baseline: number;
  rule: ContextRule;
  prices: Prices;
}

function scaledParts(t: TurnRecord, delta: number | null, baseline: number | undefined, rebuilt: boolean, fixedBaseline?: number): { parts: Record<string, number>; scale: number; residual: number | null } {
  const est: Record<string, number> = {};
  if (fixedBaseline !== undefined && delta !== null && delta > fixedBaseline) {
    // After a compaction the prefix is the one the first call measured; the rest is split.
    const rest: { parts: Record<string, number>; scale: number; residual: number | null } = scaledParts({ ...t, parts: { ...t.parts, baseline: undefined } }, delta - fixedBaseline, undefined, false);
    return { parts: { baseline: fixedBaseline, ...rest.parts }, scale: rest.scale, residual: rest.residual };
  }
  for (const [k, v] of Object.entries(t.parts)) if (v) est[k] = v;
  if (rebuilt && baseline) est.baseline = (est.baseline ?? 0) + baseline;
  for (const tool of t.tools) est[`tool:${toolGroup(tool.name)}`] = (est[`tool:${toolGroup(tool.name)}`] ?? 0) + tool.tokens;
  const sum = Object.values(est).reduce((a, b) => a + b, 0);
  if (delta === null || delta <= 0 || sum <= 0) return { parts: est, scale: 1, residual: delta === null ? null : delta - sum };
  if (rebuilt && !baseline) {
    // No recorded prefix: what the estimate does not explain of a first call is the baseline.
    est.baseline = (est.baseline ?? 0) + Math.max(0, delta - sum);
    return { parts: est, scale: 1, residual: 0 };
  }
  const scale = delta / sum;
  const parts: Record<string, number> = {};
  for (const [k, v] of Object.entries(est)) parts[k] = Math.round(v * scale);
  return { parts, scale, residual: delta - sum };
}

export function buildTimeline(input: BuildInput, scenarios: ReplayScenario[]): { data: TimelineData; series: ReplaySeries } {
  const { line, carried } = mainLine(input.turns);
  const comps: TimelineCompaction[] = [];
  for (const c of input.compactions) {
    // The first main call at or after the compaction's position.
    let turn = line.findIndex((t) => t.seq >= c.seq);
    if (turn < 0) turn = line.length;
    comps.push({ turn, at: c.at, kind: c.kind, trigger: c.trigger, preTokens: c.preTokens, postTokens: c.postTokens, tokensSaved: c.tokensSaved });
  }
  const compactAt = new Set(comps.filter((c) => c.kind === 'compact').map((c) => c.turn));
  const turns: TimelineTurn[] = [];
  const costs: ToolCost[] = [];
  let prev: number | null = null;
  let stack: Record<string, number> = {};
  const series: ReplaySeries = { contexts: [], growth: [], outputs: [], tools: [], pending: [], realCompactions: [...compactAt].sort((a, b) => a - b), scale: 1, post: 0, ...cachingOf(line, compactAt), baseline: 0, rule: input.rule, prices: input.prices };
  const posts: number[] = [];
  const scales: number[] = [];
  line.forEach((t, i) => {
    const rebuilt = i === 0 || compactAt.has(i);
    const delta = t.context === null ? null : rebuilt || prev === null ? t.context : t.context - prev;
    const fixed = i > 0 && rebuilt ? turns[0]?.parts.baseline : undefined;
    const { parts, scale, residual } = scaledParts(t, delta, input.baselineTokens, i === 0, fixed);
    if (!rebuilt || i === 0) scales.push(scale);
    if (rebuilt) stack = {};
    for (const [k, v] of Object.entries(parts)) stack[k] = (stack[k] ?? 0) + v;
    const tools: TimelineTool[] = t.tools.map((x) => {
      const p = input.payloads.get(x.id);
      return { id: x.id, name: x.name, group: toolGroup(x.name), tokens: Math.round(x.tokens * scale), estimated: x.tokens, payloadId: p?.payloadId, fullTokens: p?.tokens, action: p?.action };
    });
    turns.push({ seq: t.seq, at: t.at, model: t.model, kind: t.kind, context: t.context, input: t.input, cacheWrite: t.cacheWrite, cacheRead: t.cacheRead, output: t.output, delta, parts, stack: { ...stack }, residual: residual === null ? null : Math.round(residual), tools });
    // Growth: new content only; after a real compaction, what the summary and baseline do not explain.
    const ctx = t.context ?? prev ?? 0;
    let growth = delta ?? 0;
    if (i === 0) growth = ctx;
    else if (compactAt.has(i)) {
      const newContent = tools.reduce((a, x) => a + x.tokens, 0) + Object.entries(t.parts).filter(([k]) => k !== 'summary').reduce((a, [, v]) => a + (v ?? 0), 0);
      growth = Math.min(ctx, newContent);
      posts.push(ctx - growth);
    }
    series.contexts.push(ctx);
    series.growth.push(growth);
    series.outputs.push(t.output ?? 0);
    series.tools.push([]);
    if (t.context !== null) prev = t.context;
  });
  // Tool results: what each would be unguarded and under a guard, in the units of the API deltas.
  const medianScale = Math.min(SCALE_MAX, Math.max(SCALE_MIN, median(scales.filter((s) => s > 0)) ?? 1));
  series.scale = medianScale;
  for (let i = 0; i < line.length; i++) series.pending.push(Math.round((carried.get(i) ?? []).reduce((a, x) => a + x.tokens, 0) * medianScale));
  turns.forEach((t, i) => {
    for (const x of t.tools) {
      const passedWhole = x.action === undefined || x.action === 'pass';
      // What the model got of a result that passed is what it would get with no guard too (a client
      // that cuts big outputs itself cuts them either way): the measured tokens, not the saved
      // payload's estimate, which counts another text (Bash's stdout and stderr apart, Read without
      // its line numbers) and drew the no-guard replay away from the session it replays.
      const full = passedWhole && x.tokens > 0 ? x.tokens : x.fullTokens !== undefined ? Math.round(x.fullTokens * medianScale) : x.tokens;
      const link = input.payloads.get(x.id);
      // Without Spillway the client's own caps apply (Claude Code persists a big Bash output and shows a
      // preview): "no guard" is that, never a whole result the client itself would not have let in.
      // A result that passed already went through them: what was measured.
      const client = passedWhole && x.tokens > 0 ? x.tokens : link?.clientTokens !== undefined ? Math.min(Math.max(full, x.tokens), Math.round(link.clientTokens * medianScale)) : Math.max(full, x.tokens);
      const saved = link !== undefined && link.messageTokens !== undefined;
      // A result the model got as the guard's message: that message is what was measured entering,
      // so a replay that spills it again puts back exactly that, not its estimate at another scale
      // (which drew the replay above the measured context for a session that changed nothing).
      const message = saved && !passedWhole && x.tokens > 0 ? x.tokens : Math.round((saved ? link.messageTokens! : GUARD_MESSAGE_TOKENS_DEFAULT) * medianScale);
      series.tools[i]!.push({ seen: x.tokens, full: Math.max(full, x.tokens), client, message, messageFrom: saved ? 'saved' : 'fixed', payloadId: x.payloadId, ...(link?.keptAssets ? { keptAssets: link.keptAssets } : {}), ...(input.guardReaches && !input.guardReaches(x.name) ? { unguarded: true as const } : {}) });
      let end = turns.length;
      for (const c of series.realCompactions) if (c > i) { end = c; break; }
      const n = end - i;
      // Entered once, then repeated on each later call it rode along in.
      const paid = paidAs(series, x.tokens * Math.max(0, n - 1), x.tokens);
      // Against what the client would have let in anyway, over the same calls and at the same cache
      // prices: what this result's spill saved. A spill whose message outweighs the client's own preview is negative.
      const kept = client - x.tokens;
      const keptPaid = paidAs(series, kept * Math.max(0, n - 1), kept);
      const savedUsd = (keptPaid.input * series.prices.input + keptPaid.write * series.prices.cacheWrite + keptPaid.read * series.prices.cacheRead) / 1e6;
      costs.push({
        id: x.id,
        payloadId: x.payloadId,
        name: x.name,
        group: x.group,
        turn: i,
        tokens: x.tokens,
        turnsInContext: n,
        cacheWriteTokens: Math.round(paid.write),
        cacheReadTokens: Math.round(paid.read),
        inputTokens: Math.round(paid.input),
        clientTokens: client,
        savedTokens: kept * n,
        savedUsd,
      });
    }
  });
  const first = turns[0];
  series.baseline = Math.round(first?.parts.baseline ?? input.baselineTokens ?? 0);
  series.post = posts.length ? Math.round(median(posts)!) : series.baseline + SUMMARY_TOKENS_DEFAULT;
  costs.sort((a, b) => b.tokens * b.turnsInContext - a.tokens * a.turnsInContext);
  const measured = measuredTotals(input.turns, input.prices, comps.length, line);
  const replays = [replay(series, {}, 'as it ran (rule replayed)'), ...scenarios.map((s) => replay(series, s))];
  const peak = measured.peak;
  let warning: string | undefined;
  if (comps.some((c) => c.kind === 'compact')) warning = `compacted ${comps.filter((c) => c.kind === 'compact').length}×`;
  else if (input.rule.trigger && peak >= input.rule.trigger * (1 - NEAR_TRIGGER_SHARE)) warning = `peak ${peak.toLocaleString('en-US')} within 10% of the trigger`;
  const data: TimelineData = {
    sessionId: input.sessionId,
    rule: input.rule,
    turns,
    compactions: comps,
    baselineTokens: first?.parts.baseline ?? null,
    baselineSource: input.baselineTokens ? 'estimated' : 'measured',
    topCosts: costs,
    measured,
    replays,
    prices: input.prices,
    subagents: [],
    notes: input.notes,
    warning,
  };
  return { data, series };
}

function median(xs: number[]): number | undefined {
  if (!xs.length) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/**
 * How tokens a call sends are paid for, in the session's own caching proportions: of the prefix it
 * repeats, the share the session read from the cache is read; the rest and the new content are
 * written to the cache or sent as plain input, in the session's proportion. The replay and the
 * per-result costs both price this way.
 */
function paidAs(c: Pick<ReplaySeries, 'cacheHit' | 'writeShare'>, prefix: number, fresh: number): { read: number; write: number; input: number } {
  const sent = (1 - c.cacheHit) * prefix + fresh;
  return { read: c.cacheHit * prefix, write: c.writeShare * sent, input: (1 - c.writeShare) * sent };
}

/**
 * How the session used the cache, measured: its cache reads over the prefixes its calls repeated
 * (each call's context up to the one before it), and of the rest what it wrote to the cache. Both
 * 1 (a caching client) when usage does not say.
 */
function cachingOf(line: TurnRecord[], rebuilt: Set<number>): { cacheHit: number; writeShare: number } {
  let prefix = 0;
  let read = 0;
  let write = 0;
  let input = 0;
  let prev: number | null = null;
  let known = false;
  line.forEach((t, i) => {
    if (t.context === null) return;
    if (t.cacheRead !== null || t.cacheWrite !== null) known = true;
    // The call after a compaction repeats no prefix of the one before (a summary replaced it): it says nothing of the hit rate.
    if (prev !== null && !rebuilt.has(i)) {
      prefix += Math.min(prev, t.context);
      read += t.cacheRead ?? 0;
    }
    write += t.cacheWrite ?? 0;
    input += t.input ?? 0;
    prev = t.context;
  });
  if (!known) return { cacheHit: 1, writeShare: 1 };
  return { cacheHit: prefix > 0 ? Math.min(1, read / prefix) : 1, writeShare: write + input > 0 ? write / (write + input) : 1 };
}

function measuredTotals(all: TurnRecord[], prices: Prices, compactions: number, line: TurnRecord[]): TimelineData['measured'] {
  let input = 0;
  let write = 0;
  let read = 0;
  let out = 0;
  for (const t of all) {
    input += t.input ?? 0;
    write += t.cacheWrite ?? 0;
    read += t.cacheRead ?? 0;
    out += t.output ?? 0;
  }
  const peak = line.reduce((m, t) => Math.max(m, t.context ?? 0), 0);
  const costUsd = (input * prices.input + write * prices.cacheWrite + read * prices.cacheRead + out * prices.output) / 1e6;
  return { peak, compactions, inputTokens: input, cacheWriteTokens: write, cacheReadTokens: read, outputTokens: out, costUsd, calls: all.length };
}

export function scenarioLabel(s: ReplayScenario): string {
  if (s.noGuard) return 'no guard';
  const parts: string[] = [];
  if (s.limit !== undefined) parts.push(`guard at ${s.limit.toLocaleString('en-US')}`);
  if (s.keepLast !== undefined) parts.push(`keep last ${s.keepLast} results`);
  return parts.join(', ') || 'as it ran';
}

/**
 * The session again under another limit (simulated: the model might have acted differently).
 * Each call adds what entered with it; a tool result enters as the scenario would have it; the
 * client's rule compacts where the replayed context crosses its trigger, and the context then
 * starts again from what a real compaction left (or the baseline and a summary). Cost is
 * cache-aware as the session was: of what the call before sent, the share the session read from
 * the cache is read (ReplaySeries.cacheHit); the rest and the new content are written to the cache
 * or sent as plain input in the session's proportion (writeShare).
 */
/** The real guard's message for a payload at the scenario's limit (null: it passes it whole); undefined when not built. */
export type GuardLookup = (payloadId: string, limit: number) => { tokens: number; passed?: boolean } | null | undefined;

export function replay(series: ReplaySeries, s: ReplayScenario, label = scenarioLabel(s), guard?: GuardLookup): ReplayResult {
  const { rule, prices } = series;
  const n = series.growth.length;
  const contexts = new Array<number>(n);
  const compactionsAt: number[] = [];
  // Without a known trigger, the session as it ran keeps its real compactions.
  const asRan = s.limit === undefined && s.keepLast === undefined && !s.noGuard;
  const realSet = new Set(series.realCompactions);
  let ctx = 0;
  let prevCtx = 0;
  let peak = 0;
  let read = 0;
  let write = 0;
  let uncached = 0;
  let summaries = 0;
  let replaced = 0;
  const price = (prefix: number, fresh: number) => {
    const paid = paidAs(series, prefix, fresh);
    read += paid.read;
    write += paid.write;
    uncached += paid.input;
  };
  const messages = { guard: 0, saved: 0, fixed: 0 };
  // Results in context, oldest first: how many tokens each holds now (for masking).
  const live: number[] = [];
  for (let i = 0; i < n; i++) {
    let add = series.growth[i]!;
    for (const r of series.tools[i]!) {
      let enters = r.seen;
      const client = r.client ?? r.full;
      // A result the guard cannot reach in this client enters at any limit as it would with no guard.
      if (s.noGuard || (s.limit !== undefined && r.unguarded)) enters = client;
      else if (s.limit !== undefined) {
        const built = r.payloadId !== undefined && guard ? guard(r.payloadId, s.limit) : undefined;
        // The guard passes it: the client's own caps apply to it as they would without Spillway.
        if (built === null) enters = client;
        else if (built !== undefined && built.passed) {
          // The guard passes what is left once it cut the assets out again (the session's guard did):
          // the message the model got for it when that is known, else the rest as the guard built it.
          if (r.keptAssets && r.messageFrom === 'saved') {
            enters = Math.min(r.message, client);
            replaced++;
            messages.saved++;
          } else enters = Math.min(Math.round(built.tokens * series.scale), client);
        } else if (built !== undefined && r.messageFrom === 'saved') {
          // The real guard spills it, and the model was given this payload's message when it ran: that message, as the guard the session ran with (its tools' advice, its summary) wrote it.
          enters = Math.min(r.message, r.full);
          replaced++;
          messages.saved++;
        } else if (built !== undefined) {
          // The real guard spills it: the message it built offline, in the API's units.
          enters = Math.min(Math.round(built.tokens * series.scale), r.full);
          replaced++;
          messages.guard++;
        } else if (r.full > s.limit) {
          enters = Math.min(r.message, r.full);
          replaced++;
          messages[r.messageFrom]++;
        } else enters = client;
      }
      add += enters - r.seen;
      live.push(enters);
    }
    if (s.keepLast !== undefined) {
      while (live.length > s.keepLast) {
        const old = live.shift()!;
        add -= Math.max(0, old - MASKED_RESULT_TOKENS);
      }
    }
    const pending = series.pending[i] ?? 0;
    let compacted = false;
    if (i > 0) {
      if (rule.trigger === null) compacted = asRan && realSet.has(i);
      else compacted = rule.when === 'after-call' ? prevCtx >= rule.trigger : prevCtx + add + pending >= rule.trigger;
    }
    if (compacted) {
      compactionsAt.push(i);
      live.length = 0;
      // What a compaction leaves is the client's rule (keeps): Codex summarises what pushed it over; Claude Code keeps the newest messages after the summary.
      // The compaction is a model call of its own: the whole context sent again (its prefix from the
      // cache) and a summary written back, paid for like the session's other calls.
      price(prevCtx, pending);
      summaries += Math.max(0, series.post - series.baseline);
      ctx = rule.keeps === 'summary' ? series.post : series.post + add;
      price(Math.min(series.baseline, ctx), Math.max(0, ctx - series.baseline));
    } else {
      ctx = i === 0 ? add : prevCtx + add + pending;
      price(Math.min(prevCtx, ctx), Math.max(0, ctx - prevCtx));
    }
    if (ctx < 0) ctx = 0;
    contexts[i] = ctx;
    if (ctx > peak) peak = ctx;
    prevCtx = ctx;
  }
  const output = series.outputs.reduce((a, b) => a + b, 0) + summaries;
  const costUsd = (uncached * prices.input + write * prices.cacheWrite + read * prices.cacheRead + output * prices.output) / 1e6;
  [uncached, write, read] = [Math.round(uncached), Math.round(write), Math.round(read)];
  return { label, scenario: s, contexts, compactionsAt, peak, inputTokens: uncached, cacheWriteTokens: write, cacheReadTokens: read, outputTokens: output, costUsd, replaced, messages, provenance: 'simulated' };
}
