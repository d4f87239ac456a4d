/**
 * OpenCode's sessions (1.2 and later): one SQLite database, `$XDG_DATA_HOME/opencode/opencode.db`
 * (default `~/.local/share/opencode/`), in WAL mode, which OpenCode may be writing while we read. The
 * index's half of OpenCode's adapter (src/agents/opencode): one unit per session in the database.
 *
 * | entry | for |
 * | --- | --- |
 * | `openCodeSessions(db)` | the walker: the sessions in a database, each with a stamp that changes when it does |
 * | `importOpenCode(ctx, unit)` | one session's results (payload rows), turns and facts |
 * | `rereadOpenCode(source, loc)` | one result's text again, by its session and call id |
 * | `readOpenCodeDb(db, id?)` | the sessions' turns and results as OpenCode stored them |
 *
 * A session's unit and its index session are keyed `<db>/<session id>`: a path inside the database's,
 * so a change to the database (a scan scoped to it) reaches every session in it, and a session that
 * is gone from it leaves the index.
 *
 * Read only, never in the way of OpenCode: the database is opened `readonly` (SQLITE_OPEN_READONLY: no
 * write lock is ever taken; a WAL reader never blocks the writer), with a busy timeout for the moment a
 * checkpoint holds the lock, and each read is one read transaction, so it is one consistent snapshot
 * even while OpenCode commits. Measured (better-sqlite3 12, SQLite 3.5x): while OpenCode runs, its
 * `-wal` and `-shm` exist and nothing is created; with OpenCode closed (it removes both), a read-only
 * open creates an empty `-wal` and a 32 KB `-shm` beside the database and leaves them, as every WAL
 * reader does (SQLite's own files, which OpenCode reuses at its next open). Nothing else is written.
 *
 * What OpenCode 1.18.33 stores (measured: test/clients/opencode-sessions.test.ts):
 * - `session(id, parent_id, title, directory, version, time_updated, …)`: one row per session;
 * - `message(id, session_id, time_updated, data)`: `data` JSON; an assistant message (`role:
 *   "assistant"`) is one model call, with `tokens: {input, output, reasoning, cache: {read, write}}`
 *   where `input` excludes the cached tokens, `modelID`, `providerID` and `time.created` (ms);
 * - `part(id, message_id, session_id, time_updated, data)`: text, tool (`callID`, `tool`,
 *   `state.input`, `state.output`: what the model got, `state.metadata.outputPath`: the whole output
 *   when OpenCode cut it, in `tool-output/` beside the database) and step parts.
 *
 * Turns: one per assistant message, context = input + cache read + cache write, as the API reported it.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { isInside, openUntrustedSync } from '../pipeline/index.js';
import { isObj } from '../pipeline/values.js';
import type { Unit } from './discover.js';
import { MAX_IMPORT_FILE_BYTES, importedPayloadId, titleOf } from './import-common.js';
import { type ImportContext, spilledOrImported } from './import-link.js';
import type { PayloadRecord, SessionFacts, SourceLocation, UnitResult } from './record.js';
import type { SessionSource } from './source.js';
import { type CompactionRecord, type PartName, type TurnRecord, type TurnsResult, addPart, estimateText } from './turns.js';

/** How long a read waits for OpenCode's write lock (a WAL checkpoint) before giving up. */
export const OPENCODE_BUSY_TIMEOUT_MS = 5_000;
/** The folder beside the database where OpenCode keeps the whole output of a result it cut. */
export const OPENCODE_TOOL_OUTPUT_DIR = 'tool-output';
/** Session ids as OpenCode makes them (`ses_…`): anything else is not listed (it could not be a path part). */
const SESSION_ID_RE = /^[A-Za-z0-9_-]{1,128}$/;
/** The title OpenCode gives a session until its title request answers. */
const DEFAULT_TITLE_RE = /^(New session|Child session) - \d{4}-\d\d-\d\dT/;

