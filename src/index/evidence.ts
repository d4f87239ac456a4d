/**
 * Per-tool evidence for tuning the guard's rules, from the indexed sessions: how often each tool
 * (and MCP server) spilled, how often a spill was read back (readback.ts), what reading back cost,
 * and the rules and settings the spills ran with (spill-rule.ts); suggestions drawn from it; and the
 * same figures for groups of sessions, before and after a rule change.
 *
 * | export | for |
 * | --- | --- |
 * | `toolEvidence(core, req)` | per tool and per server, with suggestions (the service's `toolEvidence`) |
 * | `compareSessions(core, req)` | sessions grouped by their spills' rule or by a date (the service's `compareSessions`) |
 * | `suggestionsFor(tools)` | the suggestions alone, from figures (pure; thresholds below) |
 *
 * The unit is the call as the listing counts it: a transcript's call once (a spill joined to it is
 * its, join.ts), or a spill whose transcript is not indexed. SQLite sums the calls per tool and
 * session (nothing per call is loaded); only spilled or joined calls and the read-backs are read, one
 * by one. 100,000 calls (10,000 spills): 1.4–2.6 s at a load average of 18 on two cores, where a bare
 * `count(*)` scan of the same rows took 0.3–0.4 s in the same run; the Tuner asks once per index change.
 * docs/inspector.md ("Evidence") says what each figure means.
 */
import type { IndexCore } from './core.js';
import { describePart } from './readback.js';
import type {
  CompareSessionsRequest,
  CompareSessionsResponse,
  ReadBackPart,
  SessionGroupFigures,
  SpillRuleInfo,
  ToolEvidence,
  ToolEvidenceRequest,
  ToolEvidenceResponse,
  ToolSuggestion,
} from './rows.js';
import { parseSpillRule, ruleLabel } from './spill-rule.js';

/** A tool gets a suggestion only with at least this many spills… */
export const MIN_SPILLS_FOR_SUGGESTION = 10;
/** …in at least this many sessions: one session's habits are not a rule's evidence. */
export const MIN_SESSIONS_FOR_SUGGESTION = 3;
/** A read-back rate at or above this says the message lacked what the agent needed. */
export const HIGH_READBACK_RATE = 0.25;
/** At or below this (with enough spills), the message held what was needed. */
export const LOW_READBACK_RATE = 0.05;
/** Read-back parts listed per tool. */
const PARTS_SHOWN = 5;
/** A grep read back for these is asking for errors: the `errors` template lists them. */
const ERROR_PATTERN_RE = /error|fail|exception|warn|panic|fatal|traceback/i;

const CLIENT_MCP_NAME_RE = /^mcp__(.+?)__(.+)$/;
const CLIENT_OWN = "the client's own spill (no Spillway rule)";

/** One tool's calls in one session, summed by SQLite (the calls themselves are never loaded). */
interface Cell {
  tool: string;
  session: string;
  calls: number;
  spills: number;
  first: string;
  last: string;
  /** Tokens that entered the context, over these calls. */
  entered: number;
  /** Tokens kept out, over these calls not joined to a spill (a joined call's are its Spill's `keptOut`). */
  kept: number;
}

interface SpillRow {
  id: string;
  session_id: string;
  tool: string;
  action: string;
  spill_id: string | null;
  rule_json: string | null;
  spillway: number;
  full: number;
  entered: number;
  s_kept: number;
}

interface ReadRow {
  reader_id: string;
  spill_id: string;
  part_json: string;
  tokens: number;
  entered: number | null;
}

/** A spilled call, or a call joined to a spill (loaded one by one: a small share of the calls). */
interface Spill {
  session: string;
  tool: string;
  spilled: boolean;
  /** The whole result (a joined call's spill's). */
  full: number;
  /** Tokens kept out for a joined call (its spill's assets and remainder); 0 otherwise (in its Cell). */
  keptOut: number;
  rule?: SpillRuleInfo;
  /** Whether the spill is Spillway's (a sidecar), not the client's own. */
  spillway: boolean;
  /** Read-backs of this spill: reader id → its cost; and the parts read (shared empties until one is read back). */
  readers: Map<string, number> | ReadonlyMap<string, number>;
  parts: string[] | readonly string[];
}

