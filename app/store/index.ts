/**
 * The renderer's one zustand store, built from slices; each slice keeps its actions next to its
 * state. The API is injected (Electron bridge, HTTP client, or a test's implementation).
 */
import { createContext, useContext } from 'react';
import { createStore, useStore, type StoreApi } from 'zustand';
import type { InspectorApi } from '../../src/service/contract.js';
import type { SpillwayHost } from '../transport/pick.js';
import { createCoreSlice } from './slices/core.js';
import { createDetailSlice } from './slices/detail.js';
import { createPayloadsSlice } from './slices/payloads.js';
import { createSessionsSlice } from './slices/sessions.js';
import { createToolsSlice } from './slices/tools.js';
import type { AppState, Deps } from './types.js';

export type { AppState } from './types.js';
export type AppStore = StoreApi<AppState> & { deps: Deps };

/** Coalesce bursts of index events (a scan emits many) into one refresh. */
export const LIVE_REFRESH_MS = 400;
/** Progress redraws at most this often: a scan of 10,000 files reports far faster than anyone reads. */
export const PROGRESS_REDRAW_MS = 250;

export function createAppStore(api: InspectorApi, host?: SpillwayHost): AppStore {
  const deps: Deps = { api, host };
  const store = createStore<AppState>()((set, get) => ({
    ...createCoreSlice(set, get, deps),
    ...createSessionsSlice(set, get, deps),
    ...createPayloadsSlice(set, get, deps),
    ...createDetailSlice(set, get, deps),
    ...createToolsSlice(set, get, deps),
  }));
  return Object.assign(store, { deps });
}

/** Subscribe the store to the back end's events. Returns the unsubscribe function. */
export function connectEvents(store: AppStore): () => void {
  const { api } = store.deps;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pendingSessions = new Set<string>();
  let lastProgress = 0;
  const flush = () => {
    timer = undefined;
    const s = store.getState();
    const touched = pendingSessions;
    pendingSessions = new Set();
    void s.loadRoots();
    const scope = s.selectedSessionId;
    if (!scope || touched.has(scope) || touched.size === 0) s.reloadPayloads({ keepPages: true });
    if (s.view === 'tuner' || s.view === 'waste') s.refreshToolViews();
  };
  const offs = [
    api.on('onDidIndex', (e) => {
      for (const id of e.sessionIds ?? []) pendingSessions.add(id);
      if (store.getState().indexing && e) store.setState({ indexing: null });
      if (!timer) timer = setTimeout(flush, LIVE_REFRESH_MS);
    }),
    api.on('onIndexProgress', (e) => {
      const finished = e.done >= e.total && e.total > 0;
      const now = Date.now();
      if (!finished && now - lastProgress < PROGRESS_REDRAW_MS && store.getState().indexing) return;
      lastProgress = now;
      store.setState({ indexing: finished ? null : e });
    }),
    api.on('onDidSummarize', (e) => store.getState().addRun(e.payloadId, e.run)),
  ];
  return () => {
    clearTimeout(timer);
    for (const off of offs) off();
  };
}

export const StoreContext = createContext<AppStore | null>(null);

export function useApp<T>(selector: (s: AppState) => T): T {
  const store = useContext(StoreContext);
  if (!store) throw new Error('useApp outside <StoreContext.Provider>');
  return useStore(store, selector);
}

export function useAppStore(): AppStore {
  const store = useContext(StoreContext);
  if (!store) throw new Error('useAppStore outside <StoreContext.Provider>');
  return store;
}
