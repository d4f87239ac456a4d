/**
 * OpenCode's sessions (1.2 and later): one SQLite database, `$XDG_DATA_HOME/opencode/opencode.db`
 * (default `~/.local/share/opencode/`), in WAL mode, which OpenCode may be writing while we read.
 *
 * Read only, never in the way of OpenCode: the database is opened `readonly` (no write lock is ever
 * taken, nothing is created beside it but SQLite's shared-memory index that WAL readers need), with a
 * busy timeout, and every table is read inside one read transaction, so a listing is one consistent
 * snapshot even while OpenCode commits new messages.
 *
 * What OpenCode 1.18.33 stores (measured: test/clients/opencode-sessions.test.ts):
 * - `session(id, …)`: one row per session (its title, directory and times in columns);
 * - `message(id, session_id, data)`: `data` JSON; an assistant message (`role: "assistant"`) is one
 *   model call, with `tokens: {input, output, reasoning, cache: {read, write}}` where `input`
 *   excludes the cached tokens, `modelID`, `providerID` and `time.created` (ms);
 * - `part(id, message_id, session_id, data)`: text, tool (`callID`, `tool`, `state.output`: what the
 *   model got) and step parts.
 *
 * This module turns them into the index's turns (one per assistant message, context = input + cache
 * read + cache write, as the API reported it). Registering OpenCode as a client of the index (the
 * walker finding the database, one unit per session) is not done yet.
 */
import Database from 'better-sqlite3';
import { isObj } from '../pipeline/values.js';
import { estimateText, type TurnRecord, type TurnsResult } from './turns.js';

/** How long a read waits for OpenCode's write lock (a WAL checkpoint) before giving up. */
export const OPENCODE_BUSY_TIMEOUT_MS = 5_000;

export interface OpenCodeSessionRead {
  id: string;
  title?: string;
  directory?: string;
  /** ISO time of its first message (or of the session row). */
  startedAt?: string;
  turns: TurnsResult;
  /** Tool results as OpenCode stored them (after its own cut and any plugin's rewrite), by call id. */
  tools: Array<{ callId: string; tool: string; messageId: string; output: string | null }>;
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

/** Every session in `dbPath`, or only `sessionId`'s. Throws on a file that is not OpenCode's database (the caller says so). */
export function readOpenCodeDb(dbPath: string, sessionId?: string): OpenCodeSessionRead[] {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true, timeout: OPENCODE_BUSY_TIMEOUT_MS });
  try {
    // One read transaction: the three tables as of one commit of OpenCode's.
    return db.transaction(() => {
      const tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Row[]).map((r) => String(r.name)));
      // Measured: OpenCode creates the file before its first migration commits; until then it holds no table, and no session.
      if (!tables.size) return [];
      const missing = ['session', 'message', 'part'].filter((t) => !tables.has(t));
      if (missing.length) throw new Error(`${dbPath} is not an OpenCode database this reader knows (no table ${missing.join(', ')})`);
      const where = sessionId === undefined ? '' : ' WHERE id = ?';
      const args = sessionId === undefined ? [] : [sessionId];
      const sessions = db.prepare(`SELECT * FROM session${where}`).all(...args) as Row[];
      const msgStmt = db.prepare('SELECT id, data FROM message WHERE session_id = ? ORDER BY id');
      const partStmt = db.prepare('SELECT message_id, data FROM part WHERE session_id = ? ORDER BY id');
      return sessions.map((s) => readSession(s, msgStmt.all(s.id) as Row[], partStmt.all(s.id) as Row[]));
    })();
  } finally {
    db.close();
  }
}

function readSession(s: Row, messages: Row[], parts: Row[]): OpenCodeSessionRead {
  const id = String(s.id);
  const notes: string[] = [];
  const turns: TurnRecord[] = [];
  const tools: OpenCodeSessionRead['tools'] = [];
  const partsOf = new Map<string, Row[]>();
  for (const p of parts) {
    const d = json(p.data);
    if (!d) continue;
    const k = String(p.message_id);
    partsOf.set(k, [...(partsOf.get(k) ?? []), d]);
  }
  let firstAt: string | undefined;
  /** Results of the last assistant message's calls: they enter the context with the next call. */
  let pending: TurnRecord['tools'] = [];
  const msgs = messages.map((m) => ({ id: String(m.id), d: json(m.data) }));
  // OpenCode's ids sort by creation time; the message's own time decides when both are there.
  msgs.sort((a, b) => (num(a.d?.time && (a.d.time as Row).created) ?? 0) - (num(b.d?.time && (b.d.time as Row).created) ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const [line, { id: mid, d }] of msgs.entries()) {
    if (!d) {
      notes.push('a message that is not JSON');
      continue;
    }
    const at = iso(isObj(d.time) ? d.time.created : undefined);
    firstAt ??= at;
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
        parts: {},
        tools: pending,
        line,
      });
      pending = [];
    }
    for (const p of partsOf.get(mid) ?? []) {
      if (p.type !== 'tool') continue;
      const state = isObj(p.state) ? p.state : {};
      const output = typeof state.output === 'string' ? state.output : null;
      const callId = String(p.callID ?? '');
      tools.push({ callId, tool: String(p.tool ?? ''), messageId: mid, output });
      // The results of this call's tools are in the context of the next call.
      if (output !== null) pending.push({ id: callId, name: String(p.tool ?? ''), tokens: estimateText(output, 'o200k') });
    }
  }
  return {
    id,
    title: str(s.title),
    directory: str(s.directory),
    startedAt: firstAt ?? iso(s.time_created),
    turns: { turns, compactions: [], notes },
    tools,
  };
}
