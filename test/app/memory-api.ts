/**
 * An in-memory implementation of the contract for component tests (jsdom has no server to talk
 * to; the e2e suite covers the real one). Behaves like the service where the UI depends on it:
 * filtering, sorting, paging, windowed reads, error codes.
 */
import type {
  EventName,
  InspectorApi,
  InspectorEvents,
  ListPayloadsRequest,
  PayloadRow,
  ReadBack,
  RootInfo,
  SessionInfo,
  SummaryRun,
} from '../../src/service/contract.js';
import { ApiError } from '../../app/transport/errors.js';
import { ServiceError } from '../../src/service/contract.js';
import { isMethodName, validateRequest } from '../../src/service/validate.js';
import { scoreRuns } from '../../src/summarize/index.js';
import crypto from 'node:crypto';
import { createTwoFilesPatch } from 'diff';

const TOOLS = ['read_file', 'fetch', 'search_issues', 'run_command', 'query_table'];

export interface MemoryApi extends InspectorApi {
  calls: Array<{ method: string; req: unknown }>;
  emit<E extends EventName>(event: E, payload: InspectorEvents[E]): void;
  rows: PayloadRow[];
  /**
   * While above 0, text queries answer `partial: { unsearched }` (full-text search still filling
   * in, as the index does behind a scan). Set it to 0 when the fill "ends".
   */
  unsearched: number;
}

export interface MemoryApiOptions {
  payloads?: number;
  sessions?: number;
  /** Replace the generated roots and sessions (payloads are still spread over the sessions). */
  roots?: RootInfo[];
  sessionList?: SessionInfo[];
  /**
   * Later calls that read a spill back, as the index links them: `getPayload` of the spill lists
   * those of its id (of a reader, those it made), `getTimeline` those read in the session or of its spills (not on replayOnly).
   */
  readBacks?: ReadBack[];
}

export function contentOf(row: PayloadRow): string {
  return JSON.stringify({ tool: row.tool, id: row.id, lines: Array.from({ length: 20 }, (_, i) => `line ${i} of ${row.id}`) }, null, 2);
}

