import { act, render, waitFor } from '@testing-library/react';
import { expect } from 'vitest';
import { App } from '../../app/App.js';
import { createAppStore, type AppStore } from '../../app/store/index.js';
import { StoreContext } from '../../app/store/react.js';
import { connectEvents } from '../../app/store/events.js';
import type { MemoryApi } from './memory-api.js';

/** The whole app on a memory API, events connected, started and listing (as main.tsx does it). */
export async function renderApp(api: MemoryApi): Promise<AppStore> {
  const store = createAppStore(api);
  connectEvents(store);
  render(
    <StoreContext.Provider value={store}>
      <App />
    </StoreContext.Provider>,
  );
  await act(() => store.getState().init());
  await waitFor(() => expect(store.getState().listStarted).toBe(true));
  return store;
}
