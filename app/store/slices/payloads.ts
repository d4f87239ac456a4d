import type {
  ContentKind,
  IndexProgressEvent,
  GuardAction,
  ListPayloadsRequest,
  PayloadRow,
  PayloadSortField,
} from '../../../src/service/contract.js';
import { errorMessage } from '../../transport/errors.js';
import type { Slice } from '../slice.js';

/** Rows fetched per request; the table asks for pages as they scroll into view. */
export const PAGE_ROWS = 200;
/** Wait after the last keystroke before querying. */
export const FILTER_DEBOUNCE_MS = 180;
/**
 * A partial answer with no full-text progress in sight (its end event came before the answer, or
 * was lost) is asked again after this long, until it is complete.
 */
export const PARTIAL_RECHECK_MS = 2_000;

export interface PayloadFilters {
  query: string;
  tool: string;
  action: GuardAction | '';
  kind: ContentKind | '';
  minTokens: number | null;
}

export const EMPTY_FILTERS: PayloadFilters = { query: '', tool: '', action: '', kind: '', minTokens: null };

export interface PayloadsSlice {
  filters: PayloadFilters;
  sort: { field: PayloadSortField; dir: 'asc' | 'desc' };
  total: number;
  /** Loaded pages by page number; a missing page is not loaded yet. */
  pages: Record<number, PayloadRow[]>;
  /** Bumped on every new query so stale answers are dropped and the table resets its scroll. */
  listGeneration: number;
  listStarted: boolean;
  listLoading: boolean;
  listError: string | null;
  /**
   * The last text query was answered while full-text search was still filling in: this many of
   * the payloads in scope were not searchable yet (hits may be missing). Null when complete.
   */
  partial: { unsearched: number } | null;
  selectedIndex: number;
  setFilters(patch: Partial<PayloadFilters>): void;
  setSort(field: PayloadSortField): void;
  reloadPayloads(opts?: { keepPages?: boolean }): void;
  ensureRows(from: number, to: number): void;
  rowAt(index: number): PayloadRow | undefined;
  selectIndex(index: number, open?: boolean): void;
  listRequest(): ListPayloadsRequest;
  /**
   * Full-text search finished filling in for a root: a search answered partially is asked again,
   * now complete. This slice owns the whole "ask again" rule (here and the recheck in fetchPage).
   */
  fullTextFilled(): void;
}

/** What the payloads slice uses of the others. */
interface PayloadsNeeds {
  progress: Record<string, IndexProgressEvent>;
  selectedSessionId: string | null;
  selectedRootId: string | null;
  openPayload(id: string, row?: PayloadRow): Promise<void>;
}

export const createPayloadsSlice: Slice<PayloadsSlice, PayloadsNeeds> = (set, get, { api }) => {
  const inFlight = new Set<string>();
  let debounce: ReturnType<typeof setTimeout> | undefined;
  let recheckGeneration = -1;

  const fetchPage = async (page: number, generation: number) => {
    const key = `${generation}:${page}`;
    if (inFlight.has(key)) return;
    inFlight.add(key);
    try {
      const res = await api.listPayloads({ ...get().listRequest(), offset: page * PAGE_ROWS, limit: PAGE_ROWS });
      if (get().listGeneration !== generation) return;
      set((s) => ({ pages: { ...s.pages, [page]: res.rows }, total: res.total, partial: res.partial ?? null, listLoading: false, listError: null }));
      const filling = Object.values(get().progress).some((p) => p.phase === 'fulltext');
      if (res.partial && !filling && recheckGeneration !== generation) {
        recheckGeneration = generation;
        setTimeout(() => {
          if (get().listGeneration === generation && get().partial) get().reloadPayloads({ keepPages: true });
        }, PARTIAL_RECHECK_MS);
      }
    } catch (err) {
      if (get().listGeneration !== generation) return;
      set({ listLoading: false, listError: errorMessage(err) });
    } finally {
      inFlight.delete(key);
    }
  };

  return {
    filters: EMPTY_FILTERS,
    sort: { field: 'createdAt', dir: 'desc' },
    total: 0,
    pages: {},
    listGeneration: 0,
    listStarted: false,
    listLoading: false,
    listError: null,
    partial: null,
    selectedIndex: -1,
    listRequest() {
      const { filters, sort, selectedSessionId, selectedRootId } = get();
      const req: ListPayloadsRequest = { sort };
      if (selectedSessionId) req.sessionId = selectedSessionId;
      else if (selectedRootId) req.rootId = selectedRootId;
      if (filters.query.trim()) req.query = filters.query.trim();
      if (filters.tool) req.tool = filters.tool;
      if (filters.action) req.action = filters.action;
      if (filters.kind) req.kind = filters.kind;
      if (filters.minTokens != null) req.minTokens = filters.minTokens;
      return req;
    },
    setFilters(patch) {
      set((s) => ({ filters: { ...s.filters, ...patch } }));
      clearTimeout(debounce);
      debounce = setTimeout(() => get().reloadPayloads(), FILTER_DEBOUNCE_MS);
    },
    setSort(field) {
      set((s) => ({
        sort: { field, dir: s.sort.field === field ? (s.sort.dir === 'asc' ? 'desc' : 'asc') : field === 'tool' ? 'asc' : 'desc' },
      }));
      get().reloadPayloads();
    },
    reloadPayloads(opts = {}) {
      const generation = get().listGeneration + 1;
      if (opts.keepPages) {
        // Live refresh: keep what is on screen and refetch the loaded pages in place (no flicker, no scroll jump).
        const loaded = Object.keys(get().pages).map(Number);
        set({ listGeneration: generation, listStarted: true });
        for (const p of loaded.length ? loaded : [0]) void fetchPage(p, generation);
        return;
      }
      set({ listGeneration: generation, pages: {}, total: 0, partial: null, listStarted: true, listLoading: true, listError: null, selectedIndex: -1 });
      void fetchPage(0, generation);
    },
    ensureRows(from, to) {
      const { pages, listGeneration, total } = get();
      const last = Math.min(to, Math.max(total - 1, 0));
      for (let p = Math.floor(from / PAGE_ROWS); p <= Math.floor(last / PAGE_ROWS); p++) {
        if (!pages[p]) void fetchPage(p, listGeneration);
      }
    },
    rowAt(index) {
      return get().pages[Math.floor(index / PAGE_ROWS)]?.[index % PAGE_ROWS];
    },
    fullTextFilled() {
      if (get().partial) get().reloadPayloads({ keepPages: true });
    },
    selectIndex(index, open = true) {
      const { total } = get();
      if (total === 0) return;
      const i = Math.max(0, Math.min(total - 1, index));
      set({ selectedIndex: i });
      const row = get().rowAt(i);
      if (row && open) void get().openPayload(row.id, row);
      else if (!row) get().ensureRows(i, i);
    },
  };
};