// Most spills are never read back: they share these (never written to) instead of two new objects each.
const NO_READERS: ReadonlyMap<string, number> = new Map();
const NO_PARTS: readonly string[] = [];

/** What entered for a call: its ledger's, else its whole result. */
const ENTERED_SQL = 'coalesce(c.l_entered, c.l_full, c.tokens)';

/**
 * The scope's calls: summed per tool and session in SQLite (Cells), and the spilled or joined ones
 * loaded (Spills) with their read-backs attached. A 100,000-call index is summed, not copied.
 */
function gather(core: IndexCore, rootId?: string): { cells: Cell[]; spills: Spill[] } {
  const scope = rootId !== undefined ? 'AND c.root_id = ?' : '';
  const args = rootId !== undefined ? [rootId] : [];
  const cells = core
    .q(
      // The ledger's kept out: the assets cut out and the spilled remainder (ledger.ts spilledRemainder).
      `SELECT c.tool AS tool, c.session_id AS session, count(*) AS calls, sum(c.action = 'spill') AS spills,
              min(c.created_at) AS first, max(c.created_at) AS last, sum(${ENTERED_SQL}) AS entered,
              sum(CASE WHEN c.spill_id IS NULL THEN c.l_kept_tokens + max(0, coalesce(c.l_full, c.tokens) - ${ENTERED_SQL} - c.l_kept_tokens) ELSE 0 END) AS kept
         FROM payloads c WHERE c.covered = 0 ${scope} GROUP BY c.tool, c.session_id`,
    )
    .all(...args) as Cell[];
  const spills: Spill[] = [];
  const bySpill = new Map<string, Spill>();
  const rows = core
    .q(
      // A joined call's whole result and its cut-out assets are its spill's ledger (the transcript's row
      // measured the message); what entered is the transcript's (what the model was given).
      `SELECT c.id, c.session_id, c.tool, c.action, c.spill_id, coalesce(s.rule_json, c.rule_json) AS rule_json,
              (c.spill_id IS NOT NULL OR c.source_json IS NULL) AS spillway,
              coalesce(s.l_full, c.l_full, c.tokens) AS full, ${ENTERED_SQL} AS entered, coalesce(s.l_kept_tokens, 0) AS s_kept
         FROM payloads c LEFT JOIN payloads s ON s.id = c.spill_id
        WHERE c.covered = 0 AND (c.action = 'spill' OR c.spill_id IS NOT NULL) ${scope}`,
    )
    .iterate(...args) as IterableIterator<SpillRow>;
  for (const r of rows) {
    const spill: Spill = {
      session: r.session_id,
      tool: r.tool,
      spilled: r.action === 'spill',
      full: r.full,
      keptOut: r.spill_id ? r.s_kept + Math.max(0, r.full - r.entered - r.s_kept) : 0,
      rule: parseSpillRule(r.rule_json),
      spillway: r.spillway === 1,
      readers: NO_READERS,
      parts: NO_PARTS,
    };
    spills.push(spill);
    bySpill.set(r.id, spill);
    if (r.spill_id) bySpill.set(r.spill_id, spill);
  }
  const reads = core
    .q(`SELECT rb.reader_id, rb.spill_id, rb.part_json, rb.tokens, r.l_entered AS entered FROM read_backs rb LEFT JOIN payloads r ON r.id = rb.reader_id`)
    .iterate() as IterableIterator<ReadRow>;
  for (const rb of reads) {
    const spill = bySpill.get(rb.spill_id);
    if (!spill) continue;
    if (spill.readers === NO_READERS) {
      spill.readers = new Map();
      spill.parts = [];
    }
    (spill.readers as Map<string, number>).set(rb.reader_id, rb.entered ?? rb.tokens);
    let part = 'a part';
    try {
      part = describePart(JSON.parse(rb.part_json) as ReadBackPart);
    } catch {
      /* a row this version cannot read: counted, not described */
    }
    (spill.parts as string[]).push(part);
  }
  return { cells, spills };
}

