import { useEffect, useMemo, useState } from 'react';
import type { LimitTunerResponse, StrategyName } from '../../src/service/contract.js';
import { useApp, useAppStore } from '../store/react.js';
import { formatInt, formatPercent, formatTokens, formatUsd } from '../lib/format.js';
import { scopeTitle } from '../lib/sessions.js';
import {
  configSnippet,
  flips,
  limitForContextWindow,
  prefixSums,
  sliderToTokens,
  statsAt,
  tokensToSlider,
} from '../lib/tuner.js';

/** Rows listed under "which payloads flip". */
const FLIP_ROWS_SHOWN = 200;

export function TunerView() {
  const tuner = useApp((s) => s.tuner);
  const loading = useApp((s) => s.tunerLoading);
  const error = useApp((s) => s.tunerError);
  const limit = useApp((s) => s.tunerLimit);
  const price = useApp((s) => s.tunerPrice);
  const ctxWindow = useApp((s) => s.tunerContextWindow);
  const info = useApp((s) => s.info);
  const setTuner = useApp((s) => s.setTuner);
  const load = useApp((s) => s.loadTuner);
  const scopeName = useScopeName();
  const store = useAppStore();

  useEffect(() => {
    if (!tuner && !loading && !error) void load();
  }, [tuner, loading, error, load]);

  const sums = useMemo(() => (tuner ? prefixSums(tuner.sizes) : null), [tuner]);
  if (error) return <div className="view"><div className="state error" role="alert"><strong>Could not load sizes.</strong><span>{error}</span><button className="btn sm" onClick={() => void load()}>Retry</button></div></div>;
  if (!tuner || !sums || limit === null) return <div className="view"><div className="state"><span className="spinner" /> Loading payload sizes…</div></div>;

  const pricePerMTok = price ?? info?.defaults.pricePerMTok ?? 3;
  const now = statsAt(tuner.sizes, sums, limit, pricePerMTok);
  const base = statsAt(tuner.sizes, sums, tuner.limitTokens, pricePerMTok);
  const flip = flips(tuner.sizes, tuner.limitTokens, limit);
  const profile = info?.defaults.profile ?? 'o200k';
  const snippet = configSnippet({ limitTokens: limit, strategy: tuner.strategy, profile, contextWindowTokens: ctxWindow });

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(snippet);
      store.getState().notify('success', 'Config copied');
    } catch {
      store.getState().notify('error', 'Clipboard not available: copy it from the box');
    }
  };
  const open = (id: string) => {
    store.getState().setView('payloads');
    void store.getState().openPayload(id);
  };

  return (
    <div className="view scroll pad tuner" data-testid="tuner">
      <header className="view-head">
        <div>
          <h1>Limit tuner</h1>
          <p className="dim">{scopeName} · {formatInt(tuner.total)} payloads{tuner.sizes.length < tuner.total ? ` (sizes of the first ${formatInt(tuner.sizes.length)})` : ''}</p>
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
            <span>$ / M input tokens</span>
            <input type="number" min={0} step={0.25} value={pricePerMTok} onChange={(e) => setTuner({ price: Math.max(0, Number(e.target.value)) })} />
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
        {ctxWindow ? (
          <p className="note">
            max(2,000, min(12,000, 10% of {formatInt(ctxWindow)})) = <b>{formatInt(limitForContextWindow(ctxWindow))}</b> tokens
          </p>
        ) : null}
      </section>

      <div className="stat-grid" data-testid="tuner-stats">
        <Stat label="Would spill" value={`${formatInt(now.spilled)} of ${formatInt(now.total)}`} sub={formatPercent(now.total ? now.spilled / now.total : 0)} delta={now.spilled - base.spilled} />
        <Stat label="Tokens kept out" value={formatTokens(now.tokensKeptOut)} sub={`of ${formatTokens(now.tokensTotal)} (${formatPercent(now.tokensTotal ? now.tokensKeptOut / now.tokensTotal : 0)})`} />
        <Stat label="Dollars kept out" value={formatUsd(now.dollarsKeptOut)} sub={`at $${pricePerMTok}/M input tokens`} />
        <Stat label="Baseline limit" value={formatInt(tuner.limitTokens)} sub={`${formatInt(base.spilled)} spilled`} />
      </div>

      <section className="card">
        <header className="card-head">
          <h3>
            {flip.rows.length === 0
              ? 'No payload changes decision'
              : `${formatInt(flip.rows.length)} payloads ${flip.direction === 'now-spilled' ? 'would now spill' : 'would now stay in context'}`}
          </h3>
          <span className="dim">compared with the baseline limit {formatInt(tuner.limitTokens)}</span>
        </header>
        {flip.rows.length ? (
          <table className="grid-table" data-testid="flips">
            <thead><tr><th>Tool</th><th className="num">Tokens</th><th>Now</th></tr></thead>
            <tbody>
              {flip.rows.slice(-FLIP_ROWS_SHOWN).reverse().map((r) => (
                <tr key={r.id} className="clickable" onClick={() => open(r.id)}>
                  <td className="mono">{r.tool}</td>
                  <td className="num mono">{formatInt(r.tokens)}</td>
                  <td><span className={`badge ${flip.direction === 'now-spilled' ? 'action-spill' : 'action-pass'}`}>{flip.direction === 'now-spilled' ? 'spilled' : 'kept'}</span></td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </section>

      <section className="card">
        <header className="card-head">
          <h3>Config</h3>
          <button className="btn" onClick={() => void copy()}>Copy config</button>
        </header>
        <pre className="code-block" data-testid="config-snippet">{snippet}</pre>
      </section>
    </div>
  );
}

function Stat({ label, value, sub, delta }: { label: string; value: string; sub?: string; delta?: number }) {
  return (
    <div className="stat">
      <span className="eyebrow">{label}</span>
      <span className="stat-value mono">{value}</span>
      <span className="dim">
        {sub}
        {delta ? <span className={delta > 0 ? 'delta up' : 'delta down'}> {delta > 0 ? '+' : '−'}{formatInt(Math.abs(delta))}</span> : null}
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
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={`Histogram of ${tuner.total} payload sizes with the limit at ${limit} tokens`} data-testid="histogram">
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
        {h ? `${formatTokens(h.from)}–${formatTokens(h.to)} tokens: ${formatInt(h.count)} payloads` : 'Payload size in tokens (log scale). Bars right of the line spill.'}
      </div>
    </div>
  );
}

/** The header's scope, as every view names it (app/lib/sessions.ts scopeTitle). */
export function useScopeName(): string {
  return useApp((s) => scopeTitle({ sessionId: s.selectedSessionId, rootId: s.selectedRootId, sessions: s.sessions, roots: s.roots, info: s.info }));
}
