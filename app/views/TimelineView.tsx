import { useEffect, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { ContextRule, Prices, Profile, ReadBack, ReplayResult, StrategyName, TimelineData, TimelineRequest } from '../../src/service/contract.js';
import { useApp, useAppStore } from '../store/react.js';
import { formatInt, formatTokens, formatUsd } from '../lib/format.js';
import { loadReplaySettings, saveReplaySettings, type ReplaySettings } from './timeline-settings.js';
import { errMessage } from '../../src/pipeline/values.js';
import { STRATEGY_NAMES } from '../../src/pipeline/vocab.js';
import { chartTop } from '../lib/timeline-scale.js';
import { legendCall, ownShares } from '../lib/timeline-legend.js';
import { scopeTitle } from '../lib/sessions.js';
import { CallLabel } from '../components/common.js';
import { partText, readBackCost, readBackTitle, readBackTotals, spillTarget } from '../lib/readback.js';

/** Stacked parts drawn: the biggest this many groups, the rest as "other". */
const MAX_STACKED = 6;
/** A slider move asks for a replay at most this often. */
const REPLAY_DEBOUNCE_MS = 60;
const PRESETS = [2_000, 8_000, 12_000, 25_000];
/** Replayed results whose guard message was not built in time are asked for again this soon. */
const PENDING_RETRY_MS = 300;
const PROFILES: readonly Profile[] = ['o200k', 'cl100k', 'claude'];
const PALETTE = ['#6c8ebf', '#82b366', '#d6b656', '#b85450', '#9673a6', '#d79b00', '#999999'];
/** The mark over a call that read a spill back (the badge's colour in styles.css). */
const READBACK_MARK = '#9673a6';

/** This session's read-backs by reading call, and the call (chart index) each reader entered with. */
interface ReadBackIndex {
  byReader: Map<string, ReadBack[]>;
  turnOf: Map<string, { turn: number; tokens: number }>;
  /** Chart indices of the calls with a read-back among their tool results, ascending. */
  turns: number[];
  list: ReadBack[];
}

function readBackIndex(t: TimelineData): ReadBackIndex {
  // Read in this session: a read of one of its spills from another session is that session's call, not one of these.
  const list = (t.readBacks ?? []).filter((rb) => rb.sessionId === t.sessionId);
  const byReader = new Map<string, ReadBack[]>();
  for (const rb of list) byReader.set(rb.readerId, [...(byReader.get(rb.readerId) ?? []), rb]);
  const turnOf = new Map<string, { turn: number; tokens: number }>();
  const turns = new Set<number>();
  t.turns.forEach((x, i) => {
    for (const tool of x.tools) {
      if (tool.payloadId && byReader.has(tool.payloadId)) {
        turnOf.set(tool.payloadId, { turn: i, tokens: tool.tokens });
        turns.add(i);
      }
    }
  });
  return { byReader, turnOf, turns: [...turns].sort((a, b) => a - b), list };
}

/** The groups stacked, biggest first by their peak in context. */
function stackKeys(t: TimelineData): string[] {
  const peak = new Map<string, number>();
  for (const x of t.turns) for (const [k, v] of Object.entries(x.stack)) peak.set(k, Math.max(peak.get(k) ?? 0, v));
  const keys = [...peak].sort((a, b) => b[1] - a[1]).map(([k]) => k);
  return keys.length > MAX_STACKED ? [...keys.slice(0, MAX_STACKED - 1), 'rest'] : keys;
}

function chartData(t: TimelineData, rule: TimelineData['rule'], keys: string[], replayed: ReplayResult | undefined): uPlot.AlignedData {
  const xs = t.turns.map((_, i) => i);
  // Stacked bands: each series is drawn at the running sum up to its part (the legend shows the part's own share).
  const own = ownShares(t, keys);
  const bands: number[][] = [];
  let acc = t.turns.map(() => 0);
  for (const k of keys) {
    const mine = own.get(k)!;
    acc = acc.map((a, i) => a + mine[i]!);
    bands.push(acc);
  }
  const measured = t.turns.map((x) => x.context ?? null) as unknown as number[];
  const window = t.turns.map(() => rule.window ?? null) as unknown as number[];
  const trigger = t.turns.map(() => rule.trigger ?? null) as unknown as number[];
  const sim = t.turns.map((_, i) => replayed?.contexts[i] ?? null) as unknown as number[];
  return [xs, ...bands.reverse(), measured, window, trigger, sim];
}

/**
 * Context per call, the window and trigger, the stacked parts, compaction markers and the replay.
 * Built once per session's data: another rule (trigger) or replay redraws through setData, so moving
 * the slider never destroys the chart (it did: the hovered call and the legend were lost on each move).
 */
function Chart({ t, rule, replayed, onPick, yTop, readBackTurns }: { t: TimelineData; rule: TimelineData['rule']; replayed?: ReplayResult; onPick: (i: number) => void; yTop: number; readBackTurns: number[] }) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const keys = useMemo(() => stackKeys(t), [t]);
  const pick = useRef(onPick);
  pick.current = onPick;
  // Read by the scale on every redraw: the chart is built once per session, the axis follows the prop.
  const top = useRef(yTop);
  top.current = yTop;
  useEffect(() => {
    if (!el.current) return;
    const compactions = t.compactions.map((c) => c.turn);
    const marks = readBackTurns;
    const own = ownShares(t, keys);
    // The legend: each part's own tokens at the hovered call, else at the peak call (the x value says which).
    const at = (idx: number | null | undefined) => legendCall(t, idx).call;
    const ownValue = (k: string) => (_u: uPlot, _raw: number | null, _s: number, idx: number | null) => formatInt(own.get(k)![at(idx)] ?? 0);
    const drawnValue = (u: uPlot, _raw: number | null, sidx: number, idx: number | null) => {
      const v = u.data[sidx]?.[at(idx)];
      return v === null || v === undefined ? '–' : formatInt(v);
    };
    const stacked = [...keys].reverse().map((k, i) => ({ label: k, stroke: PALETTE[(keys.length - 1 - i) % PALETTE.length], fill: `${PALETTE[(keys.length - 1 - i) % PALETTE.length]}88`, width: 0, value: ownValue(k) }));
    const opts: uPlot.Options = {
      width: Math.max(320, el.current.clientWidth),
      height: 320,
      scales: { x: { time: false }, y: { range: () => [0, top.current] } },
      axes: [{ label: 'model call', incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000] }, { label: 'tokens', size: 70, values: (_u, ticks) => ticks.map((v) => formatTokens(v)) }],
      cursor: { drag: { x: false, y: false } },
      series: [
        { label: 'call', value: (_u, _raw, _s, idx) => (legendCall(t, idx).atPeak ? `${at(idx)} (peak)` : String(idx)) },
        ...stacked,
        { label: 'context (measured)', stroke: '#222', width: 2, value: drawnValue },
        { label: 'window', stroke: '#999', dash: [6, 4], width: 1, value: drawnValue },
        { label: 'trigger', stroke: '#c00', dash: [4, 4], width: 1, value: drawnValue },
        { label: 'replay (simulated)', stroke: '#0a7', dash: [2, 2], width: 2, value: drawnValue },
      ],
      hooks: {
        draw: [
          (u) => {
            const ctx = u.ctx;
            ctx.save();
            ctx.strokeStyle = '#c00';
            ctx.lineWidth = 2 * devicePixelRatio;
            for (const c of compactions) {
              const x = u.valToPos(c - 0.5, 'x', true);
              ctx.beginPath();
              ctx.moveTo(x, u.bbox.top);
              ctx.lineTo(x, u.bbox.top + u.bbox.height);
              ctx.stroke();
            }
            // A small triangle over each call that read a spill back, at the plot's top edge.
            ctx.fillStyle = READBACK_MARK;
            const r = 5 * devicePixelRatio;
            for (const m of marks) {
              const x = u.valToPos(m, 'x', true);
              ctx.beginPath();
              ctx.moveTo(x - r, u.bbox.top);
              ctx.lineTo(x + r, u.bbox.top);
              ctx.lineTo(x, u.bbox.top + 1.6 * r);
              ctx.closePath();
              ctx.fill();
            }
            ctx.restore();
          },
        ],
      },
    };
    const u = new uPlot(opts, chartData(t, rule, keys, replayed), el.current);
    u.over.addEventListener('click', () => {
      const i = u.cursor.idx;
      if (i !== null && i !== undefined) pick.current(i);
    });
    plot.current = u;
    return () => {
      u.destroy();
      plot.current = null;
    };
    // The replay redraws through setData below, not by building a new chart (which would lose the hovered call).
    // eslint-disable-next-line react-hooks/exhaustive-deps -- rule and replayed: see above; the marks are the session's (derived from t)
  }, [t, keys]);
  useEffect(() => {
    plot.current?.setData(chartData(t, rule, keys, replayed));
  }, [t, rule, keys, replayed, yTop]);
  return <div ref={el} className="timeline-chart" data-testid="timeline-chart" data-y-top={top.current} data-compactions={t.compactions.length} data-readback-calls={readBackTurns.join(',')} data-replay-compactions={replayed?.compactionsAt.length ?? ''} data-replay-peak={replayed?.peak ?? ''} />;
}

