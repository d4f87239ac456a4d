/**
 * Per-tool evidence and the before/after comparison (src/index/evidence.ts), on three Claude Code
 * sessions whose Bash results the hook spilled under three rules (one recorded by a hostile
 * sidecar, so unknown), read back by grep, Read with an offset and sed. Each figure is counted
 * here by hand from the fixture below; the tokens are the listed rows' own ledger figures.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { handleLargeResponse } from '../../src/pipeline/index.js';
import type { SpillRule } from '../../src/pipeline/types.js';
import { MIN_SESSIONS_FOR_SUGGESTION, MIN_SPILLS_FOR_SUGGESTION, suggestionsFor } from '../../src/index/evidence.js';
import { parseSpillRule, spillRuleJson } from '../../src/index/spill-rule.js';
import type { ToolEvidence } from '../../src/index/rows.js';
import { SCHEMA_VERSION } from '../../src/index/index.js';
import { CLI, REPO, tmpDir, tmpIndex } from './helpers.js';

const R1: SpillRule = { source: 'project', match: 'Bash', file: '/p/.spillway.json', settings: { limit: { source: 'project', match: 'Bash', file: '/p/.spillway.json' }, template: { source: 'default' } } };
const R2: SpillRule = { source: 'user', match: '*', file: '/u/config.json', settings: { limit: { source: 'user', match: '*', file: '/u/config.json' } } };

const log = (n: number) => Array.from({ length: n }, (_, i) => (i + 1 === 150 || i + 1 === 333 ? `E${i + 1} ERROR disk full on /dev/sda${i}` : `I${i + 1} ok step ${i} ${'x'.repeat(300)}`)).join('\n');

interface Call {
  id: string;
  tool: string;
  input: unknown;
  /** The result the transcript holds (a spill's: the guard's message). */
  out: string;
  spill?: { rule?: SpillRule; limit: number; text: string };
}

