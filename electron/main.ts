/**
 * The desktop shell: one window, the app menu, and the contract wired to IPC. Every decision lives
 * in src/service/shell (policy, app:// protocol, menu, window state), tested under Node; every
 * method is the service's, called through `service.invoke`.
 */
import path from 'node:path';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, Menu, protocol, screen, session, shell, type IpcMainEvent, type IpcMainInvokeEvent, type MenuItemConstructorOptions } from 'electron';
import { channelFor, EVENT_CHANNEL, EVENT_NAMES, HOST_DROPPED_FILE_CHANNEL, HOST_MENU_CHANNEL, HOST_OPEN_EXTERNAL_CHANNEL, METHOD_NAMES, ServiceError } from '../src/service/contract.js';
import { createInspectorService, defaultRootsChoice, type InspectorService } from '../src/service/service.js';
import { createAppProtocolHandler } from '../src/service/shell/app-protocol.js';
import { appMenu } from '../src/service/shell/menu.js';
import { APP_ORIGIN, APP_SCHEME, checkDroppedPath, devUrlFor, ExternalLinkGate, isAppUrl, isPlainObject, isTrustedSender, MIN_WINDOW, restoreBounds } from '../src/service/shell/policy.js';
import { readWindowState, saveWindowState } from '../src/service/shell/window-state.js';
import { errMessage } from '../src/pipeline/values.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** dist/electron/main.mjs → dist/renderer */
const RENDERER_DIR = path.resolve(here, '..', 'renderer');
/** `npm run dev` sets SPILLWAY_DEV_URL to the Vite dev server; a packaged app ignores it. */
const DEV_URL = devUrlFor({ isPackaged: app.isPackaged, requested: process.env.SPILLWAY_DEV_URL });
const IS_DEV = !app.isPackaged;
const STATE_FILE = () => path.join(app.getPath('userData'), 'window-state.json');
/** Debounce for writing window bounds while the user drags. */
const SAVE_STATE_MS = 400;

protocol.registerSchemesAsPrivileged([
  { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, stream: true, codeCache: true, corsEnabled: true } },
]);

let mainWindow: BrowserWindow | null = null;
let service: InspectorService;
const links = new ExternalLinkGate();
const isApp = (url: string) => isAppUrl(url, DEV_URL);

/** Only the app window's main frame, showing the app, may use IPC. */
function trusted(e: IpcMainInvokeEvent | IpcMainEvent): boolean {
  const wc = mainWindow?.webContents;
  return isTrustedSender({ fromAppWindow: !!wc && e.sender === wc, fromMainFrame: !!wc && e.senderFrame === wc.mainFrame, frameUrl: e.senderFrame?.url }, isApp);
}

/** A link leaves for the system browser only when the user clicks Open in this dialog. */
async function offerExternal(url: unknown): Promise<boolean> {
  if (links.request(url) !== 'ask' || !mainWindow) return false;
  try {
    const { response } = await dialog.showMessageBox(mainWindow, { type: 'question', buttons: ['Cancel', 'Open in Browser'], defaultId: 0, cancelId: 0, message: 'Open this link in your browser?', detail: String(url) });
    if (response === 1) await shell.openExternal(String(url));
    return response === 1;
  } finally {
    links.done();
  }
}

/** Every contract method becomes one IPC channel. Errors travel as data so their code survives. */
function wireIpc(): void {
  for (const method of METHOD_NAMES) {
    ipcMain.handle(channelFor(method), async (event, req: unknown) => {
      if (!trusted(event)) return { error: { code: 'FORBIDDEN', message: 'not the app window' } };
      if (req !== undefined && !isPlainObject(req)) return { error: { code: 'BAD_REQUEST', message: `${method}: the request must be a plain object` } };
      try {
        const result = await service.invoke(method, req ?? {});
        if (method === 'revealPath') shell.showItemInFolder((result as { path: string }).path);
        return { result };
      } catch (err) {
        return { error: { code: err instanceof ServiceError ? err.code : 'INTERNAL', message: errMessage(err) } };
      }
    });
  }
  ipcMain.handle(HOST_OPEN_EXTERNAL_CHANNEL, (event, url: unknown) => (trusted(event) ? offerExternal(url) : false));
  // The preload read this path from a real drop (webUtils.getPathForFile): the service may read that one
  // file, or the window may add that folder as a root. true for a file, 'folder' for a folder, else false.
  ipcMain.on(HOST_DROPPED_FILE_CHANNEL, (event, p: unknown) => {
    const kind = trusted(event) ? service.allowDropped(p) : null;
    event.returnValue = kind === 'file' ? true : kind === 'folder' ? 'folder' : false;
  });
  for (const name of EVENT_NAMES) {
    service.on(name, (payload: unknown) => {
      if (mainWindow && !mainWindow.isDestroyed()) mainWindow.webContents.send(EVENT_CHANNEL, { event: name, payload });
    });
  }
}

