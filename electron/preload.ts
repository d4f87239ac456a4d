/**
 * The only bridge between the sandboxed renderer and the main process. `window.spillway` holds
 * exactly the contract's methods plus `on`; every channel name is checked against METHOD_NAMES at
 * run time and every request must be a plain object. Bundled to CommonJS (sandboxed preloads
 * cannot load ES modules).
 */
import { contextBridge, ipcRenderer, webUtils } from 'electron';
import { channelFor, EVENT_CHANNEL, EVENT_NAMES, METHOD_NAMES, type MethodName } from '../src/service/contract.js';
import { HOST_MENU_CHANNEL, HOST_OPEN_EXTERNAL_CHANNEL } from './channels.js';

const methods = new Set<string>(METHOD_NAMES);
const events = new Set<string>(EVENT_NAMES);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  // Any realm's Object.prototype (its own prototype is null), or no prototype: no class instances.
  const proto = Object.getPrototypeOf(v);
  return proto === null || (Object.getPrototypeOf(proto) === null && Object.prototype.toString.call(v) === '[object Object]');
}

/** Errors cross the bridge as plain objects so the renderer keeps the contract's error code. */
function fail(code: string, message: string): Promise<never> {
  return Promise.reject({ name: 'ServiceError', code, message });
}

async function invoke(method: string, req: unknown): Promise<unknown> {
  if (!methods.has(method)) return fail('BAD_REQUEST', `unknown method ${method}`);
  const body = req === undefined ? {} : req;
  if (!isPlainObject(body)) return fail('BAD_REQUEST', `${method}: the request must be a plain object`);
  const res = (await ipcRenderer.invoke(channelFor(method as MethodName), body)) as
    | { result: unknown }
    | { error: { code: string; message: string } };
  if ('error' in res) return fail(res.error.code, res.error.message);
  return res.result;
}

const api: Record<string, unknown> = {
  on(event: unknown, listener: unknown) {
    if (typeof event !== 'string' || !events.has(event)) throw new TypeError(`unknown event ${String(event)}`);
    if (typeof listener !== 'function') throw new TypeError('listener must be a function');
    const handler = (_e: unknown, msg: { event?: string; payload?: unknown }) => {
      if (msg && msg.event === event) (listener as (p: unknown) => void)(msg.payload);
    };
    ipcRenderer.on(EVENT_CHANNEL, handler);
    return () => {
      ipcRenderer.removeListener(EVENT_CHANNEL, handler);
    };
  },
};
for (const m of METHOD_NAMES) api[m] = (req: unknown) => invoke(m, req);

contextBridge.exposeInMainWorld('spillway', api);

contextBridge.exposeInMainWorld('spillwayHost', {
  pathForFile(file: unknown) {
    try {
      return webUtils.getPathForFile(file as File) || undefined;
    } catch {
      return undefined;
    }
  },
  onMenu(listener: unknown) {
    if (typeof listener !== 'function') throw new TypeError('listener must be a function');
    const handler = (_e: unknown, cmd: unknown) => (listener as (c: unknown) => void)(cmd);
    ipcRenderer.on(HOST_MENU_CHANNEL, handler);
    return () => {
      ipcRenderer.removeListener(HOST_MENU_CHANNEL, handler);
    };
  },
  openExternal(url: unknown) {
    if (typeof url !== 'string') return Promise.resolve(false);
    return ipcRenderer.invoke(HOST_OPEN_EXTERNAL_CHANNEL, url);
  },
});
