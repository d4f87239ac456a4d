import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sessionPaths } from '../pipeline/layout.js';
import { LineScanner, makeMatcher, type MatchOptions } from './match.js';
import { asList, parseAggregate, parseCondition, parseSort, QueryError, type Condition, type HandleQuery } from './query.js';
import { shape, type Shaped } from './tabular.js';

/**
 * Layer 3: reference handles. A stored result gets a handle; drill-down queries (filter,
 * project, sort, group-by, distinct, page, grep) run against it in SQLite, in
 * `<session>/handles.sqlite`, so handles survive restarts. Arrays of objects become rows (one
 * column per top-level field, plus the row's exact JSON); text becomes numbered lines.
 * Every result is bounded and says when it was cut.
 */

export const HANDLES_DB_FILE = 'handles.sqlite';
/** How long a handle lives unless put() says otherwise. */
export const HANDLE_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** Top-level fields that get their own column; further fields stay queryable through the row JSON only. */
export const MAX_HANDLE_COLUMNS = 200;
/** Rows a query returns by default / at most. */
export const DEFAULT_QUERY_LIMIT = 50;
export const MAX_QUERY_LIMIT = 1_000;
/** JSON chars a query result may hold; past it the rows are cut and `truncated` is set. */
export const MAX_QUERY_RESULT_CHARS = 64 * 1024;
/** Grep matches by default / at most, and context lines at most. */
export const DEFAULT_GREP_MATCHES = 50;
export const MAX_GREP_MATCHES = 500;
export const MAX_GREP_CONTEXT_LINES = 20;
/** Chars of one line returned by grep (the match stays in view). */
export const MAX_GREP_LINE_CHARS = 1_000;
/** Rows in a receipt sample. */
export const SAMPLE_ROWS = 3;
/** Handles with at least this many rows get indexes on the columns queries use. */
const INDEX_MIN_ROWS = 50_000;
/** Rows per multi-row INSERT when storing. */
const INSERT_BATCH_ROWS = 100;
/** Rows read per regex pass. */
const GREP_PAGE_ROWS = 5_000;
/** SQLite busy wait when another process (CLI, proxy) holds the lock. */
const BUSY_TIMEOUT_MS = 5_000;

const ID_RE = /^h_[a-z0-9]{12}$/;

export class HandleError extends Error {
  constructor(
    message: string,
    readonly code: 'NOT_FOUND' | 'EXPIRED' | 'BAD_QUERY' | 'BAD_INPUT',
  ) {
    super(message);
    this.name = 'HandleError';
  }
}

export interface PutOptions {
  tool?: string;
  ttlMs?: number;
  /** Helps pick CSV/TSV by extension. */
  fileName?: string;
  /** Clock, for tests. */
  now?: () => number;
}

export interface PutReceipt {
  handle: string;
  kind: 'rows' | 'lines';
  rows: number;
  columns: string[];
  sample: unknown[];
  /** Where the rows came from: a JSON path (`$.data.items`), `ndjson`, `csv`, `text`. */
  source: string;
  expiresAt: string;
  /** How to drill down, for the model. */
  hint: string;
}

export interface QueryResult {
  rows: Array<Record<string, unknown>>;
  truncated: boolean;
  /** Matching rows (or groups) in all, before offset/limit. */
  total?: number;
}

export interface GrepMatch {
  /** 1-based line (or row) number. */
  n: number;
  line: string;
  before?: Array<{ n: number; line: string }>;
  after?: Array<{ n: number; line: string }>;
}

export interface GrepResult {
  matches: GrepMatch[];
  truncated: boolean;
  total?: number;
}

export interface HandleInfo {
  handle: string;
  kind: 'rows' | 'lines';
  rows: number;
  columns: string[];
  tool?: string;
  source: string;
  createdAt: string;
  expiresAt: string;
}

interface Meta {
  id: string;
  kind: 'rows' | 'lines';
  rows: number;
  /** field name → SQL column name */
  columns: Array<{ name: string; col: string }>;
  tool: string | null;
  source: string;
  created_at: number;
  expires_at: number;
}