/** Pages of a session's payloads read for their arguments: a 2,000-call session is 2. */
const ARGS_MAX_PAGES = 10;
const ARGS_PAGE_ROWS = 1_000;

/** Each of the session's payloads' arguments (one line), by payload id: what the call rows show. */
function useCallArgs(api: ReturnType<typeof useAppStore>['deps']['api'], sessionId: string | null): Map<string, string> {
  const [args, setArgs] = useState<Map<string, string>>(() => new Map());
  useEffect(() => {
    setArgs(new Map());
    if (!sessionId) return;
    let live = true;
    void (async () => {
      const found = new Map<string, string>();
      for (let page = 0; page < ARGS_MAX_PAGES && live; page++) {
        const r = await api.listPayloads({ sessionId, offset: page * ARGS_PAGE_ROWS, limit: ARGS_PAGE_ROWS }).catch(() => null);
        if (!r) break;
        for (const row of r.rows) if (row.inputExcerpt) found.set(row.id, row.inputExcerpt);
        if (live) setArgs(new Map(found));
        if ((page + 1) * ARGS_PAGE_ROWS >= r.total) break;
      }
    })();
    return () => {
      live = false;
    };
  }, [api, sessionId]);
  return args;
}

/** The request for these settings: the limit replayed, the guard's estimator, the threshold the session ran with. */
function requestOf(sessionId: string, s: ReplaySettings): TimelineRequest {
  return {
    sessionId,
    limits: [s.limit],
    strategy: s.strategy,
    profile: s.profile,
    autoCompactPct: s.autoCompactPct,
    autoCompactLimit: s.autoCompactLimit,
    autoCompactDisabled: s.autoCompactDisabled || undefined,
  };
}

