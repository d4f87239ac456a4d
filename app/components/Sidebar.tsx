import { useState, type KeyboardEvent } from 'react';
import type { RootInfo, SessionInfo } from '../../src/service/contract.js';
import { useApp, useAppStore } from '../store/index.js';
import { basename, formatInt, formatRelative, formatTokens } from '../lib/format.js';

/** Arrow keys move between the sidebar's items (VS Code's list behaviour). */
function onListKey(e: KeyboardEvent<HTMLElement>) {
  if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
  const items = Array.from(e.currentTarget.querySelectorAll<HTMLElement>('[data-nav-item]'));
  const i = items.indexOf(document.activeElement as HTMLElement);
  const next = items[e.key === 'ArrowDown' ? Math.min(items.length - 1, i + 1) : Math.max(0, i - 1)];
  if (next) {
    e.preventDefault();
    next.focus();
  }
}

export function Sidebar() {
  const roots = useApp((s) => s.roots);
  const sessions = useApp((s) => s.sessions);
  const loading = useApp((s) => s.rootsLoading);
  const error = useApp((s) => s.rootsError);
  const filter = useApp((s) => s.sessionFilter);
  const setFilter = useApp((s) => s.setSessionFilter);
  const store = useAppStore();
  const [adding, setAdding] = useState(false);
  const [path, setPath] = useState('');

  const q = filter.trim().toLowerCase();
  const visible = q ? sessions.filter((s) => s.name.toLowerCase().includes(q) || s.path.toLowerCase().includes(q)) : sessions;

  return (
    <nav className="sidebar" aria-label="Roots and sessions" onKeyDown={onListKey}>
      <div className="sidebar-head">
        <span className="eyebrow">Sessions</span>
        <span className="spacer" />
        <button className="icon-btn" title="Add a sessions folder" aria-label="Add a sessions folder" onClick={() => setAdding(!adding)}>
          <svg viewBox="0 0 16 16" aria-hidden><path d="M8 3v10M3 8h10" /></svg>
        </button>
        <button className="icon-btn" title="Reindex everything" aria-label="Reindex everything" onClick={() => void store.getState().reindex()}>
          <svg viewBox="0 0 16 16" aria-hidden><path d="M13 8a5 5 0 1 1-1.5-3.5M13 2.5V5h-2.5" /></svg>
        </button>
      </div>
      {adding ? (
        <form
          className="add-root"
          onSubmit={(e) => {
            e.preventDefault();
            if (!path.trim()) return;
            void store.getState().addRoot(path.trim()).then((ok) => {
              if (ok) {
                setPath('');
                setAdding(false);
              }
            });
          }}
        >
          <input autoFocus aria-label="Folder path" placeholder="/path/to/sessions" value={path} onChange={(e) => setPath(e.target.value)} />
          <button className="btn sm primary" type="submit">Add</button>
        </form>
      ) : null}
      {sessions.length > 6 ? (
        <input className="sidebar-filter" type="search" aria-label="Filter sessions" placeholder="Filter sessions" value={filter} onChange={(e) => setFilter(e.target.value)} />
      ) : null}
      <div className="sidebar-scroll">
        {error ? (
          <div className="state error small" role="alert">
            <span>{error}</span>
            <button className="btn sm" onClick={() => void store.getState().loadRoots()}>Retry</button>
          </div>
        ) : null}
        {!loading && roots.length === 0 && !error ? (
          <div className="state small">
            <strong>No folders yet</strong>
            <span>Add a sessions folder with <b>+</b>, or start with <code>spillway serve --root DIR</code>.</span>
          </div>
        ) : null}
        {roots.map((root) => (
          <RootGroup key={root.id} root={root} sessions={visible.filter((s) => s.rootId === root.id)} />
        ))}
      </div>
    </nav>
  );
}

function RootGroup({ root, sessions }: { root: RootInfo; sessions: SessionInfo[] }) {
  const selectedRootId = useApp((s) => s.selectedRootId);
  const selectedSessionId = useApp((s) => s.selectedSessionId);
  const store = useAppStore();
  const [open, setOpen] = useState(true);
  return (
    <div className="root-group">
      <div className={`root-row ${selectedRootId === root.id && !selectedSessionId ? 'selected' : ''}`}>
        <button className="twisty" aria-label={open ? 'Collapse' : 'Expand'} aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? '▾' : '▸'}
        </button>
        <button data-nav-item className="root-name" title={root.path} onClick={() => store.getState().selectSession(null, root.id)}>
          <span className="ellipsis">{basename(root.path)}</span>
          <span className="count mono">{formatInt(root.payloadCount)}</span>
        </button>
        <button className="icon-btn hover-only" aria-label={`Remove ${root.path}`} title="Remove folder from the index (files stay)" onClick={() => void store.getState().removeRoot(root.id)}>
          <svg viewBox="0 0 16 16" aria-hidden><path d="M4 4l8 8M12 4l-8 8" /></svg>
        </button>
      </div>
      {open ? (
        <ul className="session-list" role="list">
          {sessions.length === 0 ? <li className="dim session-empty">No sessions</li> : null}
          {sessions.map((s) => (
            <li key={s.id}>
              <button
                data-nav-item
                className={`session-row ${selectedSessionId === s.id ? 'selected' : ''}`}
                aria-current={selectedSessionId === s.id ? 'true' : undefined}
                onClick={() => store.getState().selectSession(s.id)}
                title={s.path}
              >
                <span className="session-name ellipsis">{s.name}</span>
                <span className="session-meta">
                  <span className="mono">{formatInt(s.payloadCount)}</span>
                  <span className="dim mono">{formatTokens(s.totalTokens)} tok</span>
                  {s.kind !== 'spillway' ? <span className="badge tiny">{s.kind}</span> : null}
                  <span className="dim">{formatRelative(s.lastAt)}</span>
                </span>
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
