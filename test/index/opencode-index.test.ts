/**
 * OpenCode's sessions in the index, from a database made here in the schema OpenCode 1.18.33 creates
 * (the columns the reader uses, with their real names): one index session per OpenCode session, its
 * results as payload rows re-readable by place, its turns with the usage stored, read-only, re-read
 * only when a session changed, and live through the write-ahead log. The real binary's run is
 * test/clients/opencode-index.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { agentHomeRoots, type SpillIndex } from '../../src/index/index.js';
import { openCodeFacts } from '../../src/index/import-opencode.js';
import { tmpDir, tmpIndex, waitFor } from './helpers.js';
import { tmpTimelines } from '../timeline/helpers.js';

const T0 = 1_780_000_000_000;

/** OpenCode's three tables, as its migration writes them (other tables and columns left out). */
const SCHEMA = `
CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL, directory text NOT NULL, title text NOT NULL, version text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL);
CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE INDEX part_session_idx ON part (session_id);`;

class Writer {
  /** Ids go on from `n` (a second writer on the same database starts past the first's). */
  constructor(
    readonly db: Database.Database,
    private n = 0,
  ) {}
  session(id: string, title: string, o: { parent?: string; dir?: string } = {}) {
    this.db.prepare('INSERT INTO session VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)').run(id, 'global', o.parent ?? null, 'slug', o.dir ?? '/work/app', title, '1.18.33', T0, T0);
  }
  message(session: string, data: Record<string, unknown>): string {
    const id = `msg_${String(++this.n).padStart(4, '0')}`;
    const t = T0 + this.n * 1000;
    this.db.prepare('INSERT INTO message VALUES (?, ?, ?, ?, ?)').run(id, session, t, t, JSON.stringify({ time: { created: t }, ...data }));
    return id;
  }
  part(session: string, message: string, data: Record<string, unknown>): void {
    const id = `prt_${String(++this.n).padStart(4, '0')}`;
    const t = T0 + this.n * 1000;
    this.db.prepare('INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)').run(id, message, session, t, t, JSON.stringify(data));
  }
  user(session: string, text: string) {
    this.part(session, this.message(session, { role: 'user' }), { type: 'text', text });
  }
  /** One model call with its usage (`input` without the cached tokens, as OpenCode stores it) and its tool calls. */
  call(session: string, usage: { input: number; read: number; write?: number; output: number }, tools: Array<{ id: string; tool: string; output: string; input?: unknown; outputPath?: string }> = []) {
    const m = this.message(session, { role: 'assistant', modelID: 'm', providerID: 'local', tokens: { total: 0, input: usage.input, output: usage.output, reasoning: 0, cache: { read: usage.read, write: usage.write ?? 0 } } });
    for (const t of tools) {
      const metadata = t.outputPath ? { truncated: true, outputPath: t.outputPath } : { truncated: false };
      this.part(session, m, { type: 'tool', tool: t.tool, callID: t.id, state: { status: 'completed', input: t.input ?? {}, output: t.output, metadata, time: { start: T0, end: T0 } } });
    }
  }
}

/** A data folder like OpenCode's: opencode.db (WAL, closed: no -wal or -shm left), tool-output/, auth.json. */
function dataDir(fill: (w: Writer, dir: string) => void): { dir: string; db: string } {
  const dir = path.join(tmpDir('spillway-oc-'), 'opencode');
  fs.mkdirSync(path.join(dir, 'tool-output'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'auth.json'), JSON.stringify({ local: { type: 'api', key: 'k' } }));
  const file = path.join(dir, 'opencode.db');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(SCHEMA);
  fill(new Writer(db), dir);
  db.close();
  return { dir, db: file };
}

const BIG = Array.from({ length: 3_000 }, (_, i) => `row ${i} of a long listing`).join('\n');
/** OpenCode's cut of BIG as bash shows it: its head naming the file, then the end. */
const cutOf = (file: string) => `...output truncated...\n\nFull output saved to: ${file}\n\n${BIG.slice(-51_200)}`;