/** One Claude Code session: its transcript, and the hook's spills (joined by tool_use id). */
async function session(home: string, sid: string, day: string, calls: (spills: Map<string, string>) => Call[], hostile?: unknown): Promise<void> {
  const spills = new Map<string, string>();
  const lines: unknown[] = [{ type: 'user', sessionId: sid, cwd: home, timestamp: `${day}T09:59:00.000Z`, message: { role: 'user', content: 'go' } }];
  // Calls are made in two passes: spills first (their paths are what later calls read).
  const first = calls(spills);
  for (const [i, c] of first.entries()) {
    if (!c.spill) continue;
    const at = new Date(Date.parse(`${day}T10:00:00.000Z`) + i * 1000);
    const res = await handleLargeResponse({
      text: c.spill.text,
      sessionPath: path.join(home, 'spills', sid),
      context: { toolName: c.tool, toolInput: c.input, limitTokens: c.spill.limit, call: { client: 'claude-code', toolCallId: c.id } },
      now: () => at,
    });
    expect(res.payloadPath, c.id).toBeTruthy();
    spills.set(c.id, res.payloadPath!);
    // The rule as the hook records it (rules/index.ts spillRuleOf), or what a hostile hand wrote there.
    const meta = res.payloadPath!.replace(/\.[a-z]+$/, '.meta.json');
    const m = JSON.parse(fs.readFileSync(meta, 'utf8')) as Record<string, unknown>;
    m.rule = hostile !== undefined ? hostile : c.spill.rule;
    fs.writeFileSync(meta, JSON.stringify(m));
  }
  for (const [i, c] of calls(spills).entries()) {
    const at = new Date(Date.parse(`${day}T10:00:00.000Z`) + i * 1000 + 500).toISOString();
    lines.push({ type: 'assistant', sessionId: sid, cwd: home, timestamp: at, message: { role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'tool_use', id: c.id, name: c.tool, input: c.input }] } });
    lines.push({ type: 'user', sessionId: sid, cwd: home, timestamp: at, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: c.id, content: c.out }] } });
  }
  const proj = path.join(home, 'projects', '-work');
  fs.mkdirSync(proj, { recursive: true });
  fs.writeFileSync(path.join(proj, `${sid}.jsonl`), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

const SID = { a: '11111111-2222-4333-8444-55555555555a', b: '11111111-2222-4333-8444-55555555555b', c: '11111111-2222-4333-8444-55555555555c' };

/**
 * A (Dec 1, rule R1, limit 1,000): a1 Bash spilled, a2 Bash passes, a3 Bash greps a1's spill for
 * ERROR, a4 Read reads a1's lines 120–180, a5 Bash spilled and never read back.
 * B (Dec 3, rule R2, limit 2,000): b1 Bash spilled, b2 Bash seds its lines 1–10, b3 Bash passes.
 * C (Dec 4, a hostile rule: unknown; limit 1,000): c1 Bash spilled, c2 Bash passes.
 */
async function fixture(home: string, hostile: unknown = { source: 'evil', settings: { __proto__: { polluted: true } } }): Promise<void> {
  const spilled = 'the guard\'s message';
  await session(home, SID.a, '2026-12-01', (s) => [
    { id: 'toolu_a1', tool: 'Bash', input: { command: 'make test' }, out: spilled, spill: { rule: R1, limit: 1_000, text: log(400) } },
    { id: 'toolu_a2', tool: 'Bash', input: { command: 'ls' }, out: 'a\nb' },
    { id: 'toolu_a3', tool: 'Bash', input: { command: `grep -n ERROR ${s.get('toolu_a1') ?? 'x'}` }, out: '150:E150 ERROR\n333:E333 ERROR' },
    { id: 'toolu_a4', tool: 'Read', input: { file_path: s.get('toolu_a1') ?? 'x', offset: 120, limit: 61 }, out: 'lines 120 to 180 '.repeat(40) },
    { id: 'toolu_a5', tool: 'Bash', input: { command: 'cat big.log' }, out: spilled, spill: { rule: R1, limit: 1_000, text: log(300) } },
  ]);
  await session(home, SID.b, '2026-12-03', (s) => [
    { id: 'toolu_b1', tool: 'Bash', input: { command: 'make lint' }, out: spilled, spill: { rule: R2, limit: 2_000, text: log(500) } },
    { id: 'toolu_b2', tool: 'Bash', input: { command: `sed -n '1,10p' ${s.get('toolu_b1') ?? 'x'}` }, out: 'ten lines\n'.repeat(10) },
    { id: 'toolu_b3', tool: 'Bash', input: { command: 'pwd' }, out: '/work' },
  ]);
  await session(
    home,
    SID.c,
    '2026-12-04',
    () => [
      { id: 'toolu_c1', tool: 'Bash', input: { command: 'make build' }, out: spilled, spill: { rule: R1, limit: 1_000, text: log(350) } },
      { id: 'toolu_c2', tool: 'Bash', input: { command: 'true' }, out: 'ok' },
    ],
    hostile,
  );
}

async function indexed(home: string) {
  const { index, dbPath } = tmpIndex();
  index.addRoot(path.join(home, 'projects'));
  index.addRoot(path.join(home, 'spills'));
  await index.scan();
  return { index, dbPath };
}

/** A call's listed row (the transcript's, joined with its spill) by its tool_use id, through the payload's source. */
async function rowsByCall(index: Awaited<ReturnType<typeof indexed>>['index']) {
  const out = new Map<string, { id: string; entered: number; keptOut: number; action: string }>();
  for (const r of index.listPayloads({ limit: 1000 }).rows) {
    const d = await index.getPayload(r.id);
    const id = d.source?.toolUseId;
    if (!id) continue;
    // Kept out of the context: the whole result (its spill's, when joined) less what entered (the transcript's row), less nothing else (no assets here).
    const whole = d.spill ? (await index.getPayload(d.spill.payloadId)).ledger!.full.tokens : r.full!;
    expect(d.spill ? (await index.getPayload(d.spill.payloadId)).ledger!.keptOut.assets : 0).toBe(0);
    out.set(id, { id: r.id, entered: r.entered!, keptOut: Math.max(0, whole - r.entered!), action: r.action });
  }
  return out;
}

describe('per-tool evidence', () => {
  it('spill rate, read-back rate, read-back calls and tokens, and the settings each session used, as counted by hand', async () => {
    const home = tmpDir();
    await fixture(home);
    const { index } = await indexed(home);
    const calls = await rowsByCall(index);
    expect([...calls.keys()].sort()).toEqual(['toolu_a1', 'toolu_a2', 'toolu_a3', 'toolu_a4', 'toolu_a5', 'toolu_b1', 'toolu_b2', 'toolu_b3', 'toolu_c1', 'toolu_c2']);
    expect(['toolu_a1', 'toolu_a5', 'toolu_b1', 'toolu_c1'].map((id) => calls.get(id)!.action)).toEqual(['spill', 'spill', 'spill', 'spill']);
    const ev = index.toolEvidence();
    const bash = ev.tools.find((t) => t.tool === 'Bash')!;
    // Bash: a1 a2 a3 a5 b1 b2 b3 c1 c2 = 9 calls; a1 a5 b1 c1 spilled = 4; a1 (grep, Read) and b1 (sed) read back = 2.
    expect(bash).toMatchObject({ calls: 9, spills: 4, spillsReadBack: 2, readBacks: 3, readBackCalls: 3, sessions: 3, spillSessions: 3, readBackSessions: 2 });
    expect(bash.spillRate).toBeCloseTo(4 / 9, 12);
    expect(bash.readBackRate).toBe(0.5);
    // What those three calls (a3, a4 — a Read, reading a Bash spill — and b2) put in the context.
    expect(bash.readBackTokens).toBe(calls.get('toolu_a3')!.entered + calls.get('toolu_a4')!.entered + calls.get('toolu_b2')!.entered);
    expect(bash.readBackTokens).toBeGreaterThan(0);
    expect(bash.parts.map((p) => p.part).sort()).toEqual(['grep `ERROR` (2 lines)', 'lines 120–180', 'lines 1–10']);
    // The settings: R1 in A (2 spills), R2 in B, the hostile one unknown but its limit kept.
    expect(bash.settings.map((s) => [s.label, s.limit, s.sessions, s.spills])).toEqual([
      ['limit from project "Bash", limit 1,000, template from default', 1_000, 1, 2],
      ['limit from user "*", limit 2,000', 2_000, 1, 1],
      ['rule unknown, limit 1,000', 1_000, 1, 1],
    ]);
    const read = ev.tools.find((t) => t.tool === 'Read')!;
    expect(read).toMatchObject({ calls: 1, spills: 0, spillRate: 0, readBackRate: null, readBackCalls: 0, readBackTokens: 0 });
    expect(ev.totals).toMatchObject({ sessions: 3, calls: 10, spills: 4, spillsReadBack: 2, readBackCalls: 3 });
    // Four spills in three sessions is below the threshold: no suggestion.
    expect(ev.suggestions).toEqual([]);
    expect(ev.thresholds).toEqual({ minSpills: MIN_SPILLS_FOR_SUGGESTION, minSessions: MIN_SESSIONS_FOR_SUGGESTION });
    await index.close();
  });

  it('before/after: by the rule in the sessions’ spills, and by a date; tokens kept out and entered are the ledger’s', async () => {
    const home = tmpDir();
    await fixture(home);
    const { index } = await indexed(home);
    const calls = await rowsByCall(index);
    const sum = (ids: string[], k: 'entered' | 'keptOut') => ids.reduce((a, id) => a + calls.get(id)![k], 0);
    const A = ['toolu_a1', 'toolu_a2', 'toolu_a3', 'toolu_a4', 'toolu_a5'];
    const BC = ['toolu_b1', 'toolu_b2', 'toolu_b3', 'toolu_c1', 'toolu_c2'];

    const byRule = index.compareSessions({ by: 'rule' });
    expect(byRule.groups.map((g) => [g.label, g.sessions, g.calls, g.spills, g.spillsReadBack, g.readBackCalls])).toEqual([
      ['limit from project "Bash", limit 1,000, template from default', 1, 5, 2, 1, 2],
      ['limit from user "*", limit 2,000', 1, 3, 1, 1, 1],
      ['rule unknown, limit 1,000', 1, 2, 1, 0, 0],
    ]);
    expect(byRule.groups.map((g) => [g.spillRate, g.readBackRate])).toEqual([
      [2 / 5, 1 / 2],
      [1 / 3, 1],
      [1 / 2, 0],
    ]);
    expect(byRule.groups[0]!.enteredTokens).toBe(sum(A, 'entered'));
    expect(byRule.groups[0]!.keptOutTokens).toBe(sum(A, 'keptOut'));
    expect(byRule.groups[0]!.keptOutTokens).toBeGreaterThan(0);

    const byDate = index.compareSessions({ by: 'date', since: '2026-12-02' });
    expect(byDate.groups.map((g) => [g.label, g.sessions, g.calls, g.spills, g.spillsReadBack, g.readBackRate, g.spillRate])).toEqual([
      ['before', 1, 5, 2, 1, 0.5, 0.4],
      ['after', 2, 5, 2, 1, 0.5, 0.4],
    ]);
    expect(byDate.groups[1]!.enteredTokens).toBe(sum(BC, 'entered'));
    expect(byDate.groups[1]!.keptOutTokens).toBe(sum(BC, 'keptOut'));
    expect(byDate.groups[1]!.readBackTokens).toBe(calls.get('toolu_b2')!.entered);

    // One tool: Read's only call is in A, and it spilled nothing.
    expect(index.compareSessions({ by: 'rule', tool: 'Read' }).groups.map((g) => [g.label, g.calls, g.spills])).toEqual([['no spill', 1, 0]]);
    await index.close();
  });

  it('a sidecar without a rule, or with a hostile one, is indexed as before with the rule unknown', async () => {
    for (const hostile of [null, 'project', { source: 'project', match: 'x'.repeat(5_000) }, { source: 'project\u0007' }, [1, 2], { source: 'user', match: 'a\u001b[31mred', settings: 'no' }]) {
      const home = tmpDir();
      await fixture(home, hostile);
      const { index } = await indexed(home);
      // C's spill: neither R1's (A) nor R2's (B).
      const c1 = index.toolEvidence().tools.find((t) => t.tool === 'Bash')!.settings.find((s) => !s.label.startsWith('limit from project "Bash"') && !s.label.startsWith('limit from user "*"'));
      expect(c1, JSON.stringify(hostile)).toBeDefined();
      // A bad match (control characters, too long) is left out; a good source keeps the rule.
      const source = typeof hostile === 'object' && hostile !== null && !Array.isArray(hostile) ? (hostile as { source: string }).source : undefined;
      if (source === 'user' || source === 'project') expect(c1!.label).toBe(`limit from ${source}, limit 1,000`);
      else expect(c1!.label).toBe('rule unknown, limit 1,000');
      expect(index.listPayloads({ limit: 1000 }).rows.filter((r) => r.action === 'spill')).toHaveLength(4);
      await index.close();
    }
  });

  it('the column is checked when written and when read back', () => {
    expect(spillRuleJson(undefined, undefined, undefined)).toBeUndefined();
    expect(JSON.parse(spillRuleJson(R1, 1_000, [{ provider: 'anthropic', model: 'claude-haiku-5-5', template: 'errors' }])!)).toEqual({ rule: { ...R1, settings: R1.settings }, limit: 1_000, provider: 'anthropic', model: 'claude-haiku-5-5', template: 'errors' });
    // A template that is no template name, a limit that is no limit, a proto key: left out.
    expect(JSON.parse(spillRuleJson({ source: 'flag', settings: JSON.parse('{"__proto__":{"source":"flag"},"limit":{"source":"flag"}}') }, -5, [{ provider: 'openai', template: '../x' }])!)).toEqual({ rule: { source: 'flag', settings: { limit: { source: 'flag' } } }, provider: 'openai' });
    expect(parseSpillRule('{"rule":{"source":"root"},"limit":1e99}')).toBeUndefined();
    expect(parseSpillRule('not json')).toBeUndefined();
    expect(parseSpillRule('{"limit":12000}')).toEqual({ limit: 12_000 });
  });
});

describe('an index made before rules were recorded', () => {
  it('migrates: the column is added, spill sources are re-read, and the rules appear', async () => {
    const home = tmpDir();
    await fixture(home);
    const { index, dbPath } = await indexed(home);
    await index.close();
    // Make it the old database: no column, schema 11, rows as they were.
    const db = new Database(dbPath);
    db.exec('ALTER TABLE payloads DROP COLUMN rule_json');
    // Migration 13 (the experiments' tables) came after: a schema-11 database has none of them.
    for (const t of ['experiment_results', 'experiment_runs', 'experiment_items', 'experiment_datasets', 'experiment_cache']) db.exec(`DROP TABLE ${t}`);
    db.pragma('user_version = 11');
    db.close();
    const { index: again } = tmpIndex(dbPath);
    const raw = new Database(dbPath, { readonly: true });
    expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect((raw.prepare("SELECT count(*) AS n FROM sources WHERE kind = 'spillway' AND fingerprint != ''").get() as { n: number }).n).toBe(0);
    raw.close();
    // Before the re-read the rules are unknown; after it, known again.
    expect(again.toolEvidence().tools.find((t) => t.tool === 'Bash')!.settings.every((s) => s.label.startsWith('rule unknown') || s.label.startsWith("the client's own"))).toBe(true);
    await again.scan();
    expect(again.toolEvidence().tools.find((t) => t.tool === 'Bash')!.settings.map((s) => s.label)[0]).toBe('limit from project "Bash", limit 1,000, template from default');
    await again.close();
  });
});

describe('suggestions', () => {
  const tool = (o: Partial<ToolEvidence>): ToolEvidence => ({
    tool: 'Bash',
    calls: 100,
    spills: 22,
    spillRate: 0.22,
    spillsReadBack: 9,
    readBackRate: 9 / 22,
    readBacks: 12,
    readBackCalls: 11,
    readBackTokens: 5_400,
    sessions: 6,
    spillSessions: 5,
    readBackSessions: 4,
    settings: [{ label: 'limit from default, limit 12,000', limit: 12_000, sessions: 5, spills: 22 }],
    parts: [{ part: 'grep `ERROR` (3 lines)', count: 7 }, { part: 'lines 1–40', count: 3 }],
    readBackMedianTokens: 19_200,
    ...o,
  });

  it('read back often, mostly a grep for errors: the errors template or a limit, with its evidence', () => {
    const [s] = suggestionsFor([tool({})]);
    expect(s).toMatchObject({ tool: 'Bash', kind: 'template', template: 'errors', limit: 20_000, evidence: { spills: 22, spillsReadBack: 9, sessions: 5, readBackCalls: 11, readBackTokens: 5_400 } });
    expect(s!.text).toBe('suggestion: Bash: 41% of 22 spills read back (9, in 5 sessions; 11 calls, 5,400 tokens), mostly grep `ERROR` (3 lines): try the `errors` template, or a limit of 20,000 (half the spills read back were at most that)');
  });

  it('never on thin evidence: fewer spills or sessions than the thresholds', () => {
    expect(suggestionsFor([tool({ spills: MIN_SPILLS_FOR_SUGGESTION - 1 })])).toEqual([]);
    expect(suggestionsFor([tool({ spillSessions: MIN_SESSIONS_FOR_SUGGESTION - 1 })])).toEqual([]);
  });

  it('rarely read back: keep the settings; in between: nothing', () => {
    expect(suggestionsFor([tool({ spillsReadBack: 1, readBackRate: 1 / 22 })])[0]).toMatchObject({ kind: 'keep' });
    expect(suggestionsFor([tool({ spillsReadBack: 3, readBackRate: 3 / 22 })])).toEqual([]);
    // Read back often, by lines, already above the median: nothing to try.
    expect(suggestionsFor([tool({ parts: [{ part: 'lines 1–40', count: 9 }], readBackMedianTokens: 9_000 })])).toEqual([]);
  });
});

describe('spillway evidence', () => {
  const spillway = (args: string[], home: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', '--conditions=source', CLI, ...args], { cwd: REPO, env: { ...process.env, SPILLWAY_HOME: path.join(home, 'app') }, encoding: 'utf8', timeout: 120_000 });

  it('indexes the folders given and prints the same figures as the service, and the comparison, as JSON and as a table', async () => {
    const home = tmpDir();
    await fixture(home);
    const db = path.join(tmpDir('spillway-db-'), 'index.sqlite');
    const r = spillway(['evidence', path.join(home, 'projects'), path.join(home, 'spills'), '--db', db, '--by', 'date', '--since', '2026-12-02', '--json'], home);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { evidence: { tools: ToolEvidence[] }; compare: { groups: Array<{ label: string; calls: number; spills: number }> } };
    const bash = out.evidence.tools.find((t) => t.tool === 'Bash')!;
    expect(bash).toMatchObject({ calls: 9, spills: 4, spillsReadBack: 2, readBackCalls: 3 });
    expect(out.compare.groups.map((g) => [g.label, g.calls, g.spills])).toEqual([['before', 5, 2], ['after', 5, 2]]);
    const { index } = tmpIndex(db);
    expect(index.toolEvidence().tools).toEqual(out.evidence.tools);
    await index.close();
    const t = spillway(['evidence', '--db', db], home);
    expect(t.status).toBe(0);
    expect(t.stdout).toMatch(/^Bash +9 +4 +44% +2 +50% +3 /m);
    expect(t.stdout).toContain('suggestions (only with 10+ spills in 3+ sessions):');
    // Bad usage: exit 2, said why.
    const bad = spillway(['evidence', '--db', db, '--by', 'date'], home);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--by date needs --since');
  });
});
