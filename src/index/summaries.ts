/**
 * Summary runs in the index: the ones a sidecar lists (origin `meta`, re-read with it) and the ones
 * made later in the inspector (origin `db`), all searchable through `summary_fts`.
 */
import type { SummaryRun } from '../pipeline/types.js';
import { type IndexCore, IndexError } from './core.js';

/** Longest summary text kept in the summary full-text index per run. */
const MAX_SUMMARY_FTS_CHARS = 32 * 1024;

export class SummaryRuns {
  constructor(private readonly core: IndexCore) {}

  list(payloadId: string): SummaryRun[] {
    const rows = this.core.q('SELECT json FROM summary_runs WHERE payload_id = ? ORDER BY created_at, run_id').all(payloadId) as Array<{ json: string }>;
    const out: SummaryRun[] = [];
    for (const r of rows) {
      try {
        out.push(JSON.parse(r.json) as SummaryRun);
      } catch {
        /* skip a damaged row */
      }
    }
    return out;
  }

  /**
   * Index a summary run made after the scan (in the inspector). It is searchable at once. The
   * index is not the record: whoever made the run should also append it to the payload's sidecar
   * (Spillway sessions), which a later scan picks up under the same run id. Runs on read-only
   * sessions live only here (a rebuilt DB loses them).
   */
  add(payloadId: string, run: SummaryRun): void {
    const r = this.core.q('SELECT rowid, session_id FROM payloads WHERE id = ?').get(payloadId) as { rowid: number; session_id: string } | undefined;
    if (!r) throw new IndexError('NOT_FOUND', `no payload with id ${JSON.stringify(payloadId)}`);
    const q = (sql: string) => this.core.q(sql);
    this.core.db
      .transaction(() => {
        const exists = q('SELECT origin FROM summary_runs WHERE payload_id = ? AND run_id = ?').get(payloadId, run.id) as { origin: string } | undefined;
        q('INSERT OR REPLACE INTO summary_runs (payload_id, run_id, created_at, origin, summary, json) VALUES (?, ?, ?, ?, ?, ?)').run(
          payloadId,
          run.id,
          String(run.createdAt ?? new Date().toISOString()),
          exists?.origin ?? 'db',
          run.summary,
          JSON.stringify(run),
        );
        this.refreshFts(r.rowid, payloadId);
      })
      .immediate();
    this.core.emit({ event: 'onDidIndex', payload: { sessionIds: [r.session_id], added: 0, changed: 1, removed: 0 } });
  }

  /** A payload row was (re)written with these sidecar runs: replace its `meta` runs (inside the caller's transaction). */
  replaceMeta(rowid: number, payloadId: string, runs: SummaryRun[]): void {
    // Most payloads have no summary runs at all: skip the bookkeeping for them.
    if (runs.length === 0 && !this.core.q('SELECT 1 FROM summary_runs WHERE payload_id = ? LIMIT 1').get(payloadId)) return;
    this.drop(payloadId, 'meta');
    const ins = this.core.q("INSERT OR REPLACE INTO summary_runs (payload_id, run_id, created_at, origin, summary, json) VALUES (?, ?, ?, 'meta', ?, ?)");
    for (const run of runs) ins.run(payloadId, run.id, String(run.createdAt ?? ''), run.summary, JSON.stringify(run));
    this.refreshFts(rowid, payloadId);
  }

  drop(payloadId: string, which: 'meta' | 'all'): void {
    if (which === 'all') this.core.q('DELETE FROM summary_runs WHERE payload_id = ?').run(payloadId);
    else this.core.q("DELETE FROM summary_runs WHERE payload_id = ? AND origin = 'meta'").run(payloadId);
  }

  private refreshFts(rowid: number, payloadId: string): void {
    const runs = this.core.q('SELECT summary FROM summary_runs WHERE payload_id = ? ORDER BY created_at').all(payloadId) as Array<{ summary: string }>;
    // FTS5 ignores a rowid constraint bound as a float (how JS numbers bind): cast it.
    this.core.q('DELETE FROM summary_fts WHERE rowid = CAST(? AS INTEGER)').run(rowid);
    if (runs.length) {
      const text = runs.map((r) => r.summary.slice(0, MAX_SUMMARY_FTS_CHARS)).join('\n\n');
      this.core.q('INSERT INTO summary_fts (rowid, summary) VALUES (?, ?)').run(rowid, text);
    }
  }
}
