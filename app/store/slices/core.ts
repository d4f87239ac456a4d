import type { AppInfo, IndexProgressEvent } from '../../../src/service/contract.js';
import type { ViewId } from '../../../src/service/shell/views.js';
import { errorMessage } from '../../transport/errors.js';
import type { Slice } from '../slice.js';

export interface Toast {
  id: number;
  kind: 'error' | 'info' | 'success';
  text: string;
}

export interface CoreSlice {
  info: AppInfo | null;
  /** Set when the back end cannot be reached at all (shown full-screen). */
  fatal: string | null;
  view: ViewId;
  paletteOpen: boolean;
  helpOpen: boolean;
  toasts: Toast[];
  /**
   * Scans in flight, by root: the latest progress event of each (its phase: `list`, then
   * `fulltext`). An entry goes when its phase reports done; a finished `fulltext` bumps `searchEpoch`.
   */
  progress: Record<string, IndexProgressEvent>;
  /** Bumped each time full-text search finishes filling in for a root: a partial search is worth asking again. */
  searchEpoch: number;
  init(): Promise<void>;
  setView(view: ViewId): void;
  setPaletteOpen(open: boolean): void;
  setHelpOpen(open: boolean): void;
  notify(kind: Toast['kind'], text: string): void;
  dismissToast(id: number): void;
  /** Run an action and turn a failure into a toast; returns undefined on failure. */
  withToast<T>(what: string, fn: () => Promise<T>): Promise<T | undefined>;
}

/** What the core slice uses of the others. */
interface CoreNeeds {
  loadRoots(): Promise<void>;
}

/** How long a non-error toast stays up. */
const TOAST_MS = 4_000;
let toastSeq = 0;

export const createCoreSlice: Slice<CoreSlice, CoreNeeds> = (set, get, { api }) => ({
  info: null,
  fatal: null,
  view: 'payloads',
  paletteOpen: false,
  helpOpen: false,
  toasts: [],
  progress: {},
  searchEpoch: 0,
  async init() {
    try {
      const info = await api.getInfo({});
      set({ info, fatal: null });
    } catch (err) {
      set({ fatal: errorMessage(err) });
      return;
    }
    await get().loadRoots();
  },
  setView(view) {
    set({ view });
  },
  setPaletteOpen(paletteOpen) {
    set({ paletteOpen });
  },
  setHelpOpen(helpOpen) {
    set({ helpOpen });
  },
  notify(kind, text) {
    const id = ++toastSeq;
    set((s) => ({ toasts: [...s.toasts.slice(-4), { id, kind, text }] }));
    if (kind !== 'error') setTimeout(() => get().dismissToast(id), TOAST_MS);
  },
  dismissToast(id) {
    set((s) => ({ toasts: s.toasts.filter((t) => t.id !== id) }));
  },
  async withToast(what, fn) {
    try {
      return await fn();
    } catch (err) {
      get().notify('error', `${what}: ${errorMessage(err)}`);
      return undefined;
    }
  },
});
