/**
 * Reading the index: sessions, pages of payloads (filtered, sorted, searched), one payload's
 * detail and where its content is, and totals. Every query is bounded (paged, capped); requests
 * come validated from the service, so only defaults are applied here.
 */
import { readBacksBy, readBacksOf } from './readback.js';
import { CLIENT_IDS, clientName } from '../agents/index.js';
import fs from 'node:fs';
import { DEFAULT_PROFILE, DEFAULT_STRATEGY, buildPreview } from '../pipeline/index.js';
import type { AssetRef, PayloadMeta, StrategyName } from '../pipeline/types.js';
import { type IndexCore, IndexError } from './core.js';
import type { FullText } from './fulltext.js';
import { readImportedText } from './importers.js';
import type { SourceLocation } from './record.js';
import type { IndexStats, LedgerProvenance, ListPayloadsRequest, ListPayloadsResponse, PayloadDetail, PayloadRow, PayloadSortField, SessionInfo } from './rows.js';
import { type LedgerDbRow, ledgerOfRow } from './ledger.js';
import { readSidecar } from './import-spillway.js';
import type { SummaryRuns } from './summaries.js';
import { countLines, ftsQuery, makePreview } from './text.js';
import { readWindow } from './window.js';
import { isS3Path } from './s3.js';

/** Largest page `listPayloads` returns (the contract's cap). */
export const MAX_PAGE_ROWS = 1_000;
export const DEFAULT_PAGE_ROWS = 100;
/** Chars of a payload handed to the guard's preview builder (it needs the structure, not the whole). */
const PREVIEW_SOURCE_CHARS = 256 * 1024;
/** Bytes of a payload file read for its preview. */
const PREVIEW_READ_BYTES = 64 * 1024;

export const STRATEGY_COLUMN: Record<StrategyName, string> = {
  chars4: 't_chars4',
  'craft-density': 't_craft_density',
  calibrated: 't_calibrated',
  o200k: 't_o200k',
  cl100k: 't_cl100k',
  claude: 't_claude',
};

/**
 * A payload's size in tokens for a strategy, as SQL. The default strategy's is the payload's `tokens`:
 * what the guard decides with, the calibrated estimate checked where the fit misprices (an exact count
 * or a corrected estimate). Exact strategies fall back to it for payloads never counted with them.
 */
export function tokensColumn(strategy: StrategyName): string {
  return strategy === DEFAULT_STRATEGY ? 'p.tokens' : `coalesce(p.${STRATEGY_COLUMN[strategy]}, p.tokens)`;
}

const SORT_COLUMN: Record<PayloadSortField, string> = {
  createdAt: 'p.created_at',
  tokens: 'p.tokens',
  entered: 'coalesce(p.l_entered, p.tokens)',
  full: 'coalesce(p.l_full, p.tokens)',
  bytes: 'p.bytes',
  tool: 'p.tool',
  assetCount: 'p.asset_count',
};

interface PayloadDbRow {
  rowid: number;
  id: string;
  session_id: string;
  tool: string;
  created_at: string;
  bytes: number;
  tokens: number;
  action: PayloadRow['action'];
  kind: PayloadRow['kind'];
  asset_count: number;
  input_excerpt: string | null;
  input_json: string | null;
  path: string;
  linked_path: string | null;
  meta_path: string | null;
  message: string | null;
  binary: number;
  lines: number | null;
  source_json: string | null;
  summary_count?: number;
  spill_id?: string | null;
  join_how?: 'path' | 'id' | 'inferred' | null;
  joined_to?: string | null;
  l_full?: number | null;
  l_entered?: number | null;
  l_entered_how?: LedgerProvenance | null;
}

