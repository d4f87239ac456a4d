import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useMemo, useRef, type KeyboardEvent } from 'react';
import type { ContentKind, GuardAction, PayloadRow, PayloadSortField } from '../../src/service/contract.js';
import { useApp, useAppStore } from '../store/react.js';
import { PAGE_ROWS } from '../store/slices/payloads.js';
import { formatBytes, formatDateTime, formatInt, formatTime, formatTokens } from '../lib/format.js';
import { ActionBadge, ClientBadge } from './common.js';
import { NoSessions } from './NoSessions.js';
import { guessHome, projectOf, rootLabel, sessionTitle, shortenHome } from '../lib/sessions.js';
import { summarizeProgress } from '../lib/progress.js';
import { CONTENT_KINDS } from '../../src/pipeline/vocab.js';
import type { PayloadFilters } from '../store/slices/payloads.js';

const filtersActive = (f: PayloadFilters) => Boolean(f.query.trim() || f.tool || f.action || f.kind || f.minTokens != null);

export const ROW_HEIGHT_PX = 28;
/** Arrow-key browsing opens the row under the cursor after this pause, so holding ↓ stays smooth. */
const OPEN_DELAY_MS = 120;

const COLUMNS: Array<{ id: string; label: string; sort?: PayloadSortField; className?: string }> = [
  { id: 'tool', label: 'Tool', sort: 'tool' },
  { id: 'time', label: 'Time', sort: 'createdAt' },
  { id: 'size', label: 'Size', sort: 'bytes', className: 'num' },
  // The ledger's two figures, named: what entered the model's context for the result, and the whole result.
  { id: 'tokens', label: 'Entered', sort: 'entered', className: 'num' },
  { id: 'full', label: 'Full', sort: 'full', className: 'num' },
  { id: 'action', label: 'Action' },
  { id: 'assets', label: 'Assets', sort: 'assetCount', className: 'num' },
  { id: 'summ', label: 'Sum', className: 'center' },
];

const ACTIONS: GuardAction[] = ['spill', 'inline-assets', 'pass'];

/** What the table shows: one session (as people know it), one folder, or everything. */
export function ScopeBar() {
  const sessionId = useApp((s) => s.selectedSessionId);
  const rootId = useApp((s) => s.selectedRootId);
  const sessions = useApp((s) => s.sessions);
  const roots = useApp((s) => s.roots);
  const info = useApp((s) => s.info);
  const home = useMemo(() => guessHome(roots), [roots]);
  const session = sessionId ? sessions.find((x) => x.id === sessionId) : undefined;
  const root = !session && rootId ? roots.find((r) => r.id === rootId) : undefined;
  if (session) {
    const title = sessionTitle(session);
    const project = projectOf(session, home);
    return (
      <div className="scope-bar" data-testid="scope">
        <ClientBadge s={session} />
        <span className="scope-title ellipsis" title={title.text}>{title.text}</span>
        {project ? <span className="scope-project dim mono ellipsis" title={project.path}>{project.path}</span> : null}
        {session.readOnly ? <span className="badge tiny read-only" title="Spillway never writes next to this session">read-only</span> : null}
      </div>
    );
  }
  return (
    <div className="scope-bar" data-testid="scope">
      <span className="scope-title ellipsis">{root ? rootLabel(root, info, home).name : 'Every folder'}</span>
      {root ? <span className="scope-project dim mono ellipsis">{shortenHome(root.path, home)}</span> : null}
    </div>
  );
}

export function PayloadFilterBar() {
  const filters = useApp((s) => s.filters);
  const setFilters = useApp((s) => s.setFilters);
  const total = useApp((s) => s.total);
  const loading = useApp((s) => s.listLoading);
  return (
    <div className="filter-bar" role="search">
      <ScopeBar />
      <div className="filter-row">
      <input
        className="filter-search"
        type="search"
        aria-label="Search payloads"
        placeholder="Search text, summaries…"
        title="Search the payloads' text and their summaries"
        value={filters.query}
        onChange={(e) => setFilters({ query: e.target.value })}
      />
      {/* Beside the search, so the row below keeps room for the tool, action and kind at a 1280 px window. */}
      <input
        className="filter-min"
        type="number"
        min={0}
        step={1000}
        aria-label="Minimum tokens"
        placeholder="≥ tokens"
        value={filters.minTokens ?? ''}
        onChange={(e) => setFilters({ minTokens: e.target.value === '' ? null : Math.max(0, Number(e.target.value)) })}
      />
      <span className="filter-count dim mono" aria-live="polite" data-testid="payload-count">
        {loading ? '…' : `${formatInt(total)} ${total === 1 ? 'payload' : 'payloads'}`}
      </span>
      </div>
      <div className="filter-row wraps">
      <input className="filter-tool" aria-label="Tool" placeholder="Tool name (exact)" value={filters.tool} onChange={(e) => setFilters({ tool: e.target.value })} />
      <select aria-label="Action" value={filters.action} onChange={(e) => setFilters({ action: e.target.value as GuardAction | '' })}>
        <option value="">Any action</option>
        {ACTIONS.map((a) => <option key={a} value={a}>{a}</option>)}
      </select>
      <select aria-label="Kind" value={filters.kind} onChange={(e) => setFilters({ kind: e.target.value as ContentKind | '' })}>
        <option value="">Any kind</option>
        {CONTENT_KINDS.map((k) => <option key={k} value={k}>{k}</option>)}
      </select>
      </div>
      <PartialNotice />
    </div>
  );
}

