import { useEffect, useState } from 'react';
import type { LimitTunerResponse, ReplayTotals, StrategyName } from '../../src/service/contract.js';
import { useApp, useAppStore } from '../store/react.js';
import { formatInt, formatTokens, formatUsd } from '../lib/format.js';
import { configSnippet, limitForContextWindow, overLimit, savings, sliderToTokens, sumReplays, tokensToSlider } from '../lib/tuner.js';
import { CallTable, signedUsd } from '../components/CallTable.js';
import { scopeTitle } from '../lib/sessions.js';
import { ApplyConfigDialog, useScopeProject } from '../components/ApplyConfigDialog.js';
import { EvidencePanel } from '../components/EvidencePanel.js';

/** Rows listed under "which calls flip". */
const FLIP_ROWS_SHOWN = 200;

/**
 * The limit tuner: what another limit would do, as the Timeline's replay answers it (per session:
 * tokens × calls in context, the session's cache prices, the client's own rule), summed over the
 * sessions in scope. The histogram shows payload sizes, each once, to place the limit among them.
 */
export function TunerView() {
  const tuner = useApp((s) => s.tuner);
  const loading = useApp((s) => s.tunerLoading);
  const error = useApp((s) => s.tunerError);
  const limit = useApp((s) => s.tunerLimit);
  const replaying = useApp((s) => s.tunerReplaying);
  const ctxWindow = useApp((s) => s.tunerContextWindow);
  const info = useApp((s) => s.info);
  const setTuner = useApp((s) => s.setTuner);
  const load = useApp((s) => s.loadTuner);
  const scopeName = useScopeName();
  const store = useAppStore();
  const project = useScopeProject();
  const [applyOpen, setApplyOpen] = useState(false);

  useEffect(() => {
    if (!tuner && !loading && !error) void load();
  }, [tuner, loading, error, load]);

  if (error) return <div className="view"><div className="state error" role="alert"><strong>Could not load the replay.</strong><span>{error}</span><button className="btn sm" onClick={() => void load()}>Retry</button></div></div>;
  if (!tuner || limit === null) return <div className="view"><div className="state"><span className="spinner" /> Replaying sessions…</div></div>;

  // The figures are for the limit the service replayed; while the slider moves on, the view says so.
  const stale = tuner.limitTokens !== limit;
  const sum = sumReplays(tuner.replay.sessions);
  const saved = savings(sum.noGuard, sum.atLimit);
  const snippet = configSnippet({ limitTokens: limit, strategy: tuner.strategy, profile: tuner.profile, contextWindowTokens: ctxWindow });
  const withCalls = tuner.replay.sessionsTotal > 0;
  const done = tuner.replay.sessions.length;

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(snippet);
      store.getState().notify('success', 'Config copied');
    } catch {
      store.getState().notify('error', 'Clipboard not available: copy it from the box');
    }
  };

  return (
    <div className="view scroll pad tuner" data-testid="tuner">
      <header className="view-head">
        <div>
          <h1>Limit tuner</h1>
          <p className="dim">
            {scopeName} · {formatInt(tuner.replay.sessionsTotal)} session{tuner.replay.sessionsTotal === 1 ? '' : 's'} with model calls
            {done < tuner.replay.sessionsTotal ? ` (${formatInt(done)} replayed so far)` : ''} · {formatInt(tuner.total)} payloads
          </p>
          {tuner.fallbacks > 0 ? (
            <p className="dim" data-testid="tuner-fallbacks">
              {formatInt(tuner.fallbacks)} of {formatInt(tuner.total)} were never counted with <code>{tuner.strategy}</code>: their listed tokens stand in (count them exactly from their Estimates tab).
            </p>
          ) : null}
        </div>
        <div className="view-controls">
          <label className="field compact">
            <span>Strategy</span>
            <select value={tuner.strategy} onChange={(e) => setTuner({ strategy: e.target.value as StrategyName })}>
              {(info?.strategies ?? [tuner.strategy]).map((s) => <option key={s} value={s}>{s}</option>)}
            </select>
          </label>
          <label className="field compact">
            <span>Context window</span>
            <input
              type="number"
              min={0}
              step={1000}
              placeholder="e.g. 200000"
              aria-label="Context window tokens"
              value={ctxWindow ?? ''}
              onChange={(e) => {
                const v = e.target.value === '' ? null : Math.max(0, Number(e.target.value));
                setTuner({ contextWindow: v, ...(v ? { limit: limitForContextWindow(v) } : {}) });
              }}
            />
          </label>
        </div>
      </header>

      <section className="card">
        <Histogram tuner={tuner} limit={limit} />
        <div className="slider-row">
          <label htmlFor="limit-slider" className="eyebrow">Limit</label>
          <input
            id="limit-slider"
            type="range"
            min={0}
            max={1000}
            value={Math.round(tokensToSlider(limit) * 1000)}
            aria-valuetext={`${formatInt(limit)} tokens`}
            onChange={(e) => setTuner({ limit: sliderToTokens(Number(e.target.value) / 1000), contextWindow: null })}
            data-testid="limit-slider"
          />
          <input
            type="number"
            className="limit-input mono"
            aria-label="Limit in tokens"
            min={1}
            value={limit}
            onChange={(e) => setTuner({ limit: Math.max(1, Math.round(Number(e.target.value) || 1)), contextWindow: null })}
          />
          <span className="dim">tokens</span>
        </div>
        <p className="dim" data-testid="over-limit">
          {formatInt(overLimit(tuner.sizes, limit))} of {formatInt(tuner.sizes.length)} payloads are over {formatInt(limit)} tokens by size (each counted once; the guard decides on its own count).
        </p>
        {ctxWindow ? (
          <p className="note">
            max(2,000, min(12,000, 10% of {formatInt(ctxWindow)})) = <b>{formatInt(limitForContextWindow(ctxWindow))}</b> tokens
          </p>
        ) : null}
      </section>

      {withCalls ? (
        <>
          <div className={`stat-grid${stale || replaying ? ' stale' : ''}`} data-testid="tuner-stats" aria-busy={stale || replaying}>
            <Stat label="Saved against no guard" value={signedUsd(saved.usd)} sub={`${formatTokens(saved.tokens)} tokens × calls${saved.usd < 0 ? ': the guard cost more than it kept out' : ''}`} />
            <Stat label={`Guard at ${formatInt(tuner.limitTokens)}`} value={formatUsd(sum.atLimit.costUsd)} sub={replayLine(sum.atLimit)} />
            <Stat label="No guard (the client's own rules)" value={formatUsd(sum.noGuard.costUsd)} sub={replayLine(sum.noGuard)} />
            <Stat label="As it ran (its rule replayed)" value={formatUsd(sum.asRan.costUsd)} sub={replayLine(sum.asRan)} />
          </div>
          <p className="dim" data-testid="tuner-status">
            {stale ? `Replaying at ${formatInt(limit)}…` : replaying ? 'Replaying the rest: figures will change.' : ''}
            {!stale && sum.atLimit.pending > 0 ? ` ${formatInt(sum.atLimit.pending)} guard message(s) still being built (at the usual size meanwhile).` : ''}
          </p>
          {tuner.replay.sessions.length > 1 ? <SessionsTable tuner={tuner} /> : null}
        </>
      ) : (
        <p className="note" data-testid="tuner-no-calls">
          No session here has model calls to replay: there is no answer in tokens × calls or dollars, only the payload sizes above.
        </p>
      )}
      {tuner.payloadsOnly.sessions > 0 ? (
        <p className="note" data-testid="tuner-payloads-only">
          {formatInt(tuner.payloadsOnly.sessions)} session{tuner.payloadsOnly.sessions === 1 ? '' : 's'} without model calls (bare spill folders): no calls to multiply. Payload sizes only, each once:
          {' '}{formatInt(tuner.payloadsOnly.payloads)} payloads, {formatTokens(tuner.payloadsOnly.tokens)} tokens; {formatInt(tuner.payloadsOnly.overLimit)} over {formatInt(tuner.limitTokens)} ({formatTokens(tuner.payloadsOnly.tokensOverLimit)} tokens).
        </p>
      ) : null}

      <section className="card" data-testid="tuner-assumptions">
        <header className="card-head"><h3>What these numbers assume</h3></header>
        <ul className="assumptions">
          {tuner.assumptions.map((a) => <li key={a}>{a}</li>)}
          <li>
            The guard counts with <code>{tuner.strategy}</code> and the <code>{tuner.profile}</code> profile
            {tuner.replay.sessions.length ? " (the one the sessions' own guard used, as its messages say)." : ' (the default: no replayed session says what its guard used).'}
          </li>
        </ul>
      </section>

      {withCalls ? (
        <section className="card">
          <header className="card-head">
            <h3>{tuner.replay.flips.length === 0 ? 'No call changes decision' : `${formatInt(tuner.replay.flips.length)} call${tuner.replay.flips.length === 1 ? '' : 's'} the guard at ${formatInt(tuner.limitTokens)} treats differently`}</h3>
            <span className="dim">than the session's own guard did; tokens × calls as it ran</span>
          </header>
          {tuner.replay.flips.length ? (
            <CallTable
              testId="flips"
              rows={tuner.replay.flips.slice(0, FLIP_ROWS_SHOWN)}
              withCalls
              extra={{
                head: 'At this limit',
                cell: (r) => <span className={`badge ${r.atLimit === 'spill' ? 'action-spill' : 'action-pass'}`}>{r.atLimit === 'spill' ? 'spilled' : 'kept whole'}</span>,
              }}
            />
          ) : null}
        </section>
      ) : null}

      <EvidencePanel />

      <section className="card">
        <header className="card-head">
          <h3>Config</h3>
          <span className="card-actions">
            <button className="btn" onClick={() => void copy()}>Copy config</button>
            <button className="btn primary" onClick={() => setApplyOpen(true)} data-testid="apply-limit" title="Write this limit into a rules file, after showing the change">
              Apply to config…
            </button>
          </span>
        </header>
        <pre className="code-block" data-testid="config-snippet">{snippet}</pre>
      </section>
      {applyOpen ? <ApplyConfigDialog tool="*" set={{ limit }} project={project} from={`the limit tuner at ${formatInt(limit)} tokens`} onClose={() => setApplyOpen(false)} /> : null}
    </div>
  );
}

