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
 * its, join.ts), or a spill whose transcript is not indexed. One pass over the rows of the scope and
 * one over the read-backs: bounded by what is indexed, read with `iterate` (no copy of the table).
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

interface CallRow {
  id: string;
  session_id: string;
  tool: string;
  action: string;
  created_at: string;
  tokens: number;
  l_full: number | null;
  l_entered: number | null;
  l_kept_tokens: number;
  rule_json: string | null;
  spill_id: string | null;
  spillway: number;
}

interface ReadRow {
  reader_id: string;
  spill_id: string;
  part_json: string;
  tokens: number;
  entered: number | null;
}

/** A counted call with what the queries below need. */
interface Call {
  id: string;
  session: string;
  tool: string;
  at: string;
  spilled: boolean;
  full: number;
  entered: number;
  keptOut: number;
  rule?: SpillRuleInfo;
  /** Whether the spill is Spillway's (a sidecar), not the client's own. */
  spillway: boolean;
  /** Read-backs of this call's spill: reader id → its cost; and the parts read. */
  readers: Map<string, number>;
  parts: string[];
}

/** Every counted call of the scope, with its read-backs attached. */
function callsOf(core: IndexCore, rootId?: string): Call[] {
  const calls: Call[] = [];
  const bySpill = new Map<string, Call>();
  const rows = core
    .q(
      // A joined call's whole result and its cut-out assets are its spill's ledger (the transcript's row
      // measured the message); what entered is the transcript's (what the model was given).
      `SELECT c.id, c.session_id, c.tool, c.action, c.created_at, c.tokens, coalesce(s.l_full, c.l_full) AS l_full, c.l_entered,
              coalesce(s.l_kept_tokens, c.l_kept_tokens) AS l_kept_tokens,
              coalesce(s.rule_json, c.rule_json) AS rule_json, c.spill_id,
              (c.spill_id IS NOT NULL OR c.source_json IS NULL) AS spillway
         FROM payloads c LEFT JOIN payloads s ON s.id = c.spill_id
        WHERE c.covered = 0 ${rootId !== undefined ? 'AND c.root_id = ?' : ''}`,
    )
    .iterate(...(rootId !== undefined ? [rootId] : [])) as IterableIterator<CallRow>;
  for (const r of rows) {
    const full = r.l_full ?? r.tokens;
    const entered = r.l_entered ?? full;
    const call: Call = {
      id: r.id,
      session: r.session_id,
      tool: r.tool,
      at: r.created_at,
      spilled: r.action === 'spill',
      full,
      entered,
      // The ledger's kept out: the assets cut out, and the spilled remainder (ledger.ts spilledRemainder).
      keptOut: r.l_kept_tokens + Math.max(0, full - entered - r.l_kept_tokens),
      rule: parseSpillRule(r.rule_json),
      spillway: r.spillway === 1,
      readers: new Map(),
      parts: [],
    };
    calls.push(call);
    bySpill.set(r.id, call);
    if (r.spill_id) bySpill.set(r.spill_id, call);
  }
  const reads = core
    .q(`SELECT rb.reader_id, rb.spill_id, rb.part_json, rb.tokens, r.l_entered AS entered FROM read_backs rb LEFT JOIN payloads r ON r.id = rb.reader_id`)
    .iterate() as IterableIterator<ReadRow>;
  for (const rb of reads) {
    const call = bySpill.get(rb.spill_id);
    if (!call) continue;
    call.readers.set(rb.reader_id, rb.entered ?? rb.tokens);
    let part = 'a part';
    try {
      part = describePart(JSON.parse(rb.part_json) as ReadBackPart);
    } catch {
      /* a row this version cannot read: counted, not described */
    }
    call.parts.push(part);
  }
  return calls;
}

const rate = (n: number, of: number): number | null => (of > 0 ? n / of : null);

function median(xs: number[]): number | undefined {
  if (!xs.length) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : Math.round((s[m - 1]! + s[m]!) / 2);
}

