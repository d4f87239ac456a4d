/**
 * The context timeline of sessions the real binaries run now (not only the frozen fixtures):
 * Claude Code 2.1.328 and Codex 0.171.0 driven by the scripted doubles, whose usage is counted from
 * the request they got (timeline-runs.ts), then the run's HOME indexed by Spillway. The timeline's
 * per-call context must be what the double reported, call by call, and its compactions must sit
 * where the client sent its summarisation request.
 *
 * - the same 22-call script with big Read, Bash and MCP results, once with the hook `spillway setup
 *   claude-code` wrote into the temp HOME and once without, under CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=10
 *   (a trigger of 98,000): what the client sent the model shows the guarded session stayed smaller;
 * - a sub-agent (Agent tool, sync, and in the background) that makes calls of its own: its usage
 *   lands in its own file (`<session>/subagents/agent-<id>.jsonl`, every line isSidechain) and its
 *   own lane, never in the parent's turns. In the background the Agent result is `async_launched`
 *   at once; when the sub-agent ends, a `<task-notification>` user line reaches the parent, which
 *   makes one more call of its own (a parent turn, as the double saw it);
 * - Codex with `model_auto_compact_token_limit = 12000`, which compacts by itself.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex, type SpillIndex } from '../../src/index/index.js';
import { openTimelines, type Timelines } from '../../src/timeline/index.js';
import type { TimelineData } from '../../src/index/rows.js';
import type { AnthropicStep } from './doubles/anthropic.js';
import { ROOT, tmpDir } from './harness.js';
import { SUBAGENT_MARK, claudeSession, isClaudeSummaryRequest, isSubagentRequest, codexSession, compactionTurns, textFile, type ClaudeSession, type CodexSession } from './timeline-runs.js';

const BIN = path.join(ROOT, 'bin', 'spillway.js');
/** A run of 22 calls with a hook per call, on a loaded machine. */
const RUN_MS = 420_000;
const CALLS = 22;

const indexes: SpillIndex[] = [];
afterAll(async () => {
  for (const i of indexes.splice(0)) await i.close();
});

async function timelineOf(root: string): Promise<{ index: SpillIndex; timelines: Timelines; main: TimelineData; all: TimelineData[] }> {
  const index = openIndex({ dbPath: path.join(tmpDir('spillway-tl-db-'), 'index.sqlite') });
  const timelines = openTimelines(index);
  indexes.push(index);
  index.addRoot(root);
  const scan = await index.scan();
  expect(scan.warnings).toEqual([]);
  const sessions = index.listSessions();
  const all = await Promise.all(sessions.map(async (s) => (await timelines.timeline({ sessionId: s.id }))!));
  const top = sessions.filter((s) => !s.parentSessionId);
  expect(top).toHaveLength(1);
  return { index, timelines, main: (await timelines.timeline({ sessionId: top[0]!.id }))!, all };
}

/** Read, Bash and MCP calls on files big enough that each result is over the guard's default limit (Bash stays under Claude Code's own 30,000-char cut). */
function bigScript(data: string): AnthropicStep[] {
  const steps: AnthropicStep[] = [];
  for (let i = 0; i < CALLS; i++) {
    const word = `w${i}x`;
    if (i % 7 === 5) steps.push({ toolUses: [{ name: 'mcp__fs__read_text_file', input: { path: textFile(data, `m${i}.txt`, 60_000, word) } }] });
    else if (i % 4 === 3) steps.push({ toolUses: [{ name: 'Bash', input: { command: `cat ${textFile(data, `b${i}.txt`, 20_000, word)}`, description: `show file ${i}` } }] });
    else steps.push({ toolUses: [{ name: 'Read', input: { file_path: textFile(data, `r${i}.txt`, 60_000, word) } }] });
  }
  return steps;
}

const PCT = { CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '10' };

/** Every tool_result the main loop sent the model (first time seen), from the recorded requests. */
function sentResults(s: ClaudeSession): any[] {
  const seen = new Map<string, any>();
  for (const r of s.double.requests) {
    if (!r.url.startsWith('/v1/messages') || r.url.includes('count_tokens') || !r.body?.tools?.length || isSubagentRequest(r.body) || isClaudeSummaryRequest(r.body)) continue;
    for (const m of r.body.messages ?? []) for (const b of Array.isArray(m?.content) ? m.content : []) if (b?.type === 'tool_result' && !seen.has(b.tool_use_id)) seen.set(b.tool_use_id, b);
  }
  return [...seen.values()];
}