// A joined transcript row counts its spill's summary runs too (the guard's summary is the spill's).
const ROW_COLUMNS =
  'p.rowid, p.id, p.session_id, p.root_id, p.tool, p.created_at, p.bytes, p.tokens, p.action, p.kind, p.asset_count, p.input_excerpt, p.spill_id, p.join_how, p.l_full, p.l_entered, p.l_entered_how, ' +
  '(SELECT count(*) FROM summary_runs s WHERE s.payload_id = p.id OR (p.spill_id IS NOT NULL AND s.payload_id = p.spill_id)) AS summary_count, ' +
  '(CASE WHEN p.covered = 1 THEN (SELECT t.id FROM payloads t WHERE t.spill_id = p.id LIMIT 1) END) AS joined_to';

function toRow(r: PayloadDbRow): PayloadRow {
  const row: PayloadRow = {
    id: r.id,
    sessionId: r.session_id,
    tool: r.tool,
    createdAt: r.created_at,
    bytes: r.bytes,
    tokens: r.tokens,
    action: r.action,
    kind: r.kind,
    assetCount: r.asset_count,
    summaryCount: r.summary_count ?? 0,
  };
  if (r.input_excerpt) row.inputExcerpt = r.input_excerpt;
  if (r.spill_id && r.join_how) row.join = r.join_how;
  if (r.joined_to) row.joinedTo = r.joined_to;
  if (r.l_entered !== null && r.l_entered !== undefined) {
    row.entered = r.l_entered;
    row.enteredHow = r.l_entered_how ?? 'estimated';
  }
  if (r.l_full !== null && r.l_full !== undefined) row.full = r.l_full;
  return row;
}

/** The guard's own preview (structure first, base64 masked); our simpler one if it fails. */
function safePreview(text: string, kind: PayloadRow['kind']): string {
  try {
    return buildPreview(text, kind);
  } catch {
    return makePreview(text);
  }
}

export type Filters = Pick<ListPayloadsRequest, 'sessionId' | 'rootId' | 'tool' | 'action' | 'kind' | 'minTokens' | 'maxTokens'>;

/** A filter as SQL over `payloads p`. */
export function filterSql(req: Filters): { sql: string; args: unknown[] } {
  const w: string[] = [];
  const args: unknown[] = [];
  const eq: Array<[keyof Filters, string]> = [
    ['sessionId', 'p.session_id'],
    ['rootId', 'p.root_id'],
    ['tool', 'p.tool'],
    ['action', 'p.action'],
    ['kind', 'p.kind'],
  ];
  for (const [k, col] of eq) if (req[k] !== undefined) (w.push(`${col} = ?`), args.push(req[k]));
  // Over roots, each tool call once: a spill joined with a transcript's call is that call's row.
  // A session's own listing shows all its rows (a spill session still opens on its own).
  if (req.sessionId === undefined) w.push('p.covered = 0');
  if (req.minTokens !== undefined) (w.push('p.tokens >= ?'), args.push(req.minTokens));
  if (req.maxTokens !== undefined) (w.push('p.tokens <= ?'), args.push(req.maxTokens));
  return { sql: w.length ? w.join(' AND ') : '1', args };
}

/** Where a payload's full content is: a file to window through, or text re-read from a transcript. */
export type PayloadContent = { type: 'file'; path: string; bytes: number } | { type: 'text'; text: string; bytes: number };

interface SessionDbRow {
  id: string;
  root_id: string;
  name: string;
  path: string;
  kind: SessionInfo['kind'];
  read_only: number;
  project: string | null;
  title: string | null;
  client: string | null;
  parent_id: string | null;
  joined_id: string | null;
  spill_client: string | null;
  spill_cwd: string | null;
  j_project: string | null;
  j_title: string | null;
  j_client: string | null;
  joined: number;
  n: number;
  assets: number;
  bytes: number;
  tokens: number;
  entered: number | null;
  full: number | null;
  first_at: string | null;
  last_at: string | null;
}