function replayLine(t: ReplayTotals): string {
  return `${formatTokens(t.sentTokens)} tokens sent · peak ${formatTokens(t.peak)} · ${formatInt(t.compactions)} compaction${t.compactions === 1 ? '' : 's'}${t.replaced ? ` · ${formatInt(t.replaced)} spilled` : ''}`;
}

function SessionsTable({ tuner }: { tuner: LimitTunerResponse }) {
  const store = useAppStore();
  return (
    <section className="card">
      <header className="card-head"><h3>Per session</h3><span className="dim">the Timeline's replay of each</span></header>
      <table className="grid-table" data-testid="tuner-sessions">
        <thead><tr><th>Session</th><th className="num">Calls</th><th className="num">As it ran</th><th className="num">No guard</th><th className="num">At {formatInt(tuner.limitTokens)}</th><th className="num">Saved</th></tr></thead>
        <tbody>
          {tuner.replay.sessions.map((s) => (
            <tr key={s.sessionId}>
              <td>
                <button type="button" className="link-btn" onClick={() => { store.getState().selectSession(s.sessionId); store.getState().setView('timeline'); }} title="Open its Timeline">
                  {s.title ?? s.name}
                </button>
              </td>
              <td className="num mono">{formatInt(s.calls)}</td>
              <td className="num mono">{formatUsd(s.asRan.costUsd)}</td>
              <td className="num mono">{formatUsd(s.noGuard.costUsd)}</td>
              <td className="num mono">{formatUsd(s.atLimit.costUsd)}</td>
              <td className="num mono">{signedUsd(s.noGuard.costUsd - s.atLimit.costUsd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function Stat({ label, value, sub }: { label: string; value: string; sub?: string }) {
  return (
    <div className="stat">
      <span className="eyebrow">{label}</span>
      <span className="stat-value mono">{value}</span>
      <span className="dim">
        {sub}
      </span>
    </div>
  );
}

/** Log-spaced histogram of payload sizes; bars right of the limit are the ones that spill. Plain SVG. */
export function Histogram({ tuner, limit }: { tuner: LimitTunerResponse; limit: number }) {
  const [hover, setHover] = useState<number | null>(null);
  const buckets = tuner.histogram;
  const W = 800;
  const H = 160;
  const PAD_B = 22;
  const max = Math.max(1, ...buckets.map((b) => b.count));
  const bw = W / Math.max(1, buckets.length);
  // Where the limit sits, interpolated in log space within its bucket.
  let markerX = W;
  for (let i = 0; i < buckets.length; i++) {
    const b = buckets[i]!;
    if (limit < b.to || i === buckets.length - 1) {
      const lf = Math.log(Math.max(b.from, 1));
      const lt = Math.log(Math.max(b.to, b.from + 1));
      const t = Math.min(1, Math.max(0, (Math.log(Math.max(limit, 1)) - lf) / (lt - lf || 1)));
      markerX = limit < b.from ? i * bw : (i + t) * bw;
      break;
    }
  }
  const ticks = buckets.map((b, i) => ({ i, from: b.from })).filter((_, i) => i % Math.ceil(buckets.length / 8) === 0);
  const h = hover !== null ? buckets[hover] : undefined;
  return (
    <div className="histogram">
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={`Histogram of ${tuner.total} payload sizes (each once) with the limit at ${limit} tokens`} data-testid="histogram">
        {buckets.map((b, i) => {
          const bh = b.count ? Math.max(2, (b.count / max) * (H - PAD_B - 6)) : 0;
          const spilled = b.from >= limit;
          return (
            <rect
              key={i}
              x={i * bw + 1}
              y={H - PAD_B - bh}
              width={Math.max(1, bw - 2)}
              height={bh}
              rx={2}
              className={spilled ? 'bar spilled' : 'bar kept'}
              onMouseEnter={() => setHover(i)}
              onMouseLeave={() => setHover(null)}
            />
          );
        })}
        <line x1={0} x2={W} y1={H - PAD_B} y2={H - PAD_B} className="axis" />
        <line x1={markerX} x2={markerX} y1={0} y2={H - PAD_B} className="limit-line" />
        {ticks.map((t) => (
          <text key={t.i} x={t.i * bw + 2} y={H - 6} className="tick">{formatTokens(t.from)}</text>
        ))}
      </svg>
      <div className="hist-caption dim mono" aria-live="polite">
        {h ? `${formatTokens(h.from)}–${formatTokens(h.to)} tokens: ${formatInt(h.count)} payloads` : 'Payload size in tokens, each payload once (log scale). Bars right of the line are over the limit.'}
      </div>
    </div>
  );
}

/** The header's scope, as every view names it (app/lib/sessions.ts scopeTitle). */
export function useScopeName(): string {
  return useApp((s) => scopeTitle({ sessionId: s.selectedSessionId, rootId: s.selectedRootId, sessions: s.sessions, roots: s.roots, info: s.info }));
}