const toolResultChars = (s: ClaudeSession) => sentResults(s).map((b) => JSON.stringify(b.content).length);

function expectMatchesDouble(t: TimelineData, s: ClaudeSession) {
  const main = t.turns.filter((x) => x.kind === 'main');
  expect(main.map((x) => x.context)).toEqual(s.usage.main);
  expect(main.every((x) => x.context === x.input! + x.cacheWrite! + x.cacheRead!)).toBe(true);
  expect(t.compactions.filter((c) => c.kind === 'compact').map((c) => c.turn)).toEqual(compactionTurns(s.usage));
  // The split of each measured delta adds up to it, to rounding.
  for (const x of main) if (x.delta !== null && x.delta > 0) expect(Math.abs(Object.values(x.parts).reduce((a, b) => a + b, 0) - x.delta)).toBeLessThanOrEqual(Object.keys(x.parts).length);
}

describe('Claude Code 2.1.328, 22 calls of big results, with and without the hook setup installed', () => {
  let bare: ClaudeSession;
  let guarded: ClaudeSession;
  let bareTl: TimelineData;
  let guardedTl: TimelineData;
  let bareTimelines: Timelines;

  beforeAll(async () => {
    const home = tmpDir('spillway-tl-guard-home-');
    fs.mkdirSync(path.join(home, 'tmp'));
    const out = execFileSync(process.execPath, [BIN, 'setup', 'claude-code'], { env: { PATH: '/usr/bin:/bin', HOME: home, SPILLWAY_HOME: path.join(home, 'spillway') }, encoding: 'utf8', timeout: 120_000 });
    expect(out).toMatch(/settings\.json/);
    [bare, guarded] = await Promise.all([
      claudeSession({ script: bigScript, mcp: true, env: PCT, timeoutMs: RUN_MS }),
      claudeSession({ script: bigScript, mcp: true, env: PCT, home, timeoutMs: RUN_MS }),
    ]);
    for (const s of [bare, guarded]) await s.double.close();
    ({ main: bareTl, timelines: bareTimelines } = await timelineOf(path.join(bare.run.home, '.claude', 'projects')));
    guardedTl = (await timelineOf(path.join(guarded.run.home, '.claude', 'projects'))).main;
  }, 2 * RUN_MS + 120_000);

  it('both runs went through all 22 calls', () => {
    for (const s of [bare, guarded]) {
      expect(s.run.timedOut).toBe(false);
      expect(s.run.code, s.run.stderr.slice(-2000)).toBe(0);
      expect(sentResults(s)).toHaveLength(CALLS);
    }
    // The hook ran on the guarded session only: its big results reached the model as Spillway's messages.
    expect(sentResults(guarded).filter((b) => JSON.stringify(b.content).includes('[spillway]')).length).toBeGreaterThanOrEqual(CALLS - 6);
    expect(sentResults(bare).some((b) => JSON.stringify(b.content).includes('[spillway]'))).toBe(false);
  });

  it("Spillway's timeline of each is the usage the double reported, call by call, with the compactions where the client asked for a summary", () => {
    expectMatchesDouble(bareTl, bare);
    expectMatchesDouble(guardedTl, guarded);
    expect(bareTl.compactions.every((c) => c.trigger === 'auto')).toBe(true);
  });

  it('what the client sent the model: the guarded context stayed smaller, and compacted less', () => {
    const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
    expect(sum(toolResultChars(guarded))).toBeLessThan(sum(toolResultChars(bare)) / 3);
    expect(Math.max(...guarded.usage.main)).toBeLessThan(Math.max(...bare.usage.main));
    expect(sum(guarded.usage.main)).toBeLessThan(sum(bare.usage.main));
    // Up to the bare session's first compaction, every guarded call is the smaller one.
    const first = compactionTurns(bare.usage)[0] ?? bare.usage.main.length;
    for (let i = 1; i < first; i++) expect(guarded.usage.main[i]!).toBeLessThan(bare.usage.main[i]!);
    expect(bare.usage.summaries).toBeGreaterThan(guarded.usage.summaries);
    expect(bareTl.measured.compactions).toBe(bare.usage.summaries);
    expect(guardedTl.measured.compactions).toBe(guarded.usage.summaries);
  });

  it("the replay of the bare session under the run's rule finds its compactions; with the guard at the default limit it predicts what the guarded run did", async () => {
    const t = (await bareTimelines.timeline({ sessionId: bareTl.sessionId, autoCompactPct: 10, limits: [12_000] }, { guardBudgetMs: 120_000 }))!;
    expect(t.rule.trigger).toBe(98_000);
    const real = t.compactions.map((c) => c.turn);
    const [asRan, , g12k] = t.replays;
    expect(asRan!.compactionsAt).toHaveLength(real.length);
    asRan!.compactionsAt.forEach((c, i) => expect(Math.abs(c - real[i]!)).toBeLessThanOrEqual(1));
    expect(g12k!.compactionsAt).toHaveLength(guardedTl.compactions.length);
  });

  it("with the guarded run's spills indexed too, its replay without the guard predicts the bare run's compactions within one turn", async () => {
    const index = openIndex({ dbPath: path.join(tmpDir('spillway-tl-db-'), 'index.sqlite') });
    const timelines = openTimelines(index);
    indexes.push(index);
    index.addRoot(path.join(guarded.run.home, '.claude', 'projects'));
    index.addRoot(path.join(guarded.run.home, 'spillway', 'sessions'));
    expect((await index.scan()).warnings).toEqual([]);
    const t = (await timelines.timeline({ sessionId: guardedTl.sessionId, autoCompactPct: 10, limits: [12_000] }, { guardBudgetMs: 120_000 }))!;
    const [asRan, noGuard, g12k] = t.replays;
    expect(asRan!.compactionsAt).toEqual([]);
    const real = compactionTurns(bare.usage);
    expect(real.length).toBeGreaterThan(0);
    expect(Math.abs(noGuard!.compactionsAt.length - real.length)).toBeLessThanOrEqual(1);
    expect(Math.abs(noGuard!.compactionsAt[0]! - real[0]!)).toBeLessThanOrEqual(1);
    // The guard at the limit it ran with: the peak it really had, within 5%.
    expect(g12k!.compactionsAt).toEqual([]);
    expect(Math.abs(g12k!.peak - guardedTl.measured.peak) / guardedTl.measured.peak).toBeLessThan(0.05);
  });
});