/**
 * A text query answered while full-text search was still filling in: say how much it could not
 * see. The store asks again when the fill ends (connectEvents), and the notice goes.
 */
export function PartialNotice() {
  const partial = useApp((s) => s.partial);
  const progress = useApp((s) => s.progress);
  if (!partial || partial.unsearched <= 0) return null;
  const { fulltext } = summarizeProgress(progress);
  return (
    <div className="partial-notice" role="status" data-testid="partial-notice">
      <span className="spinner" aria-hidden />
      <span>
        Search still filling in: {formatInt(partial.unsearched)} {partial.unsearched === 1 ? 'payload' : 'payloads'} not yet searchable
        {fulltext && fulltext.total ? ` (${formatInt(fulltext.done)} / ${formatInt(fulltext.total)} done)` : ''}. Results refresh when it is done.
      </span>
    </div>
  );
}

export function PayloadTable() {
  const store = useAppStore();
  const total = useApp((s) => s.total);
  const pages = useApp((s) => s.pages);
  const generation = useApp((s) => s.listGeneration);
  const sort = useApp((s) => s.sort);
  const setSort = useApp((s) => s.setSort);
  const selectedIndex = useApp((s) => s.selectedIndex);
  const detailId = useApp((s) => s.detailId);
  const loading = useApp((s) => s.listLoading);
  const error = useApp((s) => s.listError);
  const filters = useApp((s) => s.filters);
  const scope = useApp((s) => s.selectedSessionId ?? s.selectedRootId);
  // Only once the roots have been listed (there is always at least the app-data folder), never during a refresh.
  const scopeKind = useApp((s) => (s.selectedSessionId ? s.sessions.find((x) => x.id === s.selectedSessionId)?.kind : undefined));
  const noSessions = useApp((s) => s.roots.length > 0 && !s.sessions.some((x) => x.kind !== 'scratch'));
  const parentRef = useRef<HTMLDivElement>(null);
  const openTimer = useRef<ReturnType<typeof setTimeout>>(undefined);

  const virtualizer = useVirtualizer({
    count: total,
    getScrollElement: () => parentRef.current,
    estimateSize: () => ROW_HEIGHT_PX,
    overscan: 24,
    // Before the first layout (and in jsdom) assume a typical pane so the first rows render at once.
    initialRect: { width: 600, height: 800 },
  });
  const items = virtualizer.getVirtualItems();
  const first = items[0]?.index ?? 0;
  const last = items[items.length - 1]?.index ?? 0;

  useEffect(() => {
    if (total > 0) store.getState().ensureRows(first, last);
  }, [first, last, total, generation, store]);

  useEffect(() => {
    parentRef.current?.scrollTo({ top: 0 });
  }, [scope, sort.field, sort.dir, filters]);

  const rowAt = (i: number): PayloadRow | undefined => pages[Math.floor(i / PAGE_ROWS)]?.[i % PAGE_ROWS];

  const move = (to: number) => {
    const i = Math.max(0, Math.min(total - 1, to));
    store.getState().selectIndex(i, false);
    virtualizer.scrollToIndex(i, { align: 'auto' });
    clearTimeout(openTimer.current);
    openTimer.current = setTimeout(() => store.getState().selectIndex(i, true), OPEN_DELAY_MS);
  };

  const onKeyDown = (e: KeyboardEvent) => {
    const page = Math.max(1, Math.floor((parentRef.current?.clientHeight ?? 600) / ROW_HEIGHT_PX) - 1);
    const cur = selectedIndex < 0 ? -1 : selectedIndex;
    const keys: Record<string, () => void> = {
      ArrowDown: () => move(cur + 1),
      j: () => move(cur + 1),
      ArrowUp: () => move(cur - 1),
      k: () => move(cur - 1),
      PageDown: () => move(cur + page),
      PageUp: () => move(cur - page),
      Home: () => move(0),
      End: () => move(total - 1),
      Enter: () => {
        clearTimeout(openTimer.current);
        if (cur >= 0) store.getState().selectIndex(cur, true);
        setTimeout(() => document.querySelector<HTMLElement>('.detail .tab[aria-selected="true"]')?.focus(), 0);
      },
    };
    const fn = keys[e.key];
    if (fn && !e.metaKey && !e.ctrlKey && !e.altKey) {
      e.preventDefault();
      fn();
    }
  };

  const empty = !loading && !error && total === 0;
  return (
    <div className="table-wrap">
      <div className="ptable-head" role="row">
        {COLUMNS.map((c) => {
          const active = c.sort && sort.field === c.sort;
          return (
            <div key={c.id} role="columnheader" className={`th col-${c.id} ${c.className ?? ''}`} aria-sort={active ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}>
              {c.sort ? (
                <button className="th-btn" onClick={() => setSort(c.sort!)} title={`Sort by ${c.label.toLowerCase()}`}>
                  {c.label}
                  <span className="sort-ind" aria-hidden>{active ? (sort.dir === 'asc' ? '↑' : '↓') : ''}</span>
                </button>
              ) : (
                <span className="th-label">{c.label}</span>
              )}
            </div>
          );
        })}
      </div>
      {error ? (
        <div className="state error" role="alert">
          <strong>Could not list payloads.</strong>
          <span>{error}</span>
          <button className="btn sm" onClick={() => store.getState().reloadPayloads()}>Retry</button>
        </div>
      ) : null}
      {empty && noSessions && !filtersActive(filters) ? (
        <NoSessions />
      ) : empty ? (
        <div className="state">
          {filtersActive(filters) ? (
            <>
              <strong>No payloads match</strong>
              <span>Clear the filters to see everything in this scope.</span>
            </>
          ) : (
            scopeKind && scopeKind !== 'spillway' && scopeKind !== 'scratch' ? (
              <>
                <strong>No tool results in this transcript</strong>
                <span>Every tool result an agent's transcript records is listed here; this one records none.</span>
              </>
            ) : (
              <>
                <strong>No payloads here yet</strong>
                <span>Spilled tool results show up as the agent runs. Add a sessions folder, or drop a file anywhere to analyse it.</span>
              </>
            )
          )}
        </div>
      ) : null}
      <div
        ref={parentRef}
        className="ptable-body"
        role="grid"
        aria-label="Payloads"
        aria-rowcount={total}
        aria-activedescendant={selectedIndex >= 0 ? `prow-${selectedIndex}` : undefined}
        tabIndex={0}
        onKeyDown={onKeyDown}
        data-testid="payload-table"
      >
        <div style={{ height: virtualizer.getTotalSize(), position: 'relative', width: '100%' }}>
          {items.map((v) => {
            const row = rowAt(v.index);
            const selected = v.index === selectedIndex || (row !== undefined && row.id === detailId);
            return (
              <div
                key={v.key}
                id={`prow-${v.index}`}
                role="row"
                aria-rowindex={v.index + 1}
                aria-selected={selected}
                className={`prow ${selected ? 'selected' : ''} ${row ? '' : 'placeholder'}`}
                style={{ height: ROW_HEIGHT_PX, transform: `translateY(${v.start}px)` }}
                onClick={() => {
                  parentRef.current?.focus({ preventScroll: true });
                  store.getState().selectIndex(v.index, true);
                }}
                data-row-id={row?.id}
              >
                {row ? <RowCells row={row} /> : <div className="td skeleton" />}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}

function RowCells({ row }: { row: PayloadRow }) {
  return (
    <>
      <div role="gridcell" className="td col-tool">
        <span className="tool-name mono" title={row.tool}>{row.tool}</span>
        {row.join ? (
          <span className="badge tiny joined" data-testid="row-joined" title={`One tool call: the transcript's call with the spill Spillway made for it (joined ${row.join === 'inferred' ? 'by inference: same tool, arguments and time' : row.join === 'id' ? "by the client's tool call id" : 'by the path its message names'})`}>
            {row.join === 'inferred' ? 'spill?' : 'spill'}
          </span>
        ) : row.joinedTo ? (
          <span className="badge tiny joined" data-testid="row-joined" title="Also listed in the client's transcript, as that tool call">in transcript</span>
        ) : null}
        {row.snippet ? <span className="snippet dim" title={row.snippet}>{row.snippet}</span> : row.inputExcerpt ? <span className="snippet dim" title={row.inputExcerpt}>{row.inputExcerpt}</span> : null}
      </div>
      <div role="gridcell" className="td col-time mono dim" title={formatDateTime(row.createdAt)}>{formatTime(row.createdAt)}</div>
      <div role="gridcell" className="td col-size num mono">{formatBytes(row.bytes)}</div>
      <div role="gridcell" className="td col-tokens num mono" data-testid="row-entered" title={row.entered === undefined ? 'Not in the ledger yet (re-scan): the index\'s estimate of the result' : `Entered the model's context: ${row.enteredHow === 'measured' ? "measured from the API's usage" : 'estimated'}`}>{formatTokens(row.entered ?? row.tokens)}</div>
      <div role="gridcell" className="td col-full num mono dim" data-testid="row-full" title="The whole result: its text's estimate, its images by their pixels">{formatTokens(row.full ?? row.tokens)}</div>
      <div role="gridcell" className="td col-action"><ActionBadge action={row.action} /></div>
      <div role="gridcell" className="td col-assets num mono">{row.assetCount || <span className="dim">·</span>}</div>
      <div role="gridcell" className="td col-summ center">{row.summaryCount ? <span className="dot ok" title={`${row.summaryCount} summary runs`}>{row.summaryCount}</span> : <span className="dim">·</span>}</div>
    </>
  );
}