function toSession(r: SessionDbRow): SessionInfo {
  const s: SessionInfo = {
    id: r.id,
    rootId: r.root_id,
    name: r.name,
    path: r.path,
    kind: r.kind,
    readOnly: r.read_only === 1,
    payloadCount: r.n,
    assetCount: r.assets,
    totalBytes: r.bytes,
    totalTokens: r.tokens,
  };
  if (r.entered !== null) s.enteredTokens = r.entered;
  if (r.full !== null) s.fullTokens = r.full;
  if (r.first_at) s.firstAt = r.first_at;
  if (r.last_at) s.lastAt = r.last_at;
  if (r.project) s.project = r.project;
  if (r.title) s.title = r.title;
  if (r.client) s.client = r.client;
  if (r.parent_id) s.parentSessionId = r.parent_id;
  if (r.kind === 'spillway') nameSpillSession(s, r);
  if (r.joined) s.joinedCount = r.joined;
  return s;
}

/** A proxy session's folder: `<UTC start time>_<server name>` (src/integrations/mcp/session.ts). */
const PROXY_SESSION_RE = /^\d{8}T\d{9}Z_(.+)$/;

/**
 * A session the hook or the proxy made, named the way people know it: by the client session its
 * spills were joined with (its project, first prompt, client), else by what the sidecars recorded
 * (client, working directory). The folder name stays its `name`.
 */
function nameSpillSession(s: SessionInfo, r: SessionDbRow): void {
  if (r.joined_id) s.joinedSessionId = r.joined_id;
  const proxy = PROXY_SESSION_RE.exec(r.name);
  const via = proxy ? `Spillway MCP proxy (${proxy[1]})` : CLIENT_IDS.some((id) => r.name.startsWith(`${id}_`)) ? 'Spillway hook' : undefined;
  const client = r.j_client ?? (r.spill_client ? clientName(r.spill_client) : undefined);
  if (client || via) s.client = [client, via].filter(Boolean).join(' · ');
  s.project ??= r.j_project ?? r.spill_cwd ?? undefined;
  s.title ??= r.j_title ?? undefined;
}

/**
 * A payload's one token figure: the row's `tokens`, which for a spill is the number the guard
 * decided with and the message stated (its sidecar's `estimate`), named by strategy and profile,
 * with why a number measured on the saved file (the Estimates tab, a summary) may differ.
 */
export function figureOf(r: Pick<PayloadDbRow, 'tokens'>, meta: PayloadMeta | null): PayloadDetail['figure'] {
  const e = meta && typeof meta.estimate === 'object' && meta.estimate !== null ? meta.estimate : undefined;
  if (!e || e.tokens !== r.tokens || typeof e.strategy !== 'string') {
    return { tokens: r.tokens, strategy: DEFAULT_STRATEGY, profile: DEFAULT_PROFILE, exact: false, source: 'index', note: 'counted by the index on the text it has of this result (a checked calibrated estimate)' };
  }
  const why: string[] = [];
  if (e.exact) why.push('an exact count');
  if (typeof e.correction === 'number' && e.correction !== 1) why.push(`with the ${e.profile} correction ×${e.correction}`);
  if (meta?.assets?.length) why.push('measured before its assets were cut out of the saved file');
  // A parsed value: the MCP proxy's CallToolResult, decided on what the client shows of it.
  else if (meta?.origin === 'json-value') why.push('measured on what the client shows the model of this result (an MCP client shows its structuredContent), not on the whole saved envelope');
  return {
    tokens: e.tokens,
    strategy: e.strategy,
    profile: e.profile,
    exact: e.exact === true,
    source: 'guard',
    ...(why.length ? { note: why.join('; ') } : {}),
  };
}

export class Queries {
  constructor(
    private readonly core: IndexCore,
    private readonly runs: SummaryRuns,
    private readonly fullText: FullText,
  ) {}

