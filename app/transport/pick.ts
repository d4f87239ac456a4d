/**
 * One InspectorApi, picked once at start: the Electron preload's `window.spillway` when present,
 * else the HTTP transport against the page's own origin (`spillway serve`).
 */
import type { InspectorApi } from '../../src/service/contract.js';
import { createAssetUrls, createHttpApi, exchangeLaunchCode, RENEWAL_ROTATE_MS, renewAccess, takeLaunchCode } from './http.js';
import { setAssetUrls } from './media.js';

/** Extra host features only the desktop shell has (exposed next to `window.spillway` by the preload). */
export interface SpillwayHost {
  /** Real path of a dropped File (Electron's webUtils), so big files are analysed in place. */
  pathForFile(file: File): string | undefined;
  /** Real path of a dropped folder: the main process then lets `addRoot` take it (the user's consent). */
  folderForFile?(file: File): string | undefined;
  /** Commands from the app menu (Open File, Open Folder, Reload Index). */
  onMenu(listener: (cmd: MenuCommand) => void): () => void;
  openExternal(url: string): Promise<void>;
}

export type MenuCommand =
  | { command: 'analyzePath'; path: string; name: string }
  | { command: 'rootsChanged' }
  | { command: 'reindexStarted' }
  | { command: 'search' }
  | { command: 'view'; view: string };

declare global {
  interface Window {
    spillway?: InspectorApi;
    spillwayHost?: SpillwayHost;
  }
}

export function pickApi(): { api: InspectorApi; host?: SpillwayHost; transport: 'electron' | 'http' } {
  if (window.spillway) return { api: window.spillway, host: window.spillwayHost, transport: 'electron' };
  // The launch code leaves the address bar at once; the token it buys lives only in memory. After a
  // reload there is no code, and the tab's renewal secret buys the token again.
  const code = takeLaunchCode();
  const token = code ? exchangeLaunchCode(code) : renewAccess();
  // Each renewal secret lives an hour on the server: a page left open keeps a fresh one.
  void token.then((t) => {
    if (t) setInterval(() => void renewAccess(), RENEWAL_ROTATE_MS);
  });
  setAssetUrls(createAssetUrls({ token }));
  return { api: createHttpApi({ token }), transport: 'http' };
}