const rate = (n: number, of: number): number | null => (of > 0 ? n / of : null);

function median(xs: number[]): number | undefined {
  if (!xs.length) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : Math.round((s[m - 1]! + s[m]!) / 2);
}

/** The figures of a set of calls (one tool's, one server's, one group of sessions'): their Cells and their Spills. */
function figuresOf(cells: readonly Cell[], spills: readonly Spill[]) {
  const sessions = new Set<string>();
  const spillSessions = new Set<string>();
  const readBackSessions = new Set<string>();
  const readers = new Map<string, number>();
  let calls = 0;
  let spilled = 0;
  let spillsReadBack = 0;
  let readBacks = 0;
  let keptOut = 0;
  let entered = 0;
  for (const c of cells) {
    sessions.add(c.session);
    calls += c.calls;
    spilled += c.spills;
    if (c.spills) spillSessions.add(c.session);
    keptOut += c.kept;
    entered += c.entered;
  }
  for (const s of spills) {
    keptOut += s.keptOut;
    if (!s.spilled || !s.readers.size) continue;
    spillsReadBack++;
    readBackSessions.add(s.session);
    readBacks += s.parts.length;
    for (const [id, t] of s.readers) readers.set(id, t);
  }
  let readBackTokens = 0;
  for (const t of readers.values()) readBackTokens += t;
  return { calls, spills: spilled, spillsReadBack, readBacks, readBackCalls: readers.size, readBackTokens, sessions, spillSessions, readBackSessions, keptOut, entered };
}

function evidenceOf(tool: string, cells: readonly Cell[], spills: readonly Spill[], server?: string, serverTool?: string): ToolEvidence {
  const f = figuresOf(cells, spills);
  const settings = new Map<string, { use: ToolEvidence['settings'][number]; sessions: Set<string> }>();
  const parts = new Map<string, number>();
  const readBackFull: number[] = [];
  for (const c of spills) {
    if (!c.spilled) continue;
    const label = c.spillway ? ruleLabel(c.rule) : CLIENT_OWN;
    let s = settings.get(label);
    if (!s) {
      s = {
        use: { label, ...(c.rule?.limit !== undefined ? { limit: c.rule.limit } : {}), ...(c.rule?.template ? { template: c.rule.template } : {}), ...(c.rule?.provider ? { provider: c.rule.provider } : {}), sessions: 0, spills: 0 },
        sessions: new Set(),
      };
      settings.set(label, s);
    }
    s.use.spills++;
    s.sessions.add(c.session);
    for (const p of c.parts) parts.set(p, (parts.get(p) ?? 0) + 1);
    if (c.readers.size) readBackFull.push(c.full);
  }
  const med = median(readBackFull);
  return {
    tool,
    ...(server ? { server } : {}),
    ...(serverTool ? { serverTool } : {}),
    calls: f.calls,
    spills: f.spills,
    spillRate: rate(f.spills, f.calls),
    spillsReadBack: f.spillsReadBack,
    readBackRate: rate(f.spillsReadBack, f.spills),
    readBacks: f.readBacks,
    readBackCalls: f.readBackCalls,
    readBackTokens: f.readBackTokens,
    sessions: f.sessions.size,
    spillSessions: f.spillSessions.size,
    readBackSessions: f.readBackSessions.size,
    settings: [...settings.values()].map((s) => ({ ...s.use, sessions: s.sessions.size })).sort((a, b) => b.spills - a.spills || a.label.localeCompare(b.label)),
    parts: [...parts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, PARTS_SHOWN).map(([part, count]) => ({ part, count })),
    ...(med !== undefined ? { readBackMedianTokens: med } : {}),
  };
}

