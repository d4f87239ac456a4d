/** The React binding of the store: a context and two hooks, nothing else (the store is index.ts). */
import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import type { AppState, AppStore } from './index.js';

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