export function createMemoryApi(opts: MemoryApiOptions = {}): MemoryApi {
  const n = opts.payloads ?? 50;
  const sessionCount = opts.sessionList?.length ?? opts.sessions ?? 2;
  const sessions: SessionInfo[] = opts.sessionList?.map((s) => ({ ...s, payloadCount: 0, totalTokens: 0 })) ?? Array.from({ length: sessionCount }, (_, i) => ({
    id: `s${i}`,
    rootId: 'r0',
    name: `session-${String(i).padStart(3, '0')}`,
    path: `/tmp/root/session-${i}`,
    kind: 'spillway' as const,
    readOnly: false,
    payloadCount: 0,
    assetCount: 0,
    totalBytes: 0,
    totalTokens: 0,
    lastAt: new Date(Date.UTC(2026, 10, 1, 8, i)).toISOString(),
  }));
  const state = { unsearched: 0 };
  const rows: PayloadRow[] = Array.from({ length: n }, (_, i) => {
    const s = sessions[i % sessionCount]!;
    const tokens = 100 + ((i * 7919) % 50_000);
    s.payloadCount++;
    s.totalTokens += tokens;
    return {
      id: `p${i}`,
      sessionId: s.id,
      tool: TOOLS[i % TOOLS.length]!,
      createdAt: new Date(Date.UTC(2026, 10, 1, 8, 0, i)).toISOString(),
      bytes: tokens * 4,
      tokens,
      // The ledger: a spilled result entered as its message; the whole result is its tokens.
      entered: tokens > 12_000 ? 600 + (i % 50) : tokens,
      enteredHow: 'estimated',
      full: tokens,
      action: tokens > 12_000 ? 'spill' : 'pass',
      kind: 'json',
      assetCount: i % 10 === 0 ? 1 : 0,
      summaryCount: 0,
      inputExcerpt: `{"n":${i}}`,
    };
  });
  const runs = new Map<string, SummaryRun[]>();
  const listeners = new Map<string, Set<(p: unknown) => void>>();
  const calls: Array<{ method: string; req: unknown }> = [];
  const byId = (id: string) => {
    const r = rows.find((x) => x.id === id);
    if (!r) throw new ApiError('NOT_FOUND', `no payload ${id}`);
    return r;
  };
  const filter = (req: ListPayloadsRequest) =>
    rows.filter(
      (r) =>
        (!req.sessionId || r.sessionId === req.sessionId) &&
        (!req.tool || r.tool.includes(req.tool)) &&
        (!req.action || r.action === req.action) &&
        (req.minTokens == null || r.tokens >= req.minTokens) &&
        (!req.query || contentOf(r).includes(req.query)),
    );
  let runSeq = 0;
  const readBacksOf = (spillId: string) => (opts.readBacks ?? []).filter((rb) => rb.spillId === spillId);
  const readsBy = (readerId: string) => (opts.readBacks ?? []).filter((rb) => rb.readerId === readerId);
  const readBacksIn = (sessionId: string) =>
    (opts.readBacks ?? []).filter((rb) => rb.sessionId === sessionId || rows.find((r) => r.id === rb.spillId)?.sessionId === sessionId);
  const configFiles = new Map<string, string>();
  const hashOf = (t: string) => `sha256:${crypto.createHash('sha256').update(t).digest('hex')}`;
  const configPlan = (req: { scope: 'user' | 'project'; project?: string; change: { tool: string; set?: Record<string, unknown>; unset?: string[] } }) => {
    const file = req.scope === 'user' ? '/tmp/app/config.json' : `${req.project}/.spillway.json`;
    const current = configFiles.get(file);
    const doc = (current ? JSON.parse(current) : {}) as { rules?: Record<string, Record<string, unknown>> };
    const rules = { ...(doc.rules ?? {}) };
    const rule = { ...(rules[req.change.tool] ?? {}), ...(req.change.set ?? {}) };
    for (const k of req.change.unset ?? []) delete rule[k];
    rules[req.change.tool] = rule;
    const proposedText = `${JSON.stringify({ ...doc, rules }, null, 2)}\n`;
    const setting = (value: unknown, source: 'user' | 'project' | 'default', match?: string) => ({ value: (value ?? null) as string | number | null, source, ...(match ? { match, file } : {}) });
    const ruleOf = (r: Record<string, unknown> | undefined) => ({
      tool: req.change.tool,
      settings: {
        limit: r?.limit !== undefined ? setting(r.limit, req.scope, req.change.tool) : setting(12_000, 'default'),
        template: r?.template !== undefined ? setting(r.template, req.scope, req.change.tool) : setting('default', 'default'),
        provider: setting('structural', 'default'),
        model: setting('structural', 'default'),
        focusArg: setting(null, 'default'),
      },
    });
    return {
      scope: req.scope,
      ...(req.project ? { project: req.project } : {}),
      file,
      exists: current !== undefined,
      currentText: current ?? '',
      proposedText,
      diff: createTwoFilesPatch(current === undefined ? '/dev/null' : file, file, current ?? '', proposedText),
      baseHash: current === undefined ? 'absent' : hashOf(current),
      proposedHash: hashOf(proposedText),
      unchanged: current === proposedText,
      before: ruleOf(doc.rules?.[req.change.tool]),
      after: ruleOf(rule),
      notes: [],
    };
  };
  const impl = {
    async getInfo() {
      return {
        version: '0.0.0-test',
        appDataDir: '/tmp/app',
        dbPath: '/tmp/app/index.sqlite',
        defaults: { limitTokens: 12_000, profile: 'o200k', strategy: 'calibrated', pricePerMTok: 3 },
        strategies: ['chars4', 'craft-density', 'calibrated', 'o200k', 'cl100k', 'claude'],
        profiles: ['o200k', 'cl100k', 'claude'],
        transport: 'http',
      };
    },
    async listRoots() {
      return opts.roots?.map((r) => ({ ...r })) ?? [{ id: 'r0', path: '/tmp/root', kind: 'sessions', addedAt: '2026-11-01T00:00:00Z', sessionCount, payloadCount: n }];
    },
    async listSessions() {
      return sessions.map((s) => ({ ...s }));
    },
    async listPayloads(req: ListPayloadsRequest) {
      const list = filter(req);
      const sort = req.sort ?? { field: 'createdAt', dir: 'desc' };
      const f = sort.field;
      list.sort((a, b) => {
        const av = a[f];
        const bv = b[f];
        const c = typeof av === 'number' && typeof bv === 'number' ? av - bv : String(av).localeCompare(String(bv));
        return sort.dir === 'asc' ? c : -c;
      });
      const offset = req.offset ?? 0;
      const limit = Math.min(req.limit ?? 100, 1000);
      return {
        rows: list.slice(offset, offset + limit).map((r) => (req.query ? { ...r, snippet: `… ${req.query} …` } : r)),
        total: list.length,
        ...(req.query && state.unsearched > 0 ? { partial: { unsearched: state.unsearched } } : {}),
      };
    },
    async getPayload({ id }: { id: string }) {
      const row = byId(id);
      const text = contentOf(row);
      return {
        row: { ...row, summaryCount: runs.get(id)?.length ?? 0 },
        meta: null,
        path: `/tmp/root/${row.sessionId}/long_responses/${id}.json`,
        estimates: { chars4: Math.ceil(text.length / 4), calibrated: row.tokens },
        assets: [],
        summaryRuns: runs.get(id) ?? [],
        message: `[spillway] ${row.tool} result saved (${row.tokens} tokens).`,
        preview: text.slice(0, 80),
        totalBytes: text.length,
        totalLines: text.split('\n').length,
        binary: false,
        readOnly: sessions.find((s) => s.id === row.sessionId)?.readOnly ?? false,
        ...(readBacksOf(id).length ? { readBacks: readBacksOf(id) } : {}),
        ...(readsBy(id).length ? { reads: readsBy(id) } : {}),
      };
    },
    async readPayload(req: { id: string; start?: number; end?: number }) {
      const text = contentOf(byId(req.id));
      const start = req.start ?? 0;
      const end = Math.min(text.length, req.end ?? text.length);
      return { text: text.slice(start, end), start, end, totalBytes: text.length, totalLines: text.split('\n').length, binary: false };
    },
    async estimate(req: { payloadId?: string; exact?: boolean }) {
      const row = byId(req.payloadId!);
      const estimates = [
        { strategy: 'chars4', tokens: Math.round(row.tokens * 0.8), exact: false, ms: 0.1 },
        { strategy: 'craft-density', tokens: Math.round(row.tokens * 0.95), exact: false, ms: 0.4 },
        { strategy: 'calibrated', tokens: row.tokens, exact: false, ms: 0.3 },
        ...(req.exact
          ? [
              { strategy: 'o200k', tokens: Math.round(row.tokens * 1.02), exact: true, ms: 12 },
              { strategy: 'cl100k', tokens: Math.round(row.tokens * 1.05), exact: true, ms: 9 },
              { strategy: 'claude', tokens: Math.round(row.tokens * 1.2), exact: true, ms: 20 },
            ]
          : []),
      ];
      return {
        chars: row.bytes,
        bytes: row.bytes,
        profile: 'o200k',
        default: 'calibrated',
        estimates,
        density: { base64: 0.4, hex: 0, uuid: 0.05, cjk: 0, otherNonAscii: 0, digits: 0.1, punctuation: 0.15, whitespace: 0.1, letters: 0.2 },
      };
    },
    async listProviders() {
      return [
        { name: 'structural', models: ['structural'], defaultModel: 'structural', available: true },
        { name: 'anthropic', models: ['claude-x'], defaultModel: 'claude-x', available: false, reason: 'no ANTHROPIC_API_KEY' },
      ];
    },
    async listTemplates() {
      return [{ name: 'default', body: 'Summarize {{payload}} for {{focus}}', builtIn: true }];
    },
    async saveTemplate(req: { name: string; body: string }) {
      return { ...req, builtIn: false };
    },
    /** The real scores of the runs over the payload's content, as if the agent had read back its lines 2–3. */
    async scoreSummaries(req: { payloadId: string }) {
      const text = contentOf(byId(req.payloadId));
      const list = runs.get(req.payloadId) ?? [];
      const lines = text.split('\n');
      const scores = scoreRuns({ payload: text, readBacks: [{ label: 'lines 2–3', lines: [{ n: 2, text: lines[1]! }, { n: 3, text: lines[2]! }] }], runs: list.map((r) => ({ summary: r.summary, focus: r.focus, run: r })) });
      return { runs: list.map((r, i) => ({ runId: r.id, scores: scores[i]! })), readBacks: 1, payloadChars: text.length };
    },
    /**
     * The rules files as the service plans them, in memory: one user file (`/tmp/app/config.json`)
     * and a project's `.spillway.json`; the hashes are of the texts, so a write in between is a CONFLICT.
     */
    async previewConfig(req: { scope: 'user' | 'project'; project?: string; change: { tool: string; set?: Record<string, unknown>; unset?: string[] } }) {
      return configPlan(req);
    },
    async applyConfig(req: { scope: 'user' | 'project'; project?: string; change: { tool: string; set?: Record<string, unknown>; unset?: string[] }; baseHash: string; proposedHash: string }) {
      const plan = configPlan(req);
      if (plan.baseHash !== req.baseHash || plan.proposedHash !== req.proposedHash) throw new ApiError('CONFLICT', `${plan.file} changed since the preview: preview again (nothing was written)`);
      configFiles.set(plan.file, plan.proposedText);
      return { file: plan.file, created: !plan.exists, mode: '0600', text: plan.proposedText, effective: plan.after };
    },
    async summarize(req: { payloadId: string; focus?: string; template?: string }) {
      const run: SummaryRun = {
        id: `run${++runSeq}`,
        createdAt: new Date(Date.UTC(2026, 10, 2, 9, 0, runSeq)).toISOString(),
        status: 'ok',
        summary: `Summary of ${req.payloadId} about ${req.focus ?? 'everything'}.`,
        provider: 'structural',
        model: 'structural',
        focus: req.focus,
        ...(req.template ? { template: req.template } : {}),
        inputTokens: 1000,
        outputTokens: 50,
        ms: 12,
      };
      runs.set(req.payloadId, [...(runs.get(req.payloadId) ?? []), run]);
      return run;
    },
    async limitTuner(req: { sessionId?: string; limitTokens: number }) {
      const list = rows.filter((r) => !req.sessionId || r.sessionId === req.sessionId).sort((a, b) => a.tokens - b.tokens);
      const sizes = list.map((r) => ({ id: r.id, tokens: r.tokens, tool: r.tool }));
      const histogram = [100, 1000, 10_000, 100_000].slice(0, -1).map((from, i, a) => ({
        from,
        to: [1000, 10_000, 100_000][i]!,
        count: sizes.filter((s) => s.tokens >= from && s.tokens < (a[i + 1] ?? 100_000)).length,
      }));
      // A made-up replay per session: each result over the limit leaves 600 tokens for 3 calls; no guard keeps it whole.
      const scoped = sessions.filter((x) => !req.sessionId || x.id === req.sessionId);
      const totals = (sent: number) => ({ sentTokens: sent, cacheReadTokens: Math.round(sent * 0.9), costUsd: sent / 1e6, peak: Math.round(sent / 3), compactions: 0, replaced: 0, pending: 0 });
      const replays = scoped.map((x) => {
        const mine = list.filter((r) => r.sessionId === x.id);
        const whole = mine.reduce((a, r) => a + r.tokens * 3, 0);
        const guarded = mine.reduce((a, r) => a + (r.tokens > req.limitTokens ? 600 : r.tokens) * 3, 0);
        return { sessionId: x.id, name: x.name, client: 'claude-code' as const, calls: 3, profile: 'claude' as const, prices: { input: 5, cacheWrite: 6.25, cacheRead: 0.5, output: 25 }, asRan: totals(guarded), noGuard: totals(whole), atLimit: { ...totals(guarded), replaced: mine.filter((r) => r.tokens > req.limitTokens).length } };
      });
      const flips = list
        .filter((r) => r.tokens > req.limitTokens !== (r.action === 'spill'))
        .map((r) => ({ id: `call-${r.id}`, payloadId: r.id, sessionId: r.sessionId, tool: r.tool, args: r.inputExcerpt, tokens: r.tokens, calls: 3, tokensTimesCalls: r.tokens * 3, costUsd: (r.tokens * 3) / 1e6, fullTokens: r.tokens, action: r.action, atLimit: r.tokens > req.limitTokens ? ('spill' as const) : ('pass' as const) }));
      return {
        strategy: 'calibrated',
        profile: 'claude',
        limitTokens: req.limitTokens,
        histogram,
        sizes,
        total: sizes.length,
        fallbacks: 0,
        replay: { sessionsTotal: replays.length, offset: 0, sessions: replays, flips },
        payloadsOnly: { sessions: 0, payloads: 0, tokens: 0, overLimit: 0, tokensOverLimit: 0 },
        assumptions: ['Per session with model calls, the Timeline\'s replay.'],
      };
    },
    async wasteReport(req: { sessionId: string; limitTokens?: number }) {
      const mine = rows.filter((r) => r.sessionId === req.sessionId);
      return {
        sessionId: req.sessionId,
        strategy: 'calibrated',
        limitTokens: req.limitTokens ?? 12_000,
        basis: 'payload-sizes',
        totalTokens: mine.reduce((a, r) => a + r.tokens, 0),
        byTool: [...new Set(mine.map((r) => r.tool))].map((tool) => {
          const t = mine.filter((r) => r.tool === tool);
          return { tool, calls: t.length, tokens: t.reduce((a, r) => a + r.tokens, 0), maxTokens: Math.max(...t.map((r) => r.tokens)) };
        }),
        biggest: [...mine].sort((a, b) => b.tokens - a.tokens).slice(0, 20).map((r) => ({ id: r.id, payloadId: r.id, sessionId: r.sessionId, tool: r.tool, args: r.inputExcerpt, tokens: r.tokens, action: r.action })),
        inlineBase64: { payloads: 0, bytes: 0, tokens: 0 },
        assumptions: ['Sessions without model calls have no calls to multiply.'],
      };
    },
    // Per tool from the rows: every row a call, its action says whether it spilled; the read-backs given link spills.
    async toolEvidence() {
      const readBack = new Set((opts.readBacks ?? []).map((b) => b.spillId));
      const tools = [...new Set(rows.map((r) => r.tool))].map((tool) => {
        const t = rows.filter((r) => r.tool === tool);
        const spilled = t.filter((r) => r.action === 'spill');
        const back = spilled.filter((r) => readBack.has(r.id));
        return {
          tool,
          calls: t.length,
          spills: spilled.length,
          spillRate: t.length ? spilled.length / t.length : null,
          spillsReadBack: back.length,
          readBackRate: spilled.length ? back.length / spilled.length : null,
          readBacks: back.length,
          readBackCalls: back.length,
          readBackTokens: 0,
          sessions: new Set(t.map((r) => r.sessionId)).size,
          spillSessions: new Set(spilled.map((r) => r.sessionId)).size,
          readBackSessions: new Set(back.map((r) => r.sessionId)).size,
          settings: [],
          parts: [],
        };
      });
      const sum = (k: 'calls' | 'spills' | 'spillsReadBack' | 'readBackCalls' | 'readBackTokens') => tools.reduce((a, t) => a + t[k], 0);
      return { tools, servers: [], suggestions: [], thresholds: { minSpills: 10, minSessions: 3 }, totals: { sessions: sessions.length, calls: sum('calls'), spills: sum('spills'), spillsReadBack: sum('spillsReadBack'), readBackCalls: sum('readBackCalls'), readBackTokens: sum('readBackTokens') } };
    },
    async compareSessions(req: { by: 'rule' | 'date'; since?: string; tool?: string }) {
      return { by: req.by, ...(req.since ? { since: req.since } : {}), ...(req.tool ? { tool: req.tool } : {}), groups: [] };
    },
    async getTimeline(req: { sessionId: string; limits?: number[]; replayOnly?: boolean }) {
      // A small made-up session: 4 calls, one compaction; the replays scale with the limit like the real ones do.
      const contexts = [20_000, 60_000, 150_000, 30_000];
      const replay = (label: string, limit?: number) => {
        const cut = limit === undefined ? 0 : Math.max(0, 40_000 - limit);
        const cs = contexts.map((c, i) => Math.max(0, c - cut * i));
        return { label, scenario: limit === undefined ? {} : { limit }, contexts: cs, compactionsAt: cs[2]! > 140_000 ? [3] : [], peak: Math.max(...cs), inputTokens: 0, cacheWriteTokens: 1, cacheReadTokens: 1, outputTokens: 10, costUsd: 0.01, replaced: limit === undefined ? 0 : 2, provenance: 'simulated' as const };
      };
      const turns = contexts.map((context, i) => ({ seq: i, at: new Date(Date.UTC(2026, 10, 2, 9, i)).toISOString(), kind: 'main' as const, context, input: 3, cacheWrite: 100, cacheRead: context - 103, output: 10, delta: i ? context - contexts[i - 1]! : context, parts: { baseline: 20_000 }, stack: { baseline: 20_000, 'tool:read_file': context - 20_000 }, residual: 5, tools: i ? [{ id: `t${i}`, name: 'read_file', group: 'read_file', tokens: 40_000, estimated: 39_000, payloadId: rows[i]?.id }] : [] }));
      return {
        sessionId: req.sessionId,
        rule: { client: 'claude-code', window: 200_000, windowSource: 'inferred', trigger: 167_000, triggerSource: 'inferred', when: 'after-call', how: 'test rule' },
        turns,
        compactions: [{ turn: 3, at: turns[3]!.at, kind: 'compact', trigger: 'auto', preTokens: 150_000 }],
        baselineTokens: 20_000,
        baselineSource: 'estimated',
        topCosts: [],
        measured: { peak: 150_000, compactions: 1, inputTokens: 12, cacheWriteTokens: 400, cacheReadTokens: 1000, outputTokens: 40, costUsd: 0.02, calls: 4 },
        replays: [replay('as it ran (rule replayed)'), replay('no guard'), ...(req.limits ?? []).map((l) => replay(`guard at ${l}`, l))],
        prices: { input: 5, cacheWrite: 6.25, cacheRead: 0.5, output: 25 },
        subagents: [],
        notes: [],
        warning: 'compacted 1×',
        ...(req.replayOnly ? {} : { readBacks: readBacksIn(req.sessionId) }),
      };
    },
    on(event: string, listener: (p: unknown) => void) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener);
      return () => set.delete(listener);
    },
  } as Record<string, unknown>;
  const api = new Proxy(impl, {
    set(_target, prop: string, value: unknown) {
      if (prop !== 'unsearched') return false;
      state.unsearched = Number(value);
      return true;
    },
    get(target, prop: string) {
      if (prop === 'calls') return calls;
      if (prop === 'rows') return rows;
      if (prop === 'unsearched') return state.unsearched;
      if (prop === 'emit') return (event: string, payload: unknown) => listeners.get(event)?.forEach((l) => l(payload));
      const fn = target[prop];
      if (typeof fn !== 'function') return async () => { throw new ApiError('UNAVAILABLE', `${prop} is not in the memory API`); };
      if (prop === 'on') return fn;
      return async (req: unknown) => {
        calls.push({ method: prop, req });
        // As over the wire: undefined fields drop out, and the service's own validator judges the rest.
        if (isMethodName(prop)) {
          try {
            validateRequest(prop, req === undefined ? undefined : JSON.parse(JSON.stringify(req)));
          } catch (err) {
            if (err instanceof ServiceError) throw new ApiError(err.code, err.message);
            throw err;
          }
        }
        return (fn as (r: unknown) => Promise<unknown>)(req);
      };
    },
  });
  return api as unknown as MemoryApi;
}
