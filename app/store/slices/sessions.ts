import type { RootInfo, SessionInfo } from '../../../src/service/contract.js';
import { errorMessage } from '../../transport/errors.js';
import type { Slice } from '../slice.js';
import type { ViewId } from '../../../src/service/shell/views.js';

export interface SessionsSlice {
  roots: RootInfo[];
  sessions: SessionInfo[];
  rootsLoading: boolean;
  rootsError: string | null;
  /** Scope of the payload table: one session, one root, or everything. */
  selectedRootId: string | null;
  selectedSessionId: string | null;
  sessionFilter: string;
  /** A reindex the user asked for (or the desktop menu started) has not answered yet. */
  reindexing: boolean;
  loadRoots(): Promise<void>;
  addRoot(path: string): Promise<boolean>;
  removeRoot(id: string): Promise<void>;
  reindex(rootId?: string): Promise<void>;
  selectSession(sessionId: string | null, rootId?: string | null): void;
  setSessionFilter(text: string): void;
}

/** What the sessions slice uses of the others. */
interface SessionsNeeds {
  view: ViewId;
  listStarted: boolean;
  setView(view: ViewId): void;
  notify(kind: 'error' | 'info' | 'success', text: string): void;
  withToast<T>(what: string, fn: () => Promise<T>): Promise<T | undefined>;
  reloadPayloads(opts?: { keepPages?: boolean }): void;
  refreshToolViews(): void;
}

export const createSessionsSlice: Slice<SessionsSlice, SessionsNeeds> = (set, get, { api }) => ({
  roots: [],
  sessions: [],
  rootsLoading: false,
  rootsError: null,
  selectedRootId: null,
  selectedSessionId: null,
  sessionFilter: '',
  reindexing: false,
  async loadRoots() {
    set({ rootsLoading: true });
    try {
      const [roots, sessions] = await Promise.all([api.listRoots({}), api.listSessions({})]);
      sessions.sort((a, b) => (b.lastAt ?? '').localeCompare(a.lastAt ?? '') || a.name.localeCompare(b.name));
      set({ roots, sessions, rootsLoading: false, rootsError: null });
      const { selectedSessionId } = get();
      if (selectedSessionId && !sessions.some((s) => s.id === selectedSessionId)) get().selectSession(null);
      else if (!selectedSessionId && !get().listStarted && sessions.length > 0) get().selectSession(sessions[0]!.id);
      else if (!get().listStarted) get().reloadPayloads();
    } catch (err) {
      set({ rootsLoading: false, rootsError: errorMessage(err) });
    }
  },
  async addRoot(path) {
    const root = await get().withToast('Add folder', () => api.addRoot({ path }));
    if (!root) return false;
    get().notify('success', `Added ${root.path}: ${root.sessionCount} sessions, ${root.payloadCount} payloads`);
    await get().loadRoots();
    return true;
  },
  async removeRoot(id) {
    const ok = await get().withToast('Remove folder', () => api.removeRoot({ id }));
    if (!ok) return;
    if (get().selectedRootId === id) set({ selectedRootId: null });
    await get().loadRoots();
  },
  async reindex(rootId) {
    set({ reindexing: true });
    const stats = await get().withToast('Reindex', () => api.reindex({ rootId }));
    set({ reindexing: false });
    if (stats) {
      get().notify('success', `Indexed ${stats.payloads.toLocaleString()} payloads in ${stats.sessions} sessions (${stats.seconds.toFixed(1)} s)`);
      await get().loadRoots();
      get().reloadPayloads();
    }
  },
  selectSession(sessionId, rootId = null) {
    set({ selectedSessionId: sessionId, selectedRootId: sessionId ? null : rootId });
    if (get().view === 'analyze') get().setView('payloads');
    get().reloadPayloads();
    get().refreshToolViews();
  },
  setSessionFilter(sessionFilter) {
    set({ sessionFilter });
  },
});