  /** Sessions, with payload totals (default strategy's tokens), newest activity first. */
  listSessions(req: { rootId?: string; id?: string } = {}): SessionInfo[] {
    const where = req.id !== undefined ? 'WHERE s.id = ?' : req.rootId !== undefined ? 'WHERE s.root_id = ?' : '';
    const rows = this.core
      .q(
        `SELECT s.id, s.root_id, s.name, s.path, s.kind, s.read_only, s.project, s.title, s.client, s.parent_id,
                s.joined_id, s.spill_client, s.spill_cwd, j.project AS j_project, j.title AS j_title, j.client AS j_client,
                count(p.rowid) AS n, coalesce(sum(p.asset_count), 0) AS assets, coalesce(sum(p.bytes), 0) AS bytes,
                coalesce(sum(p.tokens), 0) AS tokens, min(p.created_at) AS first_at, max(p.created_at) AS last_at,
                sum(CASE WHEN p.covered = 0 THEN p.l_entered END) AS entered, sum(CASE WHEN p.covered = 0 THEN p.l_full END) AS full,
                coalesce(sum(p.covered), 0) AS joined
           FROM sessions s LEFT JOIN payloads p ON p.session_id = s.id LEFT JOIN sessions j ON j.id = s.joined_id ${where}
          GROUP BY s.id ORDER BY last_at DESC NULLS LAST, s.name`,
      )
      .all(...(req.id !== undefined ? [req.id] : req.rootId !== undefined ? [req.rootId] : [])) as SessionDbRow[];
    return rows.map(toSession);
  }

  /**
   * One page of payloads: filters, a sort (default newest first, or best match for a query),
   * paging (at most MAX_PAGE_ROWS), and an optional full-text query over payload text (the
   * bounded head + tail), tool, input and summaries. Query words are ANDed; `word*` is a prefix.
   * Snippets are plain text. While full text is still filling in, a query says how many of the
   * payloads it covers are not searchable yet (`partial`).
   */
  listPayloads(req: ListPayloadsRequest = {}): ListPayloadsResponse {
    const limit = Math.min(req.limit ?? DEFAULT_PAGE_ROWS, MAX_PAGE_ROWS);
    const offset = req.offset ?? 0;
    const f = filterSql(req);
    const dir = req.sort?.dir === 'asc' ? 'ASC' : 'DESC';
    const sortCol = req.sort ? SORT_COLUMN[req.sort.field] : undefined;
    if (req.query === undefined || !req.query.trim()) {
      const order = `${sortCol ?? 'p.created_at'} ${sortCol ? dir : 'DESC'}, p.rowid ${sortCol ? dir : 'DESC'}`;
      const total = (this.core.q(`SELECT count(*) AS n FROM payloads p WHERE ${f.sql}`).get(...f.args) as { n: number }).n;
      const rows = this.core.q(`SELECT ${ROW_COLUMNS} FROM payloads p WHERE ${f.sql} ORDER BY ${order} LIMIT ? OFFSET ?`).all(...f.args, limit, offset) as PayloadDbRow[];
      return { rows: rows.map(toRow), total };
    }
    const q = ftsQuery(req.query);
    const res: ListPayloadsResponse = q ? this.search(q, f, sortCol ? `${sortCol} ${dir}, p.rowid ${dir}` : 'h.rank ASC, p.rowid DESC', limit, offset) : { rows: [], total: 0 };
    const unsearched = this.fullText.unsearched(f.sql, f.args);
    if (unsearched) res.partial = { unsearched };
    return res;
  }

