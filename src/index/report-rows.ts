/**
 * The rows the limit tuner and the waste report read (src/timeline/reports.ts builds them from the
 * Timeline's replay): sessions with model calls, payload facts and sizes, for a filter or a session.
 * Rows in, rows out; no replay here.
 */
import type { StrategyName } from '../pipeline/types.js';
import type { IndexCore } from './core.js';
import { DEFAULT_STRATEGY } from '../pipeline/index.js';
import { STRATEGY_COLUMN, filterSql, tokensColumn } from './queries.js';
import type { LimitTunerRequest, LimitTunerResponse, WasteReport } from './rows.js';

export interface SessionMeta {
  id: string;
  name: string;
  title: string | null;
}

/** What the tuner knows of a payload to ask the guard about it. */
export interface PayloadFacts {
  id: string;
  tool: string;
  tokens: number;
  /** The largest of the index's estimates. */
  most: number;
  binary: number;
  action: string;
  l_images: number | null;
  input_excerpt: string | null;
}

export class ReportRows {
  constructor(private readonly core: IndexCore) {}

  session(sessionId: string): SessionMeta | undefined {
    return this.core.q('SELECT id, name, title FROM sessions WHERE id = ?').get(sessionId) as SessionMeta | undefined;
  }

  /** Sessions in scope that have model calls (their turns carry usage), in a stable order for paging. */
  sessionsWithCalls(req: { sessionId?: string; rootId?: string }): SessionMeta[] {
    const w = ["s.kind != 'scratch'", 'EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id AND t.context IS NOT NULL)'];
    const args: unknown[] = [];
    if (req.sessionId !== undefined) (w.push('s.id = ?'), args.push(req.sessionId));
    if (req.rootId !== undefined) (w.push('s.root_id = ?'), args.push(req.rootId));
    return this.core.q(`SELECT s.id, s.name, s.title FROM sessions s WHERE ${w.join(' AND ')} ORDER BY s.id`).all(...args) as SessionMeta[];
  }

  payloadFacts(sessionId: string): Map<string, PayloadFacts> {
    const rows = this.core
      .q(
        "SELECT id, tool, tokens, (binary = 1 OR kind = 'binary') AS binary, action, l_images, input_excerpt, max(tokens, coalesce(t_chars4, 0), coalesce(t_craft_density, 0), coalesce(t_calibrated, 0), coalesce(t_o200k, 0), coalesce(t_cl100k, 0), coalesce(t_claude, 0)) AS most FROM payloads WHERE session_id = ?",
      )
      .all(sessionId) as PayloadFacts[];
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** Each payload in scope once, smallest first, by the strategy's count; `fb`: 1 when it fell back to the default count. */
  payloadSizes(req: LimitTunerRequest, strategy: StrategyName): Array<{ id: string; t: number; tool: string; fb: number }> {
    const f = filterSql(req);
    const col = tokensColumn(strategy);
    const own = strategy === DEFAULT_STRATEGY ? '0' : `p.${STRATEGY_COLUMN[strategy]} IS NULL`;
    return this.core.q(`SELECT p.id, ${col} AS t, p.tool, ${own} AS fb FROM payloads p WHERE ${f.sql} ORDER BY t ASC, p.id`).all(...f.args) as Array<{ id: string; t: number; tool: string; fb: number }>;
  }

  /** Payload sizes of the sessions in scope that have no model calls: each payload once, no cost. */
  payloadsOnly(req: LimitTunerRequest, strategy: StrategyName, limit: number): LimitTunerResponse['payloadsOnly'] {
    const f = filterSql(req);
    const col = tokensColumn(strategy);
    return this.core
      .q(
        `SELECT count(DISTINCT p.session_id) AS sessions, count(*) AS payloads, coalesce(sum(${col}), 0) AS tokens, coalesce(sum(${col} > ?), 0) AS overLimit, coalesce(sum(CASE WHEN ${col} > ? THEN ${col} ELSE 0 END), 0) AS tokensOverLimit
         FROM payloads p WHERE ${f.sql} AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = p.session_id AND t.context IS NOT NULL)`,
      )
      .get(limit, limit, ...f.args) as LimitTunerResponse['payloadsOnly'];
  }

  /** A session's payloads that carry inline base64: how many, its characters and tokens. */
  inlineBase64(sessionId: string): WasteReport['inlineBase64'] {
    return this.core
      .q('SELECT count(*) AS payloads, coalesce(sum(b64_chars), 0) AS bytes, coalesce(sum(b64_tokens), 0) AS tokens FROM payloads WHERE session_id = ? AND b64_runs > 0')
      .get(sessionId) as WasteReport['inlineBase64'];
  }

  /** A session's payloads by tool, each once, by the strategy's count, the biggest tools first. */
  sizesByTool(sessionId: string, strategy: StrategyName): WasteReport['byTool'] {
    const col = tokensColumn(strategy);
    return this.core
      .q(`SELECT p.tool AS tool, count(*) AS calls, sum(${col}) AS tokens, max(${col}) AS maxTokens FROM payloads p WHERE p.session_id = ? GROUP BY p.tool ORDER BY tokens DESC, tool`)
      .all(sessionId) as WasteReport['byTool'];
  }

  /** A session's biggest payloads by the strategy's count, with their arguments. */
  biggest(sessionId: string, strategy: StrategyName, rows: number): Array<{ id: string; tool: string; tokens: number; args: string | null; action: string }> {
    const col = tokensColumn(strategy);
    return this.core
      .q(`SELECT p.id, p.tool, ${col} AS tokens, p.input_excerpt AS args, p.action FROM payloads p WHERE p.session_id = ? ORDER BY tokens DESC, p.id LIMIT ?`)
      .all(sessionId, rows) as Array<{ id: string; tool: string; tokens: number; args: string | null; action: string }>;
  }
}