export interface OpenCodeTool {
  /** The part's id (`prt_…`). */
  partId: string;
  callId: string;
  tool: string;
  messageId: string;
  /** The message's place in the session (ordered by time). */
  messageIndex: number;
  input: unknown;
  /** What the model got (after OpenCode's cut and any plugin's rewrite); null before the call ended. */
  output: string | null;
  /** The file with the whole output, when OpenCode cut it (`state.metadata.outputPath`). */
  outputPath?: string;
  /** ms since the epoch: the call's start, else the part's creation. */
  at?: number;
}

export interface OpenCodeSessionRead {
  id: string;
  title?: string;
  directory?: string;
  version?: string;
  parentId?: string;
  /** The first user prompt, one line. */
  firstPrompt?: string;
  /** ISO time of its first message (or of the session row). */
  startedAt?: string;
  turns: TurnsResult;
  /** Tool results as OpenCode stored them, in order. */
  tools: OpenCodeTool[];
  /** A hash of the session's rows: unchanged rows, unchanged hash. */
  hash: string;
}

type Row = Record<string, unknown>;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
const iso = (ms: unknown): string | undefined => (typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : undefined);

function json(text: unknown): Row | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return isObj(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Open OpenCode's database read-only. Before SQLite opens it by name, the path is checked the way
 * every file the index did not write is (a regular file, no linked folder on the way: safe-open.ts);
 * SQLite then opens that name itself, so a swap in between is not excluded.
 */
function openReadOnly(dbPath: string): Database.Database {
  fs.closeSync(openUntrustedSync(dbPath, { root: '/' }).fd);
  return new Database(dbPath, { readonly: true, fileMustExist: true, timeout: OPENCODE_BUSY_TIMEOUT_MS });
}

/** One read transaction over the database; `[]` for a database OpenCode created but has not migrated yet. */
function withSnapshot<T>(dbPath: string, empty: T, read: (db: Database.Database) => T): T {
  const db = openReadOnly(dbPath);
  try {
    return db.transaction(() => {
      const tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Row[]).map((r) => String(r.name)));
      // Measured: OpenCode creates the file before its first migration commits; until then it holds no table, and no session.
      if (!tables.size) return empty;
      const missing = ['session', 'message', 'part'].filter((t) => !tables.has(t));
      if (missing.length) throw new Error(`${dbPath} is not an OpenCode database this reader knows (no table ${missing.join(', ')})`);
      return read(db);
    })();
  } finally {
    db.close();
  }
}

/** A session listed for the walker: its id, parent, and a stamp (rows, last update) that changes when it does. */
export interface OpenCodeListed {
  id: string;
  parent?: string;
  stamp: { size: number; mtimeMs: number };
}

/** The sessions in a database, for the walker. Throws on a file that is not OpenCode's database (the scan says why). */
export function openCodeSessions(dbPath: string): OpenCodeListed[] {
  return withSnapshot<OpenCodeListed[]>(dbPath, [], (db) => {
    // Per session: its rows counted, the sum of its messages' time_updated (any message's update moves
    // it, not only the latest's), and the latest update. Parts are only counted (from their index alone):
    // reading their time_updated cost 15× more (measured: 430 ms against 28 ms for 500 sessions and
    // 100,000 parts of 3 KB), and a part OpenCode updates in place (a tool call completing) is followed by
    // a new part (its step-finish) or an update of its message, which the stamp sees.
    const rows = db
      .prepare(
        `SELECT s.id AS id, s.parent_id AS parent, s.time_updated AS ts,
                (SELECT count(*) FROM message m WHERE m.session_id = s.id) AS nm,
                (SELECT coalesce(sum(m.time_updated % 1000000000), 0) FROM message m WHERE m.session_id = s.id) AS sm,
                (SELECT max(m.time_updated) FROM message m WHERE m.session_id = s.id) AS tm,
                (SELECT count(*) FROM part p WHERE p.session_id = s.id) AS np
           FROM session s`,
      )
      .all() as Row[];
    return rows
      .filter((r) => typeof r.id === 'string' && SESSION_ID_RE.test(r.id))
      .map((r) => ({
        id: String(r.id),
        ...(typeof r.parent === 'string' && SESSION_ID_RE.test(r.parent) ? { parent: r.parent } : {}),
        // `size` is a version number, not bytes: rows and the messages' update times, folded.
        stamp: { size: Number(r.nm ?? 0) + Number(r.np ?? 0) + Number(r.sm ?? 0), mtimeMs: Math.max(num(r.ts) ?? 0, num(r.tm) ?? 0) },
      }));
  });
}

