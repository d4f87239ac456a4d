import { useEffect, useRef, useState } from 'react';
import type { ApplyConfigResponse, EffectiveRule, PreviewConfigResponse, RuleSettingName, RuleSettings } from '../../src/service/contract.js';
import { useApp, useAppStore } from '../store/react.js';
import { ApiError, errorMessage } from '../transport/errors.js';

/**
 * "Apply to config…": one change to one tool's guard rule (docs/config.md), previewed as a diff of
 * the rules file, then written by the service exactly as shown (previewConfig, applyConfig). The
 * file's text is shown as text, line by line: it is never parsed as HTML.
 */

const SETTING_LABEL: Record<RuleSettingName, string> = { limit: 'limit', template: 'template', provider: 'provider', model: 'model', focusArg: 'focus-arg' };
const SETTINGS: RuleSettingName[] = ['limit', 'template', 'provider', 'model', 'focusArg'];

/** The project folder of the session in scope (the selected one), the one a project's rules file belongs in. */
export function useScopeProject(sessionId?: string | null): string | undefined {
  return useApp((s) => s.sessions.find((x) => x.id === (sessionId ?? s.selectedSessionId))?.project);
}

/** The class of one line of a unified diff: added, removed, a hunk or file header, or context. */
export function diffLineClass(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('===') || line.startsWith('Index: ')) return 'cfg-diff-file';
  if (line.startsWith('@@')) return 'cfg-diff-hunk';
  if (line.startsWith('+')) return 'cfg-diff-add';
  if (line.startsWith('-')) return 'cfg-diff-del';
  return 'cfg-diff-ctx';
}

function originText(o: EffectiveRule['settings'][RuleSettingName]): string {
  return o.match !== undefined ? `${o.source}: ${o.match}` : o.source;
}