describe('Claude Code 2.1.328, a sub-agent with calls of its own', () => {
  let s: ClaudeSession;
  let main: TimelineData;
  let all: TimelineData[];

  beforeAll(async () => {
    let subData = '';
    s = await claudeSession({
      script: (data) => {
        subData = data;
        return [
          { toolUses: [{ name: 'Read', input: { file_path: textFile(data, 'parent.txt', 8_000, 'parent') } }] },
          { toolUses: [{ name: 'Agent', input: { description: 'read the notes', prompt: `${SUBAGENT_MARK} read the notes file`, subagent_type: 'general-purpose', run_in_background: false } }] },
          { toolUses: [{ name: 'Read', input: { file_path: textFile(data, 'after.txt', 4_000, 'after') } }] },
        ];
      },
      subagent: (body) => {
        const results = (body?.messages ?? []).flatMap((m: any) => (Array.isArray(m?.content) ? m.content.filter((b: any) => b?.type === 'tool_result') : []));
        if (results.length === 0) return { toolUses: [{ name: 'Read', input: { file_path: textFile(subData, 'sub1.txt', 30_000, 'subone') } }] };
        if (results.length === 1) return { toolUses: [{ name: 'Bash', input: { command: `cat ${textFile(subData, 'sub2.txt', 12_000, 'subtwo')}`, description: 'show the second notes file' } }] };
        return { text: 'The notes hold numbered lines about a quick brown fox.' };
      },
      timeoutMs: RUN_MS,
    });
    await s.double.close();
    ({ main, all } = await timelineOf(path.join(s.run.home, '.claude', 'projects')));
  }, RUN_MS + 60_000);

  it('the run completed, and the sub-agent made its own three calls', () => {
    expect(s.run.code, s.run.stderr.slice(-2000)).toBe(0);
    expect(s.usage.sub).toHaveLength(3);
    expect(s.usage.main).toHaveLength(4);
  });

  it("the parent's timeline is its own calls only; the sub-agent is its own lane with its own usage, counted once", () => {
    expect(main.turns.map((t) => t.context)).toEqual(s.usage.main);
    expect(main.subagents).toHaveLength(1);
    expect(main.subagents[0]!.calls).toBe(3);
    const sub = all.find((t) => t.sessionId === main.subagents[0]!.sessionId)!;
    expect(sub.turns.map((t) => t.context)).toEqual(s.usage.sub);
    expect(main.subagents[0]!.peak).toBe(Math.max(...s.usage.sub));
    // The Agent tool's answer enters the parent as one tool result, not as the sub-agent's calls.
    expect(main.turns[2]!.tools.map((t) => t.name)).toEqual(['Agent']);
  });
});

