/**
 * A session's timeline from the index: its turns, compactions and notes (written by the importers,
 * turns.ts), its payload rows by tool call id, its sub-agents; built by timeline.ts. The replay
 * input of the last sessions asked is kept, so a slider move replays without reading rows again.
 */
import type { IndexCore } from './core.js';
import type { ContextRule, Prices, ReplayScenario, TimelineData, TimelineRequest } from './rows.js';
import { type PayloadLink, type ReplaySeries, DEFAULT_PRICES, buildTimeline, contextRule, replay } from './timeline.js';
import { estimateText, type CompactionRecord, type TurnRecord } from './turns.js';

const KEEP_SERIES = 8;

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
  return kind === 'claude-code' || kind === 'codex' || kind === 'gemini' ? kind : 'unknown';
}

export function scenariosOf(req: TimelineRequest): ReplayScenario[] {
  const out: ReplayScenario[] = [{ noGuard: true }];
  for (const limit of req.limits ?? []) out.push({ limit });
  for (const keepLast of req.keepLast ?? []) out.push({ keepLast });
  return out;
}

export class TimelineQueries {
  private readonly series = new Map<string, { key: string; series: ReplaySeries }>();

  constructor(private readonly core: IndexCore) {}

  private turnRows(sessionId: string): TurnRow[] {
    return this.core.q('SELECT * FROM turns WHERE session_id = ? ORDER BY source_id, seq').all(sessionId) as TurnRow[];
  }

  timeline(req: TimelineRequest): TimelineData | undefined {
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
    if (!src.length) notes.push('no turns indexed for this session (not a transcript of a known client, or indexed before turns were)');
    const payloads = new Map<string, PayloadLink>();
    for (const p of this.core.q("SELECT id, tokens, action, message, json_extract(source_json, '$.toolUseId') AS tid FROM payloads WHERE session_id = ?").all(session.id) as Array<{
      id: string;
      tokens: number;
      action: string;
      message: string | null;
      tid: string | null;
    }>) {
      if (!p.tid) continue;
      payloads.set(p.tid, { payloadId: p.id, tokens: p.tokens, action: p.action, messageTokens: p.action === 'spill' && p.message ? estimateText(p.message, 'claude') : undefined });
    }
    const client = clientOf(session.kind);
    const rule = contextRule(client, turns, req);
    const prices: Prices = { ...DEFAULT_PRICES[client === 'codex' ? 'openai' : client === 'gemini' ? 'gemini' : 'claude'], ...req.prices };
    const { data, series } = buildTimeline(
      { sessionId: session.id, client, turns, compactions, baselineTokens: src.find((s) => s.baseline_tokens !== null)?.baseline_tokens ?? undefined, notes, payloads, rule, prices },
      scenariosOf(req),
    );
    this.remember(session.id, this.keyOf(session.id, req), series);
    data.subagents = (this.core.q('SELECT id, name FROM sessions WHERE parent_id = ? ORDER BY name').all(session.id) as Array<{ id: string; name: string }>).map((s) => {
      const r = this.core.q("SELECT count(*) AS n, coalesce(max(context), 0) AS peak FROM turns WHERE session_id = ?").get(s.id) as { n: number; peak: number };
      return { sessionId: s.id, name: s.name, calls: r.n, peak: r.peak };
    });
    return data;
  }

  /** Replays only (a slider move), from the series kept at the last full request when it still matches. */
  replays(req: TimelineRequest): TimelineData | undefined {
    const kept = this.series.get(req.sessionId);
    if (!kept || kept.key !== this.keyOf(req.sessionId, req)) return this.timeline(req);
    const prices = { ...kept.series.prices, ...req.prices };
    const series = { ...kept.series, prices };
    const replays = [replay(series, {}, 'as it ran (rule replayed)'), ...scenariosOf(req).map((s) => replay(series, s))];
    return { sessionId: req.sessionId, rule: series.rule, turns: [], compactions: [], baselineTokens: null, baselineSource: 'measured', topCosts: [], measured: { peak: 0, compactions: 0, inputTokens: 0, cacheWriteTokens: 0, cacheReadTokens: 0, outputTokens: 0, costUsd: 0, calls: 0 }, replays, prices, subagents: [], notes: [] };
  }

  private keyOf(sessionId: string, req: TimelineRequest): string {
    const r = this.core.q('SELECT count(*) AS n, coalesce(max(line), -1) AS l, coalesce(sum(context), 0) AS c FROM turns WHERE session_id = ?').get(sessionId) as { n: number; l: number; c: number };
    return `${r.n}:${r.l}:${r.c}:${req.autoCompactPct ?? ''}:${req.autoCompactDisabled ?? ''}:${req.autoCompactLimit ?? ''}`;
  }

  private remember(sessionId: string, key: string, series: ReplaySeries): void {
    this.series.delete(sessionId);
    this.series.set(sessionId, { key, series });
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
