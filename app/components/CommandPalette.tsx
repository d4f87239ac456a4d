import { useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import type { PayloadRow, SessionInfo } from '../../src/service/contract.js';
import { clientLabel, sessionTitle } from '../lib/sessions.js';
import { useApp, useAppStore } from '../store/react.js';
import { goToView, VIEW_REGISTRY } from '../views/registry.js';
import { errorMessage } from '../transport/errors.js';
import { formatTime, formatTokens } from '../lib/format.js';
import { CallLabel, modKey } from './common.js';

/** Results fetched per query; the palette is for jumping, the table for browsing. */
const PALETTE_RESULTS = 50;
const SEARCH_DEBOUNCE_MS = 120;

interface Command {
  id: string;
  label: string;
  hint?: string;
  run: () => void;
}

/** Wrap every occurrence of the query's words in <mark>: React text nodes only, never HTML. */
export function highlight(text: string, query: string): ReactNode[] {
  const words = query.toLowerCase().split(/\s+/).filter((w) => w.length > 1).slice(0, 8);
  if (!words.length) return [text];
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const re = new RegExp(`(${escaped.join('|')})`, 'gi');
  return text.split(re).map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : part));
}

/** Which session a hit is in, as people know it: its first prompt, and the client. */
function SessionHint({ session }: { session?: SessionInfo }) {
  if (!session) return null;
  const t = sessionTitle(session);
  return (
    <span className="dim pal-session ellipsis" title={[t.text, session.project, session.client].filter(Boolean).join('\n')}>
      {clientLabel(session.kind)} · {t.text}
    </span>
  );
}

export function CommandPalette() {
  const open = useApp((s) => s.paletteOpen);
  if (!open) return null;
  return <Palette />;
}

