import type { StoreApi } from 'zustand';
import type { InspectorApi } from '../../src/service/contract.js';
import type { SpillwayHost } from '../transport/pick.js';
import type { CoreSlice } from './slices/core.js';
import type { SessionsSlice } from './slices/sessions.js';
import type { PayloadsSlice } from './slices/payloads.js';
import type { DetailSlice } from './slices/detail.js';
import type { ToolsSlice } from './slices/tools.js';

export type AppState = CoreSlice & SessionsSlice & PayloadsSlice & DetailSlice & ToolsSlice;

export interface Deps {
  api: InspectorApi;
  host?: SpillwayHost;
}

/** A slice creator: gets the store's set/get plus the injected API, returns its state and actions. */
export type Slice<T> = (set: StoreApi<AppState>['setState'], get: () => AppState, deps: Deps) => T;