  private search(q: string, f: { sql: string; args: unknown[] }, order: string, limit: number, offset: number): ListPayloadsResponse {
    // A joined row's text is its spill's: the tool's result (and the spill's summaries) are indexed
    // on the spill's row, and a hit there is a hit on the transcript's row that joined it. A path
    // join reads the spill's file for its own row too (GROUP BY keeps one hit per row). The scan
    // of payloads for rows with a spill_id is one pass per search, no lookup per hit.
    const hits = `(WITH m AS MATERIALIZED (
          SELECT rowid, bm25(payload_fts) AS rank FROM payload_fts WHERE payload_fts MATCH ?
          UNION ALL
          SELECT rowid, bm25(summary_fts) AS rank FROM summary_fts WHERE summary_fts MATCH ?)
        SELECT rowid, min(rank) AS rank FROM (
          SELECT rowid, rank FROM m
          UNION ALL
          SELECT t.rowid, m.rank FROM payloads t JOIN payloads s ON s.id = t.spill_id JOIN m ON m.rowid = s.rowid WHERE t.spill_id IS NOT NULL)
        GROUP BY rowid) h`;
    let total: number;
    let rows: PayloadDbRow[];
    try {
      total = (this.core.q(`SELECT count(*) AS n FROM ${hits} JOIN payloads p ON p.rowid = h.rowid WHERE ${f.sql}`).get(q, q, ...f.args) as { n: number }).n;
      rows = this.core
        .q(`SELECT ${ROW_COLUMNS} FROM ${hits} JOIN payloads p ON p.rowid = h.rowid WHERE ${f.sql} ORDER BY ${order} LIMIT ? OFFSET ?`)
        .all(q, q, ...f.args, limit, offset) as PayloadDbRow[];
    } catch (err) {
      throw new IndexError('BAD_REQUEST', `bad search query: ${(err as Error).message}`);
    }
    const snipBody = this.core.q("SELECT snippet(payload_fts, -1, '', '', '…', 16) AS s FROM payload_fts WHERE payload_fts MATCH ? AND rowid = CAST(? AS INTEGER)");
    const snipSum = this.core.q("SELECT snippet(summary_fts, 0, '', '', '…', 16) AS s FROM summary_fts WHERE summary_fts MATCH ? AND rowid = CAST(? AS INTEGER)");
    const spillRowid = this.core.q('SELECT rowid FROM payloads WHERE id = ?');
    const snippetOf = (rowid: number): string | undefined =>
      (snipBody.get(q, rowid) as { s: string } | undefined)?.s || (snipSum.get(q, rowid) as { s: string } | undefined)?.s || undefined;
    return {
      total,
      rows: rows.map((r) => {
        const row = toRow(r);
        let s = snippetOf(r.rowid);
        if (!s && r.spill_id) {
          const sp = spillRowid.get(r.spill_id) as { rowid: number } | undefined;
          if (sp) s = snippetOf(sp.rowid);
        }
        if (s) row.snippet = s.replace(/\s+/g, ' ').trim();
        return row;
      }),
    };
  }

  private payloadRow(id: string): PayloadDbRow {
    const r = this.core.q(`SELECT p.*, ${ROW_COLUMNS} FROM payloads p WHERE p.id = ?`).get(id) as PayloadDbRow | undefined;
    if (!r) throw new IndexError('NOT_FOUND', `no payload with id ${JSON.stringify(id)}`);
    return r;
  }

  /** The session a payload belongs to (its folder, kind, read-only flag). */
  sessionOf(payloadId: string): SessionInfo {
    const s = this.listSessions({ id: this.payloadRow(payloadId).session_id })[0];
    if (!s) throw new IndexError('NOT_FOUND', `session of payload ${payloadId} is gone`);
    return s;
  }