const q = (ident: string) => `"${ident.replace(/"/g, '""')}"`;
const tableOf = (id: string) => {
  if (!ID_RE.test(id)) throw new HandleError(`bad handle ${JSON.stringify(id)}`, 'NOT_FOUND');
  return q(`t_${id}`);
};

function sqlValue(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'bigint') return v;
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

export class HandleStore {
  private constructor(
    readonly db: Database.Database,
    readonly file: string,
  ) {}

  /** Open (or create) the handle store of a session folder, and drop expired handles. */
  static open(sessionDir: string, opts: { now?: () => number } = {}): HandleStore {
    const { session } = sessionPaths(sessionDir);
    fs.mkdirSync(session, { recursive: true });
    const file = path.join(session, HANDLES_DB_FILE);
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('synchronous = NORMAL');
    db.exec(`CREATE TABLE IF NOT EXISTS handles (
      id TEXT PRIMARY KEY,
      kind TEXT NOT NULL,
      rows INTEGER NOT NULL,
      columns TEXT NOT NULL,
      tool TEXT,
      source TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    )`);
    const store = new HandleStore(db, file);
    store.sweep(opts.now?.() ?? Date.now());
    return store;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** Store a payload (text, bytes, or a JSON value) and get its handle and receipt. */
  put(payload: unknown, opts: PutOptions = {}): PutReceipt {
    const now = opts.now?.() ?? Date.now();
    const ttl = opts.ttlMs ?? HANDLE_TTL_MS;
    if (!(ttl > 0)) throw new HandleError('ttlMs must be > 0', 'BAD_INPUT');
    let shaped: Shaped;
    try {
      shaped = shape(payload, { fileName: opts.fileName });
    } catch (err) {
      throw new HandleError(`cannot read the payload: ${(err as Error).message}`, 'BAD_INPUT');
    }
    const id = `h_${crypto.randomBytes(9).toString('base64url').toLowerCase().replace(/[^a-z0-9]/g, '0').slice(0, 12)}`;
    const table = tableOf(id);
    let columns: Array<{ name: string; col: string }>;
    let count: number;
    const write = this.db.transaction(() => {
      if (shaped.kind === 'lines') {
        columns = [
          { name: 'n', col: '_n' },
          { name: 'line', col: 'line' },
        ];
        this.db.exec(`CREATE TABLE ${table} (_n INTEGER PRIMARY KEY, line TEXT NOT NULL)`);
        const ins = this.db.prepare(`INSERT INTO ${table} (_n, line) VALUES (?, ?)`);
        shaped.lines.forEach((l, i) => ins.run(i + 1, l));
        count = shaped.lines.length;
      } else {
        const names: string[] = [];
        const seen = new Set<string>();
        for (const r of shaped.rows) {
          for (const k of Object.keys(r)) {
            if (seen.has(k)) continue;
            seen.add(k);
            if (names.length < MAX_HANDLE_COLUMNS) names.push(k);
          }
          if (names.length >= MAX_HANDLE_COLUMNS) break;
        }
        columns = names.map((name, i) => ({ name, col: `c${i}` }));
        const defs = columns.map((c) => `${c.col}`).join(', ');
        this.db.exec(`CREATE TABLE ${table} (_n INTEGER PRIMARY KEY, _row TEXT NOT NULL${defs ? `, ${defs}` : ''})`);
        const colList = `_n, _row${columns.length ? ', ' + columns.map((c) => c.col).join(', ') : ''}`;
        const tuple = `(?, ?${', ?'.repeat(columns.length)})`;
        const width = columns.length + 2;
        // Many rows per INSERT: far fewer statement runs (SQLite allows 32,766 parameters per statement).
        const perBatch = Math.max(1, Math.min(INSERT_BATCH_ROWS, Math.floor(32_000 / width)));
        const batchIns = this.db.prepare(`INSERT INTO ${table} (${colList}) VALUES ${Array(perBatch).fill(tuple).join(', ')}`);
        const oneIns = this.db.prepare(`INSERT INTO ${table} (${colList}) VALUES ${tuple}`);
        const rows = shaped.rows;
        const args: unknown[] = new Array(width * perBatch);
        const fill = (r: Record<string, unknown>, n: number, at: number) => {
          args[at] = n;
          args[at + 1] = JSON.stringify(r);
          for (let c = 0; c < columns.length; c++) args[at + 2 + c] = sqlValue(r[columns[c]!.name]);
        };
        let i = 0;
        for (; i + perBatch <= rows.length; i += perBatch) {
          for (let k = 0; k < perBatch; k++) fill(rows[i + k]!, i + k + 1, k * width);
          batchIns.run(args);
        }
        const one: unknown[] = new Array(width);
        for (; i < rows.length; i++) {
          fill(rows[i]!, i + 1, 0);
          for (let c = 0; c < width; c++) one[c] = args[c];
          oneIns.run(one);
        }
        count = rows.length;
      }
      this.db
        .prepare('INSERT INTO handles (id, kind, rows, columns, tool, source, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
        .run(id, shaped.kind, count, JSON.stringify(columns), opts.tool ?? null, shaped.source, now, now + ttl);
    });
    try {
      write();
    } catch (err) {
      // the transaction rolled back: nothing half-stored
      throw new HandleError(`cannot store the payload: ${(err as Error).message}`, 'BAD_INPUT');
    }
    const meta = this.meta(id, now);
    const sample = this.query(id, { limit: SAMPLE_ROWS }, { now }).rows;
    const names = meta.columns.map((c) => c.name);
    return {
      handle: id,
      kind: meta.kind,
      rows: meta.rows,
      columns: names,
      sample,
      source: meta.source,
      expiresAt: new Date(meta.expires_at).toISOString(),
      hint: hintFor(id, meta, names, sample),
    };
  }

  info(handle: string, opts: { now?: number } = {}): HandleInfo {
    const m = this.meta(handle, opts.now ?? Date.now());
    return {
      handle: m.id,
      kind: m.kind,
      rows: m.rows,
      columns: m.columns.map((c) => c.name),
      tool: m.tool ?? undefined,
      source: m.source,
      createdAt: new Date(m.created_at).toISOString(),
      expiresAt: new Date(m.expires_at).toISOString(),
    };
  }

  list(opts: { now?: number } = {}): HandleInfo[] {
    const now = opts.now ?? Date.now();
    return (this.db.prepare('SELECT id FROM handles WHERE expires_at > ? ORDER BY created_at').all(now) as Array<{ id: string }>).map((r) =>
      this.info(r.id, { now }),
    );
  }

  private meta(handle: string, now: number): Meta {
    if (typeof handle !== 'string' || !ID_RE.test(handle)) throw new HandleError(`no handle ${JSON.stringify(handle)} (handles look like h_xxxxxxxxxxxx)`, 'NOT_FOUND');
    const row = this.db.prepare('SELECT * FROM handles WHERE id = ?').get(handle) as (Omit<Meta, 'columns'> & { columns: string }) | undefined;
    if (!row) throw new HandleError(`no handle ${handle} in ${this.file}`, 'NOT_FOUND');
    if (row.expires_at <= now) {
      this.drop(handle);
      throw new HandleError(`handle ${handle} expired at ${new Date(row.expires_at).toISOString()}`, 'EXPIRED');
    }
    return { ...row, columns: JSON.parse(row.columns) };
  }

  /** Run a drill-down query. Results are bounded (limit ≤ MAX_QUERY_LIMIT, MAX_QUERY_RESULT_CHARS). */
  query(handle: string, query: HandleQuery = {}, opts: { now?: number } = {}): QueryResult {
    const meta = this.meta(handle, opts.now ?? Date.now());
    const table = tableOf(meta.id);
    const params: unknown[] = [];
    const expr = (field: string): string => this.fieldExpr(meta, field, params);
    let where: string[];
    try {
      where = (query.where ?? []).map((c) => this.condition(meta, parseCondition(c), params));
    } catch (err) {
      throw asQueryError(err);
    }
    const whereSql = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const whereParams = [...params];
    const limit = clampInt(query.limit, DEFAULT_QUERY_LIMIT, 0, MAX_QUERY_LIMIT);
    const offset = clampInt(query.offset, 0, 0, Number.MAX_SAFE_INTEGER);
    const groupBy = asList(query.groupBy);
    const distinct = asList(query.distinct);
    const sort = parseSort(query.sort);
    let sql: string;
    let countSql: string;
    let grouped = false;
    try {
      if (groupBy.length || distinct.length) {
        grouped = true;
        const keys = groupBy.length ? groupBy : distinct;
        const aggs = groupBy.length ? (asList(query.agg).length ? asList(query.agg) : ['count']).map(parseAggregate) : [];
        const sel: string[] = [];
        params.length = 0;
        const keyExprs = keys.map((k) => expr(k));
        keys.forEach((k, i) => sel.push(`${keyExprs[i]} AS ${q(k)}`));
        for (const a of aggs) {
          if (a.fn === 'count') sel.push(`COUNT(*) AS ${q(a.as)}`);
          else sel.push(`${a.fn.toUpperCase()}(${expr(a.field!)}) AS ${q(a.as)}`);
        }
        const selParams = [...params];
        const names = new Set([...keys, ...aggs.map((a) => a.as)]);
        const order = sort.length
          ? sort.map((s) => {
              if (!names.has(s.field)) throw new QueryError(`cannot sort grouped rows by ${s.field}: use one of ${[...names].join(', ')}`);
              return `${q(s.field)} ${s.desc ? 'DESC' : 'ASC'}`;
            })
          : groupBy.length
            ? [`${q(aggs[0]!.as)} DESC`]
            : keys.map((k) => `${q(k)} ASC`);
        const groupSql = keyExprs.join(', ');
        sql = `SELECT ${sel.join(', ')} FROM ${table} ${whereSql} GROUP BY ${groupSql} ORDER BY ${order.join(', ')} LIMIT ? OFFSET ?`;
        params.length = 0;
        params.push(...selParams, ...whereParams, limit + 1, offset);
        countSql = `SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${table} ${whereSql} GROUP BY ${groupSql})`;
        // group expressions bind no parameters except json paths, which are inlined as literals
      } else {
        params.length = 0;
        const order = sort.length ? sort.map((s) => `${expr(s.field)} ${s.desc ? 'DESC' : 'ASC'}`).join(', ') + ', _n ASC' : '_n ASC';
        const orderParams = [...params];
        const cols = meta.kind === 'lines' ? '_n, line' : '_n, _row';
        sql = `SELECT ${cols} FROM ${table} ${whereSql} ORDER BY ${order} LIMIT ? OFFSET ?`;
        params.length = 0;
        params.push(...whereParams, ...orderParams, limit + 1, offset);
        countSql = `SELECT COUNT(*) AS n FROM ${table} ${whereSql}`;
      }
    } catch (err) {
      throw asQueryError(err);
    }
    this.indexFor(meta, query);
    let raw: Array<Record<string, unknown>>;
    try {
      raw = this.db.prepare(sql).all(...params) as Array<Record<string, unknown>>;
    } catch (err) {
      throw asQueryError(err);
    }
    const more = raw.length > limit;
    let truncated = more;
    if (more) raw = raw.slice(0, limit);
    const select = asList(query.select);
    const rows: Array<Record<string, unknown>> = [];
    let chars = 0;
    for (const r of raw) {
      let row: Record<string, unknown>;
      if (grouped) row = r;
      else if (meta.kind === 'lines') row = { n: r._n, line: r.line };
      else row = JSON.parse(r._row as string) as Record<string, unknown>;
      if (select.length && !grouped) {
        const picked: Record<string, unknown> = {};
        for (const f of select) picked[f] = f === 'n' && meta.kind === 'lines' ? row.n : getPath(row, f);
        row = picked;
      }
      const size = JSON.stringify(row).length + 1;
      if (chars + size > MAX_QUERY_RESULT_CHARS && rows.length > 0) {
        truncated = true;
        break;
      }
      chars += size;
      rows.push(row);
    }
    // Count only when the page did not already show the end: a full scan is the slow part on large handles.
    let total: number;
    if (!more && (raw.length > 0 || offset === 0)) total = offset + raw.length;
    else if (!where.length && !grouped) total = meta.rows;
    else total = (this.db.prepare(countSql).get(...whereParams) as { n: number }).n;
    return { rows, truncated, total };
  }

  /**
   * Search a handle's lines (or rows, as JSON) with context. Plain, case-insensitive text by
   * default (SQLite finds the rows); `regex: true` runs a checked regex in a worker with a time budget.
   */
  async grep(
    handle: string,
    pattern: string,
    opts: { context?: number; maxMatches?: number; now?: number; regexTimeoutMs?: number } & MatchOptions = {},
  ): Promise<GrepResult> {
    const meta = this.meta(handle, opts.now ?? Date.now());
    const table = tableOf(meta.id);
    const context = clampInt(opts.context, 0, 0, MAX_GREP_CONTEXT_LINES);
    const max = clampInt(opts.maxMatches, DEFAULT_GREP_MATCHES, 1, MAX_GREP_MATCHES);
    let match: ReturnType<typeof makeMatcher>;
    try {
      match = makeMatcher(pattern, opts);
    } catch (err) {
      throw new HandleError((err as Error).message, 'BAD_QUERY');
    }
    const textCol = meta.kind === 'lines' ? 'line' : '_row';
    const found: Array<{ n: number; line: string; at: number }> = [];
    let total = 0;
    if (!opts.regex) {
      // plain text: let SQLite find the rows
      const needle = opts.ignoreCase === false ? pattern : pattern.toLowerCase();
      const cond = opts.ignoreCase === false ? `instr(${textCol}, ?) > 0` : `instr(lower(${textCol}), ?) > 0`;
      total = (this.db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${cond}`).get(needle) as { n: number }).n;
      const rows = this.db.prepare(`SELECT _n, ${textCol} AS t FROM ${table} WHERE ${cond} ORDER BY _n LIMIT ?`).all(needle, max) as Array<{ _n: number; t: string }>;
      for (const r of rows) found.push({ n: r._n, line: r.t, at: match(r.t) });
    } else {
      const scanner = new LineScanner(pattern, { ...opts, timeoutMs: opts.regexTimeoutMs });
      try {
        const page = this.db.prepare(`SELECT _n, ${textCol} AS t FROM ${table} WHERE _n > ? ORDER BY _n LIMIT ?`);
        for (let after = 0; ; ) {
          const rows = page.all(after, GREP_PAGE_ROWS) as Array<{ _n: number; t: string }>;
          if (!rows.length) break;
          const ats = await scanner.scan(rows.map((r) => r.t));
          rows.forEach((r, k) => {
            if (ats[k]! < 0) return;
            total++;
            if (found.length < max) found.push({ n: r._n, line: r.t, at: ats[k]! });
          });
          after = rows[rows.length - 1]!._n;
        }
      } catch (err) {
        throw new HandleError((err as Error).message, 'BAD_QUERY');
      } finally {
        await scanner.close();
      }
    }
    const ctx = context ? this.db.prepare(`SELECT _n, ${textCol} AS t FROM ${table} WHERE _n BETWEEN ? AND ? ORDER BY _n`) : null;
    const matches = found.map((f) => {
      const m: GrepMatch = { n: f.n, line: clip(f.line, f.at) };
      if (ctx) {
        const around = ctx.all(f.n - context, f.n + context) as Array<{ _n: number; t: string }>;
        m.before = around.filter((r) => r._n < f.n).map((r) => ({ n: r._n, line: clip(r.t, 0) }));
        m.after = around.filter((r) => r._n > f.n).map((r) => ({ n: r._n, line: clip(r.t, 0) }));
      }
      return m;
    });
    return { matches, truncated: total > matches.length, total };
  }

  /** Delete a handle; returns false when there was none. */
  delete(handle: string): boolean {
    if (!ID_RE.test(handle)) return false;
    const exists = this.db.prepare('SELECT 1 FROM handles WHERE id = ?').get(handle);
    if (!exists) return false;
    this.drop(handle);
    return true;
  }

  private drop(id: string): void {
    this.db.transaction(() => {
      this.db.exec(`DROP TABLE IF EXISTS ${tableOf(id)}`);
      this.db.prepare('DELETE FROM handles WHERE id = ?').run(id);
    })();
  }

  /** Drop every expired handle; returns how many went. */
  sweep(now: number = Date.now()): number {
    const expired = this.db.prepare('SELECT id FROM handles WHERE expires_at <= ?').all(now) as Array<{ id: string }>;
    for (const { id } of expired) this.drop(id);
    return expired.length;
  }

  /**
   * Index the columns a query filters, sorts or groups on, the first time it is needed, on large
   * handles only: the first such query pays for the index, every later drill-down is fast.
   */
  private indexFor(meta: Meta, query: HandleQuery): void {
    if (meta.kind !== 'rows' || meta.rows < INDEX_MIN_ROWS) return;
    const fields = new Set<string>();
    for (const c of query.where ?? []) {
      try {
        const cond = parseCondition(c);
        if (cond.field && cond.op !== '~' && cond.op !== '!~') fields.add(cond.field);
      } catch {
        // reported by the query itself
      }
    }
    for (const s of parseSort(query.sort)) fields.add(s.field);
    for (const g of asList(query.groupBy)) fields.add(g);
    for (const d of asList(query.distinct)) fields.add(d);
    for (const f of fields) {
      const col = meta.columns.find((c) => c.name === f)?.col;
      if (!col) continue;
      this.db.exec(`CREATE INDEX IF NOT EXISTS ${q(`i_${meta.id}_${col}`)} ON ${tableOf(meta.id)} (${col})`);
    }
  }

  /** SQL for a field: its column, a JSON path into its column, or into the row JSON. Literal paths only, never user SQL. */
  private fieldExpr(meta: Meta, field: string, _params: unknown[]): string {
    if (meta.kind === 'lines') {
      if (field === 'n') return '_n';
      if (field === 'line') return 'line';
      throw new QueryError(`unknown field ${JSON.stringify(field)}: a text handle has fields n and line`);
    }
    const exact = meta.columns.find((c) => c.name === field);
    if (exact) return exact.col;
    const dot = field.indexOf('.');
    if (dot > 0) {
      const head = meta.columns.find((c) => c.name === field.slice(0, dot));
      if (head) return `json_extract(${head.col}, ${sqlString(jsonPath(field.slice(dot + 1).split('.')))})`;
    }
    if (meta.columns.length >= MAX_HANDLE_COLUMNS) return `json_extract(_row, ${sqlString(jsonPath(field.split('.')))})`;
    throw new QueryError(`unknown field ${JSON.stringify(field)}; fields: ${meta.columns.map((c) => c.name).slice(0, 40).join(', ')}`);
  }

  private condition(meta: Meta, c: Condition, params: unknown[]): string {
    if (!c.field) {
      const col = meta.kind === 'lines' ? 'line' : '_row';
      params.push(String(c.value).toLowerCase());
      return `${c.op === '!~' ? 'NOT ' : ''}instr(lower(${col}), ?) > 0`;
    }
    const e = this.fieldExpr(meta, c.field, params);
    const v = c.value;
    switch (c.op) {
      case '~':
      case '!~':
        params.push(String(v).toLowerCase());
        return `${c.op === '!~' ? 'NOT ' : ''}coalesce(instr(lower(CAST(${e} AS TEXT)), ?), 0) > 0`;
      case '=':
      case '!=': {
        const neg = c.op === '!=';
        if (v === null) return `${e} IS ${neg ? 'NOT ' : ''}NULL`;
        const alts: unknown[] = typeof v === 'number' ? [v, String(v)] : typeof v === 'boolean' ? [v ? 1 : 0, String(v)] : [v];
        params.push(...alts);
        const inList = `${e} IN (${alts.map(() => '?').join(', ')})`;
        return neg ? `(${e} IS NULL OR NOT ${inList})` : inList;
      }
      default: {
        params.push(v);
        const typed = typeof v === 'number' ? `typeof(${e}) IN ('integer', 'real')` : `typeof(${e}) = 'text'`;
        return `(${typed} AND ${e} ${c.op} ?)`;
      }
    }
  }
}

function asQueryError(err: unknown): HandleError {
  if (err instanceof HandleError) return err;
  if (err instanceof QueryError) return new HandleError(err.message, 'BAD_QUERY');
  return new HandleError(`query failed: ${(err as Error).message}`, 'BAD_QUERY');
}

function jsonPath(segs: string[]): string {
  return '$' + segs.map((s) => (/^\d+$/.test(s) ? `[${s}]` : `."${s.replace(/["\\]/g, '')}"`)).join('');
}

function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

export function getPath(row: unknown, field: string): unknown {
  if (row && typeof row === 'object' && field in (row as object)) return (row as Record<string, unknown>)[field];
  let cur: unknown = row;
  for (const seg of field.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[seg];
  }
  return cur;
}

function clampInt(v: unknown, dflt: number, min: number, max: number): number {
  if (v === undefined || v === null) return dflt;
  const n = Math.floor(Number(v));
  if (!Number.isFinite(n)) throw new HandleError(`not a number: ${String(v)}`, 'BAD_QUERY');
  return Math.max(min, Math.min(max, n));
}

function clip(line: string, at: number): string {
  if (line.length <= MAX_GREP_LINE_CHARS) return line;
  const start = Math.max(0, Math.min(Math.max(0, at) - 200, line.length - MAX_GREP_LINE_CHARS));
  return `${start > 0 ? `…[${start} chars] ` : ''}${line.slice(start, start + MAX_GREP_LINE_CHARS)}…[+${line.length - start - MAX_GREP_LINE_CHARS} chars]`;
}

function hintFor(id: string, meta: Meta, names: string[], sample: unknown[]): string {
  if (meta.kind === 'lines') {
    return `${meta.rows} lines. Drill down: spillway handle grep ${id} "text" (add --context 2), or spillway handle query ${id} --where "line~text" --limit 20 --offset 0.`;
  }
  // Pick example fields from what the sample holds: a number to sort and sum, a short string to group by.
  const vals = (n: string) => sample.map((r) => (r && typeof r === 'object' ? (r as Record<string, unknown>)[n] : undefined));
  const isId = (n: string) => /^(_key|_?id|uuid|key)$/i.test(n) || /_id$/i.test(n);
  const num =
    names.find((n) => !isId(n) && /amount|total|count|price|size|ms|bytes|score/i.test(n) && vals(n).some((v) => typeof v === 'number')) ??
    names.find((n) => !isId(n) && vals(n).length > 0 && vals(n).every((v) => typeof v === 'number'));
  const cat =
    names.find((n) => /status|state|type|kind|level|category|license|region/i.test(n) && vals(n).some((v) => typeof v === 'string')) ??
    names.find((n) => !isId(n) && vals(n).length > 0 && vals(n).every((v) => typeof v === 'string' && v.length <= 40)) ??
    names[0];
  return (
    `${meta.rows} rows × ${names.length} fields (${names.slice(0, 12).join(', ')}${names.length > 12 ? ', …' : ''}). ` +
    `Drill down: spillway handle query ${id} --where "${cat}=VALUE"${num ? ` --sort -${num}` : ''} --limit 20; ` +
    `--group-by ${cat} --agg count${num ? ` --agg sum:${num}` : ''}; spillway handle grep ${id} "text".`
  );
}