function standard(w: Writer, dir: string) {
  const full = path.join(dir, 'tool-output', 'tool_1');
  fs.writeFileSync(full, BIG);
  w.session('ses_a', 'Listing the rows');
  w.user('ses_a', 'list the rows please');
  w.call('ses_a', { input: 1_000, read: 0, write: 500, output: 10 }, [{ id: 'call_1', tool: 'bash', output: cutOf(full), input: { command: 'cat rows.txt' }, outputPath: full }]);
  w.call('ses_a', { input: 300, read: 15_000, output: 12 }, [{ id: 'call_2', tool: 'bash', output: 'two' }]);
  w.call('ses_a', { input: 20, read: 15_400, output: 3 });
  // Its title request had not answered: OpenCode's placeholder.
  w.session('ses_b', 'New session - 2026-05-28T10:00:00.000Z');
  w.user('ses_b', 'what is in\nthe notes?');
  w.call('ses_b', { input: 700, read: 0, output: 5 });
  // A sub-agent's session.
  w.session('ses_c', 'a sub task', { parent: 'ses_a' });
  w.call('ses_c', { input: 50, read: 0, output: 1 }, [{ id: 'call_9', tool: 'fs_read_text_file', output: 'short' }]);
}

/** The standard data folder on a fresh index that has scanned it once. */
async function scanned(): Promise<{ dir: string; db: string; index: SpillIndex }> {
  const { dir, db } = dataDir(standard);
  const { index } = tmpIndex();
  index.addRoot(dir);
  await index.scan();
  return { dir, db, index };
}