const pct = (x: number) => `${Math.round(x * 100)}%`;
const int = (x: number) => x.toLocaleString('en-US');
/** A limit people write: rounded up to a thousand tokens. */
const roundLimit = (t: number) => Math.max(1_000, Math.ceil(t / 1_000) * 1_000);

/**
 * Suggestions from the figures, only where the evidence is thick enough (MIN_SPILLS_FOR_SUGGESTION
 * spills in MIN_SESSIONS_FOR_SUGGESTION sessions). Read back often: the errors template when what
 * was read back is mostly a grep for errors, and a limit that would have passed half the spills read
 * back whole. Read back rarely: the settings hold. In between: nothing to say.
 */
export function suggestionsFor(tools: readonly ToolEvidence[]): ToolSuggestion[] {
  const out: ToolSuggestion[] = [];
  for (const t of tools) {
    if (t.spills < MIN_SPILLS_FOR_SUGGESTION || t.spillSessions < MIN_SESSIONS_FOR_SUGGESTION || t.readBackRate === null) continue;
    const evidence = { spills: t.spills, spillsReadBack: t.spillsReadBack, readBackRate: t.readBackRate, sessions: t.spillSessions, readBackCalls: t.readBackCalls, readBackTokens: t.readBackTokens };
    const seen = `${t.tool}: ${pct(t.readBackRate)} of ${int(t.spills)} spills read back (${int(t.spillsReadBack)}, in ${int(t.spillSessions)} sessions; ${int(t.readBackCalls)} calls, ${int(t.readBackTokens)} tokens)`;
    if (t.readBackRate >= HIGH_READBACK_RATE) {
      const top = t.parts[0];
      const errorsGrep = top && top.part.startsWith('grep ') && ERROR_PATTERN_RE.test(top.part);
      const usesErrors = t.settings.length > 0 && t.settings.every((s) => s.template === 'errors');
      const mostly = top ? `, mostly ${top.part}` : '';
      const limit = t.readBackMedianTokens !== undefined ? roundLimit(t.readBackMedianTokens) : undefined;
      const current = t.settings[0]?.limit;
      const ideas: string[] = [];
      if (errorsGrep && !usesErrors) ideas.push('the `errors` template');
      if (limit !== undefined && (current === undefined || limit > current)) ideas.push(`a limit of ${int(limit)} (half the spills read back were at most that)`);
      if (!ideas.length) continue;
      out.push({
        tool: t.tool,
        kind: errorsGrep && !usesErrors ? 'template' : 'limit',
        text: `suggestion: ${seen}${mostly}: try ${ideas.join(', or ')}`,
        ...(errorsGrep && !usesErrors ? { template: 'errors' } : {}),
        ...(limit !== undefined && (current === undefined || limit > current) ? { limit } : {}),
        evidence,
      });
    } else if (t.readBackRate <= LOW_READBACK_RATE) {
      out.push({ tool: t.tool, kind: 'keep', text: `suggestion: ${seen}: the messages held what the agent needed; keep these settings`, evidence });
    }
  }
  return out;
}

