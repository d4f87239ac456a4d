/**
 * One row per tool call: a transcript's tool result joined with the spill Spillway made for it.
 *
 * The Claude Code hook and the MCP proxy save a spill in their own session folder, and the client
 * writes the same call into its transcript with Spillway's message as the result. Both are indexed
 * (each folder still opens on its own); this module links them, after every listing that changed
 * something, so that a listing over roots counts and shows the call once, on the transcript's row
 * (the spill's own row is `covered`), and that row carries the spill's size, content, sidecar,
 * summaries and assets. How a pair is found, surest first (`join_how` on the transcript's row):
 *
 * | how | when |
 * | --- | --- |
 * | `path` | the message in the transcript names the spill's payload (set by the importer, import-link.ts) |
 * | `id` | the sidecar's `toolCallId` is the transcript's tool_use id / call_id (the hook gets `tool_use_id`; the proxy reads the id the client sends in `_meta`) |
 * | `inferred` | a spill whose client sent no id: same tool, same arguments, the transcript's result within a time window after the spill |
 *
 * A spill with no transcript (the library, a CI job) joins nothing and shows as before. A search
 * that hits a covered spill's text or summaries lists the row that joined it (queries.ts `search`):
 * an id or inferred join keeps the transcript's own text in its full-text row, not the spill's.
 */
import { type IndexCore } from './core.js';
import { linkReadBacks } from './readback.js';
import { stableId } from './text.js';

/** The transcript's result is written after the spill: by this much at most, for an inferred join. */
export const INFERRED_JOIN_AFTER_MS = 10 * 60_000;
/** Clocks of the client and of Spillway may differ a little: the result may seem this much earlier. */
export const INFERRED_JOIN_BEFORE_MS = 60_000;