describe('OpenCode sessions in the index (a database made here)', () => {
  it('one session per OpenCode session, titled by its title or (a placeholder title) its first prompt, with its folder, client and parent', async () => {
    const { dir } = dataDir(standard);
    const { index } = tmpIndex();
    index.addRoot(dir);
    const r = await index.scan();
    expect(r.warnings).toEqual([]);
    const ss = index.listSessions();
    const by = Object.fromEntries(ss.map((s) => [path.basename(s.path), s]));
    expect(Object.keys(by).sort()).toEqual(['ses_a', 'ses_b', 'ses_c']);
    expect(ss.every((s) => s.kind === 'opencode' && s.readOnly && s.client === 'OpenCode 1.18.33' && s.project === '/work/app')).toBe(true);
    expect(by.ses_a!.title).toBe('Listing the rows');
    expect(by.ses_b!.title).toBe('what is in the notes?');
    expect(by.ses_a!.path).toBe(path.join(dir, 'opencode.db', 'ses_a'));
    expect(by.ses_c!.parentSessionId).toBe(by.ses_a!.id);
  });

  it("each tool result a payload row: a cut one holds OpenCode's whole output from tool-output/ and the cut as its message; each re-reads by place", async () => {
    const { dir } = dataDir(standard);
    const { index, timelines } = tmpTimelines();
    index.addRoot(dir);
    await index.scan();
    const a = index.listSessions().find((s) => s.path.endsWith('ses_a'))!;
    const rows = index.listPayloads({ sessionId: a.id }).rows;
    expect(rows.map((p) => p.inputExcerpt).sort()).toEqual(['{"command":"cat rows.txt"}', '{}']);
    const big = rows.find((p) => p.inputExcerpt?.includes('cat'))!;
    expect(big.bytes).toBe(Buffer.byteLength(BIG));
    const bigText = await index.payloadContent(big.id);
    expect(bigText).toMatchObject({ type: 'file', path: path.join(dir, 'tool-output', 'tool_1') });
    const detail = await index.getPayload(big.id);
    expect(detail.message).toMatch(/^\.\.\.output truncated\.\.\./);
    const small = rows.find((p) => p !== big)!;
    // Re-read from the database by its session and call id.
    expect(await index.payloadContent(small.id)).toEqual({ type: 'text', text: 'two', bytes: 3 });
    // The ledger: as OpenCode gives it, by its cut (2,000 lines / 50 KB), less than the whole.
    const t = (await timelines.timeline({ sessionId: a.id }))!;
    const led = t.turns[1]!.tools[0]!.ledger!;
    expect(led.asClient.rule).toBe('opencode.bash');
    expect(led.asClient.tokens).toBeLessThan(led.full.tokens);
  });

  it("a result whose file is outside tool-output/ is never read from there; a file OpenCode deleted leaves what the model got, said so", async () => {
    const outside = path.join(tmpDir('spillway-oc-outside-'), 'secret.txt');
    fs.writeFileSync(outside, 'not for the index '.repeat(100));
    const { dir } = dataDir((w) => {
      w.session('ses_x', 'x');
      w.call('ses_x', { input: 10, read: 0, output: 1 }, [
        { id: 'call_out', tool: 'bash', output: 'shown part', outputPath: outside },
        { id: 'call_gone', tool: 'bash', output: 'shown too', outputPath: 'tool_deleted' },
      ]);
    });
    const { index } = tmpIndex();
    index.addRoot(dir);
    const r = await index.scan();
    const rows = index.listPayloads({}).rows;
    expect(rows.map((p) => p.bytes).sort((x, y) => x - y)).toEqual([9, 10]);
    expect(r.warnings.join('\n')).toMatch(/2 result\(s\) OpenCode cut have no whole output left in tool-output\//);
  });

  it("the Timeline: one call per assistant message, its context the usage OpenCode stored (input + cache read + cache write)", async () => {
    const { dir } = dataDir(standard);
    const { index, timelines } = tmpTimelines();
    index.addRoot(dir);
    await index.scan();
    const a = index.listSessions().find((s) => s.path.endsWith('ses_a'))!;
    const t = (await timelines.timeline({ sessionId: a.id }))!;
    expect(t.turns.map((x) => x.context)).toEqual([1_500, 15_300, 15_420]);
    expect(t.turns[1]!.tools.map((x) => x.id)).toEqual(['call_1']);
    expect(t.turns[2]!.tools.map((x) => x.id)).toEqual(['call_2']);
    expect(t.rule).toMatchObject({ client: 'opencode', window: null });
  });

  it('read-only: the database is not changed, and nothing but SQLite\'s -wal and -shm appears beside it', async () => {
    const { dir, db } = dataDir(standard);
    const before = fs.readFileSync(db);
    const { index } = tmpIndex();
    index.addRoot(dir);
    await index.scan();
    expect(fs.readFileSync(db).equals(before)).toBe(true);
    // Measured: a read-only open of a WAL database whose -wal and -shm are gone (OpenCode closed) creates both.
    expect(fs.readdirSync(dir).sort()).toEqual(['auth.json', 'opencode.db', 'opencode.db-shm', 'opencode.db-wal', 'tool-output']);
    expect(fs.statSync(`${db}-wal`).size).toBe(0);
  });

  it('a re-scan reads only the sessions that changed; a session deleted leaves the index', async () => {
    const { db, index } = await scanned();
    expect((await index.scan()).read).toBe(0);
    const w = new Writer(new Database(db), 1_000);
    w.call('ses_b', { input: 5, read: 700, output: 2 }, [{ id: 'call_b', tool: 'bash', output: 'more' }]);
    w.db.prepare("DELETE FROM part WHERE session_id = 'ses_c'").run();
    w.db.prepare("DELETE FROM message WHERE session_id = 'ses_c'").run();
    w.db.prepare("DELETE FROM session WHERE id = 'ses_c'").run();
    w.db.close();
    const r = await index.scan();
    expect(r.read).toBe(1);
    expect(r.added).toBe(1);
    expect(index.listSessions().map((s) => path.basename(s.path)).sort()).toEqual(['ses_a', 'ses_b']);
  });

  it('beside the database nothing is walked into: a transcript under storage/ or tool-output/ is not a session', async () => {
    const { dir } = dataDir(standard);
    const line = JSON.stringify({ parentUuid: null, sessionId: 'x', type: 'user', message: { role: 'user', content: 'hi' } });
    // A Claude Code line: recognised wherever the walker would sniff it.
    fs.mkdirSync(path.join(dir, 'storage'));
    for (const f of ['storage/chat.jsonl', 'tool-output/chat.jsonl', 'top.jsonl']) fs.writeFileSync(path.join(dir, f), `${line}\n`);
    const { index } = tmpIndex();
    index.addRoot(dir);
    await index.scan();
    expect(index.listSessions().map((s) => s.kind)).toEqual(['opencode', 'opencode', 'opencode']);
  });

  it('a tool call OpenCode completes in place (its part rewritten, then its message) is re-read', async () => {
    const { db, index } = await scanned();
    const w = new Database(db);
    const row = w.prepare("SELECT id, message_id, data FROM part WHERE json_extract(data, '$.callID') = 'call_2'").get() as { id: string; message_id: string; data: string };
    const part = JSON.parse(row.data);
    part.state.output = 'two, and then some';
    w.prepare('UPDATE part SET data = ?, time_updated = time_updated + 1 WHERE id = ?').run(JSON.stringify(part), row.id);
    w.prepare('UPDATE message SET time_updated = time_updated + 1 WHERE id = ?').run(row.message_id);
    w.close();
    const r = await index.scan();
    expect(r.read).toBe(1);
    const small = index.listPayloads({}).rows.find((p) => p.inputExcerpt === '{}' && p.bytes > 10)!;
    expect(await index.payloadContent(small.id)).toMatchObject({ type: 'text', text: 'two, and then some' });
  });

  it("another program's opencode.db: a warning that names it, no session", async () => {
    const dir = path.join(tmpDir('spillway-oc-'), 'opencode');
    fs.mkdirSync(dir);
    const db = new Database(path.join(dir, 'opencode.db'));
    db.exec('CREATE TABLE notes (id TEXT)');
    db.close();
    const { index } = tmpIndex();
    index.addRoot(dir);
    const r = await index.scan();
    expect(r.warnings.join('\n')).toMatch(/opencode\.db.*not an OpenCode database this reader knows/);
    expect(index.listSessions().filter((s) => s.payloadCount > 0)).toEqual([]);
  });

  it('live: a call OpenCode commits into its write-ahead log (the database file itself unchanged) shows up', async () => {
    const { db, index } = await scanned();
    const stop = await index.watch();
    // OpenCode holds its database open in WAL mode: commits go to opencode.db-wal until a checkpoint.
    const w = new Writer(new Database(db), 1_000);
    w.db.pragma('wal_autocheckpoint = 0');
    const size = fs.statSync(db).size;
    w.call('ses_b', { input: 5, read: 700, output: 2 }, [{ id: 'call_live', tool: 'bash', output: 'live result' }]);
    const b = index.listSessions().find((s) => s.path.endsWith('ses_b'))!;
    await waitFor(() => index.listPayloads({ sessionId: b.id }).rows.length === 1, 5_000, 'the live result');
    expect(fs.statSync(db).size).toBe(size);
    w.db.close();
    await stop();
  });
});

describe("OpenCode's default folder", () => {
  it('~/.local/share/opencode where it exists, or $XDG_DATA_HOME/opencode when that is set', () => {
    const home = tmpDir('spillway-home-');
    expect(agentHomeRoots({ HOME: home })).toEqual([]);
    fs.mkdirSync(path.join(home, '.local', 'share', 'opencode'), { recursive: true });
    expect(agentHomeRoots({ HOME: home })).toEqual([path.join(home, '.local', 'share', 'opencode')]);
    const xdg = path.join(home, 'xdg-data');
    fs.mkdirSync(path.join(xdg, 'opencode'), { recursive: true });
    expect(agentHomeRoots({ HOME: home, XDG_DATA_HOME: xdg })).toEqual([path.join(xdg, 'opencode')]);
  });
});

describe('openCodeFacts', () => {
  it("OpenCode's own title wins; its placeholders give way to the first prompt; no title at all is left unset", () => {
    expect(openCodeFacts({ title: 'Fix the build', firstPrompt: 'p', directory: '/w', version: '1.18.33' })).toEqual({ title: 'Fix the build', project: '/w', client: 'OpenCode 1.18.33' });
    expect(openCodeFacts({ title: 'Child session - 2026-05-28T10:00:00.000Z', firstPrompt: 'the prompt' }).title).toBe('the prompt');
    expect(openCodeFacts({ title: 'New session - 2026-05-28T10:00:00.000Z' })).toEqual({ client: 'OpenCode' });
  });
});