export function toolEvidence(core: IndexCore, req: ToolEvidenceRequest = {}): ToolEvidenceResponse {
  const { cells, spills } = gather(core, req.rootId);
  const group = <T extends { tool: string }>(xs: readonly T[], key: (t: string) => string | undefined) => {
    const m = new Map<string, T[]>();
    for (const x of xs) {
      const k = key(x.tool);
      if (k === undefined) continue;
      const list = m.get(k);
      if (list) list.push(x);
      else m.set(k, [x]);
    }
    return m;
  };
  const serverOf = (t: string) => CLIENT_MCP_NAME_RE.exec(t)?.[1];
  const cellsByTool = group(cells, (t) => t);
  const spillsByTool = group(spills, (t) => t);
  const cellsByServer = group(cells, serverOf);
  const spillsByServer = group(spills, serverOf);
  const order = (a: ToolEvidence, b: ToolEvidence) => b.spills - a.spills || b.calls - a.calls || a.tool.localeCompare(b.tool);
  const tools = [...cellsByTool].map(([tool, cs]) => {
    const m = CLIENT_MCP_NAME_RE.exec(tool);
    return evidenceOf(tool, cs, spillsByTool.get(tool) ?? [], m?.[1], m?.[2]);
  });
  tools.sort(order);
  const servers = [...cellsByServer].map(([server, cs]) => evidenceOf(`${server}/*`, cs, spillsByServer.get(server) ?? [], server)).sort(order);
  const all = figuresOf(cells, spills);
  return {
    tools,
    servers,
    suggestions: suggestionsFor(tools),
    thresholds: { minSpills: MIN_SPILLS_FOR_SUGGESTION, minSessions: MIN_SESSIONS_FOR_SUGGESTION },
    totals: { sessions: all.sessions.size, calls: all.calls, spills: all.spills, spillsReadBack: all.spillsReadBack, readBackCalls: all.readBackCalls, readBackTokens: all.readBackTokens },
  };
}

/**
 * Sessions grouped, with each group's figures: by the rule recorded in their spills (a session whose
 * spills ran under several is its own group, named by all of them; one with no spill is `no spill`),
 * or by a date (the session's first call before it, or from it). With `tool`, that tool's calls only.
 */
export function compareSessions(core: IndexCore, req: CompareSessionsRequest): CompareSessionsResponse {
  const all = gather(core, req.rootId);
  const mine = <T extends { tool: string }>(x: T) => req.tool === undefined || x.tool === req.tool;
  const bySession = new Map<string, { cells: Cell[]; spills: Spill[] }>();
  for (const c of all.cells.filter(mine)) {
    const s = bySession.get(c.session);
    if (s) s.cells.push(c);
    else bySession.set(c.session, { cells: [c], spills: [] });
  }
  for (const s of all.spills.filter(mine)) bySession.get(s.session)?.spills.push(s);
  const since = req.by === 'date' && req.since !== undefined ? Date.parse(req.since) : NaN;
  const groups = new Map<string, { cells: Cell[]; spills: Spill[]; sessions: number; from: string; to: string }>();
  for (const x of bySession.values()) {
    let from = x.cells[0]!.first;
    let to = x.cells[0]!.last;
    for (const c of x.cells) {
      if (c.first < from) from = c.first;
      if (c.last > to) to = c.last;
    }
    let label: string;
    if (req.by === 'date') label = Date.parse(from) < since ? 'before' : 'after';
    else {
      const labels = [...new Set(x.spills.filter((c) => c.spilled).map((c) => (c.spillway ? ruleLabel(c.rule) : CLIENT_OWN)))].sort();
      label = labels.length ? labels.join(' + ') : 'no spill';
    }
    const g = groups.get(label);
    if (g) {
      g.cells.push(...x.cells);
      g.spills.push(...x.spills);
      g.sessions++;
      if (from < g.from) g.from = from;
      if (to > g.to) g.to = to;
    } else groups.set(label, { cells: [...x.cells], spills: [...x.spills], sessions: 1, from, to });
  }
  const out: SessionGroupFigures[] = [...groups].map(([label, g]) => {
    const f = figuresOf(g.cells, g.spills);
    return {
      label,
      sessions: g.sessions,
      from: g.from,
      to: g.to,
      calls: f.calls,
      spills: f.spills,
      spillRate: rate(f.spills, f.calls),
      spillsReadBack: f.spillsReadBack,
      readBackRate: rate(f.spillsReadBack, f.spills),
      readBackCalls: f.readBackCalls,
      readBackTokens: f.readBackTokens,
      keptOutTokens: f.keptOut,
      enteredTokens: f.entered,
    };
  });
  out.sort((a, b) => (a.from ?? '').localeCompare(b.from ?? '') || a.label.localeCompare(b.label));
  return { by: req.by, ...(req.since !== undefined ? { since: req.since } : {}), ...(req.tool !== undefined ? { tool: req.tool } : {}), groups: out };
}
