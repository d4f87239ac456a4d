import { useEffect, useState } from 'react';
import { useApp, useAppStore } from './store/react.js';
import { VIEWS } from './store/slices/core.js';
import { ActivityBar, HelpOverlay, StatusBar, Toasts } from './components/Chrome.js';
import { Sidebar } from './components/Sidebar.js';
import { PayloadFilterBar, PayloadTable } from './components/PayloadTable.js';
import { DetailPane } from './components/detail/DetailPane.js';
import { CommandPalette } from './components/CommandPalette.js';
import { DropOverlay } from './components/DropOverlay.js';
import { Splitter } from './components/Splitter.js';
import { TunerView } from './views/TunerView.js';
import { WasteView } from './views/WasteView.js';
import { TimelineView } from './views/TimelineView.js';
import { AnalyzeView } from './views/AnalyzeView.js';

const isTyping = (el: Element | null) =>
  el instanceof HTMLElement && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName) || !!el.closest('.monaco-editor'));

function useGlobalShortcuts() {
  const store = useAppStore();
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const s = store.getState();
      const mod = e.metaKey || e.ctrlKey;
      if (mod && !e.shiftKey && !e.altKey && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        s.setPaletteOpen(!s.paletteOpen);
        return;
      }
      if (mod && !e.shiftKey && !e.altKey && /^[1-5]$/.test(e.key)) {
        e.preventDefault();
        s.setView(VIEWS[Number(e.key) - 1]!);
        s.refreshToolViews();
        return;
      }
      if (s.paletteOpen || s.helpOpen) return;
      if (isTyping(document.activeElement)) {
        if (e.key === 'Escape' && document.activeElement?.closest('.detail')) {
          document.querySelector<HTMLElement>('[data-testid="payload-table"]')?.focus();
        }
        return;
      }
      if (e.key === '?' && !mod) {
        e.preventDefault();
        s.setHelpOpen(true);
      } else if (e.key === '/' && !mod) {
        e.preventDefault();
        s.setView('payloads');
        setTimeout(() => document.querySelector<HTMLInputElement>('.filter-search')?.focus(), 0);
      } else if (e.key === 'Escape' && document.activeElement?.closest('.detail')) {
        document.querySelector<HTMLElement>('[data-testid="payload-table"]')?.focus();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [store]);
}

/** Menu commands from the desktop shell (Open File, Open Folder, Reload Index). */
function useHostMenu() {
  const store = useAppStore();
  useEffect(() => {
    const host = store.deps.host;
    if (!host) return;
    return host.onMenu((cmd) => {
      const s = store.getState();
      if (cmd.command === 'analyzePath') void s.analyze({ name: cmd.name, path: cmd.path });
      else if (cmd.command === 'rootsChanged') void s.loadRoots();
      else if (cmd.command === 'reindexStarted') store.setState({ reindexing: true });
      else if (cmd.command === 'search') s.setPaletteOpen(true);
      else if (cmd.command === 'view' && (VIEWS as readonly string[]).includes(cmd.view)) s.setView(cmd.view as (typeof VIEWS)[number]);
    });
  }, [store]);
}

const SIDEBAR_PX = { min: 180, max: 420, initial: 248 };
const LIST_PX = { min: 380, max: 980, initial: 600 };
/** The payload pane keeps at least this much, so its header, "Model saw" and a summary comparison stay readable. */
export const DETAIL_MIN_PX = 560;
/** Until the user drags the splitter, the list takes this share of the main area (within LIST_PX). */
const LIST_SHARE = 0.4;
/** The activity bar and the sidebar's splitter, beside the sidebar. */
const CHROME_PX = 44 + 1;

/** The window's width, followed. */
function useWindowWidth(): number {
  const [w, setW] = useState(() => window.innerWidth);
  useEffect(() => {
    const on = () => setW(window.innerWidth);
    window.addEventListener('resize', on);
    return () => window.removeEventListener('resize', on);
  }, []);
  return w;
}

/**
 * The list's width: the user's (dragged, remembered) or a share of the main area, never so wide
 * that the payload pane drops under DETAIL_MIN_PX (at 1400 px the old fixed 600 left it ~480 px).
 */
export function listWidth(chosen: number, mainPx: number): { width: number; max: number } {
  const max = Math.max(LIST_PX.min, Math.min(LIST_PX.max, mainPx - DETAIL_MIN_PX));
  const want = chosen > 0 ? chosen : Math.min(LIST_PX.initial, Math.round(mainPx * LIST_SHARE));
  return { width: Math.max(LIST_PX.min, Math.min(max, want)), max };
}

function usePersistentNumber(key: string, initial: number): [number, (v: number) => void] {
  const [v, setV] = useState(() => {
    try {
      const n = Number(localStorage.getItem(key));
      return Number.isFinite(n) && n > 0 ? n : initial;
    } catch {
      return initial;
    }
  });
  const set = (n: number) => {
    setV(n);
    try {
      localStorage.setItem(key, String(Math.round(n)));
    } catch {
      /* private mode */
    }
  };
  return [v, set];
}

export function App() {
  const view = useApp((s) => s.view);
  const fatal = useApp((s) => s.fatal);
  const info = useApp((s) => s.info);
  const store = useAppStore();
  const [sidebarW, setSidebarW] = usePersistentNumber('spillway.sidebar', SIDEBAR_PX.initial);
  // 0: not chosen yet (a share of the window, see listWidth).
  const [listChosen, setListW] = usePersistentNumber('spillway.list', 0);
  const windowW = useWindowWidth();
  const list = listWidth(listChosen, windowW - CHROME_PX - sidebarW);
  const listW = list.width;
  useGlobalShortcuts();
  useHostMenu();

  if (fatal)
    return (
      <div className="fatal">
        <div className="state error" role="alert">
          <strong>Cannot reach the Spillway back end</strong>
          <span>{fatal}</span>
          <span className="dim">If you opened this page yourself, start it with <code>spillway serve --open</code> so the page gets its access token.</span>
          <button className="btn" onClick={() => void store.getState().init()}>Try again</button>
        </div>
      </div>
    );

  return (
    <div className="app" data-ready={info ? 'true' : 'false'} style={{ ['--sidebar-w' as string]: `${sidebarW}px`, ['--list-w' as string]: `${listW}px` }}>
      <ActivityBar />
      <Sidebar />
      <Splitter value={sidebarW} onChange={setSidebarW} min={SIDEBAR_PX.min} max={SIDEBAR_PX.max} label="Resize sidebar" />
      <main className="main" aria-label={view}>
        {view === 'payloads' ? (
          <div className="payloads-view">
            <div className="list-pane">
              <PayloadFilterBar />
              <PayloadTable />
            </div>
            <Splitter value={listW} onChange={setListW} min={LIST_PX.min} max={list.max} label="Resize payload list" />
            <DetailPane />
          </div>
        ) : view === 'tuner' ? (
          <TunerView />
        ) : view === 'waste' ? (
          <WasteView />
        ) : view === 'timeline' ? (
          <TimelineView />
        ) : (
          <AnalyzeView />
        )}
      </main>
      <StatusBar />
      <CommandPalette />
      <HelpOverlay />
      <DropOverlay />
      <Toasts />
    </div>
  );
}
