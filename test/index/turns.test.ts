/**
 * Turns and compactions read from transcripts the real clients wrote (fixtures/timeline/SOURCES.md
 * lists what each double reported, so the expected context of every call is known), and from
 * damaged copies of them: a torn last line, no usage, placeholders, unknown records.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClaudeTurns } from '../../src/index/turns-claude.js';
import { REPO, copyTree, tmpDir } from './helpers.js';
import { tmpTimelines } from '../timeline/helpers.js';

const TL = path.join(REPO, 'test', 'index', 'fixtures', 'timeline');
const REAL = path.join(REPO, 'test', 'index', 'fixtures', 'real');
const CC_CONTEXTS = [20_492, 271_412, 532_273, 783_571, 1_035_054, 273_401, 523_606, 774_116];
const CODEX_MAIN = [8_696, 10_278, 8_843, 8_845, 9_701, 9_844];
const SUB_PARENT = [18_673, 21_214, 21_538, 22_860];
const SUB_AGENT = [14_670, 24_833, 28_212];
const GEMINI_MAIN = [10_194, 16_006, 21_818, 27_630, 29_956];

async function turnsOf(root: string) {
  const { index, timelines } = tmpTimelines();
  index.addRoot(root);
  const scan = await index.scan();
  const db = (index as unknown as { core: { db: import('better-sqlite3').Database } }).core.db;
  const turns = db.prepare('SELECT * FROM turns ORDER BY session_id, source_id, seq').all() as any[];
  const compactions = db.prepare('SELECT * FROM compactions ORDER BY session_id, source_id, n').all() as any[];
  const notes = db.prepare('SELECT * FROM turn_sources').all() as any[];
  return { index, timelines, scan, turns, compactions, notes };
}

describe('turns from Claude Code 2.1.328', () => {
  it('one turn per API call, its context the usage the double reported, the compaction where it happened', async () => {
    const { turns, compactions, notes, scan } = await turnsOf(path.join(TL, 'claude-code'));
    expect(scan.warnings).toEqual([]);
    expect(turns.map((t) => t.context)).toEqual(CC_CONTEXTS);
    expect(turns.every((t) => t.context === t.input + t.cache_write + t.cache_read)).toBe(true);
    expect(compactions).toHaveLength(1);
    expect(compactions[0]).toMatchObject({ seq: 5, kind: 'compact', trigger: 'auto', pre_tokens: 1_035_425 });
    // The summary the call after the compaction got.
    expect(JSON.parse(turns[5].parts_json).summary).toBeGreaterThan(0);
    // Tool results enter the call after the one that asked for them, linked by tool_use id.
    const tools = turns.map((t) => JSON.parse(t.tools_json).map((x: any) => x.name));
    expect(tools).toEqual([[], ['Read'], ['Bash'], ['Read'], ['mcp__fs__read_text_file'], ['Read'], ['Bash'], ['Read']]);
    expect(notes[0].baseline_tokens).toBeGreaterThan(5_000);
    expect(JSON.parse(notes[0].notes_json)).toEqual([]);
  });

  it('a torn last line, usage-less calls and unknown records are indexed with what they have and said', async () => {
    const dir = copyTree(path.join(TL, 'claude-code'), path.join(tmpDir(), 'cc'));
    const file = path.join(dir, '-home-dev-project', '0e02aa84-881c-4e4d-b477-9a48058d9661.jsonl');
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    let stripped = 0;
    const out = lines.map((l) => {
      const o = JSON.parse(l);
      // The 3rd call loses its usage on every line of it.
      if (o.type === 'assistant' && o.message?.id === JSON.parse(lines.find((x) => x.includes('"cache_read_input_tokens":291961'))!).message.id) {
        delete o.message.usage;
        stripped++;
      }
      return JSON.stringify(o);
    });
    out.splice(3, 0, JSON.stringify({ type: 'some-future-record', payload: { usage: 1 } }));
    const last = out.pop()!;
    fs.writeFileSync(file, `${out.join('\n')}\n${last.slice(0, Math.floor(last.length / 2))}`);
    expect(stripped).toBeGreaterThan(0);
    const { turns, notes } = await turnsOf(dir);
    expect(turns.map((t) => t.context)).toEqual([20_492, 271_412, null, ...CC_CONTEXTS.slice(3)]);
    expect(JSON.parse(notes[0].notes_json)).toEqual(expect.arrayContaining([expect.stringMatching(/1 call\(s\) without usage/)]));
  });

  it('a streamed call whose first line holds placeholder usage counts once, with the largest figures', async () => {
    const dir = copyTree(path.join(TL, 'claude-code'), path.join(tmpDir(), 'cc'));
    const file = path.join(dir, '-home-dev-project', '0e02aa84-881c-4e4d-b477-9a48058d9661.jsonl');
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    const first = lines.findIndex((l) => l.includes('"type":"assistant"'));
    const o = JSON.parse(lines[first]!);
    const placeholder = { ...o, uuid: `${o.uuid}-p`, message: { ...o.message, content: [{ type: 'text', text: '' }], usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } } };
    lines.splice(first, 0, JSON.stringify(placeholder));
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const { turns } = await turnsOf(dir);
    expect(turns.map((t) => t.context)).toEqual(CC_CONTEXTS);
    expect(turns[0].output).toBe(45);
  });

  it('a sub-agent transcript kept without its assistant lines (no usage at all) is indexed, says so, and its parent keeps its turns', async () => {
    const { index, turns, notes, scan } = await turnsOf(path.join(REAL, 'claude-code', '04-agent-sync-webfetch-websearch'));
    expect(scan.warnings).toEqual([]);
    const sessions = index.listSessions();
    const sub = sessions.find((s) => s.parentSessionId);
    expect(sub).toBeDefined();
    const parent = sessions.find((s) => s.id === sub!.parentSessionId)!;
    expect(turns.filter((t) => t.session_id === sub!.id)).toEqual([]);
    expect(JSON.parse(notes.find((n) => n.session_id === sub!.id).notes_json)).toEqual(['no API call with usage in this transcript']);
    const mainTurns = turns.filter((t) => t.session_id === parent.id);
    expect(mainTurns.length).toBeGreaterThan(0);
    expect(mainTurns.every((t) => t.kind === 'main' && t.context > 0)).toBe(true);
  });
});

describe('a sub-agent of Claude Code 2.1.328 with calls of its own (fixtures/timeline/claude-code-subagent)', () => {
  it("its calls are its own session's sidechain lane, never the parent's turns; the Agent result's own usage is not a call", async () => {
    const { index, timelines, turns, scan } = await turnsOf(path.join(TL, 'claude-code-subagent'));
    expect(scan.warnings).toEqual([]);
    const sessions = index.listSessions();
    const sub = sessions.find((s) => s.parentSessionId)!;
    const parent = sessions.find((s) => s.id === sub.parentSessionId)!;
    const of = (id: string) => turns.filter((t) => t.session_id === id);
    expect(of(parent.id).map((t) => [t.kind, t.context])).toEqual(SUB_PARENT.map((c) => ['main', c]));
    expect(of(sub.id).map((t) => [t.kind, t.context])).toEqual(SUB_AGENT.map((c) => ['sidechain', c]));
    // The Agent tool's result (toolUseResult.usage: the sub-agent's last call) enters the parent as one tool result.
    expect(JSON.parse(of(parent.id)[2].tools_json).map((t: any) => t.name)).toEqual(['Agent']);
    const t = (await timelines.timeline({ sessionId: parent.id }))!;
    expect(t.turns.map((x) => x.context)).toEqual(SUB_PARENT);
    expect(t.subagents).toEqual([expect.objectContaining({ sessionId: sub.id, calls: 3, peak: SUB_AGENT[2] })]);
    expect((await timelines.timeline({ sessionId: sub.id }))!.turns.map((x) => x.context)).toEqual(SUB_AGENT);
  });
});

describe('turns from Codex 0.171.0', () => {
  it('one turn per response from token_usage_record, the window from token_count, both compactions after their summarisation calls', async () => {
    const { turns, compactions, scan } = await turnsOf(path.join(TL, 'codex'));
    expect(scan.warnings).toEqual([]);
    expect(turns.filter((t) => t.kind === 'main').map((t) => t.context)).toEqual(CODEX_MAIN);
    expect(turns.filter((t) => t.kind === 'summary')).toHaveLength(2);
    expect(turns.every((t) => t.window === 258_400)).toBe(true);
    expect(compactions.map((c) => c.seq)).toEqual(turns.flatMap((t, i) => (t.kind === 'summary' ? [i + 1] : [])));
  });

  it('without token_usage_record (older Codex), calls come from token_count, deduplicated, resets skipped', async () => {
    const dir = copyTree(path.join(TL, 'codex'), path.join(tmpDir(), 'cx'));
    const file = path.join(dir, '2026', '12', '01', fs.readdirSync(path.join(dir, '2026', '12', '01'))[0]!);
    const kept = fs.readFileSync(file, 'utf8').split('\n').filter((l) => !l.includes('"type":"token_usage_record"'));
    fs.writeFileSync(file, kept.join('\n'));
    const { turns, notes } = await turnsOf(dir);
    // token_count lags its call and repeats itself; every distinct call is there once.
    expect(turns.map((t) => t.context).filter((c) => c !== null).length).toBe(CODEX_MAIN.length + 2);
    expect(JSON.parse(notes[0].notes_json).join('\n')).toMatch(/token_count/);
  });
});

describe('turns from Gemini CLI 0.61.0 (a session-*.jsonl chat log)', () => {
  it('found as a Gemini chat, one turn per call though each tool-calling message is written twice, its context the promptTokenCount the double reported', async () => {
    const { index, turns, scan, notes } = await turnsOf(path.join(TL, 'gemini'));
    expect(scan.warnings).toEqual([]);
    const [s] = index.listSessions();
    expect(s).toMatchObject({ client: 'Gemini CLI' });
    expect(turns.map((t) => t.context)).toEqual(GEMINI_MAIN);
    // Cached: the prefix the request before sent.
    expect(turns.map((t) => t.cache_read)).toEqual([0, ...GEMINI_MAIN.slice(0, -1)]);
    expect(turns.map((t) => JSON.parse(t.tools_json).map((x: any) => x.name))).toEqual([[], ['read_file'], ['read_file'], ['read_file'], ['run_shell_command']]);
    expect(JSON.parse(notes[0].notes_json)).toEqual([]);
    const payloads = index.listPayloads({ sessionId: s!.id }).rows;
    expect(payloads.map((p) => p.tool).sort()).toEqual(['read_file', 'read_file', 'read_file', 'run_shell_command']);
  });
});

describe('Claude Code tool results: placed while listing, estimated at the first timeline', () => {
  const PCT5 = path.join('-home-dev-project', 'b6c8ada3-0627-4c6a-9893-2935c9fb2b12.jsonl');
  const rowsOf = (index: unknown) => (index as { core: { db: import('better-sqlite3').Database } }).core.db.prepare('SELECT tools_json FROM turns ORDER BY source_id, seq').all() as Array<{ tools_json: string }>;

  it('the first timeline estimates each result as the reader does line by line, keeps the number, and a later one needs no transcript', async () => {
    const dir = copyTree(path.join(TL, 'claude-code-pct5'), path.join(tmpDir(), 'cc'));
    const file = path.join(dir, PCT5);
    // Fed line by line (no place known), the reader estimates every result at once: the numbers to match.
    const reader = new ClaudeTurns();
    fs.readFileSync(file, 'utf8').split('\n').forEach((l, i) => l && reader.line(Buffer.from(l), i));
    const eager = new Map(reader.result().turns.flatMap((t) => t.tools.map((x) => [x.id, x.tokens] as const)));
    expect(eager.size).toBeGreaterThan(3);
    expect([...eager.values()].every((n) => n > 0)).toBe(true);

    const { index, dbPath, timelines } = tmpTimelines(undefined, { backgroundEstimates: false });
    index.addRoot(dir);
    await index.scan();
    await index.idle();
    const placed = rowsOf(index).flatMap((r) => JSON.parse(r.tools_json));
    expect(placed).toHaveLength(eager.size);
    expect(placed.every((x: any) => x.tokens === 0 && x.at.length > 0 && x.at.block >= 0)).toBe(true);

    const id = index.listSessions()[0]!.id;
    const estimated = async (i: typeof timelines) => new Map((await i.timeline({ sessionId: id }))!.turns.flatMap((t) => t.tools.map((x) => [x.id, x.estimated] as const)));
    expect(await estimated(timelines)).toEqual(eager);
    const kept = rowsOf(index).flatMap((r) => JSON.parse(r.tools_json));
    expect(kept.every((x: any) => x.tokens === eager.get(x.id))).toBe(true);
    await index.close();

    // Kept in the index: the transcript is not read again.
    fs.rmSync(file);
    const again = tmpTimelines(dbPath);
    expect(await estimated(again.timelines)).toEqual(eager);
    expect((await again.timelines.timeline({ sessionId: id }))!.notes.join('\n')).not.toMatch(/not found/);
    await again.index.close();
  });

  it('by default a third phase estimates them in the background after the full text: the first timeline reads stored numbers', async () => {
    const dir = copyTree(path.join(TL, 'claude-code-pct5'), path.join(tmpDir(), 'cc'));
    const reader = new ClaudeTurns();
    fs.readFileSync(path.join(dir, PCT5), 'utf8').split('\n').forEach((l, i) => l && reader.line(Buffer.from(l), i));
    const eager = new Map(reader.result().turns.flatMap((t) => t.tools.map((x) => [x.id, x.tokens] as const)));
    const { index, timelines } = tmpTimelines();
    index.addRoot(dir);
    await index.scan();
    await index.idle();
    const kept = rowsOf(index).flatMap((r) => JSON.parse(r.tools_json));
    expect(kept).toHaveLength(eager.size);
    expect(kept.every((x: any) => x.at && x.tokens === eager.get(x.id))).toBe(true);
    // Stored: the timeline no longer needs the transcript.
    fs.rmSync(path.join(dir, PCT5));
    const t = (await timelines.timeline({ sessionId: index.listSessions()[0]!.id }))!;
    expect(new Map(t.turns.flatMap((x) => x.tools.map((y) => [y.id, y.estimated] as const)))).toEqual(eager);
    await index.close();
  });

  it('a transcript that grew is listed again whole: the timeline takes over the numbers of the places it saw and estimates the new lines', async () => {
    const dir = copyTree(path.join(TL, 'claude-code-pct5'), path.join(tmpDir(), 'cc'));
    const file = path.join(dir, PCT5);
    const { index, timelines } = tmpTimelines();
    index.addRoot(dir);
    await index.scan();
    const id = index.listSessions()[0]!.id;
    const before = (await timelines.timeline({ sessionId: id }))!.turns.flatMap((t) => t.tools);
    // One more result, and the call it enters.
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
    const result = JSON.parse(lines.findLast((l) => l.includes('"type":"user"') && l.includes('"tool_result"'))!);
    result.uuid = 'u-more';
    result.message.content = [{ ...result.message.content[0], tool_use_id: 'toolu_more', content: 'one more result\n'.repeat(200) }];
    const call = JSON.parse(lines.findLast((l) => l.includes('"type":"assistant"'))!);
    call.uuid = 'a-more';
    call.message.id = 'msg_more';
    // Its last line ends the file without a newline: the client writes the next line after one.
    fs.appendFileSync(file, `${fs.readFileSync(file, 'utf8').endsWith('\n') ? '' : '\n'}${JSON.stringify(result)}\n${JSON.stringify(call)}\n`);
    await index.scan();
    const after = (await timelines.timeline({ sessionId: id }))!.turns.flatMap((t) => t.tools);
    expect(after.slice(0, before.length).map((x) => x.estimated)).toEqual(before.map((x) => x.estimated));
    const reader = new ClaudeTurns();
    fs.readFileSync(file, 'utf8').split('\n').forEach((l, i) => l && reader.line(Buffer.from(l), i));
    const eager = reader.result().turns.flatMap((t) => t.tools);
    expect(after.map((x) => [x.id, x.estimated])).toEqual(eager.map((x) => [x.id, x.tokens]));
    expect(after.at(-1)).toMatchObject({ id: 'toolu_more', estimated: expect.any(Number) });
    expect(after.at(-1)!.estimated).toBeGreaterThan(100);
    await index.close();
  });

  it('a transcript cut since its listing: the results past the cut count 0 and the timeline says so', async () => {
    const dir = copyTree(path.join(TL, 'claude-code-pct5'), path.join(tmpDir(), 'cc'));
    const file = path.join(dir, PCT5);
    const { index, timelines } = tmpTimelines(undefined, { backgroundEstimates: false });
    index.addRoot(dir);
    await index.scan();
    const text = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(file, text.slice(0, Math.floor(text.length / 2)));
    const tl = (await timelines.timeline({ sessionId: index.listSessions()[0]!.id }))!;
    const tools = tl.turns.flatMap((t) => t.tools);
    const lost = tools.filter((x) => x.estimated === 0).length;
    expect(lost).toBeGreaterThan(0);
    expect(lost).toBeLessThan(tools.length);
    expect(tl.notes).toContain(`${lost} tool result(s) not found where the listing saw them (the transcript changed since?): counted as 0 until it is listed again`);
    await index.close();
  });
});
