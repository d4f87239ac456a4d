import { useEffect } from 'react';
import { useApp } from '../store/react.js';
import { formatBytes, formatInt, formatTokens, formatUsd } from '../lib/format.js';
import { useScopeName } from './TunerView.js';
import { CallTable, signedUsd } from '../components/CallTable.js';

/** Where a session's context went: per tool, the biggest results, inline base64, what spilling would save. */
export function WasteView() {
  const report = useApp((s) => s.waste);
  const loading = useApp((s) => s.wasteLoading);
  const error = useApp((s) => s.wasteError);
  const sessionId = useApp((s) => s.selectedSessionId);
  const load = useApp((s) => s.loadWaste);
  const scopeName = useScopeName();

  useEffect(() => {
    if (sessionId && !report && !loading && !error) void load();
  }, [sessionId, report, loading, error, load]);

  // Per session (needsSession in src/service/shell/views.ts): the router shows "Pick a session" until one is.
  if (!sessionId) return null;
  if (error) return <div className="view"><div className="state error" role="alert"><strong>Could not build the report.</strong><span>{error}</span><button className="btn sm" onClick={() => void load()}>Retry</button></div></div>;
  if (!report) return <div className="view"><div className="state"><span className="spinner" /> Building the report…</div></div>;

  const replay = report.replay;
  const isReplay = report.basis === 'replay' && replay !== undefined;
  const maxTool = Math.max(1, ...report.byTool.map((t) => (isReplay ? (t.tokensTimesCalls ?? 0) : t.tokens)));
  return (
    <div className="view scroll pad waste" data-testid="waste">
      <header className="view-head">
        <div>
          <h1>Waste report</h1>
          <p className="dim">
            {scopeName} · {isReplay ? `the Timeline's replay: ${formatInt(replay.calls)} model calls, guard at ${formatInt(report.limitTokens)} with ${report.strategy} / ${replay.profile}` : `payload sizes only (strategy ${report.strategy})`}
          </p>
        </div>
      </header>
      {isReplay ? (
        <div className="stat-grid" data-testid="waste-stats">
          <div className="stat"><span className="eyebrow">Tool results, tokens × calls</span><span className="stat-value mono">{formatTokens(report.totalTokens)}</span><span className="dim">{formatUsd(report.totalUsd)} at the session's cache prices</span></div>
          <div className="stat"><span className="eyebrow">Guard at {formatInt(report.limitTokens)}</span><span className="stat-value mono">{formatUsd(replay.atLimit.costUsd)}</span><span className="dim">{formatInt(replay.atLimit.replaced)} spilled · peak {formatTokens(replay.atLimit.peak)}</span></div>
          <div className="stat"><span className="eyebrow">Saved against no guard</span><span className="stat-value mono">{signedUsd(replay.noGuard.costUsd - replay.atLimit.costUsd)}</span><span className="dim">{formatTokens(replay.noGuard.sentTokens - replay.atLimit.sentTokens)} tokens × calls (no guard: {formatUsd(replay.noGuard.costUsd)})</span></div>
          <div className="stat"><span className="eyebrow">As it ran (its rule replayed)</span><span className="stat-value mono">{formatUsd(replay.asRan.costUsd)}</span><span className="dim">peak {formatTokens(replay.asRan.peak)} · {formatInt(replay.asRan.compactions)} compaction(s)</span></div>
          <div className="stat"><span className="eyebrow">Inline base64</span><span className="stat-value mono">{formatTokens(report.inlineBase64.tokens)}</span><span className="dim">{formatInt(report.inlineBase64.payloads)} results · {formatBytes(report.inlineBase64.bytes)} (payload sizes)</span></div>
        </div>
      ) : (
        <div className="stat-grid" data-testid="waste-stats">
          <div className="stat"><span className="eyebrow">Payload tokens (each once)</span><span className="stat-value mono">{formatTokens(report.totalTokens)}</span><span className="dim">no calls, so no cost</span></div>
          <div className="stat"><span className="eyebrow">Inline base64</span><span className="stat-value mono">{formatTokens(report.inlineBase64.tokens)}</span><span className="dim">{formatInt(report.inlineBase64.payloads)} results · {formatBytes(report.inlineBase64.bytes)}</span></div>
        </div>
      )}
      <section className="card" data-testid="waste-assumptions">
        <header className="card-head"><h3>What these numbers assume</h3></header>
        <ul className="assumptions">{report.assumptions.map((a) => <li key={a}>{a}</li>)}</ul>
      </section>
      <div>
        <section className="card">
          <header className="card-head"><h3>By tool</h3><span className="dim">{isReplay ? 'tokens × calls in context' : 'payload sizes, each once'}</span></header>
          <table className="grid-table">
            <thead><tr><th>Tool</th><th className="num">Calls</th><th className="num">{isReplay ? 'Tokens × calls' : 'Tokens'}</th>{isReplay ? <th className="num">Cost</th> : null}<th className="bar-col" aria-hidden /><th className="num">Largest</th></tr></thead>
            <tbody>
              {report.byTool.map((t) => (
                <tr key={t.tool}>
                  <td className="mono">{t.tool}</td>
                  <td className="num mono">{formatInt(t.calls)}</td>
                  <td className="num mono">{formatTokens(isReplay ? (t.tokensTimesCalls ?? 0) : t.tokens)}</td>
                  {isReplay ? <td className="num mono">{formatUsd(t.costUsd)}</td> : null}
                  <td className="bar-col"><span className="hbar" style={{ width: `${((isReplay ? (t.tokensTimesCalls ?? 0) : t.tokens) / maxTool) * 100}%` }} /></td>
                  <td className="num mono">{formatTokens(t.maxTokens)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      </div>
      {/* Full width: a call's arguments need the room (two columns squeezed them out of sight). */}
      <section className="card">
        <header className="card-head"><h3>{isReplay ? 'Costliest calls' : 'Biggest results'}</h3></header>
        <CallTable rows={report.biggest} withCalls={isReplay} testId="waste-calls" />
      </section>
    </div>
  );
}
