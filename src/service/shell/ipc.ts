/**
 * The desktop shell's IPC rules, with no Node or Electron import: the sandboxed preload bundles
 * this file too (a sandboxed preload may require only `electron`).
 */

/** Requests crossing IPC must be plain data objects (no class instances, no functions, no prototype games). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  // Any realm's Object.prototype (its own prototype is null), or no prototype: no class instances.
  const proto = Object.getPrototypeOf(v);
  return proto === null || (Object.getPrototypeOf(proto) === null && Object.prototype.toString.call(v) === '[object Object]');
}

/** Who sent an IPC message, as the main process sees it (event.sender, event.senderFrame). */
export interface IpcSender {
  /** The message came from the app window's webContents. */
  fromAppWindow: boolean;
  /** It came from that window's main frame (not an iframe such as a PDF asset's). */
  fromMainFrame: boolean;
  /** The sending frame's URL. */
  frameUrl: string | undefined;
}

/**
 * Only the app window's main frame, showing the app itself, may call the service: a PDF frame or
 * any other document that somehow ended up in the window may not.
 */
export function isTrustedSender(s: IpcSender, isAppUrl: (url: string) => boolean): boolean {
  return s.fromAppWindow && s.fromMainFrame && typeof s.frameUrl === 'string' && isAppUrl(s.frameUrl);
}
