import type { InspectorApi } from '../../src/service/contract.js';
import type { SpillwayHost } from '../transport/pick.js';

export interface Deps {
  api: InspectorApi;
  host?: SpillwayHost;
}

/** The data fields of a slice (its actions left out): what its `set` may write. */
export type SliceData<T> = { [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]: T[K] };

/** A slice's `set`: it writes only its own fields. Another slice's state changes through that slice's actions. */
export type SetOwn<T> = (patch: Partial<SliceData<T>> | ((s: T) => Partial<SliceData<T>>)) => void;

/**
 * A slice creator. `get` sees the slice's own state and actions plus `Needs`: the other slices'
 * fields and actions it uses, declared by each slice as a plain interface of its own (so a slice
 * takes no state of another by import, and a new cross-slice use is a visible change to that interface).
 * The store (index.ts) checks at compile time that the whole state satisfies every slice's needs.
 */
export type Slice<T, Needs = unknown> = (set: SetOwn<T>, get: () => T & Needs, deps: Deps) => T;