  /**
   * One payload: its row, the sidecar as written (re-read from disk; null for imports), paths,
   * estimates, assets (paths resolved inside the session), summary runs (sidecar + ones added
   * later), the message, a safe preview, size, line count (counted once, then cached) and, for
   * imports, where in the transcript it came from.
   */
  async getPayload(id: string): Promise<PayloadDetail> {
    const r = this.payloadRow(id);
    // A transcript's tool call joined with its spill: the tool's result, sidecar, runs and assets are the spill's.
    const sp = this.spillRow(r);
    const metaPath = r.meta_path ?? sp?.meta_path ?? null;
    const meta: PayloadMeta | null = metaPath ? (await readSidecar(this.core.source, metaPath)).meta : null;
    const shown = await this.shown(sp ?? r);
    const runs = sp ? [...this.runs.list(sp.id), ...this.runs.list(id)].sort((a, b) => a.createdAt.localeCompare(b.createdAt)) : this.runs.list(id);
    const ownAssets = this.assetsOf(r.rowid);
    const detail: PayloadDetail = {
      row: toRow(r),
      meta,
      path: sp && !r.meta_path ? sp.path : r.path,
      estimates: this.estimatesOf(r),
      assets: ownAssets.length || !sp ? ownAssets : this.assetsOf(sp.rowid),
      summaryRuns: runs,
      message: r.message ?? (typeof meta?.message === 'string' ? meta.message : ''),
      figure: figureOf(r, meta),
      ...shown,
      ...(ledgerOfRow(r as unknown as LedgerDbRow) ? { ledger: ledgerOfRow(r as unknown as LedgerDbRow)! } : {}),
      readOnly: (this.core.q('SELECT read_only AS ro FROM sessions WHERE id = ?').get(r.session_id) as { ro: number } | undefined)?.ro === 1,
    };
    const linked = r.linked_path ?? sp?.linked_path;
    if (linked) detail.linkedPath = linked;
    if (sp && r.join_how) detail.spill = { payloadId: sp.id, sessionId: sp.session_id, how: r.join_how };
    // A read names the spill's file; the transcript's row that joined it shows the same call.
    const readBacks = readBacksOf(this.core, sp ? [r.id, sp.id] : [r.id]);
    if (readBacks.length) detail.readBacks = readBacks;
    const reads = readBacksBy(this.core, r.id);
    if (reads.length) detail.reads = reads;
    if (r.joined_to) {
      const t = this.core.q('SELECT id, session_id FROM payloads WHERE id = ?').get(r.joined_to) as { id: string; session_id: string } | undefined;
      if (t) detail.calledIn = { payloadId: t.id, sessionId: t.session_id };
    }
    const source = r.source_json ? (JSON.parse(r.source_json) as SourceLocation) : undefined;
    if (source) {
      let toolInput: unknown;
      try {
        toolInput = r.input_json ? JSON.parse(r.input_json) : undefined;
      } catch {
        toolInput = undefined;
      }
      detail.source = { transcript: source.transcript, line: source.line, toolUseId: source.toolUseId, toolInput, ...(source.spilledTo ? { spilledTo: source.spilledTo } : {}) };
    }
    return detail;
  }

  /** The spill a transcript's row is joined with, if it is still indexed. */
  private spillRow(r: PayloadDbRow): PayloadDbRow | undefined {
    if (!r.spill_id) return undefined;
    return this.core.q(`SELECT p.*, ${ROW_COLUMNS} FROM payloads p WHERE p.id = ?`).get(r.spill_id) as PayloadDbRow | undefined;
  }

  private estimatesOf(r: PayloadDbRow): PayloadDetail['estimates'] {
    const out: PayloadDetail['estimates'] = {};
    for (const [s, col] of Object.entries(STRATEGY_COLUMN)) {
      const v = (r as unknown as Record<string, number | null>)[col];
      if (typeof v === 'number') out[s as StrategyName] = v;
    }
    return out;
  }

  private assetsOf(rowid: number): AssetRef[] {
    const rows = this.core.q('SELECT sha256, mime, bytes, path, rel_path, json_path, source, sniffed FROM assets WHERE payload_rowid = ?').all(rowid) as Array<{
      sha256: string;
      mime: string;
      bytes: number;
      path: string;
      rel_path: string;
      json_path: string | null;
      source: string | null;
      sniffed: number;
    }>;
    return rows.map((a) => ({
      path: a.path,
      relPath: a.rel_path,
      mimeType: a.mime,
      bytes: a.bytes,
      sha256: a.sha256,
      jsonPath: a.json_path ?? '',
      source: (a.source ?? 'binary') as AssetRef['source'],
      sniffed: a.sniffed === 1,
    }));
  }

