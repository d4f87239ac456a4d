import type { RootInfo, SessionInfo } from '../../../src/service/contract.js';
import { errorMessage } from '../../transport/errors.js';
import type { Slice } from '../types.js';

export interface SessionsSlice {
  roots: RootInfo[];
  sessions: SessionInfo[];
  rootsLoading: boolean;
  rootsError: string | null;
  /** Scope of the payload table: one session, one root, or everything. */
  selectedRootId: string | null;
  selectedSessionId: string | null;
  sessionFilter: string;
  loadRoots(): Promise<void>;
  addRoot(path: string): Promise<boolean>;
  removeRoot(id: string): Promise<void>;
  reindex(rootId?: string): Promise<void>;
  selectSession(sessionId: string | null, rootId?: string | null): void;
  setSessionFilter(text: string): void;
}

export const createSessionsSlice: Slice<SessionsSlice> = (set, get, { api }) => ({
  roots: [],
  sessions: [],
  rootsLoading: false,
  rootsError: null,
  selectedRootId: null,
  selectedSessionId: null,
  sessionFilter: '',
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
    const root = await get().guard('Add folder', () => api.addRoot({ path }));
    if (!root) return false;
    get().notify('success', `Added ${root.path}: ${root.sessionCount} sessions, ${root.payloadCount} payloads`);
    await get().loadRoots();
    return true;
  },
  async removeRoot(id) {
    const ok = await get().guard('Remove folder', () => api.removeRoot({ id }));
    if (!ok) return;
    if (get().selectedRootId === id) set({ selectedRootId: null });
    await get().loadRoots();
  },
  async reindex(rootId) {
    set({ reindexing: true });
    const stats = await get().guard('Reindex', () => api.reindex({ rootId }));
    set({ reindexing: false });
    if (stats) {
      get().notify('success', `Indexed ${stats.payloads.toLocaleString()} payloads in ${stats.sessions} sessions (${stats.seconds.toFixed(1)} s)`);
      await get().loadRoots();
      get().reloadPayloads();
    }
  },
  selectSession(sessionId, rootId = null) {
    set({ selectedSessionId: sessionId, selectedRootId: sessionId ? null : rootId, view: get().view === 'analyze' ? 'payloads' : get().view });
    get().reloadPayloads();
    get().refreshToolViews();
  },
  setSessionFilter(sessionFilter) {
    set({ sessionFilter });
  },
});
