/**
 * OpenCode 1.18.33's sessions, read from its SQLite database (src/index/import-opencode.ts): a real
 * run against the Chat Completions double, which reports a usage with cached tokens for every call;
 * each turn read back must be that usage, and reading while OpenCode writes must never fail nor
 * block it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOpenCodeDb, type OpenCodeSessionRead } from '../../src/index/import-opencode.js';
import { chatInputTokens, startChatDouble, type ChatDouble } from './doubles/openai-chat.js';
import { tmpDir } from './harness.js';
import { OPENCODE_VERSION, runOpenCode, type OpenCodeRun } from './opencode.js';

const RUN_MS = 120_000;

describe(`OpenCode ${OPENCODE_VERSION}: its sessions read back from opencode.db`, () => {
  let d: ChatDouble;
  let run: OpenCodeRun;
  let sessions: OpenCodeSessionRead[];
  const during = { reads: 0, errors: [] as string[] };

  beforeAll(async () => {
    const cwd = tmpDir('spillway-oc-sessions-');
    const home = tmpDir('spillway-oc-sessions-home-');
    fs.writeFileSync(path.join(cwd, 'notes.txt'), 'line\n'.repeat(500));
    const bash = (id: string, command: string) => ({ call: { name: 'bash', arguments: { command, description: id }, callId: id } });
    d = await startChatDouble({
      steps: [bash('call_1', 'cat notes.txt'), bash('call_2', "printf 'two'"), { text: 'done' }],
      // A cache that grows with the conversation: half of every prompt (rounded down) read from it.
      usage: (body) => {
        const prompt = chatInputTokens(body);
        return { prompt_tokens: prompt, cached_tokens: Math.floor(prompt / 2) };
      },
    });
    const db = path.join(home, '.local', 'share', 'opencode', 'opencode.db');
    // Read while OpenCode writes: every 150 ms, the whole database, as the index would.
    const poll = setInterval(() => {
      if (!fs.existsSync(db)) return;
      try {
        readOpenCodeDb(db);
        during.reads++;
      } catch (err) {
        during.errors.push(String(err));
      }
    }, 150);
    try {
      run = await runOpenCode({ baseUrl: d.origin, prompt: 'read the notes', cwd, home, timeoutMs: RUN_MS });
    } finally {
      clearInterval(poll);
    }
    sessions = readOpenCodeDb(db);
    console.log(`opencode run: exit ${run.code} in ${run.ms} ms; ${during.reads} reads during the run, ${during.errors.length} errors`);
  }, RUN_MS + 60_000);
  afterAll(async () => {
    await d?.close();
  });

  it('runs to the end; reading the database while it ran never failed', () => {
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(during.errors).toEqual([]);
    expect(during.reads).toBeGreaterThan(0);
  });

  it('one session, one turn per main call, each with the usage the double reported (input excludes the cache)', () => {
    expect(sessions.length).toBe(1);
    const s = sessions[0]!;
    expect(s.id).toMatch(/^ses_/);
    const main = d.reported.filter((r) => r.main).map((r) => r.usage);
    const turns = s.turns.turns.map((t) => ({ context: t.context, cacheRead: t.cacheRead, input: t.input, output: t.output, model: t.model }));
    console.log('double reported (main):', JSON.stringify(main));
    console.log('read back:', JSON.stringify(turns), 'notes:', s.turns.notes);
    expect(turns.length).toBe(main.length);
    for (const [i, u] of main.entries()) {
      expect(turns[i]!.context).toBe(u.prompt_tokens);
      expect(turns[i]!.cacheRead).toBe(u.cached_tokens);
      expect(turns[i]!.input).toBe(u.prompt_tokens - u.cached_tokens);
      expect(turns[i]!.output).toBe(u.completion_tokens);
      expect(turns[i]!.model).toBe('m');
    }
  });

  it('the tool results are in the turn they entered, as OpenCode stored them', () => {
    const s = sessions[0]!;
    expect(s.tools.map((t) => [t.callId, t.tool])).toEqual([
      ['call_1', 'bash'],
      ['call_2', 'bash'],
    ]);
    expect(s.tools[1]!.output).toBe('two');
    expect(s.turns.turns[1]!.tools.map((t) => t.id)).toEqual(['call_1']);
    expect(s.turns.turns[2]!.tools.map((t) => t.id)).toEqual(['call_2']);
    expect(s.turns.turns[1]!.tools[0]!.tokens).toBeGreaterThan(100);
  });
});
