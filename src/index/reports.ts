/**
 * What the index tells about cost: the limit tuner's data (sizes, histogram, what a limit would
 * spill) and a session's waste report. Sizes are a strategy's token column (tokensColumn).
 */
import { DEFAULT_LIMIT_TOKENS, DEFAULT_PRICE_PER_MTOK_USD, DEFAULT_STRATEGY, limitForContextWindow } from '../pipeline/index.js';
import { type IndexCore, IndexError } from './core.js';
import { STRATEGY_COLUMN, filterSql, tokensColumn } from './queries.js';
import type { LimitTunerRequest, LimitTunerResponse, WasteReport, WasteReportRequest } from './rows.js';
import { ESTIMATED_SPILL_MESSAGE_TOKENS } from './text.js';

/** `limitTunerData` returns at most this many per-payload sizes. */
export const MAX_TUNER_SIZES = 100_000;
export const DEFAULT_TUNER_BUCKETS = 24;
/** Rows in the waste report's "biggest results" list. */
export const WASTE_BIGGEST_ROWS = 20;

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

export class Reports {
  constructor(private readonly core: IndexCore) {}

  /**
   * The limit tuner's data: a log-spaced histogram of payload sizes in tokens for a strategy,
   * every payload's size (sorted ascending, capped at MAX_TUNER_SIZES) so the UI can move the
   * slider locally, and what the limit would spill and keep out of context.
   */
  limitTunerData(req: LimitTunerRequest): LimitTunerResponse {
    const strategy = req.strategy ?? DEFAULT_STRATEGY;
    const limitTokens = limitForContextWindow(req.contextWindowTokens, req.limitTokens);
    const price = req.pricePerMTok ?? DEFAULT_PRICE_PER_MTOK_USD;
    const f = filterSql(req);
    const own = strategy === DEFAULT_STRATEGY ? '0' : `p.${STRATEGY_COLUMN[strategy]} IS NULL`;
    const rows = this.core
      .q(`SELECT p.id, ${tokensColumn(strategy)} AS t, p.tool, ${own} AS fb FROM payloads p WHERE ${f.sql} ORDER BY t ASC, p.id`)
      .all(...f.args) as Array<{ id: string; t: number; tool: string; fb: number }>;
    let tokensTotal = 0;
    let spilled = 0;
    let keptOut = 0;
    let fallbacks = 0;
    for (const r of rows) {
      tokensTotal += r.t;
      fallbacks += r.fb;
      if (r.t > limitTokens) {
        spilled++;
        keptOut += Math.max(0, r.t - ESTIMATED_SPILL_MESSAGE_TOKENS);
      }
    }
    const max = rows.length ? rows[rows.length - 1]!.t : 0;
    return {
      strategy,
      limitTokens,
      histogram: logHistogram(
        rows.map((r) => r.t),
        req.buckets ?? DEFAULT_TUNER_BUCKETS,
        max,
      ),
      sizes: rows.slice(0, MAX_TUNER_SIZES).map((r) => ({ id: r.id, tokens: r.t, tool: r.tool })),
      total: rows.length,
      spilled,
      tokensTotal,
      tokensKeptOut: keptOut,
      dollarsKeptOut: (keptOut * price) / 1_000_000,
      fallbacks,
    };
  }

  /**
   * What a session's tool results cost: tokens per tool, the biggest results, inline base64
   * (chars of base64 text in results, and its tokens), and what `limitTokens` with `strategy`
   * would have spilled and saved (a spilled result still costs its message, about
   * ESTIMATED_SPILL_MESSAGE_TOKENS), in tokens and dollars at `pricePerMTok`.
   */
  wasteReport(req: WasteReportRequest): WasteReport {
    if (!this.core.q('SELECT 1 FROM sessions WHERE id = ?').get(req.sessionId)) {
      throw new IndexError('NOT_FOUND', `no session with id ${JSON.stringify(req.sessionId)}`);
    }
    const strategy = req.strategy ?? DEFAULT_STRATEGY;
    const limitTokens = req.limitTokens ?? DEFAULT_LIMIT_TOKENS;
    const price = req.pricePerMTok ?? DEFAULT_PRICE_PER_MTOK_USD;
    const col = tokensColumn(strategy);
    const q = (sql: string) => this.core.q(sql);
    const byTool = q(
      `SELECT p.tool AS tool, count(*) AS calls, sum(${col}) AS tokens, max(${col}) AS maxTokens FROM payloads p WHERE p.session_id = ? GROUP BY p.tool ORDER BY tokens DESC, tool`,
    ).all(req.sessionId) as WasteReport['byTool'];
    const biggest = q(`SELECT p.id, p.tool, ${col} AS tokens, p.bytes FROM payloads p WHERE p.session_id = ? ORDER BY tokens DESC, p.id LIMIT ?`).all(
      req.sessionId,
      WASTE_BIGGEST_ROWS,
    ) as WasteReport['biggest'];
    const b64 = q(
      'SELECT count(*) AS payloads, coalesce(sum(b64_chars), 0) AS bytes, coalesce(sum(b64_tokens), 0) AS tokens FROM payloads WHERE session_id = ? AND b64_runs > 0',
    ).get(req.sessionId) as WasteReport['inlineBase64'];
    const spill = q(`SELECT count(*) AS n, coalesce(sum(max(${col} - ?, 0)), 0) AS saved FROM payloads p WHERE p.session_id = ? AND ${col} > ?`).get(
      ESTIMATED_SPILL_MESSAGE_TOKENS,
      req.sessionId,
      limitTokens,
    ) as { n: number; saved: number };
    return {
      sessionId: req.sessionId,
      strategy,
      limitTokens,
      pricePerMTok: price,
      totalTokens: byTool.reduce((a, t) => a + t.tokens, 0),
      byTool,
      biggest,
      inlineBase64: b64,
      wouldSpill: { payloads: spill.n, tokensSaved: spill.saved, dollarsSaved: (spill.saved * price) / 1_000_000 },
    };
  }
}
