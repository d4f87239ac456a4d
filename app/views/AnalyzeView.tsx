import { useRef, useState } from 'react';
import { useApp, useAppStore } from '../store/react.js';
import { formatBytes, formatInt } from '../lib/format.js';
import { ActionBadge } from '../components/common.js';
import { EstimateTable, densityReason, DensityChart } from '../components/detail/EstimatesPanel.js';
import { useAnalyzeFile } from '../components/DropOverlay.js';

/** Drop anything: a one-off look at a file or pasted text. The user's file is never modified. */
export function AnalyzeView() {
  const analysis = useApp((s) => s.analysis);
  const name = useApp((s) => s.analysisName);
  const loading = useApp((s) => s.analysisLoading);
  const error = useApp((s) => s.analysisError);
  const summary = useApp((s) => s.analysisSummary);
  const summarizing = useApp((s) => s.analysisSummaryRunning);
  const store = useAppStore();
  const analyzeFile = useAnalyzeFile();
  const fileInput = useRef<HTMLInputElement>(null);
  const [text, setText] = useState('');

  return (
    <div className="view scroll pad analyze" data-testid="analyze">
      <header className="view-head">
        <div>
          <h1>Analyse a file</h1>
          <p className="dim">Drop a file anywhere in the window, open one, or paste text. Nothing you give it is changed.</p>
        </div>
        <div className="view-controls">
          <input
            ref={fileInput}
            type="file"
            hidden
            aria-label="File to analyse"
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f) void analyzeFile(f);
              e.target.value = '';
            }}
          />
          <button className="btn primary" onClick={() => fileInput.current?.click()}>Open file…</button>
        </div>
      </header>

      <form
        className="card paste-card"
        onSubmit={(e) => {
          e.preventDefault();
          if (text.trim()) void store.getState().analyze({ name: 'pasted text', text });
        }}
      >
        <label className="field wide">
          <span>Paste a tool result</span>
          <textarea rows={4} value={text} onChange={(e) => setText(e.target.value)} placeholder='{"content":[{"type":"text","text":"…"}]}' spellCheck={false} />
        </label>
        <div className="actions">
          <button className="btn" type="submit" disabled={!text.trim()}>Analyse text</button>
        </div>
      </form>

      {loading ? <div className="state" role="status"><span className="spinner" /> Analysing {name}…</div> : null}
      {error ? <div className="state error" role="alert"><strong>Could not analyse {name}.</strong><span>{error}</span></div> : null}
      {!analysis && !loading && !error ? (
        <div className="dropzone-hint" aria-hidden>
          <svg viewBox="0 0 24 24"><path d="M12 3v12m0 0l-4-4m4 4l4-4M4 17v2a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-2" /></svg>
          <span>Drop a JSON result, a log, an image, a PDF…</span>
        </div>
      ) : null}
      {analysis ? (
        <div className="analysis" data-testid="analysis">
          <section className="card">
            <header className="card-head">
              <h3 className="mono">{analysis.name}</h3>
              <ActionBadge action={analysis.decision.action} />
            </header>
            <dl className="facts">
              <dt>Size</dt><dd>{formatBytes(analysis.bytes)}</dd>
              <dt>Type</dt><dd>{analysis.mimeType} · <code>{analysis.kind}</code></dd>
              <dt>Assets found</dt><dd>{analysis.assets.length ? analysis.assets.map((a) => `${a.mimeType} (${formatBytes(a.bytes)})`).join(', ') : 'none'}</dd>
              <dt>Guard decision</dt>
              <dd>
                {analysis.decision.action === 'pass'
                  ? `Passes through: under the ${formatInt(analysis.decision.limitTokens)}-token limit.`
                  : `${analysis.decision.action === 'spill' ? 'Spilled' : 'Assets cut out'}: ${guardFigure(analysis.decision.estimate)}limit ${formatInt(analysis.decision.limitTokens)} tokens.`}
              </dd>
            </dl>
            {analysis.payloadId && analysis.sessionId ? (
              <div className="actions">
                <button
                  className="btn"
                  onClick={() => {
                    store.getState().selectSession(analysis.sessionId!);
                    store.getState().setView('payloads');
                    void store.getState().openPayload(analysis.payloadId!);
                  }}
                >
                  Open in viewer
                </button>
                <button className="btn" disabled={summarizing} onClick={() => void store.getState().summarizeAnalysis()}>
                  {summarizing ? <><span className="spinner" /> Summarizing…</> : 'Summarize'}
                </button>
              </div>
            ) : null}
          </section>
          {analysis.decision.message ? (
            <section className="card">
              <header className="card-head"><h3>What the model would get</h3></header>
              <pre className="summary-text">{analysis.decision.message}</pre>
            </section>
          ) : null}
          {summary ? (
            <section className="card">
              <header className="card-head"><h3>Summary</h3><span className="dim">{summary.provider}/{summary.model}</span></header>
              <pre className="summary-text">{summary.summary || summary.error}</pre>
            </section>
          ) : null}
          <section className="card">
            <header className="card-head"><h3>Estimates</h3></header>
            {analysis.decision.estimate ? (
              <p className="dim" data-testid="estimates-named">
                Each strategy&apos;s count of the whole text. The guard&apos;s message states one figure, {guardFigure(analysis.decision.estimate).replace(/, $/, '')}.
              </p>
            ) : null}
            <EstimateTable res={analysis.estimate} showPending={!analysis.estimate.estimates.some((e) => e.exact)} />
            <p className="density-reason">{densityReason(analysis.estimate.density)}</p>
            <DensityChart shares={analysis.estimate.density} />
          </section>
        </div>
      ) : null}
    </div>
  );
}

/**
 * The guard's own figure, named as its message names it (strategy, profile), so it is never read as
 * one of the table's counts beside it (issue 29: 570,045 in the message beside 572,041 in the table).
 */
function guardFigure(e: { tokens: number; strategy: string; profile: string; exact: boolean } | undefined): string {
  return e ? `~${formatInt(e.tokens)} tokens (${e.strategy}${e.exact ? ', exact' : ' estimate'}, ${e.profile}), ` : '';
}
