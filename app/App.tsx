import { useEffect, useState } from 'react';
import { useApp, useAppStore } from './store/react.js';
import { isViewId, viewForKey } from '../src/service/shell/views.js';
import { ActivityBar, HelpOverlay, StatusBar, Toasts } from './components/Chrome.js';
import { Sidebar } from './components/Sidebar.js';
import { CommandPalette } from './components/CommandPalette.js';
import { DropOverlay } from './components/DropOverlay.js';
import { Splitter } from './components/Splitter.js';
import { usePersistentNumber } from './lib/persist.js';
import { goToView, viewOf } from './views/registry.js';

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
      const shortcut = mod && !e.shiftKey && !e.altKey ? viewForKey(e.key) : undefined;
      if (shortcut) {
        e.preventDefault();
        goToView(s, shortcut.id);
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

/** Menu commands from the desktop shell (Open File, Open Folder, Reload Index, Search, the views). */
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
      else if (cmd.command === 'view' && isViewId(cmd.view)) goToView(s, cmd.view);
    });
  }, [store]);
}

const SIDEBAR_PX = { min: 180, max: 420, initial: 248 };
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

/** A view that is per session (needsSession) before one is picked. */
function PickSession({ label }: { label: string }) {
  return (
    <div className="view">
      <div className="state">
        <strong>Pick a session</strong>
        <span>The {label.toLowerCase()} is per session: choose one in the sidebar.</span>
      </div>
    </div>
  );
}

export function App() {
  const view = useApp((s) => s.view);
  const fatal = useApp((s) => s.fatal);
  const info = useApp((s) => s.info);
  const store = useAppStore();
  const sessionId = useApp((s) => s.selectedSessionId);
  const [sidebarW, setSidebarW] = usePersistentNumber('spillway.sidebar', SIDEBAR_PX.initial);
  const windowW = useWindowWidth();
  const shown = viewOf(view);
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
    <div className="app" data-ready={info ? 'true' : 'false'} style={{ ['--sidebar-w' as string]: `${sidebarW}px` }}>
      <ActivityBar />
      <Sidebar />
      <Splitter value={sidebarW} onChange={setSidebarW} min={SIDEBAR_PX.min} max={SIDEBAR_PX.max} label="Resize sidebar" />
      <main className="main" aria-label={view}>
        {shown.needsSession && !sessionId ? <PickSession label={shown.label} /> : <shown.Component mainPx={windowW - CHROME_PX - sidebarW} />}
      </main>
      <StatusBar />
      <CommandPalette />
      <HelpOverlay />
      <DropOverlay />
      <Toasts />
    </div>
  );
}