/** Which message stood in for the replaced results: the guard's (built offline from the saved payload), or an estimate. */
function messagesLine(r: ReplayResult): string {
  const m = r.messages;
  if (!m || !r.replaced) return '';
  const parts = [m.guard ? `${m.guard} by the guard offline` : '', m.saved ? `${m.saved} as saved` : '', m.fixed ? `${m.fixed} at the usual 600` : ''].filter(Boolean);
  return `messages: ${parts.join(', ')}${r.pending ? ` (${r.pending} being built)` : ''}`;
}

/** Per-session replay settings: the guard's estimator and the compaction threshold the session ran with. */
function SettingsPanel({ client, guardProfile, s, onChange }: { client: ContextRule['client']; guardProfile?: Profile; s: ReplaySettings; onChange: (s: ReplaySettings) => void }) {
  const num = (v: string) => (v.trim() === '' ? undefined : Number(v));
  return (
    <div className="timeline-settings" data-testid="timeline-settings">
      <label>
        Strategy{' '}
        <select aria-label="Replay strategy" value={s.strategy ?? ''} onChange={(e) => onChange({ ...s, strategy: (e.target.value || undefined) as StrategyName | undefined })}>
          <option value="">guard default</option>
          {STRATEGY_NAMES.map((x) => <option key={x} value={x}>{x}</option>)}
        </select>
      </label>
      <label>
        Profile{' '}
        <select aria-label="Replay profile" value={s.profile ?? ''} onChange={(e) => onChange({ ...s, profile: (e.target.value || undefined) as Profile | undefined })}>
          <option value="">{guardProfile ? `as the session's guard (${guardProfile})` : 'guard default (o200k)'}</option>
          {PROFILES.map((x) => <option key={x} value={x}>{x}</option>)}
        </select>
      </label>
      {client === 'claude-code' && (
        <label title="CLAUDE_AUTOCOMPACT_PCT_OVERRIDE the session ran with: it only lowers the trigger">
          Auto-compact % <input type="number" aria-label="Auto-compact percent" min={1} max={99} step={1} value={s.autoCompactPct ?? ''} placeholder="default" onChange={(e) => { const v = num(e.target.value); onChange({ ...s, autoCompactPct: v !== undefined && v > 0 && v < 100 ? v : undefined }); }} />
        </label>
      )}
      <label title={client === 'codex' ? 'model_auto_compact_token_limit the session ran with' : 'autoCompactWindow the session ran with'}>
        Compact at (tokens) <input type="number" aria-label="Auto-compact limit" min={1} step={1000} value={s.autoCompactLimit ?? ''} placeholder="by the rule" onChange={(e) => { const v = num(e.target.value); onChange({ ...s, autoCompactLimit: v !== undefined && Number.isInteger(v) && v > 0 ? v : undefined }); }} />
      </label>
      <label>
        <input type="checkbox" aria-label="Auto-compact disabled" checked={!!s.autoCompactDisabled} onChange={(e) => onChange({ ...s, autoCompactDisabled: e.target.checked || undefined })} /> auto-compact off
      </label>
    </div>
  );
}