function Palette() {
  const store = useAppStore();
  const sessions = useApp((s) => s.sessions);
  const [query, setQuery] = useState('');
  const [rows, setRows] = useState<PayloadRow[]>([]);
  const [total, setTotal] = useState(0);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [partial, setPartial] = useState<{ unsearched: number } | null>(null);
  const [active, setActive] = useState(0);
  // A partial answer is asked again each time full-text search finishes filling in somewhere.
  const epoch = useApp((s) => s.searchEpoch);
  const retryEpoch = partial ? epoch : 0;
  const inputRef = useRef<HTMLInputElement>(null);
  const listRef = useRef<HTMLUListElement>(null);
  const rowsRef = useRef<PayloadRow[]>([]);
  const restoreFocus = useRef<Element | null>(document.activeElement);

  const close = () => {
    store.getState().setPaletteOpen(false);
    if (restoreFocus.current instanceof HTMLElement) restoreFocus.current.focus();
  };

  const commandMode = query.startsWith('>');
  const commands: Command[] = useMemo(() => {
    return [
      ...VIEW_REGISTRY.map((v) => ({ id: v.id, label: v.command, hint: `${modKey()} ${v.key}`, run: () => goToView(store.getState(), v.id) })),
      { id: 'reindex', label: 'Reindex every folder', run: () => void store.getState().reindex() },
      { id: 'help', label: 'Keyboard shortcuts', hint: '?', run: () => store.getState().setHelpOpen(true) },
    ];
  }, [store]);
  const shownCommands = commandMode ? commands.filter((c) => c.label.toLowerCase().includes(query.slice(1).trim().toLowerCase())) : [];

  useEffect(() => {
    inputRef.current?.focus();
  }, []);

  useEffect(() => {
    if (commandMode) return;
    const q = query.trim();
    if (!q) {
      setRows([]);
      setTotal(0);
      setError(null);
      setPartial(null);
      return;
    }
    let live = true;
    setBusy(true);
    const t = setTimeout(() => {
      store.deps.api
        .listPayloads({ query: q, limit: PALETTE_RESULTS, offset: 0 })
        .then((res) => {
          if (!live) return;
          setRows(res.rows);
          setTotal(res.total);
          setPartial(res.partial ?? null);
          setError(null);
          // A refresh of the same query keeps the highlighted hit if it is still there.
          setActive((a) => (res.rows[a] && res.rows[a]!.id === rowsRef.current[a]?.id ? a : 0));
          rowsRef.current = res.rows;
        })
        .catch((err: unknown) => live && setError(errorMessage(err)))
        .finally(() => live && setBusy(false));
    }, SEARCH_DEBOUNCE_MS);
    return () => {
      live = false;
      clearTimeout(t);
    };
  }, [query, commandMode, store, retryEpoch]);

  const count = commandMode ? shownCommands.length : rows.length;
  const choose = (i: number) => {
    if (commandMode) {
      const c = shownCommands[i];
      if (!c) return;
      store.getState().setPaletteOpen(false);
      c.run();
      return;
    }
    const row = rows[i];
    if (!row) return;
    const s = store.getState();
    s.setPaletteOpen(false);
    if (s.selectedSessionId !== row.sessionId) s.selectSession(row.sessionId);
    s.setView('payloads');
    void s.openPayload(row.id, row);
  };

  useEffect(() => {
    listRef.current?.querySelector(`[data-index="${active}"]`)?.scrollIntoView({ block: 'nearest' });
  }, [active]);

  return (
    <div className="overlay palette-overlay" onMouseDown={close}>
      <div
        className="palette"
        role="dialog"
        aria-modal="true"
        aria-label="Search payloads"
        onMouseDown={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            close();
          } else if (e.key === 'ArrowDown') {
            e.preventDefault();
            setActive((a) => Math.min(count - 1, a + 1));
          } else if (e.key === 'ArrowUp') {
            e.preventDefault();
            setActive((a) => Math.max(0, a - 1));
          } else if (e.key === 'Enter') {
            e.preventDefault();
            choose(active);
          }
        }}
      >
        <div className="palette-input">
          <svg viewBox="0 0 16 16" aria-hidden><circle cx="7" cy="7" r="4.5" /><path d="M10.5 10.5L14 14" /></svg>
          <input
            ref={inputRef}
            role="combobox"
            aria-expanded={count > 0}
            aria-controls="palette-list"
            aria-activedescendant={count ? `palette-${active}` : undefined}
            aria-label="Search every payload, or type > for commands"
            placeholder="Search every payload and summary…   (type > for commands)"
            value={query}
            onChange={(e) => {
              setQuery(e.target.value);
              setActive(0);
            }}
          />
          {busy ? <span className="spinner" /> : null}
        </div>
        <ul id="palette-list" ref={listRef} className="palette-list" role="listbox">
          {commandMode
            ? shownCommands.map((c, i) => (
                <li key={c.id} id={`palette-${i}`} data-index={i} role="option" aria-selected={i === active} className={i === active ? 'active' : ''} onMouseMove={() => setActive(i)} onClick={() => choose(i)}>
                  <span>{c.label}</span>
                  {c.hint ? <kbd>{c.hint}</kbd> : null}
                </li>
              ))
            : rows.map((r, i) => (
                <li key={r.id} id={`palette-${i}`} data-index={i} role="option" aria-selected={i === active} className={i === active ? 'active' : ''} onMouseMove={() => setActive(i)} onClick={() => choose(i)}>
                  <div className="pal-main">
                    <CallLabel tool={r.tool} input={r.inputExcerpt} />
                    <SessionHint session={sessions.find((s) => s.id === r.sessionId)} />
                    <span className="spacer" />
                    <span className="dim mono">{formatTokens(r.tokens)} tok · {formatTime(r.createdAt)}</span>
                  </div>
                  {r.snippet ? <div className="pal-snippet">{highlight(r.snippet, query)}</div> : null}
                </li>
              ))}
        </ul>
        {!commandMode && query.trim() && partial && partial.unsearched > 0 ? (
          <div className="partial-notice" role="status" data-testid="palette-partial">
            Search still filling in: {partial.unsearched.toLocaleString('en-US')} {partial.unsearched === 1 ? 'payload' : 'payloads'} not yet searchable. Results refresh when it is done.
          </div>
        ) : null}
        <footer className="palette-foot dim">
          {error ? <span className="inline-error">{error}</span> : commandMode ? <span>Commands</span> : query.trim() ? <span>{busy ? 'Searching…' : `${total.toLocaleString()} matches${total > rows.length ? ` · showing ${rows.length}` : ''}`}</span> : <span>Full-text search over payloads and summaries</span>}
          <span className="spacer" />
          <span><kbd>↑</kbd><kbd>↓</kbd> move · <kbd>Enter</kbd> open · <kbd>Esc</kbd> close</span>
        </footer>
      </div>
    </div>
  );
}