/** Same value, same key order or not: JSON with keys sorted, for hashing. */
function canonical(v: unknown, depth = 0): unknown {
  if (depth > 32 || typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.map((x) => canonical(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = canonical((v as Record<string, unknown>)[k], depth + 1);
  return out;
}

/** A tool input's hash (keys sorted), for joins inferred without an id; null without an input. */
export function inputHashOf(input: unknown): string | null {
  if (input === undefined || input === null) return null;
  try {
    const s = JSON.stringify(canonical(input));
    return s === undefined ? null : stableId('i', s);
  } catch {
    return null;
  }
}

/** A transcript's tool name against a spill's: the same, or the MCP tool's name under Claude Code's or Codex's `mcp__<server>__` prefix. */
export function sameTool(transcriptTool: string, spillTool: string): boolean {
  if (transcriptTool === spillTool) return true;
  return transcriptTool.startsWith('mcp__') && transcriptTool.endsWith(`__${spillTool}`);
}

/** Columns a joined transcript row takes from its spill (the tool's result, not Spillway's message). */
const SPILL_FACT_COLUMNS = ['bytes', 'tokens', 'kind', 'action', 'asset_count', 't_chars4', 't_craft_density', 't_calibrated', 't_o200k', 't_cl100k', 't_claude', 'binary'];

/**
 * Bring the joins in line with the rows (inside the scan's transaction). Cheap when nothing is to
 * join: a few passes over the payloads table, no per-row work for a root of spills only.
 */
export function relink(core: IndexCore): void {
  // A spill that went away: its id or inferred join goes with it (a path join goes when the transcript is re-read).
  core.q("UPDATE payloads SET spill_id = NULL, join_how = NULL WHERE join_how IN ('id', 'inferred') AND spill_id NOT IN (SELECT id FROM payloads)").run();
  core
    .q(
      `UPDATE payloads AS t SET spill_id = s.id, join_how = 'id'
         FROM payloads AS s
        WHERE t.source_json IS NOT NULL AND t.spill_id IS NULL AND t.call_id IS NOT NULL
          AND s.call_id = t.call_id AND s.source_json IS NULL AND s.rowid != t.rowid`,
    )
    .run();
  inferJoins(core);
  const set = SPILL_FACT_COLUMNS.map((c) => `${c} = s.${c}`).join(', ');
  const differs = SPILL_FACT_COLUMNS.map((c) => `t.${c} IS NOT s.${c}`).join(' OR ');
  core.q(`UPDATE payloads AS t SET ${set} FROM payloads AS s WHERE t.join_how IN ('id', 'inferred') AND s.id = t.spill_id AND (${differs})`).run();
  core.q('UPDATE payloads SET covered = 1 WHERE covered = 0 AND id IN (SELECT spill_id FROM payloads WHERE spill_id IS NOT NULL)').run();
  core.q('UPDATE payloads SET covered = 0 WHERE covered = 1 AND id NOT IN (SELECT spill_id FROM payloads WHERE spill_id IS NOT NULL)').run();
  joinSessions(core);
  // Read-backs name spills by file and transcript rows by id: rebuilt with the joins, from the same rows.
  linkReadBacks(core);
}

/** Spills whose client sent no id, each joined with the nearest later transcript result of the same tool and arguments. */
function inferJoins(core: IndexCore): void {
  const spills = core
    .q("SELECT id, tool, input_hash, created_at FROM payloads WHERE source_json IS NULL AND call_id IS NULL AND call_client IS NOT NULL AND input_hash IS NOT NULL AND covered = 0")
    .all() as Array<{ id: string; tool: string; input_hash: string; created_at: string }>;
  if (!spills.length) return;
  const taken = new Set<number>();
  const find = core.q(
    `SELECT rowid, tool, created_at FROM payloads
      WHERE source_json IS NOT NULL AND spill_id IS NULL AND input_hash = ? AND created_at >= ? AND created_at <= ?
      ORDER BY created_at`,
  );
  const link = core.q("UPDATE payloads SET spill_id = ?, join_how = 'inferred' WHERE rowid = ? AND spill_id IS NULL");
  for (const s of spills.sort((a, b) => a.created_at.localeCompare(b.created_at))) {
    const at = Date.parse(s.created_at);
    if (Number.isNaN(at)) continue;
    const rows = find.all(s.input_hash, new Date(at - INFERRED_JOIN_BEFORE_MS).toISOString(), new Date(at + INFERRED_JOIN_AFTER_MS).toISOString()) as Array<{ rowid: number; tool: string; created_at: string }>;
    const best = rows.filter((r) => !taken.has(r.rowid) && sameTool(r.tool, s.tool)).sort((a, b) => Math.abs(Date.parse(a.created_at) - at) - Math.abs(Date.parse(b.created_at) - at))[0];
    if (!best) continue;
    taken.add(best.rowid);
    link.run(s.id, best.rowid);
  }
}

/** Each Spillway session's transcript session: the one most of its joined spills were called in. */
function joinSessions(core: IndexCore): void {
  const pairs = core
    .q(
      `SELECT s.session_id AS spill_session, t.session_id AS transcript_session, count(*) AS n
         FROM payloads t JOIN payloads s ON s.id = t.spill_id
        WHERE t.spill_id IS NOT NULL AND s.session_id != t.session_id
        GROUP BY s.session_id, t.session_id`,
    )
    .all() as Array<{ spill_session: string; transcript_session: string; n: number }>;
  const best = new Map<string, { id: string; n: number }>();
  for (const p of pairs) {
    const b = best.get(p.spill_session);
    if (!b || p.n > b.n || (p.n === b.n && p.transcript_session < b.id)) best.set(p.spill_session, { id: p.transcript_session, n: p.n });
  }
  const current = core.q("SELECT id, joined_id FROM sessions WHERE joined_id IS NOT NULL OR kind = 'spillway'").all() as Array<{ id: string; joined_id: string | null }>;
  const set = core.q('UPDATE sessions SET joined_id = ? WHERE id = ?');
  for (const s of current) {
    const want = best.get(s.id)?.id ?? null;
    if (want !== s.joined_id) set.run(want, s.id);
  }
}
