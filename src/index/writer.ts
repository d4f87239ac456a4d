/**
 * The listing phase's writes on the main connection: sessions, sources, payload rows and their
 * assets, in one transaction the scan owns (committed every SCAN_COMMIT_MS so other processes
 * see progress, and at the end). A payload row is written with `fts_pending` set to a token
 * unique to that insert; the full-text phase (fulltext.ts) fills in its search row later and
 * clears it.
 */
import type { AssetRef } from '../pipeline/types.js';
import type { IndexCore } from './core.js';
import type { SessionRef, Unit } from './discover.js';
import type { PayloadRecord, SessionFacts, UnitResult } from './record.js';
import type { SummaryRuns } from './summaries.js';
import { inputExcerpt, inputJson, stableId } from './text.js';
import { inputHashOf } from './join.js';
import { ledgerOf } from './ledger.js';
import type { TurnsResult } from './turns.js';

/** Commit a scan's writes at least this often (one commit per time slice costs more than the writes). */
export const SCAN_COMMIT_MS = 1_000;

const INSERT_SOURCE_SQL = 'INSERT INTO sources (id, root_id, session_id, key, fingerprint, hash, kind) VALUES (?, ?, ?, ?, ?, ?, ?)';
const INSERT_PAYLOAD_SQL = `INSERT INTO payloads (id, source_id, session_id, root_id, tool, created_at, bytes, tokens, action, kind, asset_count,
    input_excerpt, input_json, intent, t_chars4, t_craft_density, t_calibrated, t_o200k, t_cl100k, t_claude,
    path, linked_path, meta_path, message, binary, lines, source_json, b64_runs, b64_chars, b64_tokens, fts_pending,
    call_id, call_client, input_hash, spill_id, join_how,
    l_full, l_client, l_client_rule, l_entered, l_entered_how, l_kept_assets, l_kept_bytes, l_kept_tokens, l_images, rule_json)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const INSERT_ASSET_SQL =
  'INSERT INTO assets (payload_rowid, sha256, mime, bytes, path, rel_path, json_path, source, sniffed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)';
const INSERT_TURN_SQL = `INSERT INTO turns (session_id, source_id, seq, at, model, context, input, cache_write, cache_read, output, window, kind, parts_json, tools_json, line)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const INSERT_COMPACTION_SQL = `INSERT INTO compactions (session_id, source_id, n, seq, at, kind, trigger, pre_tokens, post_tokens, tokens_saved, tool_ids_json, line)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const UPSERT_SESSION_SQL = `INSERT INTO sessions (id, root_id, path, name, kind, read_only, parent_id) VALUES (?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT(id) DO UPDATE SET root_id = excluded.root_id, path = excluded.path, name = excluded.name, kind = excluded.kind,
    read_only = excluded.read_only, parent_id = excluded.parent_id`;

/** The client and model a unit's results were given to: the ledger prices them by their rules. */
export interface LedgerContext {
  client?: string;
  model?: string;
}

/** A payload row's values, in INSERT_PAYLOAD_SQL's order. */
function payloadValues(rootId: string, sessionId: string, sourceId: number, rec: PayloadRecord, ftsToken: number, lc: LedgerContext): unknown[] {
  const e = rec.estimates;
  // A spill's sidecar names its client; a transcript's results go to the transcript's.
  const l = ledgerOf(rec, rec.callClient ?? lc.client, lc.model);
  return [
    rec.id,
    sourceId,
    sessionId,
    rootId,
    rec.tool,
    rec.createdAt,
    rec.bytes,
    rec.tokens,
    rec.action,
    rec.kind,
    rec.assets.length,
    inputExcerpt(rec.input) ?? null,
    // Only imports read the input back from here; a Spillway payload's sidecar keeps it whole.
    rec.source ? inputJson(rec.input) : null,
    rec.intent ?? null,
    e.chars4 ?? null,
    e['craft-density'] ?? null,
    e.calibrated ?? null,
    e.o200k ?? null,
    e.cl100k ?? null,
    e.claude ?? null,
    rec.path,
    rec.linkedPath ?? null,
    rec.metaPath ?? null,
    rec.message ?? null,
    rec.binary ? 1 : 0,
    rec.lines ?? null,
    rec.source ? JSON.stringify(rec.source) : null,
    rec.b64.runs,
    rec.b64.chars,
    rec.b64.tokens,
    ftsToken,
    rec.callId ?? null,
    rec.callClient ?? null,
    // Only a join without an id needs it: a transcript's row, or a spill whose client sent no id.
    rec.source || rec.callId === undefined ? inputHashOf(rec.input) : null,
    rec.spillId ?? null,
    rec.spillId ? 'path' : null,
    l.full,
    l.client,
    l.clientRule,
    l.entered,
    l.enteredHow,
    l.keptAssets,
    l.keptBytes,
    l.keptTokens,
    l.images,
    // A spill's rule and settings (spill-rule.ts), checked when its sidecar was read.
    rec.ruleJson ?? null,
  ];
}

function assetValues(rowid: number, a: AssetRef): unknown[] {
  return [rowid, a.sha256, a.mimeType, a.bytes, a.path, a.relPath, a.jsonPath, a.source, a.sniffed ? 1 : 0];
}

export interface Changes {
  added: number;
  changed: number;
  removed: number;
}

const NO_IDS: ReadonlySet<string> = new Set();

export const sessionIdOf = (sessionPath: string) => stableId('s', sessionPath);

export class RowWriter {
  private lastCommit = performance.now();
  /** Next `fts_pending` token: unique per payload insert, so a stale full-text row can never land on a new one. */
  private ftsToken: number;

  constructor(
    private readonly core: IndexCore,
    private readonly runs: SummaryRuns,
    /** Told before every payload insert (the full-text phase then has work). */
    private readonly onPending: () => void,
  ) {
    this.ftsToken = (core.q('SELECT coalesce(max(fts_pending), 0) + 1 AS n FROM payloads WHERE fts_pending > 0').get() as { n: number }).n;
  }

  /** IMMEDIATE: take the write lock now (waiting for another writer) instead of failing when a read turns into a write. */
  begin(): void {
    if (!this.core.db.inTransaction) this.core.db.exec('BEGIN IMMEDIATE');
  }

  commit(): void {
    if (this.core.db.inTransaction) this.core.db.exec('COMMIT');
    this.lastCommit = performance.now();
  }

  commitIfDue(): void {
    if (performance.now() - this.lastCommit >= SCAN_COMMIT_MS) this.commit();
  }

  upsertSession(rootId: string, s: SessionRef): string {
    const id = sessionIdOf(s.path);
    const parent = s.parentPath ? sessionIdOf(s.parentPath) : null;
    this.core.q(UPSERT_SESSION_SQL).run(id, rootId, s.path, s.name, s.kind, s.readOnly ? 1 : 0, parent);
    return id;
  }

  /** What a transcript told about its session (kept as is when it told nothing new). */
  noteSession(sessionId: string, f: SessionFacts | undefined): void {
    if (!f || (f.project === undefined && f.title === undefined && f.client === undefined)) return;
    this.core
      .q('UPDATE sessions SET project = coalesce(?, project), title = coalesce(?, title), client = coalesce(?, client) WHERE id = ?')
      .run(f.project ?? null, f.title ?? null, f.client ?? null, sessionId);
  }

  /** What a spill's sidecar says of its client session (the latest spill's wins). */
  noteSpill(sessionId: string, f: UnitResult['spill']): void {
    if (!f || (f.client === undefined && f.cwd === undefined)) return;
    this.core.q('UPDATE sessions SET spill_client = coalesce(?, spill_client), spill_cwd = coalesce(?, spill_cwd) WHERE id = ?').run(f.client ?? null, f.cwd ?? null, sessionId);
  }

  /** A re-read unit whose content hash did not change: remember its new fingerprint only. */
  touch(sourceId: number, fp: string): void {
    this.core.q('UPDATE sources SET fingerprint = ? WHERE id = ?').run(fp, sourceId);
  }

  /**
   * Replace one unit's rows (inside the open transaction). `fresh`: the index had no rows at all
   * when the scan began (a first index, a rebuild), so no id can clash: two lookups per payload
   * saved.
   */
  replaceSource(rootId: string, sessionId: string, unit: Unit, fp: string, result: UnitResult, existing: number | undefined, fresh = false): Changes {
    let before: ReadonlySet<string> = NO_IDS;
    let sourceId: number;
    if (existing !== undefined) {
      before = this.clearSource(existing);
      this.core.q('UPDATE sources SET fingerprint = ?, hash = ?, session_id = ?, kind = ?, root_id = ? WHERE id = ?').run(fp, result.hash, sessionId, unit.kind, rootId, existing);
      sourceId = existing;
    } else {
      // A leftover row under the same key (from a root since replaced) is dropped first.
      if (!fresh) this.core.q('DELETE FROM sources WHERE key = ?').run(unit.key);
      sourceId = Number(this.core.q(INSERT_SOURCE_SQL).run(null, rootId, sessionId, unit.key, fp, result.hash, unit.kind).lastInsertRowid);
    }
    const after = new Set<string>();
    let added = 0;
    let changed = 0;
    const lc: LedgerContext = { client: unit.kind === 'spillway' ? undefined : unit.kind, model: result.turns?.turns.find((t) => t.model)?.model };
    for (const rec of result.payloads) {
      if (after.has(rec.id)) continue;
      // Same id under another source (a file moved between two roots' views): the newest wins.
      if (!fresh) this.core.q('DELETE FROM payloads WHERE id = ?').run(rec.id);
      this.insertPayload(rootId, sessionId, sourceId, rec, fresh, lc);
      after.add(rec.id);
      if (before.has(rec.id)) changed++;
      else added++;
    }
    if (result.turns) this.insertTurns(sessionId, sourceId, result.turns);
    let removed = 0;
    for (const id of before) {
      if (after.has(id)) continue;
      this.runs.drop(id, 'all');
      removed++;
    }
    return { added, changed, removed };
  }

  /** A known unit's payload rows go (its summary runs stay until the rewrite says which ids are gone); returns their ids. */
  private clearSource(sourceId: number): Set<string> {
    const ids = new Set<string>();
    for (const r of this.core.q('SELECT id FROM payloads WHERE source_id = ?').all(sourceId) as Array<{ id: string }>) ids.add(r.id);
    this.core.q('DELETE FROM payloads WHERE source_id = ?').run(sourceId);
    this.clearTurns(sourceId);
    return ids;
  }

  private clearTurns(sourceId: number): void {
    this.core.q('DELETE FROM turns WHERE source_id = ?').run(sourceId);
    this.core.q('DELETE FROM compactions WHERE source_id = ?').run(sourceId);
    this.core.q('DELETE FROM turn_sources WHERE source_id = ?').run(sourceId);
  }

  private insertTurns(sessionId: string, sourceId: number, r: TurnsResult): void {
    const ins = this.core.q(INSERT_TURN_SQL);
    for (const t of r.turns) {
      ins.run(sessionId, sourceId, t.seq, t.at, t.model ?? null, t.context, t.input, t.cacheWrite, t.cacheRead, t.output, t.window ?? null, t.kind, JSON.stringify(t.parts), JSON.stringify(t.tools), t.line);
    }
    const insC = this.core.q(INSERT_COMPACTION_SQL);
    r.compactions.forEach((c, n) => {
      insC.run(sessionId, sourceId, n, c.seq, c.at, c.kind, c.trigger ?? null, c.preTokens ?? null, c.postTokens ?? null, c.tokensSaved ?? null, JSON.stringify(c.toolIds), c.line);
    });
    this.core
      .q('INSERT OR REPLACE INTO turn_sources (source_id, session_id, baseline_tokens, notes_json) VALUES (?, ?, ?, ?)')
      .run(sourceId, sessionId, r.baselineTokens ?? null, JSON.stringify(r.notes));
  }

  private insertPayload(rootId: string, sessionId: string, sourceId: number, rec: PayloadRecord, fresh: boolean, lc: LedgerContext): void {
    this.onPending();
    const values = payloadValues(rootId, sessionId, sourceId, rec, this.ftsToken++, lc);
    let rowid: number;
    // Values spread as arguments: better-sqlite3 reads an array argument element by element through the slow API.
    try {
      rowid = Number(this.core.q(INSERT_PAYLOAD_SQL).run(...values).lastInsertRowid);
    } catch (err) {
      // Skipping the clash lookup on a fresh index is a bet; a lost one costs a retry, never the scan.
      if (!fresh || (err as { code?: string }).code !== 'SQLITE_CONSTRAINT_UNIQUE') throw err;
      this.core.q('DELETE FROM payloads WHERE id = ?').run(rec.id);
      rowid = Number(this.core.q(INSERT_PAYLOAD_SQL).run(...values).lastInsertRowid);
    }
    const insAsset = this.core.q(INSERT_ASSET_SQL);
    for (const a of rec.assets) insAsset.run(...assetValues(rowid, a));
    if (!fresh || rec.summaryRuns.length) this.runs.replaceMeta(rowid, rec.id, rec.summaryRuns);
  }

  /** A unit that is gone: its payloads, their summary runs and its source. Returns how many payloads went. */
  dropSource(sourceId: number): number {
    const ids = this.core.q('SELECT id FROM payloads WHERE source_id = ?').all(sourceId) as Array<{ id: string }>;
    for (const { id } of ids) this.runs.drop(id, 'all');
    this.core.q('DELETE FROM payloads WHERE source_id = ?').run(sourceId);
    this.clearTurns(sourceId);
    this.core.q('DELETE FROM sources WHERE id = ?').run(sourceId);
    return ids.length;
  }

  dropSession(id: string): void {
    this.core.q('DELETE FROM sessions WHERE id = ?').run(id);
  }
}