function hardenSession(): void {
  const ses = session.defaultSession;
  // Camera, notifications, geolocation, clipboard-read, USB/HID/serial devices…: the inspector needs none.
  ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  ses.setPermissionCheckHandler(() => false);
  ses.setDevicePermissionHandler(() => false);
  ses.on('select-hid-device', (e, _d, callback) => (e.preventDefault(), callback('')));
  ses.on('select-serial-port', (e, _p, _wc, callback) => (e.preventDefault(), callback('')));
  ses.on('select-usb-device', (e, _d, callback) => (e.preventDefault(), callback('')));
  // Nothing is saved to disk behind the user's back (an asset is shown, or revealed in its folder).
  ses.on('will-download', (e) => e.preventDefault());
  // Nothing may leave the machine: block every request that is not the app itself (or the dev server).
  ses.webRequest.onBeforeRequest((details, callback) => {
    const u = details.url;
    const ok = u.startsWith(`${APP_ORIGIN}/`) || u.startsWith('devtools://') || u.startsWith('blob:') || u.startsWith('data:') || (DEV_URL ? isApp(u) || u.startsWith(DEV_URL.replace(/^http/, 'ws')) : false);
    callback({ cancel: !ok });
  });
}

function createWindow(): BrowserWindow {
  const saved = readWindowState(STATE_FILE());
  const bounds = restoreBounds(saved, screen.getAllDisplays().map((d) => d.workArea));
  const win = new BrowserWindow({
    ...bounds,
    minWidth: MIN_WINDOW.width,
    minHeight: MIN_WINDOW.height,
    show: false,
    title: 'Spillway Inspector',
    backgroundColor: '#0f1014',
    webPreferences: {
      preload: path.join(here, 'preload.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      spellcheck: false,
      devTools: IS_DEV,
    },
  });
  if (saved.maximized) win.maximize();
  win.once('ready-to-show', () => win.show());
  // No new windows, ever; an http(s) link may go to the system browser once the user says so.
  win.webContents.setWindowOpenHandler(({ url }) => {
    void offerExternal(url);
    return { action: 'deny' };
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const save = (now = false) => {
    clearTimeout(timer);
    const write = () => !win.isDestroyed() && saveWindowState(STATE_FILE(), { bounds: win.getNormalBounds(), maximized: win.isMaximized() });
    if (now) write();
    else timer = setTimeout(write, SAVE_STATE_MS);
  };
  win.on('resize', () => save());
  win.on('move', () => save());
  win.on('close', () => save(true));
  void win.loadURL(DEV_URL ?? `${APP_ORIGIN}/index.html`);
  return win;
}

const sendMenu = (cmd: Record<string, unknown>) => mainWindow && !mainWindow.isDestroyed() && mainWindow.webContents.send(HOST_MENU_CHANNEL, cmd);

function buildMenu(): void {
  const fail = (title: string) => (err: unknown) => dialog.showErrorBox(title, errMessage(err));
  const template = appMenu(
    { isMac: process.platform === 'darwin', isDev: IS_DEV },
    {
      openFolder: () =>
        void (async () => {
          const res = mainWindow && (await dialog.showOpenDialog(mainWindow, { properties: ['openDirectory'], title: 'Add a sessions folder' }));
          const dir = res && !res.canceled ? res.filePaths[0] : undefined;
          // Picked in the main process's own dialog: the user's choice, so only the hard limits apply.
          if (dir) await service.addTrustedRoot(dir).then(() => sendMenu({ command: 'rootsChanged' }), fail('Could not add the folder'));
        })(),
      openFile: () =>
        void (async () => {
          const res = mainWindow && (await dialog.showOpenDialog(mainWindow, { properties: ['openFile'], title: 'Analyse a file' }));
          const file = res && !res.canceled ? res.filePaths[0] : undefined;
          if (!file || checkDroppedPath(file) !== null) return;
          service.allowDroppedFile(file);
          sendMenu({ command: 'analyzePath', path: file, name: path.basename(file) });
        })(),
      reindex: () => {
        sendMenu({ command: 'reindexStarted' });
        void service.invoke('reindex', {}).catch(fail('Reindex failed'));
      },
      send: sendMenu,
    },
  );
  Menu.setApplicationMenu(Menu.buildFromTemplate(template as MenuItemConstructorOptions[]));
}

function openMainWindow(): void {
  mainWindow = createWindow();
  mainWindow.on('closed', () => (mainWindow = null));
}

// One instance: a second launch focuses the first.
if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => {
    if (mainWindow?.isMinimized()) mainWindow.restore();
    mainWindow?.focus();
  });
  app.on('web-contents-created', (_e, wc) => {
    wc.setWindowOpenHandler(() => ({ action: 'deny' }));
    wc.on('will-navigate', (ev, url) => !isApp(url) && ev.preventDefault());
    wc.on('will-redirect', (ev, url) => !isApp(url) && ev.preventDefault());
    wc.on('will-attach-webview', (ev) => ev.preventDefault());
  });
  app.on('window-all-closed', () => process.platform !== 'darwin' && app.quit());
  void app.whenReady().then(() => {
    // Roots are remembered by the index; folders on the command line (`npm start -- ~/sessions`) are added (trusted: the user typed them).
    const roots = process.argv.slice(IS_DEV ? 2 : 1).filter((a) => !a.startsWith('-') && fs.existsSync(a)).map((a) => path.resolve(a));
    // Like `spillway serve`: with no folder given, the agents' own session folders open read-only.
    const defaultRoots = defaultRootsChoice(!process.argv.includes('--no-default-roots'), roots, process.env);
    service = createInspectorService({ transport: 'electron', roots, defaultRoots, env: process.env, onWarning: (m) => console.warn(`spillway: ${m}`) });
    hardenSession();
    protocol.handle(APP_SCHEME, createAppProtocolHandler({ service, rendererDir: RENDERER_DIR }));
    wireIpc();
    buildMenu();
    openMainWindow();
    app.on('activate', () => !mainWindow && openMainWindow());
  });
  app.on('will-quit', () => void service?.close());
}