/** The figures of a set of calls (one tool's, one server's, one group of sessions'). */
function figuresOf(calls: Call[]) {
  const sessions = new Set<string>();
  const spillSessions = new Set<string>();
  const readBackSessions = new Set<string>();
  const readers = new Map<string, number>();
  let spills = 0;
  let spillsReadBack = 0;
  let readBacks = 0;
  let keptOut = 0;
  let entered = 0;
  for (const c of calls) {
    sessions.add(c.session);
    keptOut += c.keptOut;
    entered += c.entered;
    if (!c.spilled) continue;
    spills++;
    spillSessions.add(c.session);
    if (c.readers.size) {
      spillsReadBack++;
      readBackSessions.add(c.session);
      readBacks += c.parts.length;
      for (const [id, t] of c.readers) readers.set(id, t);
    }
  }
  let readBackTokens = 0;
  for (const t of readers.values()) readBackTokens += t;
  return { calls: calls.length, spills, spillsReadBack, readBacks, readBackCalls: readers.size, readBackTokens, sessions, spillSessions, readBackSessions, keptOut, entered };
}

function evidenceOf(tool: string, calls: Call[], server?: string, serverTool?: string): ToolEvidence {
  const f = figuresOf(calls);
  const settings = new Map<string, { use: ToolEvidence['settings'][number]; sessions: Set<string> }>();
  const parts = new Map<string, number>();
  const readBackFull: number[] = [];
  for (const c of calls) {
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
  const calls = callsOf(core, req.rootId);
  const byTool = new Map<string, Call[]>();
  const byServer = new Map<string, Call[]>();
  for (const c of calls) {
    (byTool.get(c.tool) ?? byTool.set(c.tool, []).get(c.tool)!).push(c);
    const m = CLIENT_MCP_NAME_RE.exec(c.tool);
    if (m) (byServer.get(m[1]!) ?? byServer.set(m[1]!, []).get(m[1]!)!).push(c);
  }
  const order = (a: ToolEvidence, b: ToolEvidence) => b.spills - a.spills || b.calls - a.calls || a.tool.localeCompare(b.tool);
  const tools = [...byTool].map(([tool, cs]) => {
    const m = CLIENT_MCP_NAME_RE.exec(tool);
    return evidenceOf(tool, cs, m?.[1], m?.[2]);
  });
  tools.sort(order);
  const servers = [...byServer].map(([server, cs]) => evidenceOf(`${server}/*`, cs, server)).sort(order);
  const all = figuresOf(calls);
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
  const calls = callsOf(core, req.rootId).filter((c) => req.tool === undefined || c.tool === req.tool);
  const bySession = new Map<string, Call[]>();
  for (const c of calls) (bySession.get(c.session) ?? bySession.set(c.session, []).get(c.session)!).push(c);
  const since = req.by === 'date' && req.since !== undefined ? Date.parse(req.since) : NaN;
  const groups = new Map<string, { calls: Call[]; sessions: number; from: string; to: string }>();
  for (const cs of bySession.values()) {
    let from = cs[0]!.at;
    let to = from;
    for (const c of cs) {
      if (c.at < from) from = c.at;
      if (c.at > to) to = c.at;
    }
    let label: string;
    if (req.by === 'date') label = Date.parse(from) < since ? 'before' : 'after';
    else {
      const labels = [...new Set(cs.filter((c) => c.spilled).map((c) => (c.spillway ? ruleLabel(c.rule) : CLIENT_OWN)))].sort();
      label = labels.length ? labels.join(' + ') : 'no spill';
    }
    const g = groups.get(label);
    if (g) {
      g.calls.push(...cs);
      g.sessions++;
      if (from < g.from) g.from = from;
      if (to > g.to) g.to = to;
    } else groups.set(label, { calls: [...cs], sessions: 1, from, to });
  }
  const out: SessionGroupFigures[] = [...groups].map(([label, g]) => {
    const f = figuresOf(g.calls);
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