  /** Preview, size, line count and binary flag, from the content (a file's first 64 KB, or the text). */
  private async shown(r: PayloadDbRow): Promise<Pick<PayloadDetail, 'preview' | 'totalBytes' | 'totalLines' | 'binary'>> {
    const out = { preview: '', totalBytes: 0, totalLines: r.lines ?? 0, binary: r.binary === 1 };
    const content = await this.contentOf(r).catch(() => null);
    if (content?.type === 'text') return { ...out, preview: safePreview(content.text.slice(0, PREVIEW_SOURCE_CHARS), r.kind), totalBytes: content.bytes };
    if (!content) return out;
    try {
      const win = await readWindow(this.core.source, content.path, { headBytes: PREVIEW_READ_BYTES, tailBytes: 0 });
      out.binary = win.binary;
      out.preview = win.binary ? '' : safePreview(win.whole ?? win.head, r.kind);
      out.totalBytes = win.size;
      if (r.lines === null) {
        out.totalLines = win.binary ? 0 : await countLines(content.path);
        // Only a cache: while the full-text writer thread holds the write lock, skip it.
        this.core.tryWrite(() => this.core.q('UPDATE payloads SET lines = ? WHERE rowid = ?').run(out.totalLines, r.rowid));
      }
    } catch {
      /* file vanished since the scan: the watcher will drop the row */
    }
    return out;
  }

  /**
   * Where to read a payload's full content. Spillway payloads and results kept in a file (a
   * Claude Code spill file, a linked Spillway payload) are files (window through them); results
   * inside a transcript line are re-read and returned as text (bounded by the line's size).
   */
  async payloadContent(id: string): Promise<PayloadContent> {
    const r = this.payloadRow(id);
    return this.contentOf(this.spillRow(r) ?? r);
  }

  private async contentOf(r: PayloadDbRow): Promise<PayloadContent> {
    const source = r.source_json ? (JSON.parse(r.source_json) as SourceLocation) : undefined;
    if (!source || source.persistedPath) {
      const p = source?.persistedPath ?? r.path;
      // Followed if it became a symlink: the caller confines the path it is handed (and refuses that one).
      const st = isS3Path(p) ? await Promise.resolve(this.core.source.stat(p)).catch(() => null) : await fs.promises.stat(p).catch(() => null);
      if (!st) throw new IndexError('NOT_FOUND', `payload file is gone: ${p}`);
      return { type: 'file', path: p, bytes: st.size };
    }
    const kind = (this.core.q('SELECT kind FROM sessions WHERE id = ?').get(r.session_id) as { kind: string } | undefined)?.kind ?? '';
    const text = await readImportedText(this.core.source, source, kind);
    if (text === null) throw new IndexError('NOT_FOUND', `payload no longer found in ${source.transcript}; re-scan`);
    return { type: 'text', text, bytes: Buffer.byteLength(text) };
  }

  /** Totals over some roots (all payloads of them, searchable or not yet). */
  totals(rootIds: string[]): Omit<IndexStats, 'seconds'> {
    if (!rootIds.length) return { sessions: 0, payloads: 0, assets: 0, bytes: 0 };
    const marks = rootIds.map(() => '?').join(',');
    const s = this.core.q(`SELECT count(*) AS n FROM sessions WHERE root_id IN (${marks})`).get(...rootIds) as { n: number };
    // Each tool call once: a spill joined with a transcript's call is counted as that call.
    const p = this.core.q(`SELECT count(*) AS n, coalesce(sum(bytes), 0) AS b FROM payloads WHERE root_id IN (${marks}) AND covered = 0`).get(...rootIds) as { n: number; b: number };
    const a = this.core
      .q(`SELECT count(*) AS n FROM (SELECT DISTINCT p.session_id, a.sha256 FROM assets a JOIN payloads p ON p.rowid = a.payload_rowid WHERE p.root_id IN (${marks}))`)
      .get(...rootIds) as { n: number };
    return { sessions: s.n, payloads: p.n, assets: a.n, bytes: p.b };
  }
}