export function TimelineView() {
  const sessionId = useApp((s) => s.selectedSessionId);
  const store = useAppStore();
  const api = store.deps.api;
  const [t, setT] = useState<TimelineData | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [settings, setSettings] = useState<ReplaySettings>(() => loadReplaySettings(sessionId ?? ''));
  const limit = settings.limit;
  const setLimit = (l: number) => setSettings((s) => ({ ...s, limit: l }));
  const [replayed, setReplayed] = useState<ReplayResult | undefined>();
  const [asRanNow, setAsRanNow] = useState<ReplayResult | undefined>();
  const [rule, setRule] = useState<ContextRule | null>(null);
  const [retry, setRetry] = useState(0);
  const [picked, setPicked] = useState<number | null>(null);
  const [wholeWindow, setWholeWindow] = useState(false);
  const [prices, setPrices] = useState<Prices | null>(null);
  const args = useCallArgs(api, sessionId);
  const scope = useApp((s) => scopeTitle({ sessionId: s.selectedSessionId, rootId: s.selectedRootId, sessions: s.sessions, roots: s.roots, info: s.info }));

  useEffect(() => {
    setT(null);
    setError(null);
    setPicked(null);
    if (!sessionId) return;
    const s = loadReplaySettings(sessionId);
    setSettings(s);
    let live = true;
    api.getTimeline(requestOf(sessionId, s)).then(
      (r) => {
        if (!live) return;
        setT(r);
        setRule(r.rule);
        setPrices(r.prices);
        setAsRanNow(r.replays[0]);
        setReplayed(r.replays[2]);
      },
      (e: unknown) => live && setError(errMessage(e)),
    );
    return () => {
      live = false;
    };
    // A new session only; the slider asks for replays alone.
  }, [sessionId, api]);

  useEffect(() => {
    if (!sessionId || !t) return;
    let live = true;
    saveReplaySettings(sessionId, settings);
    const timer = setTimeout(() => {
      void api.getTimeline({ ...requestOf(sessionId, settings), replayOnly: true, prices: prices ?? undefined }).then((r) => {
        if (!live) return;
        // Another threshold is another rule: its trigger line and its replay of the session as it ran.
        setRule(r.rule);
        setAsRanNow(r.replays[0]);
        setReplayed(r.replays[2]);
      });
    }, REPLAY_DEBOUNCE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [settings, prices, sessionId, t, api, retry]);

  useEffect(() => {
    if (!replayed?.pending) return;
    const timer = setTimeout(() => setRetry((n) => n + 1), PENDING_RETRY_MS);
    return () => clearTimeout(timer);
  }, [replayed]);
  const shown = useMemo(() => (t && rule ? { ...t, rule } : t), [t, rule]);
  const rbi = useMemo(() => (t ? readBackIndex(t) : null), [t]);

  // Per session (needsSession in src/service/shell/views.ts): the router shows "Pick a session" until one is.
  if (!sessionId) return null;
  if (error) return <div className="view"><div className="state error" role="alert"><strong>Could not build the timeline.</strong><span>{error}</span></div></div>;
  if (!t || !shown) return <div className="view"><div className="state"><span className="spinner" /> Building the timeline…</div></div>;
  if (!t.turns.length) {
    return (
      <div className="view"><div className="state"><strong>No model calls recorded</strong><span>{t.notes.join(' · ') || 'This session has no usage to chart.'}</span></div></div>
    );
  }
  const asRan = asRanNow ?? t.replays[0];
  const open = (id: string) => {
    store.getState().setView('payloads');
    void store.getState().openPayload(id);
  };
  /** The spill a call read back: the call it answered in this session, else the spill in its own session. */
  const openSpill = (rb: ReadBack) => {
    const to = spillTarget(rb, sessionId);
    if (to.sessionId && to.sessionId !== sessionId) store.getState().selectSession(to.sessionId);
    open(to.payloadId);
  };
  const reads = rbi ?? readBackIndex(t);
  const turn = picked !== null ? t.turns[picked] : undefined;
  const r = shown.rule;
  const scale = chartTop(shown, replayed, wholeWindow);
  return (
    <div className="view scroll pad timeline" data-testid="timeline">
      <header className="view-head">
        <div>
          <h1>Context timeline</h1>
          <p className="timeline-title ellipsis" data-testid="view-scope" title={scope}>{scope}</p>
          <p className="dim">
            window {r.window ? formatInt(r.window) : '?'} ({r.windowSource}) · trigger <span data-testid="timeline-trigger">{r.trigger ? formatInt(r.trigger) : 'none'}</span> ({r.triggerSource}: {r.how})
          </p>
        </div>
      </header>
      <div className="stat-grid">
        <div className="stat"><span className="eyebrow">Peak (measured)</span><span className="stat-value mono">{formatTokens(t.measured.peak)}</span><span className="dim">{formatInt(t.measured.calls)} calls</span></div>
        <div className="stat"><span className="eyebrow">Compactions (measured)</span><span className="stat-value mono" data-testid="timeline-compactions">{t.compactions.length}</span><span className="dim" data-testid="timeline-asran">rule replayed: {asRan?.compactionsAt.length ?? 0}</span></div>
        <div className="stat"><span className="eyebrow">Guard at {formatInt(limit)} (simulated)</span><span className="stat-value mono" data-testid="timeline-replay">{replayed ? `${replayed.compactionsAt.length} compaction(s)` : '…'}</span><span className="dim">{replayed ? `peak ${formatTokens(replayed.peak)} · ${formatUsd(replayed.costUsd)} · ${replayed.replaced} replaced` : ''}</span>
          {replayed && messagesLine(replayed) && <span className="dim" data-testid="timeline-messages">{messagesLine(replayed)}</span>}</div>
        <div className="stat"><span className="eyebrow">Cost (measured)</span><span className="stat-value mono">{formatUsd(t.measured.costUsd)}</span><span className="dim">at the prices below</span></div>
      </div>
      <section className="card">
        <header className="card-head">
          <h3>Context per call</h3>
          <label className="timeline-slider">
            Guard limit <input type="range" min={500} max={50_000} step={500} value={limit} aria-label="Guard limit" onChange={(e) => setLimit(Number(e.target.value))} />
            <span className="mono">{formatInt(limit)}</span>
            {PRESETS.map((p) => (
              <button key={p} className="btn sm" data-testid={`timeline-preset-${p}`} onClick={() => setLimit(p)}>{formatTokens(p)}</button>
            ))}
          </label>
        </header>
        <SettingsPanel client={r.client} guardProfile={t.guardProfile} s={settings} onChange={setSettings} />
        <Chart t={t} rule={r} replayed={replayed} onPick={setPicked} yTop={scale.top} readBackTurns={reads.turns} />
        {scale.offScale ? (
          <p className="dim" data-testid="timeline-off-scale">
            The {scale.off.map((l) => `${l} (${formatInt((l === 'window' ? shown.rule.window : shown.rule.trigger) ?? 0)})`).join(' and ')}{' '}
            {scale.off.length > 1 ? 'are' : 'is'} far above this session&apos;s contexts, so the scale fits the contexts
            {shown.rule.trigger && !scale.off.includes('trigger') ? ' and the trigger' : ''}.{' '}
            <button className="link-btn" onClick={() => setWholeWindow(!wholeWindow)}>{wholeWindow ? 'Fit the contexts' : 'Show the whole window'}</button>
          </p>
        ) : null}
        <p className="dim">Red lines: compactions the client recorded.{reads.turns.length ? ' Purple marks: calls that read a spill back.' : ''} The dashed green line is simulated: the model might have acted differently. The legend gives each part&apos;s own tokens at the call under the pointer, or at the peak call.</p>
      </section>
      <div className="two-col">
        <section className="card" data-testid="timeline-turn">
          <header className="card-head"><h3>{turn ? `Call ${picked}` : 'Click a call'}</h3></header>
          {turn ? (
            <>
              <p className="dim mono">context {formatInt(turn.context ?? 0)} · growth {formatInt(turn.delta ?? 0)} · residual {formatInt(turn.residual ?? 0)} · output {formatInt(turn.output ?? 0)}</p>
              <table className="grid-table">
                <thead><tr><th>Tool result</th><th className="num">Tokens</th><th className="num">Estimated</th></tr></thead>
                <tbody>
                  {turn.tools.map((x) => (
                    <tr key={x.id} className={x.payloadId ? 'clickable' : ''} tabIndex={x.payloadId ? 0 : undefined} onClick={() => x.payloadId && open(x.payloadId)} onKeyDown={(e) => e.key === 'Enter' && x.payloadId && open(x.payloadId)} data-payload-id={x.payloadId} title={x.payloadId ? 'Open this result' : 'Not indexed: nothing to open'}>
                      <td className="call-cell">
                        <CallLabel tool={x.name} input={x.payloadId ? args.get(x.payloadId) : undefined} />
                        {x.payloadId && reads.byReader.has(x.payloadId) ? <ReadBackMark list={reads.byReader.get(x.payloadId)!} onSpill={openSpill} /> : null}
                      </td>
                      <td className="num mono">{formatTokens(x.tokens)}</td>
                      <td className="num mono">{formatTokens(x.estimated)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          ) : (
            <p className="dim">The tool results that entered with it, and how far the estimate was from the API.</p>
          )}
        </section>
        <section className="card">
          <header className="card-head"><h3>Costliest results</h3></header>
          <table className="grid-table">
            <thead><tr><th>Tool</th><th className="num">Call</th><th className="num">Tokens × calls</th><th className="num">Cache reads</th></tr></thead>
            <tbody>
              {t.topCosts.slice(0, 10).map((c) => (
                <tr key={c.id} className={c.payloadId ? 'clickable' : ''} tabIndex={c.payloadId ? 0 : undefined} onClick={() => c.payloadId && open(c.payloadId)} onKeyDown={(e) => e.key === 'Enter' && c.payloadId && open(c.payloadId)} data-payload-id={c.payloadId} title={c.payloadId ? 'Open this result' : 'Not indexed: nothing to open'}>
                  <td className="call-cell"><CallLabel tool={c.name} input={c.payloadId ? args.get(c.payloadId) : undefined} /></td>
                  <td className="num mono">{c.turn}</td>
                  <td className="num mono">{formatTokens(c.tokens)} × {c.turnsInContext}</td>
                  <td className="num mono">{formatTokens(c.cacheReadTokens)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      </div>
      {reads.list.length ? <ReadBackCard reads={reads} args={args} onPick={setPicked} onOpen={open} onSpill={openSpill} /> : null}
      {prices && (
        <section className="card">
          <header className="card-head"><h3>Prices (USD per million tokens, editable)</h3></header>
          <div className="timeline-prices">
            {(['input', 'cacheWrite', 'cacheRead', 'output'] as const).map((k) => (
              <label key={k}>
                {k} <input type="number" min={0} step={0.01} value={prices[k]} onChange={(e) => setPrices({ ...prices, [k]: Math.max(0, Number(e.target.value) || 0) })} />
              </label>
            ))}
          </div>
        </section>
      )}
      {t.notes.length > 0 && <p className="dim">{t.notes.join(' · ')}</p>}
    </div>
  );
}

/** Under a call in the picked call's table: what it read back, and a link to that spill. */
function ReadBackMark({ list, onSpill }: { list: ReadBack[]; onSpill: (rb: ReadBack) => void }) {
  return (
    <>
      {list.map((rb, i) => (
        <span key={i} className="readback-mark" data-testid="timeline-readback-mark" title={readBackTitle(rb)}>
          <span className="badge tiny readback">read-back</span>
          reads back <span className="mono">{rb.spillTool ?? 'a spill'}</span> {partText(rb.part)} ·{' '}
          <button
            type="button"
            className="link-btn"
            data-testid="timeline-open-spill"
            onClick={(e) => {
              // The row opens the reading call; this link, the spill it read.
              e.stopPropagation();
              onSpill(rb);
            }}
          >
            open the spill
          </button>
        </span>
      ))}
    </>
  );
}

/** Every call of the session that read a spill back: which call, what it read of which spill, and its tokens. */
function ReadBackCard({ reads, args, onPick, onOpen, onSpill }: { reads: ReadBackIndex; args: Map<string, string>; onPick: (i: number) => void; onOpen: (id: string) => void; onSpill: (rb: ReadBack) => void }) {
  const totals = readBackTotals(reads.list);
  // The Timeline's own figure for a call it shows (what entered with it), else the index's.
  const tokensOf = (rb: ReadBack) => reads.turnOf.get(rb.readerId)?.tokens ?? readBackCost(rb);
  const shownTokens = [...new Map(reads.list.map((rb) => [rb.readerId, tokensOf(rb)])).values()].reduce((a, b) => a + b, 0);
  return (
    <section className="card" data-testid="timeline-readbacks" data-count={totals.count}>
      <header className="card-head">
        <h3>Read-backs</h3>
        <span className="dim">
          {formatInt(totals.count)} read{totals.count === 1 ? '' : 's'} of a spill by {formatInt(totals.calls)} call{totals.calls === 1 ? '' : 's'} · {formatTokens(shownTokens)} tokens: what the agent needed that the message did not hold
        </span>
      </header>
      <table className="grid-table">
        <thead><tr><th className="num">Call</th><th>Reading call</th><th>Reads back</th><th className="num">Tokens</th></tr></thead>
        <tbody>
          {reads.list.map((rb, i) => {
            const at = reads.turnOf.get(rb.readerId);
            return (
              <tr key={`${rb.readerId}:${i}`} data-testid="timeline-readback" data-reader-id={rb.readerId} data-spill-id={rb.spillId}>
                <td className="num mono">
                  {at ? (
                    <button
                      type="button"
                      className="link-btn"
                      title="Show this call's tool results above"
                      onClick={() => {
                        onPick(at.turn);
                        document.querySelector('[data-testid="timeline-turn"]')?.scrollIntoView({ block: 'nearest' });
                      }}
                    >
                      {at.turn}
                    </button>
                  ) : (
                    '—'
                  )}
                </td>
                <td className="call-cell">
                  <span className="call-label">
                    <button type="button" className="link-btn mono tool-name" title={`${readBackTitle(rb)} Open this call.`} onClick={() => onOpen(rb.readerId)} data-testid="timeline-open-reader">{rb.tool}</button>
                    {args.get(rb.readerId) ? <span className="call-args dim mono" title={args.get(rb.readerId)}>{args.get(rb.readerId)}</span> : null}
                  </span>
                </td>
                <td className="readback-what">
                  <button type="button" className="link-btn" title="Open the spill it read" onClick={() => onSpill(rb)} data-testid="timeline-readback-spill">
                    <span className="mono">{rb.spillTool ?? 'spill'}</span> {partText(rb.part)}
                  </button>
                </td>
                <td className="num mono">{formatTokens(tokensOf(rb))}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
