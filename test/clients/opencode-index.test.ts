/**
 * OpenCode 1.18.33's session in the index and the Timeline, from its real database: the real binary runs
 * a small realistic session against the Chat Completions double (a `cat` of a 256 KB text file, over
 * OpenCode's own 50 KB cut, then a small command), while the index scans its data folder over and
 * over; then the session is listed, its results are payload rows (the cut one holding OpenCode's whole
 * output), and its Timeline's per-call context is the usage the double reported for each main call.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex, type SpillIndex } from '../../src/index/index.js';
import { openTimelines } from '../../src/timeline/index.js';
import type { SessionInfo, TimelineData } from '../../src/index/rows.js';
import { chatInputTokens, startChatDouble, type ChatDouble } from './doubles/openai-chat.js';
import { tmpDir } from './harness.js';
import { OPENCODE_VERSION, checkKeptPrefix, openCodeKept, opencodeDirs, runOpenCode, type OpenCodeRun } from './opencode.js';

const RUN_MS = 120_000;
/** 6,000 lines, about 250 KB: over both of OpenCode's caps (2,000 lines, 50 KB). */
const BIG = Array.from({ length: 6_000 }, (_, i) => `line ${i} of the build log: step ${i % 37} finished in ${(i * 7) % 1000} ms`).join('\n');

describe(`OpenCode ${OPENCODE_VERSION}: its session in the index and the Timeline`, () => {
  let d: ChatDouble;
  let run: OpenCodeRun;
  let index: SpillIndex;
  let session: SessionInfo;
  let timeline: TimelineData;
  let cwd: string;
  const during = { scans: 0, warnings: [] as string[], errors: [] as string[] };

  beforeAll(async () => {
    cwd = tmpDir('spillway-oc-index-');
    const home = tmpDir('spillway-oc-index-home-');
    fs.writeFileSync(path.join(cwd, 'build.log'), BIG);
    const bash = (id: string, command: string) => ({ call: { name: 'bash', arguments: { command, description: id }, callId: id } });
    d = await startChatDouble({
      steps: [bash('call_cat', 'cat build.log'), bash('call_small', 'echo small'), { text: 'done' }],
      // A cache that grows with the conversation: half of every prompt (rounded down) read from it.
      usage: (body) => {
        const prompt = chatInputTokens(body);
        return { prompt_tokens: prompt, cached_tokens: Math.floor(prompt / 2) };
      },
    });
    // The data folder the index watches: OpenCode creates its database in it.
    const data = path.join(opencodeDirs(home).data, 'opencode');
    fs.mkdirSync(data, { recursive: true });
    index = openIndex({ dbPath: path.join(tmpDir('spillway-oc-index-db-'), 'index.sqlite') });
    const timelines = openTimelines(index);
    index.addRoot(data);
    // Scans while OpenCode writes, as the service's watcher would: none may fail.
    let scanning = Promise.resolve();
    const poll = setInterval(() => {
      scanning = scanning.then(
        async () => {
          const r = await index.scan();
          during.scans++;
          during.warnings.push(...r.warnings);
        },
        (err: unknown) => void during.errors.push(String(err)),
      );
    }, 200);
    try {
      run = await runOpenCode({ baseUrl: d.origin, prompt: 'what does the build log say?', cwd, home, timeoutMs: RUN_MS });
    } finally {
      clearInterval(poll);
      await scanning;
    }
    const r = await index.scan();
    during.warnings.push(...r.warnings);
    const sessions = index.listSessions();
    console.log(`opencode run: exit ${run.code} in ${run.ms} ms; ${during.scans} scans during it; sessions: ${JSON.stringify(sessions.map((s) => [s.kind, s.title, s.payloadCount]))}`);
    session = sessions[0]!;
    timeline = (await timelines.timeline({ sessionId: session.id }))!;
  }, RUN_MS + 60_000);
  afterAll(async () => {
    await index?.close();
    await d?.close();
  });

  it('runs to the end; scanning its database while it ran never failed', () => {
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(during.errors).toEqual([]);
    expect(during.warnings).toEqual([]);
    expect(during.scans).toBeGreaterThan(0);
  });

  it('one session, OpenCode\'s, in the folder it ran in, with its version', () => {
    expect(index.listSessions()).toHaveLength(1);
    expect(session).toMatchObject({ kind: 'opencode', readOnly: true, client: `OpenCode ${OPENCODE_VERSION}`, payloadCount: 2 });
    expect(session.project).toBe(cwd);
    expect(path.basename(session.path)).toMatch(/^ses_/);
    expect(session.title).toBeTruthy();
  });

  it("the cat is a payload row holding every byte OpenCode kept of the output; the model got OpenCode's cut; the small result re-reads from the database", async () => {
    const rows = index.listPayloads({ sessionId: session.id }).rows;
    const cat = rows.find((p) => p.inputExcerpt?.includes('cat build.log'))!;
    const small = rows.find((p) => p.inputExcerpt?.includes('echo small'))!;
    // OpenCode's own file (what the row re-reads), all of the log whenever OpenCode read it whole.
    const kept = openCodeKept(run.dataDir, 'call_cat');
    checkKeptPrefix(kept.bytes, Buffer.from(BIG), 'the cat of build.log');
    expect(cat.bytes).toBe(kept.bytes.length);
    const detail = await index.getPayload(cat.id);
    expect(detail.message).toMatch(/^\.\.\.output truncated\.\.\.\n\nFull output saved to: .*tool-output/);
    const whole = await index.payloadContent(cat.id);
    expect(whole.type).toBe('file');
    expect(whole.type === 'file' && fs.readFileSync(whole.path).equals(kept.bytes)).toBe(true);
    expect(await index.payloadContent(small.id)).toEqual({ type: 'text', text: 'small\n', bytes: 6 });
  });

  it("the Timeline: one call per main request, each call's context the usage the double reported", () => {
    const main = d.reported.filter((r) => r.main).map((r) => r.usage.prompt_tokens);
    const read = timeline.turns.map((t) => t.context);
    console.log(`double reported (main): ${JSON.stringify(main)}; Timeline: ${JSON.stringify(read)}`);
    expect(main).toHaveLength(3);
    expect(read).toEqual(main);
    // The cat's result entered with the second call, and OpenCode's rule is the ledger's baseline for it.
    const cat = timeline.turns[1]!.tools[0]!;
    expect(cat.id).toBe('call_cat');
    expect(cat.ledger!.asClient.rule).toBe('opencode.bash');
    expect(cat.ledger!.asClient.tokens).toBeLessThan(cat.ledger!.full.tokens);
    expect(timeline.turns[2]!.tools.map((t) => t.id)).toEqual(['call_small']);
  });
});
