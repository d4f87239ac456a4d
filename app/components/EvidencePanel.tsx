import { useEffect, useState } from 'react';
import type { CompareSessionsResponse, ToolEvidence, ToolEvidenceResponse } from '../../src/service/contract.js';
import { useApp, useAppStore } from '../store/react.js';
import { formatInt } from '../lib/format.js';
import { errorMessage } from '../transport/errors.js';

/** Tools listed (most spills first); the rest are counted in the totals. */
const TOOL_ROWS_SHOWN = 50;

const pct = (v: number | null) => (v === null ? '–' : `${Math.round(v * 100)}%`);

/**
 * The evidence for rules, inside the Tuner (docs/inspector.md "Evidence per tool"): per tool and MCP
 * server, how often it spilled, how often a spill was read back and what that cost, the settings the
 * spills ran with; suggestions (labelled, with their evidence, only above the thresholds); and
 * sessions compared before and after a rule change. Its own state: two service calls, asked again
 * when the scope or the index changes (the tuner's figures are reloaded then too).
 */
export function EvidencePanel() {
  const store = useAppStore();
  const rootId = useApp((s) => s.selectedRootId);
  // The tuner is reloaded after every index change: the evidence follows it.
  const tuner = useApp((s) => s.tuner);
  const [evidence, setEvidence] = useState<ToolEvidenceResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [by, setBy] = useState<'rule' | 'date'>('rule');
  const [since, setSince] = useState('');
  const [compare, setCompare] = useState<CompareSessionsResponse | null>(null);
  const [compareError, setCompareError] = useState<string | null>(null);
  const scope = rootId ? { rootId } : {};

  useEffect(() => {
    let live = true;
    store.deps.api.toolEvidence(scope).then(
      (r) => live && (setEvidence(r), setError(null)),
      (err: unknown) => live && setError(errorMessage(err)),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the scope and the index's state (through the tuner) are what it depends on
  }, [rootId, tuner]);

  useEffect(() => {
    if (by === 'date' && !since) {
      setCompare(null);
      return;
    }
    let live = true;
    store.deps.api.compareSessions({ ...scope, by, ...(by === 'date' ? { since } : {}) }).then(
      (r) => live && (setCompare(r), setCompareError(null)),
      (err: unknown) => live && setCompareError(errorMessage(err)),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- as above, plus the comparison's own settings
  }, [rootId, tuner, by, since]);

  if (error) return <section className="card" data-testid="evidence-panel"><div className="state error" role="alert">Could not load the evidence: {error}</div></section>;
  if (!evidence) return <section className="card" data-testid="evidence-panel"><div className="state"><span className="spinner" /> Reading the evidence…</div></section>;
  const t = evidence.totals;
  return (
    <section className="card" data-testid="evidence-panel">
      <header className="card-head">
        <h3>Evidence per tool</h3>
        <span className="dim" data-testid="evidence-totals">
          {formatInt(t.sessions)} sessions · {formatInt(t.calls)} calls · {formatInt(t.spills)} spills · {formatInt(t.spillsReadBack)} read back ({formatInt(t.readBackCalls)} calls, {formatInt(t.readBackTokens)} tokens)
        </span>
      </header>
      {evidence.tools.length ? (
        <table className="grid-table" data-testid="evidence-tools">
          <thead>
            <tr>
              <th>Tool</th>
              <th className="num">Calls</th>
              <th className="num">Spills</th>
              <th className="num">Spill rate</th>
              <th className="num">Read back</th>
              <th className="num">Read-back rate</th>
              <th className="num">Read-back calls</th>
              <th className="num">Read-back tokens</th>
              <th className="num">Sessions</th>
              <th>Settings (spills)</th>
            </tr>
          </thead>
          <tbody>
            {[...evidence.tools.slice(0, TOOL_ROWS_SHOWN), ...evidence.servers].map((x) => <ToolRow key={x.tool} t={x} />)}
          </tbody>
        </table>
      ) : (
        <p className="note">No tool calls indexed here yet.</p>
      )}
      <div data-testid="evidence-suggestions">
        <h4>Suggestions</h4>
        <p className="dim">
          Only for a tool with at least {formatInt(evidence.thresholds.minSpills)} spills in {formatInt(evidence.thresholds.minSessions)} sessions: fewer say too little.
        </p>
        {evidence.suggestions.length ? (
          <ul>
            {evidence.suggestions.map((s) => (
              <li key={`${s.tool}\0${s.kind}`} data-tool={s.tool}>
                <span className="badge">suggestion</span> {s.text.replace(/^suggestion: /, '')}
              </li>
            ))}
          </ul>
        ) : (
          <p className="note">None: no tool has enough evidence, or its read-back rate says nothing either way.</p>
        )}
      </div>
      <div data-testid="evidence-compare">
        <h4>Before and after</h4>
        <div className="view-controls">
          <label className="field compact">
            <span title="By the rule recorded in their spills, or before and from a date (a session's first call)">Group sessions</span>
            <select value={by} onChange={(e) => setBy(e.target.value as 'rule' | 'date')} aria-label="Group sessions by">
              <option value="rule">by rule</option>
              <option value="date">by date</option>
            </select>
          </label>
          {by === 'date' ? (
            <label className="field compact">
              <span>From</span>
              <input type="date" value={since} onChange={(e) => setSince(e.target.value)} aria-label="Compare from date" />
            </label>
          ) : null}
        </div>
        {compareError ? <p className="state error" role="alert">{compareError}</p> : null}
        {compare && compare.groups.length ? (
          <table className="grid-table" data-testid="evidence-groups">
            <thead>
              <tr>
                <th>Sessions</th>
                <th className="num">Sessions</th>
                <th className="num">Calls</th>
                <th className="num">Spill rate</th>
                <th className="num">Read-back rate</th>
                <th className="num">Read-back tokens</th>
                <th className="num">Kept out</th>
                <th className="num">Entered</th>
              </tr>
            </thead>
            <tbody>
              {compare.groups.map((g) => (
                <tr key={g.label} data-group={g.label}>
                  <td>{g.label}<div className="dim">{g.from?.slice(0, 10)} to {g.to?.slice(0, 10)}</div></td>
                  <td className="num mono" data-field="sessions">{formatInt(g.sessions)}</td>
                  <td className="num mono" data-field="calls">{formatInt(g.calls)}</td>
                  <td className="num mono" data-field="spillRate">{pct(g.spillRate)} <span className="dim">({formatInt(g.spills)})</span></td>
                  <td className="num mono" data-field="readBackRate">{pct(g.readBackRate)} <span className="dim">({formatInt(g.spillsReadBack)})</span></td>
                  <td className="num mono" data-field="readBackTokens">{formatInt(g.readBackTokens)}</td>
                  <td className="num mono" data-field="keptOutTokens">{formatInt(g.keptOutTokens)}</td>
                  <td className="num mono" data-field="enteredTokens">{formatInt(g.enteredTokens)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : compare ? (
          <p className="note">No sessions to compare.</p>
        ) : by === 'date' ? (
          <p className="note">Pick a date.</p>
        ) : null}
      </div>
    </section>
  );
}

function ToolRow({ t }: { t: ToolEvidence }) {
  return (
    <tr data-tool={t.tool}>
      <td className="mono">{t.tool}</td>
      <td className="num mono" data-field="calls">{formatInt(t.calls)}</td>
      <td className="num mono" data-field="spills">{formatInt(t.spills)}</td>
      <td className="num mono" data-field="spillRate">{pct(t.spillRate)}</td>
      <td className="num mono" data-field="spillsReadBack">{formatInt(t.spillsReadBack)}</td>
      <td className="num mono" data-field="readBackRate">{pct(t.readBackRate)}</td>
      <td className="num mono" data-field="readBackCalls">{formatInt(t.readBackCalls)}</td>
      <td className="num mono" data-field="readBackTokens">{formatInt(t.readBackTokens)}</td>
      <td className="num mono" data-field="sessions">{formatInt(t.sessions)}</td>
      <td className="dim">
        {t.settings.map((s) => `${s.label} (${formatInt(s.spills)})`).join('; ')}
        {t.parts.length ? <div title="What was read back most">read back: {t.parts.map((p) => `${p.part} ×${p.count}`).join(', ')}</div> : null}
      </td>
    </tr>
  );
}