describe('Claude Code 2.1.328, a sub-agent in the background (run_in_background: true)', () => {
  let s: ClaudeSession;
  let main: TimelineData;
  let all: TimelineData[];

  beforeAll(async () => {
    let subData = '';
    s = await claudeSession({
      script: (data) => {
        subData = data;
        return [
          { toolUses: [{ name: 'Agent', input: { description: 'read the notes', prompt: `${SUBAGENT_MARK} read the notes file`, subagent_type: 'general-purpose', run_in_background: true } }] },
          { toolUses: [{ name: 'Read', input: { file_path: textFile(data, 'parent.txt', 8_000, 'parent') } }] },
        ];
      },
      subagent: (body) => {
        const results = (body?.messages ?? []).flatMap((m: any) => (Array.isArray(m?.content) ? m.content.filter((b: any) => b?.type === 'tool_result') : []));
        if (results.length === 0) return { toolUses: [{ name: 'Read', input: { file_path: textFile(subData, 'sub1.txt', 30_000, 'subone') } }] };
        return { text: 'The notes hold numbered lines about a quick brown fox.' };
      },
      timeoutMs: RUN_MS,
    });
    await s.double.close();
    ({ main, all } = await timelineOf(path.join(s.run.home, '.claude', 'projects')));
  }, RUN_MS + 60_000);

  it("the sub-agent's two calls are its own lane; the parent's turns are the parent's requests only", () => {
    expect(s.run.code, s.run.stderr.slice(-2000)).toBe(0);
    expect(s.usage.sub).toHaveLength(2);
    expect(main.turns.map((t) => t.context)).toEqual(s.usage.main);
    expect(main.subagents).toEqual([expect.objectContaining({ calls: 2, peak: Math.max(...s.usage.sub) })]);
    expect(all.find((t) => t.sessionId === main.subagents[0]!.sessionId)!.turns.map((t) => t.context)).toEqual(s.usage.sub);
  });
});

describe('Codex 0.171.0 with model_auto_compact_token_limit = 12000', () => {
  let s: CodexSession;
  let t: TimelineData;
  let timelines: Timelines;

  beforeAll(async () => {
    s = await codexSession({
      script: (data) => [
        ...[0, 1, 2, 3].map((i) => ({ call: { name: 'exec_command', arguments: { cmd: `cat ${textFile(data, `c${i}.txt`, 6_000, `cx${i}`)}` } } })),
        { call: { name: 'read_text_file', namespace: 'mcp__fs', arguments: { path: textFile(data, 'm.txt', 6_000, 'cxm') } } },
      ],
      topToml: 'model_auto_compact_token_limit = 12000',
    });
    await s.double.close();
    ({ main: t, timelines } = await timelineOf(path.join(s.run.codexHome, 'sessions')));
  }, RUN_MS);

  it('the run completed and Codex compacted by itself', () => {
    expect(s.run.code, s.run.stderr.slice(-2000)).toBe(0);
    expect(s.compactRequests).toBeGreaterThan(0);
  });

  it("Spillway's timeline is the usage the double reported, with each compaction before the call after its summary", () => {
    expect(t.turns.filter((x) => x.kind === 'main').map((x) => x.context)).toEqual(s.main);
    const at: number[] = [];
    let n = 0;
    for (const o of s.order) if (o === 'main') n++;
    else at.push(n);
    expect(t.compactions.map((c) => c.turn)).toEqual(at);
    expect(t.rule.window).toBeGreaterThan(0);
  });

  it('the replay under the limit it ran with finds the compactions where they happened, within one turn', async () => {
    const r = (await timelines.timeline({ sessionId: t.sessionId, autoCompactLimit: 12_000 }))!;
    expect(r.rule).toMatchObject({ trigger: 12_000, triggerSource: 'read' });
    const real = r.compactions.map((c) => c.turn);
    expect(r.replays[0]!.compactionsAt).toHaveLength(real.length);
    r.replays[0]!.compactionsAt.forEach((c, i) => expect(Math.abs(c - real[i]!)).toBeLessThanOrEqual(1));
  });
});
