/**
 * The only bridge between the sandboxed renderer and the main process. `window.spillway` holds
 * exactly the contract's methods plus `on`; every channel name is checked against METHOD_NAMES at
 * run time and every request must be a plain object. Bundled to CommonJS (sandboxed preloads
 * cannot load ES modules), so it imports nothing with Node built-ins.
 */
import { contextBridge, ipcRenderer, webUtils } from 'electron';
import { channelFor, EVENT_CHANNEL, EVENT_NAMES, HOST_DROPPED_FILE_CHANNEL, HOST_MENU_CHANNEL, HOST_OPEN_EXTERNAL_CHANNEL, METHOD_NAMES, type MethodName } from '../src/service/contract.js';
import { isPlainObject } from '../src/service/shell/ipc.js';

const methods = new Set<string>(METHOD_NAMES);
const events = new Set<string>(EVENT_NAMES);

/** Errors cross the bridge as plain objects so the renderer keeps the contract's error code. */
const fail = (code: string, message: string): Promise<never> => Promise.reject({ name: 'ServiceError', code, message });

async function invoke(method: string, req: unknown): Promise<unknown> {
  if (!methods.has(method)) return fail('BAD_REQUEST', `unknown method ${method}`);
  const body = req === undefined ? {} : req;
  if (!isPlainObject(body)) return fail('BAD_REQUEST', `${method}: the request must be a plain object`);
  const res = (await ipcRenderer.invoke(channelFor(method as MethodName), body)) as { result: unknown } | { error: { code: string; message: string } };
  if ('error' in res) return fail(res.error.code, res.error.message);
  return res.result;
}

/** A listener on one channel, with its unsubscribe. */
function listen(channel: string, handler: Parameters<typeof ipcRenderer.on>[1]): () => void {
  ipcRenderer.on(channel, handler);
  return () => void ipcRenderer.removeListener(channel, handler);
}

const api: Record<string, unknown> = {
  on(event: unknown, listener: unknown) {
    if (typeof event !== 'string' || !events.has(event)) throw new TypeError(`unknown event ${String(event)}`);
    if (typeof listener !== 'function') throw new TypeError('listener must be a function');
    return listen(EVENT_CHANNEL, (_e: unknown, msg: { event?: string; payload?: unknown }) => msg?.event === event && (listener as (p: unknown) => void)(msg.payload));
  },
};
for (const m of METHOD_NAMES) api[m] = (req: unknown) => invoke(m, req);
contextBridge.exposeInMainWorld('spillway', api);

/** The real path of a dropped File or folder, if the main process accepts it as `kind` (true: a file). */
function dropped(file: unknown, kind: true | 'folder'): string | undefined {
  let p = '';
  try {
    p = webUtils.getPathForFile(file as File);
  } catch {
    return undefined;
  }
  return p && ipcRenderer.sendSync(HOST_DROPPED_FILE_CHANNEL, p) === kind ? p : undefined;
}

contextBridge.exposeInMainWorld('spillwayHost', {
  /**
   * The real path of a dropped File. A page cannot make up a File with a path, so this is the
   * proof the main process needs: it is told here (synchronously, before the page can ask to
   * analyse the path) and lets the service read that one file.
   */
  pathForFile(file: unknown) {
    return dropped(file, true);
  },
  /** The same proof for a dropped folder: the main process then lets the window add it as a root. */
  folderForFile(file: unknown) {
    return dropped(file, 'folder');
  },
  onMenu(listener: unknown) {
    if (typeof listener !== 'function') throw new TypeError('listener must be a function');
    return listen(HOST_MENU_CHANNEL, (_e: unknown, cmd: unknown) => (listener as (c: unknown) => void)(cmd));
  },
  openExternal(url: unknown) {
    if (typeof url !== 'string') return Promise.resolve(false);
    return ipcRenderer.invoke(HOST_OPEN_EXTERNAL_CHANNEL, url);
  },
});
