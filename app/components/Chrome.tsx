import { useEffect, useRef } from 'react';
import { useApp, useAppStore } from '../store/react.js';
import { formatInt } from '../lib/format.js';
import { isShownRoot } from '../lib/sessions.js';
import { PHASE_LABEL, share, summarizeProgress, type PhaseProgress } from '../lib/progress.js';
import { VIEWS, viewKeys } from '../../src/service/shell/views.js';
import { goToView, VIEW_REGISTRY } from '../views/registry.js';
import { modKey } from './common.js';

export function ActivityBar() {
  const view = useApp((s) => s.view);
  const store = useAppStore();
  return (
    <nav className="activity" aria-label="Views">
      <div className="brand" title="Spillway" aria-hidden>
        <svg viewBox="0 0 20 20"><path d="M3 6c2.5 0 2.5 2 5 2s2.5-2 5-2 2.5 2 4 2M3 11c2.5 0 2.5 2 5 2s2.5-2 5-2 2.5 2 4 2" /></svg>
      </div>
      {VIEW_REGISTRY.map((v) => (
        <button
          key={v.id}
          className={`activity-btn ${view === v.id ? 'active' : ''}`}
          aria-label={v.label}
          aria-current={view === v.id ? 'page' : undefined}
          title={`${v.label} (${modKey()}+${v.key})`}
          onClick={() => goToView(store.getState(), v.id)}
        >
          <svg viewBox="0 0 16 16" aria-hidden>{v.icon}</svg>
        </button>
      ))}
      <span className="spacer" />
      <button className="activity-btn" aria-label="Search (Ctrl+K)" title={`Search (${modKey()}+K)`} onClick={() => store.getState().setPaletteOpen(true)}>
        <svg viewBox="0 0 16 16" aria-hidden><circle cx="7" cy="7" r="4.5" /><path d="M10.5 10.5L14 14" /></svg>
      </button>
      <button className="activity-btn" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)" onClick={() => store.getState().setHelpOpen(true)}>
        <svg viewBox="0 0 16 16" aria-hidden><rect x="1.5" y="4" width="13" height="8" rx="1.5" /><path d="M4 7h1M7 7h1M10 7h2M4.5 9.5h7" /></svg>
      </button>
    </nav>
  );
}

/** Both phases of the scans in flight: listing first (rows appear), then full-text search (fills in behind). */
export function IndexProgress() {
  const progress = useApp((s) => s.progress);
  const reindexing = useApp((s) => s.reindexing);
  const { list, fulltext } = summarizeProgress(progress);
  if (!list && !fulltext && !reindexing) return null;
  const current = list ? 'list' : fulltext ? 'fulltext' : null;
  return (
    <span
      className="sb-item sb-progress"
      data-testid="indexing"
      data-phase={current ?? 'starting'}
      title="Listed payloads can be opened, sorted and filtered at once; full-text search fills in behind, and a search made meanwhile says what it could not see yet."
    >
      <span className="spinner" />
      {current === null ? (
        <span>Indexing…</span>
      ) : (
        <>
          <Phase name="list" p={list} active={current === 'list'} />
          <span className="sb-sep" aria-hidden>→</span>
          <Phase name="fulltext" p={fulltext} active={current === 'fulltext'} />
        </>
      )}
    </span>
  );
}

function Phase({ name, p, active }: { name: 'list' | 'fulltext'; p?: PhaseProgress; active: boolean }) {
  if (!p)
    return (
      <span className={`sb-phase ${name === 'list' ? 'done' : 'next'}`} data-phase-step={name}>
        {name === 'list' ? 'Listed' : 'search next'}
      </span>
    );
  return (
    <span className={`sb-phase ${active ? 'active' : ''}`} data-phase-step={name}>
      {PHASE_LABEL[name]} {p.total ? `${formatInt(p.done)} / ${formatInt(p.total)}` : '…'}
      {p.total ? <span className="sb-bar"><span style={{ width: `${share(p) * 100}%` }} /></span> : null}
    </span>
  );
}

export function StatusBar() {
  const info = useApp((s) => s.info);
  const roots = useApp((s) => s.roots);
  const running = useApp((s) => s.summaryRunning);
  // Each tool call once: a spill joined with its transcript's call is that call's row, not a second payload.
  const payloads = roots.reduce((n, r) => n + r.payloadCount, 0);
  const folders = roots.filter((r) => isShownRoot(r, info)).length;
  return (
    <footer className="statusbar" role="status" aria-live="polite">
      <span className="sb-item">{info ? (info.transport === 'electron' ? 'Desktop' : 'Local server') : 'Connecting…'}</span>
      <span className="sb-item">{formatInt(folders)} folders · {formatInt(payloads)} payloads</span>
      <IndexProgress />
      {running ? <span className="sb-item"><span className="spinner" /> Summarizing…</span> : null}
      <span className="spacer" />
      {info ? <span className="sb-item dim">strategy {info.defaults.strategy} · limit {formatInt(info.defaults.limitTokens)}</span> : null}
      {info ? <span className="sb-item dim">v{info.version}</span> : null}
    </footer>
  );
}

export function Toasts() {
  const toasts = useApp((s) => s.toasts);
  const dismiss = useApp((s) => s.dismissToast);
  return (
    <div className="toasts" aria-live="polite">
      {toasts.map((t) => (
        <div key={t.id} className={`toast ${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'}>
          <span className="toast-text">{t.text}</span>
          <button className="icon-btn" aria-label="Dismiss" onClick={() => dismiss(t.id)}>
            <svg viewBox="0 0 16 16" aria-hidden><path d="M4 4l8 8M12 4l-8 8" /></svg>
          </button>
        </div>
      ))}
    </div>
  );
}

export const SHORTCUTS: Array<{ keys: string[]; what: string }> = [
  { keys: ['Mod', 'K'], what: 'Search every payload and summary (type > for commands)' },
  { keys: ['Mod', viewKeys()], what: VIEWS.map((v) => v.label).join(' · ') },
  { keys: ['/'], what: 'Filter the payload table' },
  { keys: ['↑', '↓'], what: 'Move through payloads (also j / k)' },
  { keys: ['PgUp', 'PgDn'], what: 'Page through payloads; Home / End jump' },
  { keys: ['Enter'], what: 'Open the payload and focus its tabs' },
  { keys: ['←', '→'], what: 'Switch payload tabs (when a tab has focus)' },
  { keys: ['Esc'], what: 'Close a dialog; back to the table from the viewer' },
  { keys: ['?'], what: 'This list' },
];

export function HelpOverlay() {
  const open = useApp((s) => s.helpOpen);
  const setOpen = useApp((s) => s.setHelpOpen);
  const ref = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (open) ref.current?.focus();
  }, [open]);
  if (!open) return null;
  const mod = modKey();
  return (
    <div className="overlay" onMouseDown={() => setOpen(false)}>
      <div className="help card" role="dialog" aria-modal="true" aria-label="Keyboard shortcuts" onMouseDown={(e) => e.stopPropagation()} onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}>
        <header className="card-head">
          <h3>Keyboard shortcuts</h3>
          <button ref={ref} className="btn ghost sm" onClick={() => setOpen(false)}>Close</button>
        </header>
        <table className="grid-table shortcuts">
          <tbody>
            {SHORTCUTS.map((s) => (
              <tr key={s.what}>
                <td className="keys">{s.keys.map((k) => <kbd key={k}>{k === 'Mod' ? mod : k}</kbd>)}</td>
                <td>{s.what}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
