import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { readOpenCodeDb } from '../../src/index/import-opencode.js';

function dbIn(setup: (db: Database.Database) => void): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-ocdb-'));
  const file = path.join(dir, 'opencode.db');
  const db = new Database(file);
  setup(db);
  db.close();
  return file;
}

describe('readOpenCodeDb', () => {
  it('a database OpenCode has only just created (no table yet) holds no session', () => {
    expect(readOpenCodeDb(dbIn(() => {}))).toEqual([]);
  });

  it('another program\'s database: a clear error, and the file is not changed', () => {
    const file = dbIn((db) => db.exec('CREATE TABLE notes (id TEXT)'));
    const before = fs.readFileSync(file);
    expect(() => readOpenCodeDb(file)).toThrow(/not an OpenCode database .*no table session, message, part/);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
  });

  it('a missing file is an error, never a new database', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-ocdb-')), 'opencode.db');
    expect(() => readOpenCodeDb(file)).toThrow();
    expect(fs.existsSync(file)).toBe(false);
  });

  it('turns from assistant messages: context is input + cache read + cache write; a message without tokens is noted, its context null', () => {
    const file = dbIn((db) => {
      db.exec('CREATE TABLE session (id TEXT PRIMARY KEY, title TEXT, directory TEXT, time_created INTEGER); CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT, data TEXT); CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT, session_id TEXT, data TEXT)');
      db.prepare('INSERT INTO session VALUES (?, ?, ?, ?)').run('ses_1', 'a title', '/w', 1_700_000_000_000);
      const m = db.prepare('INSERT INTO message VALUES (?, ?, ?)');
      m.run('msg_1', 'ses_1', JSON.stringify({ role: 'user', time: { created: 1_700_000_000_000 } }));
      m.run('msg_2', 'ses_1', JSON.stringify({ role: 'assistant', modelID: 'x', time: { created: 1_700_000_001_000 }, tokens: { input: 100, output: 5, reasoning: 0, cache: { read: 900, write: 40 } } }));
      m.run('msg_3', 'ses_1', JSON.stringify({ role: 'assistant', modelID: 'x', time: { created: 1_700_000_002_000 } }));
      db.prepare('INSERT INTO part VALUES (?, ?, ?, ?)').run('prt_1', 'msg_2', 'ses_1', JSON.stringify({ type: 'tool', tool: 'bash', callID: 'c1', state: { status: 'completed', output: 'hello world' } }));
    });
    const [s] = readOpenCodeDb(file);
    expect(s).toMatchObject({ id: 'ses_1', title: 'a title', directory: '/w', startedAt: new Date(1_700_000_000_000).toISOString() });
    expect(s!.turns.turns.map((t) => [t.context, t.input, t.cacheRead, t.cacheWrite, t.output])).toEqual([
      [1040, 100, 900, 40, 5],
      [null, null, null, null, null],
    ]);
    expect(s!.turns.turns[1]!.tools.map((t) => t.id)).toEqual(['c1']);
    expect(s!.turns.notes).toEqual(['an assistant message without tokens']);
  });
});
