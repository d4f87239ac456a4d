import { useEffect } from 'react';
import { useApp, useAppStore } from '../store/react.js';
import { formatBytes, formatInt, formatTokens, formatUsd } from '../lib/format.js';
import { useScopeName } from './TunerView.js';

/** Where a session's context went: per tool, the biggest results, inline base64, what spilling would save. */
export function WasteView() {
  const report = useApp((s) => s.waste);
  const loading = useApp((s) => s.wasteLoading);
  const error = useApp((s) => s.wasteError);
  const sessionId = useApp((s) => s.selectedSessionId);
  const load = useApp((s) => s.loadWaste);
  const store = useAppStore();
  const scopeName = useScopeName();

  useEffect(() => {
    if (sessionId && !report && !loading && !error) void load();
  }, [sessionId, report, loading, error, load]);

  if (!sessionId) return <div className="view"><div className="state"><strong>Pick a session</strong><span>The waste report is per session: choose one in the sidebar.</span></div></div>;
  if (error) return <div className="view"><div className="state error" role="alert"><strong>Could not build the report.</strong><span>{error}</span><button className="btn sm" onClick={() => void load()}>Retry</button></div></div>;
  if (!report) return <div className="view"><div className="state"><span className="spinner" /> Building the report…</div></div>;

  const maxTool = Math.max(1, ...report.byTool.map((t) => t.tokens));
  const open = (id: string) => {
    store.getState().setView('payloads');
    void store.getState().openPayload(id);
  };
  return (
    <div className="view scroll pad waste" data-testid="waste">
      <header className="view-head">
        <div>
          <h1>Waste report</h1>
          <p className="dim">{scopeName} · strategy <code>{report.strategy}</code> · limit {formatInt(report.limitTokens)} tokens · ${report.pricePerMTok}/M</p>
        </div>
      </header>
      <div className="stat-grid">
        <div className="stat"><span className="eyebrow">Tool-result tokens</span><span className="stat-value mono">{formatTokens(report.totalTokens)}</span><span className="dim">{formatUsd((report.totalTokens / 1e6) * report.pricePerMTok)}</span></div>
        <div className="stat"><span className="eyebrow">Would spill</span><span className="stat-value mono">{formatInt(report.wouldSpill.payloads)}</span><span className="dim">results over the limit</span></div>
        <div className="stat"><span className="eyebrow">Tokens saved</span><span className="stat-value mono">{formatTokens(report.wouldSpill.tokensSaved)}</span><span className="dim">{formatUsd(report.wouldSpill.dollarsSaved)}</span></div>
        <div className="stat"><span className="eyebrow">Inline base64</span><span className="stat-value mono">{formatTokens(report.inlineBase64.tokens)}</span><span className="dim">{formatInt(report.inlineBase64.payloads)} results · {formatBytes(report.inlineBase64.bytes)}</span></div>
      </div>
      <div className="two-col">
        <section className="card">
          <header className="card-head"><h3>By tool</h3></header>
          <table className="grid-table">
            <thead><tr><th>Tool</th><th className="num">Calls</th><th className="num">Tokens</th><th className="bar-col" aria-hidden /><th className="num">Largest</th></tr></thead>
            <tbody>
              {report.byTool.map((t) => (
                <tr key={t.tool}>
                  <td className="mono">{t.tool}</td>
                  <td className="num mono">{formatInt(t.calls)}</td>
                  <td className="num mono">{formatTokens(t.tokens)}</td>
                  <td className="bar-col"><span className="hbar" style={{ width: `${(t.tokens / maxTool) * 100}%` }} /></td>
                  <td className="num mono">{formatTokens(t.maxTokens)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
        <section className="card">
          <header className="card-head"><h3>Biggest results</h3></header>
          <table className="grid-table">
            <thead><tr><th>Tool</th><th className="num">Tokens</th><th className="num">Size</th></tr></thead>
            <tbody>
              {report.biggest.map((b) => (
                <tr key={b.id} className="clickable" tabIndex={0} onClick={() => open(b.id)} onKeyDown={(e) => e.key === 'Enter' && open(b.id)}>
                  <td className="mono">{b.tool}</td>
                  <td className="num mono">{formatTokens(b.tokens)}</td>
                  <td className="num mono">{formatBytes(b.bytes)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      </div>
    </div>
  );
}