function EffectiveTable({ before, after, testId }: { before?: EffectiveRule; after: EffectiveRule; testId: string }) {
  return (
    <table className="grid-table cfg-effective" data-testid={testId}>
      <thead>
        <tr>
          <th>Setting</th>
          {before ? <th>Now</th> : null}
          <th>{before ? 'After' : 'Value'}</th>
          <th>From</th>
        </tr>
      </thead>
      <tbody>
        {SETTINGS.map((k) => {
          const a = after.settings[k];
          const b = before?.settings[k];
          const changed = b !== undefined && (b.value !== a.value || b.source !== a.source || b.match !== a.match);
          return (
            <tr key={k} className={changed ? 'changed' : undefined} data-setting={k}>
              <td className="mono">{SETTING_LABEL[k]}</td>
              {b ? <td className="mono dim">{b.value === null ? '—' : String(b.value)}</td> : null}
              <td className="mono">{a.value === null ? '—' : String(a.value)}</td>
              <td className="dim" title={a.file}>{originText(a)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export interface ApplyConfigDialogProps {
  /** The rule key proposed first (a tool name, `server/tool`, `server/*` or `*`); the user may change it. */
  tool: string;
  /** The settings the change sets. */
  set: RuleSettings;
  /** The project folder "this project" means (the session's); without one only the user's file is offered. */
  project?: string;
  /** What the change comes from, in a line (e.g. "the limit tuner at 8,000 tokens"). */
  from: string;
  onClose(): void;
}

export function ApplyConfigDialog({ tool: initialTool, set, project, from, onClose }: ApplyConfigDialogProps) {
  const store = useAppStore();
  const [tool, setTool] = useState(initialTool);
  const [scope, setScope] = useState<'user' | 'project'>(project ? 'project' : 'user');
  const [preview, setPreview] = useState<PreviewConfigResponse | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** The file changed since the preview (CONFLICT): the dialog offers to preview again. */
  const [stale, setStale] = useState(false);
  const [applying, setApplying] = useState(false);
  const [applied, setApplied] = useState<ApplyConfigResponse | null>(null);
  const [seq, setSeq] = useState(0);
  const closeRef = useRef<HTMLButtonElement>(null);
  const setKey = JSON.stringify(set);
  const req = { scope, ...(project ? { project } : {}), change: { tool: tool.trim(), set } };

  useEffect(() => {
    closeRef.current?.focus();
  }, []);

  useEffect(() => {
    let live = true;
    setPreview(null);
    setError(null);
    setStale(false);
    setApplied(null);
    if (!tool.trim()) {
      setError('Name a tool (Bash, mcp__server__tool), server/tool, server/* or *.');
      return;
    }
    store.deps.api.previewConfig(req).then(
      (p) => live && setPreview(p),
      (err: unknown) => live && setError(errorMessage(err)),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- req is rebuilt from these on every render
  }, [tool, scope, project, setKey, seq]);

  const apply = async () => {
    if (!preview) return;
    setApplying(true);
    setError(null);
    try {
      const r = await store.deps.api.applyConfig({ ...req, baseHash: preview.baseHash, proposedHash: preview.proposedHash });
      setApplied(r);
      store.getState().notify('success', `Written to ${r.file}`);
    } catch (err) {
      setError(errorMessage(err));
      setStale(err instanceof ApiError && err.code === 'CONFLICT');
    } finally {
      setApplying(false);
    }
  };

  const lines = preview?.diff ? preview.diff.replace(/\n$/, '').split('\n') : [];

  return (
    <div className="overlay" onMouseDown={onClose}>
      <div
        className="card cfg-dialog"
        role="dialog"
        aria-modal="true"
        aria-label="Apply to config"
        data-testid="apply-config"
        onMouseDown={(e) => e.stopPropagation()}
        onKeyDown={(e) => e.key === 'Escape' && onClose()}
      >
        <header className="card-head">
          <h3>Apply to config</h3>
          <button ref={closeRef} className="btn ghost sm" onClick={onClose}>
            Close
          </button>
        </header>
        <p className="dim">
          From {from}: {Object.entries(set).map(([k, v]) => `${SETTING_LABEL[k as RuleSettingName] ?? k} ${String(v)}`).join(', ')}. The guard reads the rules in this order: flags, the project's file, the user's file, the defaults (docs/config.md).
        </p>
        <div className="form-grid cfg-form">
          <label className="field">
            <span>Tool</span>
            <input className="mono" value={tool} onChange={(e) => setTool(e.target.value)} aria-label="Tool pattern" data-testid="apply-config-tool" disabled={!!applied} />
          </label>
          <fieldset className="field cfg-scope" disabled={!!applied}>
            <legend>File</legend>
            <label>
              <input type="radio" name="cfg-scope" checked={scope === 'user'} onChange={() => setScope('user')} /> Yours (every project)
            </label>
            <label title={project ?? 'The session in scope records no project folder'}>
              <input type="radio" name="cfg-scope" checked={scope === 'project'} disabled={!project} onChange={() => setScope('project')} /> This project{project ? <span className="dim mono"> {project}</span> : <span className="dim"> (none recorded)</span>}
            </label>
          </fieldset>
        </div>

        {applied ? (
          <section data-testid="apply-config-done">
            <p className="note">
              Written to <code data-testid="apply-config-path">{applied.file}</code> ({applied.created ? 'new file, ' : ''}mode {applied.mode}). The effective rule for <code>{tool.trim()}</code> now:
            </p>
            <EffectiveTable after={applied.effective} testId="apply-config-effective" />
          </section>
        ) : preview ? (
          <>
            <div className="dim cfg-file">
              <code>{preview.file}</code> {preview.exists ? '' : '(does not exist yet: it will be made)'}
            </div>
            {preview.unchanged ? (
              <p className="note" data-testid="apply-config-unchanged">The file already says this: nothing to write.</p>
            ) : (
              <pre className="cfg-diff mono" data-testid="apply-config-diff" aria-label="Changes to the rules file">
                {lines.map((l, i) => (
                  <span key={i} className={diffLineClass(l)}>
                    {l}
                    {'\n'}
                  </span>
                ))}
              </pre>
            )}
            <EffectiveTable before={preview.before} after={preview.after} testId="apply-config-before-after" />
            {preview.notes.length ? <p className="note warn">{preview.notes.join(' ')}</p> : null}
          </>
        ) : !error ? (
          <div className="state">
            <span className="spinner" /> Reading the rules file…
          </div>
        ) : null}

        {error ? (
          <div className="state error" role="alert" data-testid="apply-config-error">
            <span>{error}</span>
            {stale ? (
              <button className="btn sm" onClick={() => setSeq(seq + 1)}>
                Preview again
              </button>
            ) : null}
          </div>
        ) : null}

        <footer className="cfg-actions">
          {applied ? (
            <button className="btn primary" onClick={onClose}>
              Done
            </button>
          ) : (
            <button className="btn primary" disabled={!preview || preview.unchanged || applying} onClick={() => void apply()} data-testid="apply-config-apply">
              {applying ? 'Writing…' : 'Apply'}
            </button>
          )}
        </footer>
      </div>
    </div>
  );
}