/** Every session in `dbPath`, or only `sessionId`'s. Throws on a file that is not OpenCode's database (the caller says so). */
export function readOpenCodeDb(dbPath: string, sessionId?: string): OpenCodeSessionRead[] {
  return withSnapshot<OpenCodeSessionRead[]>(dbPath, [], (db) => {
    const where = sessionId === undefined ? '' : ' WHERE id = ?';
    const args = sessionId === undefined ? [] : [sessionId];
    const sessions = db.prepare(`SELECT * FROM session${where}`).all(...args) as Row[];
    const msgStmt = db.prepare('SELECT id, data FROM message WHERE session_id = ? ORDER BY id');
    // Every column: a hand-made or older database may lack time_created (read when there).
    const partStmt = db.prepare('SELECT * FROM part WHERE session_id = ? ORDER BY id');
    return sessions.map((s) => readSession(s, msgStmt.all(s.id) as Row[], partStmt.all(s.id) as Row[]));
  });
}

/** The text of a message's text parts (reasoning apart), joined. */
function textOf(parts: readonly Row[], type: 'text' | 'reasoning'): string {
  return parts
    .filter((p) => p.type === type && typeof p.text === 'string' && p.synthetic !== true)
    .map((p) => p.text as string)
    .join('\n');
}

function readSession(s: Row, messages: Row[], parts: Row[]): OpenCodeSessionRead {
  const id = String(s.id);
  const hash = crypto.createHash('sha256');
  hash.update(JSON.stringify([s.title ?? null, s.directory ?? null, s.version ?? null]));
  const notes: string[] = [];
  const turns: TurnRecord[] = [];
  const compactions: CompactionRecord[] = [];
  const tools: OpenCodeTool[] = [];
  const partsOf = new Map<string, Array<{ id: string; created: number | null; d: Row }>>();
  for (const p of parts) {
    hash.update(String(p.id)).update('\0').update(String(p.data)).update('\0');
    const d = json(p.data);
    if (!d) continue;
    const k = String(p.message_id);
    let list = partsOf.get(k);
    if (!list) partsOf.set(k, (list = []));
    list.push({ id: String(p.id), created: num(p.time_created), d });
  }
  let firstAt: string | undefined;
  let firstPrompt: string | undefined;
  /** Results of the last assistant message's calls: they enter the context with the next call. */
  let pending: TurnRecord['tools'] = [];
  /** What entered since the last call, by part (a user prompt, the last call's text). */
  let entered: Partial<Record<PartName, number>> = {};
  const msgs = messages.map((m) => {
    hash.update(String(m.id)).update('\0').update(String(m.data)).update('\0');
    return { id: String(m.id), d: json(m.data) };
  });
  // OpenCode's ids sort by creation time; the message's own time decides when both are there.
  msgs.sort((a, b) => (num(a.d?.time && (a.d.time as Row).created) ?? 0) - (num(b.d?.time && (b.d.time as Row).created) ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const [line, { id: mid, d }] of msgs.entries()) {
    if (!d) {
      notes.push('a message that is not JSON');
      continue;
    }
    const at = iso(isObj(d.time) ? d.time.created : undefined);
    firstAt ??= at;
    const mine = partsOf.get(mid) ?? [];
    const own = mine.map((p) => p.d);
    if (d.role === 'user') {
      const text = textOf(own, 'text');
      if (!firstPrompt) firstPrompt = titleOf(text);
      addPart(entered, 'user', estimateText(text, 'o200k'));
      // A compaction OpenCode made: its user message carries a `compaction` part (`auto`: it decided by itself).
      const c = own.find((p) => p.type === 'compaction');
      if (c) compactions.push({ seq: turns.length, at: at ?? '', kind: 'compact', trigger: c.auto === true ? 'auto' : c.auto === false ? 'manual' : undefined, toolIds: [], line });
    }
    if (d.role === 'assistant') {
      const t = isObj(d.tokens) ? d.tokens : undefined;
      const cache = t && isObj(t.cache) ? t.cache : {};
      const input = num(t?.input);
      const cacheRead = num(cache.read);
      const cacheWrite = num(cache.write);
      if (!t) notes.push('an assistant message without tokens');
      turns.push({
        seq: turns.length,
        at: at ?? '',
        model: str(d.modelID),
        // What the model received: OpenCode's `input` excludes the cached tokens (measured).
        context: input === null ? null : input + (cacheRead ?? 0) + (cacheWrite ?? 0),
        input,
        cacheRead,
        cacheWrite,
        output: num(t?.output),
        kind: d.summary === true ? 'summary' : 'main',
        parts: entered,
        tools: pending,
        line,
      });
      pending = [];
      entered = {};
      // Its own text and reasoning are in the context of the next call.
      addPart(entered, 'assistant', estimateText(textOf(own, 'text'), 'o200k'));
      addPart(entered, 'thinking', estimateText(textOf(own, 'reasoning'), 'o200k'));
    }
    for (const { id: partId, created, d: p } of mine) {
      if (p.type !== 'tool') continue;
      const state = isObj(p.state) ? p.state : {};
      const meta = isObj(state.metadata) ? state.metadata : {};
      const output = typeof state.output === 'string' ? state.output : typeof state.error === 'string' ? state.error : null;
      const callId = str(p.callID) ?? partId;
      const start = isObj(state.time) ? num(state.time.start) : null;
      tools.push({
        partId,
        callId,
        tool: str(p.tool) ?? 'tool',
        messageId: mid,
        messageIndex: line,
        input: state.input,
        output,
        ...(str(meta.outputPath) ? { outputPath: str(meta.outputPath) } : {}),
        ...((start ?? created) !== null ? { at: (start ?? created)! } : {}),
      });
      // The results of this call's tools are in the context of the next call.
      if (output !== null) pending.push({ id: callId, name: str(p.tool) ?? 'tool', tokens: estimateText(output, 'o200k') });
    }
  }
  const title = str(s.title);
  return {
    id,
    title,
    directory: str(s.directory),
    version: str(s.version),
    parentId: str(s.parent_id),
    firstPrompt,
    startedAt: firstAt ?? iso(s.time_created),
    turns: { turns, compactions, notes },
    tools,
    hash: hash.digest('hex'),
  };
}

/** How people know a session: OpenCode's title (its placeholder before the title request answers: the first prompt), the folder it ran in, the version. */
export function openCodeFacts(s: Pick<OpenCodeSessionRead, 'title' | 'firstPrompt' | 'directory' | 'version'>): SessionFacts {
  const own = s.title && !DEFAULT_TITLE_RE.test(s.title) ? titleOf(s.title) : undefined;
  return {
    ...(own ?? s.firstPrompt ? { title: own ?? s.firstPrompt } : {}),
    ...(s.directory ? { project: s.directory } : {}),
    client: s.version ? `OpenCode ${s.version}` : 'OpenCode',
  };
}

/** A unit's database and session id: its key is `<db>/<session id>`, its one file the database. */
function unitParts(unit: Unit): { db: string; sessionId: string | null } {
  const db = unit.files[0]?.path ?? path.dirname(unit.key);
  return { db, sessionId: path.dirname(unit.key) === db ? path.basename(unit.key) : null };
}

/**
 * The file in `tool-output/` beside the database that `p` names: `p` itself when it is in there, else the
 * file of the same name there (a data folder moved or copied whole). A path read from the database leads
 * nowhere else.
 */
function toolOutputPath(db: string, p: string | undefined): string | undefined {
  if (!p) return undefined;
  const dir = path.join(path.dirname(db), OPENCODE_TOOL_OUTPUT_DIR);
  const abs = path.resolve(dir, p);
  if (isInside(dir, abs) && abs !== dir) return abs;
  const name = path.basename(p);
  return name && name !== '.' && name !== '..' ? path.join(dir, name) : undefined;
}

async function readWhole(source: SessionSource, file: string): Promise<string | null> {
  try {
    const r = await source.readRange(file, 0, MAX_IMPORT_FILE_BYTES + 1);
    return r.size > MAX_IMPORT_FILE_BYTES ? null : r.bytes.toString('utf8');
  } catch {
    return null;
  }
}

/** One OpenCode session (a unit the walker made of the database: openCodeSessions). */
export async function importOpenCode(ctx: ImportContext, unit: Unit): Promise<UnitResult> {
  const { db, sessionId } = unitParts(unit);
  // The walker could not list the database's sessions: list again, and say why (never a silent nothing).
  if (sessionId === null) {
    openCodeSessions(db);
    return { payloads: [], hash: '', warnings: [`${db}: its sessions could not be listed when the folder was walked; they are at the next scan`] };
  }
  const [s] = readOpenCodeDb(db, sessionId);
  // Gone between the walk and this read: nothing, and the next scan drops it.
  if (!s) return { payloads: [], hash: '', warnings: [] };
  const warnings: string[] = [];
  const transcript = unit.key;
  const fallback = s.startedAt ?? new Date(unit.files[0]?.mtimeMs ?? 0).toISOString();
  const payloads: PayloadRecord[] = [];
  let gone = 0;
  for (const t of s.tools) {
    if (t.output === null) continue;
    const id = importedPayloadId(transcript, t.callId);
    const file = toolOutputPath(db, t.outputPath);
    // OpenCode cut it: the whole output is in its file (OpenCode deletes old ones: then what the model got).
    const whole = file ? await readWhole(ctx.source, file) : null;
    if (t.outputPath && whole === null) gone++;
    const source: SourceLocation = whole !== null ? { transcript, line: t.messageIndex, toolUseId: t.callId, field: 'persisted', persistedPath: file } : { transcript, line: t.messageIndex, toolUseId: t.callId, field: 'output' };
    payloads.push(
      await spilledOrImported(ctx, {
        id,
        tool: t.tool,
        input: t.input,
        text: whole ?? t.output,
        seen: t.output,
        createdAt: t.at !== undefined ? new Date(t.at).toISOString() : fallback,
        action: 'pass',
        path: whole !== null ? file! : transcript,
        source,
        callId: t.callId,
      }),
    );
    await ctx.yielder.maybe();
  }
  if (gone) warnings.push(`${transcript}: ${gone} result(s) OpenCode cut have no whole output left in ${OPENCODE_TOOL_OUTPUT_DIR}/ (it deletes old ones): listed as the model got them`);
  return { payloads, hash: s.hash, warnings, session: openCodeFacts(s), turns: s.turns };
}

/** One result's text again: what the model got, from its part (a result kept whole in a file is read from there by the caller). */
export function rereadOpenCode(_source: SessionSource, loc: SourceLocation): Promise<string | null> {
  const db = path.dirname(loc.transcript);
  const sessionId = path.basename(loc.transcript);
  if (!loc.toolUseId) return Promise.resolve(null);
  try {
    const text = withSnapshot<string | null>(db, null, (d) => {
      const rows = d.prepare("SELECT id, data FROM part WHERE session_id = ? AND (id = ? OR json_extract(data, '$.callID') = ?)").all(sessionId, loc.toolUseId, loc.toolUseId) as Row[];
      for (const r of rows) {
        const p = json(r.data);
        const state = p && isObj(p.state) ? p.state : undefined;
        if (state && typeof state.output === 'string') return state.output;
        if (state && typeof state.error === 'string') return state.error;
      }
      return null;
    });
    return Promise.resolve(text);
  } catch {
    return Promise.resolve(null);
  }
}
