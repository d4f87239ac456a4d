import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { createAppStore } from './store/index.js';
import { StoreContext } from './store/react.js';
import { connectEvents } from './store/events.js';
import { pickApi } from './transport/pick.js';
import './styles.css';

const { api, host } = pickApi();
const store = createAppStore(api, host);
connectEvents(store);
void store.getState().init();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <StoreContext.Provider value={store}>
      <App />
    </StoreContext.Provider>
  </StrictMode>,
);
