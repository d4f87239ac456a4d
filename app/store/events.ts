/**
 * The back end's events, wired into the store: live refreshes after indexing, progress bars
 * (throttled redraws, stale entries swept), summary runs made elsewhere. The wiring owns the
 * store, so it writes any slice's fields; decisions that belong to a slice are that slice's actions.
 */
import type { IndexProgressEvent } from '../../src/service/contract.js';
import type { AppStore } from './index.js';

/** Coalesce bursts of index events (a scan emits many) into one refresh. */
export const LIVE_REFRESH_MS = 400;
/** Progress redraws at most this often: a scan of 10,000 files reports far faster than anyone reads. */
export const PROGRESS_REDRAW_MS = 250;

/**
 * Progress entries that have heard nothing for this long are dropped: an event lost (a reconnect)
 * must not leave a bar up forever. Scans report at least every time slice, far more often.
 */
export const PROGRESS_STALE_MS = 60_000;

/** Key of a progress entry: one per root and phase (events without a phase predate phases and mean `list`). */
export const progressKey = (e: Pick<IndexProgressEvent, 'rootId' | 'phase'>) => `${e.phase ?? 'list'}:${e.rootId}`;

/** Subscribe the store to the back end's events. Returns the unsubscribe function. */
export function connectEvents(store: AppStore): () => void {
  const { api } = store.deps;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let staleTimer: ReturnType<typeof setTimeout> | undefined;
  let pendingSessions = new Set<string>();
  const lastDrawn = new Map<string, number>();
  const trailing = new Map<string, ReturnType<typeof setTimeout>>();
  const drawProgress = (key: string, e: IndexProgressEvent) => {
    lastDrawn.set(key, Date.now());
    const state = store.getState();
    const finished = e.done >= e.total;
    const progress = { ...state.progress };
    if (finished) delete progress[key];
    else progress[key] = { ...e, phase: e.phase ?? 'list' };
    const fullTextDone = finished && e.phase === 'fulltext';
    store.setState({ progress, reindexing: false, ...(fullTextDone ? { searchEpoch: state.searchEpoch + 1 } : {}) });
    if (fullTextDone) state.fullTextFilled();
    if (!staleTimer && Object.keys(progress).length) staleTimer = setTimeout(sweep, PROGRESS_STALE_MS);
  };
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
  const sweep = () => {
    staleTimer = undefined;
    const now = Date.now();
    const progress = store.getState().progress;
    const live = Object.fromEntries(Object.entries(progress).filter(([k]) => now - (lastDrawn.get(k) ?? 0) < PROGRESS_STALE_MS));
    if (Object.keys(live).length !== Object.keys(progress).length) store.setState({ progress: live });
    if (Object.keys(live).length) staleTimer = setTimeout(sweep, PROGRESS_STALE_MS);
  };
  const offs = [
    api.on('onDidIndex', (e) => {
      for (const id of e.sessionIds ?? []) pendingSessions.add(id);
      if (store.getState().reindexing) store.setState({ reindexing: false });
      if (!timer) timer = setTimeout(flush, LIVE_REFRESH_MS);
    }),
    api.on('onIndexProgress', (e) => {
      const key = progressKey(e);
      const finished = e.done >= e.total;
      const now = Date.now();
      const shown = key in store.getState().progress;
      // Only redraws are throttled, and the latest event is drawn when the pause ends: a phase's end always lands.
      const wait = PROGRESS_REDRAW_MS - (now - (lastDrawn.get(key) ?? 0));
      clearTimeout(trailing.get(key));
      trailing.delete(key);
      if (!finished && shown && wait > 0) {
        trailing.set(key, setTimeout(() => {
          trailing.delete(key);
          drawProgress(key, e);
        }, wait));
        return;
      }
      drawProgress(key, e);
    }),
    api.on('onDidSummarize', (e) => store.getState().addRun(e.payloadId, e.run)),
  ];
  return () => {
    clearTimeout(timer);
    clearTimeout(staleTimer);
    for (const t of trailing.values()) clearTimeout(t);
    for (const off of offs) off();
  };
}
