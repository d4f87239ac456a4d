/**
 * The renderer's one zustand store, built from slices; each slice keeps its actions next to its
 * state and sees only its own state plus what it declares it needs of the others (slice.ts).
 * The API is injected (Electron bridge, HTTP client, or a test's implementation). The back end's
 * events are wired in events.ts; the React binding is react.ts.
 */
import { createStore, type StoreApi } from 'zustand';
import type { InspectorApi } from '../../src/service/contract.js';
import type { SpillwayHost } from '../transport/pick.js';
import { createCoreSlice } from './slices/core.js';
import { createDetailSlice } from './slices/detail.js';
import { createPayloadsSlice } from './slices/payloads.js';
import { createSessionsSlice } from './slices/sessions.js';
import { createToolsSlice } from './slices/tools.js';
import type { CoreSlice } from './slices/core.js';
import type { DetailSlice } from './slices/detail.js';
import type { PayloadsSlice } from './slices/payloads.js';
import type { SessionsSlice } from './slices/sessions.js';
import type { ToolsSlice } from './slices/tools.js';
import type { Deps } from './slice.js';

export type AppState = CoreSlice & SessionsSlice & PayloadsSlice & DetailSlice & ToolsSlice;
export type AppStore = StoreApi<AppState> & { deps: Deps };

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
