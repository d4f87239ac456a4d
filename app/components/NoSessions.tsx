import { useMemo } from 'react';
import { useApp } from '../store/react.js';
import { CLIENTS, type ClientMeta } from '../../src/agents/clients.js';
import { guessHome, rootLabel, shortenHome } from '../lib/sessions.js';

/** Every client's default folder, as the hint shows it (`~/.codex/sessions`). */
const DEFAULT_FOLDERS = Object.values(CLIENTS).map((c: ClientMeta) => ({ label: c.label, path: `~/${c.homeSuffix.join('/')}` }));

/**
 * No session anywhere: say where Spillway looked (every registered folder, the ones opened by
 * default marked) and how to add one, for the shell this page runs in.
 */
export function NoSessions() {
  const roots = useApp((s) => s.roots);
  const info = useApp((s) => s.info);
  const progress = useApp((s) => s.progress);
  const home = useMemo(() => guessHome(roots), [roots]);
  const looked = roots.map((r) => ({ r, label: rootLabel(r, info, home) })).filter((x) => x.label.role !== 'scratch');
  const anyAuto = roots.some((r) => r.auto);
  const scanning = Object.keys(progress).length > 0;
  const desktop = info?.transport === 'electron';
  return (
    <div className="state no-sessions" data-testid="no-sessions">
      <strong>{scanning ? 'Looking for sessions…' : 'No sessions found'}</strong>
      <span>Spillway looked in:</span>
      <ul className="looked-in">
        {looked.map(({ r, label }) => (
          <li key={r.id}>
            <code>{shortenHome(r.path, home)}</code> <span className="dim">{label.name}{r.auto ? ' · read-only · opened by default' : r.readOnly ? ' · read-only' : ''}</span>
          </li>
        ))}
      </ul>
      {anyAuto ? null : (
        <span className="dim">
          No agent folder was opened by default: none of{' '}
          {DEFAULT_FOLDERS.map((f, i) => (
            <span key={f.path}>
              {i ? ', ' : ''}
              <code>{f.path}</code>
            </span>
          ))}{' '}
          exists,
          or it was started with <code>--no-default-roots</code>.
        </span>
      )}
      <span>Add a folder of sessions (an agent's, as {DEFAULT_FOLDERS.map((f) => f.label).join(', ')} keep them, or Spillway's):</span>
      <ul className="how-to-add">
        <li><code>spillway index DIR</code>{desktop ? null : <span className="dim">, then Reindex here</span>}</li>
        <li><code>npm start -- DIR</code> <span className="dim">or</span> <code>spillway serve --root DIR</code></li>
        <li>{desktop ? <>File → Open Folder… (<kbd>Ctrl</kbd>+<kbd>O</kbd>)</> : <>the desktop app's File → Open Folder…</>}</li>
      </ul>
      <span className="dim">Or drop a file anywhere on this window to analyse it.</span>
    </div>
  );
}
