import { useEffect, useState } from 'react';
import type { RunScores, ScoreSummariesResponse, SummaryRun } from '../../../src/service/contract.js';
import { useApp, useAppStore } from '../../store/react.js';
import { formatInt, formatMs, formatPercent, formatTime, formatUsd } from '../../lib/format.js';
import { Editor } from '../viewer/Editor.js';
import { RunDiff } from './RunDiff.js';
import { summaryRunsDir } from '../../lib/sessions.js';
import { ApplyConfigDialog, useScopeProject } from '../ApplyConfigDialog.js';

function Elapsed({ since }: { since: number }) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 100);
    return () => clearInterval(t);
  }, []);
  return <span className="mono">{((now - since) / 1000).toFixed(1)} s</span>;
}

const STATUS_CLASS: Record<SummaryRun['status'], string> = { ok: 'ok', error: 'bad', timeout: 'bad', fallback: 'warn' };

const pct = (v: number | null | undefined) => (v === null || v === undefined ? '—' : formatPercent(v, 0));

/** A run's scores without a judge as table cells (docs/scores.md); a run not scored shows why in each cell's title. */
export function ScoreCells({ scored }: { scored: RunScores | undefined }) {
  const s = scored?.scores;
  if (!s) {
    const why = scored?.note ?? 'not scored yet';
    return (
      <>
        {[0, 1, 2, 3].map((i) => (
          <td key={i} className="num mono dim" title={why}>—</td>
        ))}
      </>
    );
  }
  const rb = s.readBackRecall;
  const a = s.anchorRecall;
  const inv = s.inventedAnchors;
  const c = s.compression;
  return (
    <>
      <td className="num mono" data-score="read-back" title={rb ? `${rb.held} of ${rb.lines} lines read back were in the summary${rb.unscored ? ` (${rb.unscored} read-backs name no lines)` : ''}\n${rb.perReadBack.map((p) => `${p.label}: ${pct(p.score)}`).join('\n')}` : 'never read back'}>
        {rb ? pct(rb.score) : '—'}
      </td>
      <td className="num mono" data-score="anchors" title={`${a.held} of ${a.anchors} anchors of ${a.scope === 'focus' ? `the ${a.lines} lines that match the focus` : 'the payload'}${a.missing.length ? `\nmissing: ${a.missing.map((m) => m.text).join(', ')}` : ''}`}>
        {pct(a.score)}
      </td>
      <td className={`num mono${inv.count ? ' diff-del-text' : ''}`} data-score="invented" title={`${inv.count ? `not in the payload: ${inv.invented.map((m) => m.text).join(', ')}` : `${inv.summaryAnchors} anchors, all in the payload`}${inv.measured.length ? `\nsizes of the payload: ${inv.measured.map((m) => m.text).join(', ')}` : ''}`}>
        {inv.summaryAnchors ? formatInt(inv.count) : '—'}
      </td>
      <td className="num mono" data-score="compression" title={`${formatInt(c.summaryTokens)} of ${formatInt(c.payloadTokens)} tokens (${c.strategy}, ${c.profile})`}>
        {c.ratio === null ? '—' : formatPercent(c.ratio, 1)}
      </td>
    </>
  );
}

/** The message the model got, the preview and the summary runs side by side; re-run and compare. */
export function SummariesPanel() {
  const detail = useApp((s) => s.detail);
  const info = useApp((s) => s.info);
  const form = useApp((s) => s.summaryForm);
  const setForm = useApp((s) => s.setSummaryForm);
  const providers = useApp((s) => s.providers);
  const templates = useApp((s) => s.templates);
  const running = useApp((s) => s.summaryRunning);
  const startedAt = useApp((s) => s.summaryStartedAt);
  const run = useApp((s) => s.runSummary);
  const compare = useApp((s) => s.compare);
  const toggleCompare = useApp((s) => s.toggleCompare);
  const loadOptions = useApp((s) => s.loadSummaryOptions);
  const [editTemplate, setEditTemplate] = useState(false);
  const [selectedRun, setSelectedRun] = useState<string | null>(null);
  const store = useAppStore();
  const [scored, setScored] = useState<ScoreSummariesResponse | null>(null);
  /** The run whose template the "Apply to config…" dialog writes, while it is open. */
  const [applyRun, setApplyRun] = useState<SummaryRun | null>(null);
  const project = useScopeProject(detail?.row.sessionId ?? null);
  // Scored again when the payload or its runs change (a new run, another payload).
  const runKey = detail ? `${detail.row.id}\0${detail.summaryRuns.map((r) => r.id).join(',')}` : '';
  useEffect(() => {
    setScored(null);
    if (!detail || detail.summaryRuns.length === 0) return;
    let live = true;
    store.deps.api.scoreSummaries({ payloadId: detail.row.id }).then(
      (r) => live && setScored(r),
      (err: unknown) => live && setScored({ runs: [], readBacks: 0, payloadChars: 0, note: `not scored: ${(err as Error).message}` }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- runKey names what the scores depend on
  }, [runKey]);
  const scoresOf = (id: string) => scored?.runs.find((r) => r.runId === id) ?? (scored?.note ? { runId: id, note: scored.note } : undefined);

  useEffect(() => {
    if (providers.length === 0) void loadOptions();
  }, [providers.length, loadOptions]);

  if (!detail) return null;
  const runs = [...detail.summaryRuns].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const shown = runs.find((r) => r.id === selectedRun) ?? runs[0];
  const provider = providers.find((p) => p.name === form.provider);
  const baseTemplate = templates.find((t) => t.name === form.template);
  const edited = baseTemplate !== undefined && form.templateBody !== baseTemplate.body;
  const pair = compare.length === 2 ? compare.map((id) => runs.find((r) => r.id === id)).filter((r): r is SummaryRun => !!r) : [];

  return (
    <div className="scroll pad summaries" data-testid="summaries">
      <div className="three-col">
        <section className="card">
          <header className="card-head">
            <h3>Model got</h3>
            <span className="dim">{formatInt(detail.message.length)} chars</span>
          </header>
          <pre className="summary-text" data-testid="model-message">{detail.message || '(no message recorded)'}</pre>
        </section>
        <section className="card">
          <header className="card-head">
            <h3>Summary</h3>
            {shown ? <span className={`badge ${STATUS_CLASS[shown.status]}`}>{shown.status}</span> : null}
            {shown?.template ? (
              <button type="button" className="btn sm" onClick={() => setApplyRun(shown)} data-testid="apply-template" title={`Write the template “${shown.template}” into a rules file for ${detail.row.tool}, after showing the change`}>
                Apply to config…
              </button>
            ) : null}
          </header>
          {shown ? (
            <>
              <div className="run-meta dim">
                {shown.provider}/{shown.model}
                {shown.focus ? <> · focus “{shown.focus}”</> : null}
              </div>
              <pre className="summary-text" data-testid="summary-text">{shown.summary || shown.error || '(empty)'}</pre>
            </>
          ) : (
            <div className="empty-inline">No summary yet. Run one below.</div>
          )}
        </section>
        <section className="card">
          <header className="card-head">
            <h3>Preview</h3>
            <span className="dim">structure-first, no base64</span>
          </header>
          <pre className="summary-text">{detail.preview || '(empty)'}</pre>
        </section>
      </div>

      <form
        className="rerun card"
        onSubmit={(e) => {
          e.preventDefault();
          void run().then((r) => r && setSelectedRun(r.id));
        }}
      >
        <header className="card-head">
          <h3>Re-run summary</h3>
          {running && startedAt ? (
            <span className="progress-inline" role="status">
              <span className="spinner" /> Summarizing… <Elapsed since={startedAt} />
            </span>
          ) : null}
        </header>
        <div className="note" data-testid="runs-kept">
          {detail.readOnly ? (
            <>This session is read-only: runs are kept in <code>{summaryRunsDir(info)}</code>, never written next to it.</>
          ) : !detail.meta ? (
            <>This payload has no sidecar: runs are kept in <code>{summaryRunsDir(info)}</code>.</>
          ) : (
            <>Runs are appended to this payload's <code>.meta.json</code> in its session.</>
          )}
        </div>
        <div className="form-grid">
          <label className="field wide">
            <span>Focus</span>
            <input
              name="focus"
              value={form.focus}
              placeholder="What do you need from this result? e.g. “failing tests and their errors”"
              onChange={(e) => setForm({ focus: e.target.value })}
            />
          </label>
          <label className="field">
            <span>Provider</span>
            <select name="provider" value={form.provider} onChange={(e) => setForm({ provider: e.target.value })}>
              {providers.map((p) => (
                <option key={p.name} value={p.name} disabled={!p.available}>
                  {p.name}
                  {p.available ? '' : ` (${p.reason ?? 'unavailable'})`}
                </option>
              ))}
            </select>
          </label>
          <label className="field">
            <span>Model</span>
            <input name="model" list="model-options" value={form.model} onChange={(e) => setForm({ model: e.target.value })} />
            <datalist id="model-options">
              {provider?.models.map((m) => <option key={m} value={m} />)}
            </datalist>
          </label>
          <label className="field">
            <span>Template</span>
            <select name="template" value={form.template} onChange={(e) => setForm({ template: e.target.value })}>
              {templates.map((t) => (
                <option key={t.name} value={t.name}>
                  {t.name}
                  {t.builtIn ? ' (built-in)' : ''}
                </option>
              ))}
            </select>
          </label>
          <div className="field actions">
            <button type="button" className="btn ghost" onClick={() => setEditTemplate(!editTemplate)} aria-expanded={editTemplate}>
              {editTemplate ? 'Hide template' : 'Edit template'}
              {edited ? ' •' : ''}
            </button>
            <button type="submit" className="btn primary" disabled={running || !provider?.available}>
              {running ? 'Running…' : 'Run summary'}
            </button>
          </div>
        </div>
        {editTemplate ? (
          <div className="template-editor">
            <div className="note">
              {edited
                ? `Edited: runs save it as “${baseTemplate?.builtIn ? `${baseTemplate.name}-edited` : form.template}”.`
                : 'Placeholders such as {{focus}}, {{tool}} and {{payload}} are filled in by the summarizer.'}
            </div>
            <div className="template-monaco">
              <Editor value={form.templateBody} language="markdown" readOnly={false} onChange={(v) => setForm({ templateBody: v })} ariaLabel="Summary template" />
            </div>
          </div>
        ) : null}
      </form>

      <section className="card">
        <header className="card-head">
          <h3>Runs</h3>
          <span className="dim">
            {runs.length ? 'Tick two runs to compare them.' : 'Every run is kept here.'}
            {runs.length ? <> Scores without a judge: read-back and anchor recall, invented anchors, compression (see docs/scores.md).</> : null}
          </span>
        </header>
        {runs.length === 0 ? (
          <div className="empty-inline">No runs yet.</div>
        ) : (
          <div className="table-scroll">
          <table className="grid-table runs" data-testid="runs">
            <thead>
              <tr>
                <th aria-label="Compare" />
                <th>When</th>
                <th>Provider / model</th>
                <th>Focus</th>
                <th>Template</th>
                <th>Status</th>
                <th className="num">Latency</th>
                <th className="num">Tokens in/out</th>
                <th className="num">Cost</th>
                <th className="num" title="Of the lines the agent later read back from the spill, the share the summary already held">Read-back</th>
                <th className="num" title="Of the numbers, paths, identifiers, codes, URLs, hashes and test names in the lines that match the focus, the share the summary holds">Anchors</th>
                <th className="num" title="Anchors in the summary that are nowhere in the payload">Invented</th>
                <th className="num" title="Summary tokens ÷ payload tokens">Size</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <tr key={r.id} className={r.id === shown?.id ? 'selected' : undefined} onClick={() => setSelectedRun(r.id)}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Compare run ${formatTime(r.createdAt)}`}
                      checked={compare.includes(r.id)}
                      onClick={(e) => e.stopPropagation()}
                      onChange={() => toggleCompare(r.id)}
                    />
                  </td>
                  <td className="mono">{formatTime(r.createdAt)}</td>
                  <td>{r.provider}/{r.model}</td>
                  <td className="ellipsis" title={r.focus}>{r.focus ?? '—'}</td>
                  <td>{r.template ?? '—'}</td>
                  <td><span className={`badge ${STATUS_CLASS[r.status]}`}>{r.status}</span></td>
                  <td className="num mono">{formatMs(r.ms)}</td>
                  <td className="num mono">{formatInt(r.inputTokens)} / {formatInt(r.outputTokens)}</td>
                  <td className="num mono">{formatUsd(r.costUsd)}</td>
                  <ScoreCells scored={scoresOf(r.id)} />
                </tr>
              ))}
            </tbody>
          </table>
          </div>
        )}
      </section>
      {pair.length === 2 && pair.some((r) => r.template) ? (
        <div className="card-actions" data-testid="apply-compared">
          {pair.map((r) =>
            r.template ? (
              <button key={r.id} type="button" className="btn sm" onClick={() => setApplyRun(r)}>
                Apply “{r.template}” to config…
              </button>
            ) : null,
          )}
        </div>
      ) : null}
      {applyRun?.template ? (
        <ApplyConfigDialog tool={detail.row.tool} set={{ template: applyRun.template }} project={project} from={`the summary run of ${formatTime(applyRun.createdAt)}`} onClose={() => setApplyRun(null)} />
      ) : null}
      {pair.length === 2 ? (
        <RunDiff left={pair[0]!.createdAt <= pair[1]!.createdAt ? pair[0]! : pair[1]!} right={pair[0]!.createdAt <= pair[1]!.createdAt ? pair[1]! : pair[0]!} scoresOf={scoresOf} />
      ) : null}
    </div>
  );
}
