/**
 * The desktop shell: one window, the app menu, and the contract wired to IPC. No business logic
 * lives here; every method is the service's (src/service), called through `service.invoke`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import {
  app,
  BrowserWindow,
  dialog,
  ipcMain,
  Menu,
  protocol,
  screen,
  session,
  shell,
  type MenuItemConstructorOptions,
  type WebContents,
} from 'electron';
import { channelFor, EVENT_CHANNEL, EVENT_NAMES, METHOD_NAMES, ServiceError, type EventName } from '../src/service/contract.js';
import { createInspectorService, type InspectorService } from '../src/service/service.js';
import {
  APP_HOST,
  APP_ORIGIN,
  APP_SCHEME,
  ASSET_CSP,
  DESKTOP_CSP,
  isAppUrl,
  isExternalHttpUrl,
  isPlainObject,
  MIN_WINDOW,
  parseAssetPath,
  PDF_CSP,
  resolveStaticPath,
  restoreBounds,
  type WindowState,
} from './policy.js';
import { HOST_MENU_CHANNEL, HOST_OPEN_EXTERNAL_CHANNEL } from './channels.js';
import { STATIC_TYPES } from '../src/service/web-policy.js';

const here = path.dirname(fileURLToPath(import.meta.url));
/** dist/electron/main.mjs → dist/renderer */
const RENDERER_DIR = path.resolve(here, '..', 'renderer');
/** `npm run dev` sets this to the Vite dev server; the window then loads it (hot reload). */
const DEV_URL = process.env.SPILLWAY_DEV_URL;
const IS_DEV = !!DEV_URL || !app.isPackaged;
const STATE_FILE = () => path.join(app.getPath('userData'), 'window-state.json');
/** Debounce for writing window bounds while the user drags. */
const SAVE_STATE_MS = 400;

protocol.registerSchemesAsPrivileged([
  { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, stream: true, codeCache: true, corsEnabled: true } },
]);

let mainWindow: BrowserWindow | null = null;
let service: InspectorService;

function readState(): WindowState {
  try {
    return JSON.parse(fs.readFileSync(STATE_FILE(), 'utf8')) as WindowState;
  } catch {
    return {};
  }
}

function writeState(patch: Partial<WindowState>): void {
  const next = { ...readState(), ...patch };
  const file = STATE_FILE();
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(tmp, JSON.stringify(next, null, 2));
    fs.renameSync(tmp, file);
  } catch {
    /* window state is a convenience; never fail over it */
  }
}

function isOurFrame(wc: WebContents, frameUrl: string | undefined): boolean {
  return !!mainWindow && wc === mainWindow.webContents && !!frameUrl && isAppUrl(frameUrl, DEV_URL);
}

/** Every contract method becomes one IPC channel. Errors travel as data so their code survives. */
function wireIpc(): void {
  for (const method of METHOD_NAMES) {
    ipcMain.handle(channelFor(method), async (event, req: unknown) => {
      if (!isOurFrame(event.sender, event.senderFrame?.url)) return { error: { code: 'FORBIDDEN', message: 'not the app window' } };
      if (req !== undefined && !isPlainObject(req)) return { error: { code: 'BAD_REQUEST', message: `${method}: the request must be a plain object` } };
      try {
        const result = await service.invoke(method, req ?? {});
        if (method === 'revealPath') shell.showItemInFolder((result as { path: string }).path);
        return { result };
      } catch (err) {
        const code = err instanceof ServiceError ? err.code : 'INTERNAL';
        return { error: { code, message: err instanceof Error ? err.message : String(err) } };
      }
    });
  }
  ipcMain.handle(HOST_OPEN_EXTERNAL_CHANNEL, async (event, url: unknown) => {
    if (!isOurFrame(event.sender, event.senderFrame?.url)) return false;
    if (typeof url !== 'string' || !isExternalHttpUrl(url)) return false;
    await shell.openExternal(url);
    return true;
  });
  for (const name of EVENT_NAMES) {
    service.on(name as EventName, (payload: unknown) => {
      if (mainWindow && !mainWindow.isDestroyed()) mainWindow.webContents.send(EVENT_CHANNEL, { event: name, payload });
    });
  }
}

/** Files are streamed from disk directly: no file:// request exists for the request filter to allow. */
function fileBody(file: string): ReadableStream {
  return Readable.toWeb(fs.createReadStream(file)) as unknown as ReadableStream;
}

/** app://spillway/… serves the built renderer and, under /api/asset/, the confined asset files. */
function registerAppProtocol(): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const url = new URL(request.url);
    if (url.host !== APP_HOST) return new Response('not found', { status: 404 });
    const asset = parseAssetPath(url.pathname);
    if (asset) {
      try {
        const a = await service.resolveAsset(asset);
        const mime = /^[a-z]+\/[a-z0-9.+-]+$/i.test(a.mimeType) ? a.mimeType.toLowerCase() : 'application/octet-stream';
        return new Response(fileBody(a.path), {
          status: 200,
          headers: {
            'content-type': mime,
            'content-security-policy': mime === 'application/pdf' ? PDF_CSP : ASSET_CSP,
            'x-content-type-options': 'nosniff',
          },
        });
      } catch (err) {
        return new Response(err instanceof Error ? err.message : 'not found', { status: 404 });
      }
    }
    const file = resolveStaticPath(RENDERER_DIR, url.pathname);
    if (!file || !fs.existsSync(file)) return new Response('not found', { status: 404 });
    return new Response(fileBody(file), {
      status: 200,
      headers: {
        'content-type': STATIC_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        'content-security-policy': DESKTOP_CSP,
        'x-content-type-options': 'nosniff',
      },
    });
  });
}

function hardenSession(): void {
  const ses = session.defaultSession;
  // Camera, notifications, geolocation, clipboard-read…: the inspector needs none of them.
  ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  ses.setPermissionCheckHandler(() => false);
  // Nothing may leave the machine: block every request that is not the app itself (or the dev server).
  ses.webRequest.onBeforeRequest((details, callback) => {
    const ok =
      details.url.startsWith(`${APP_ORIGIN}/`) ||
      details.url.startsWith('devtools://') ||
      details.url.startsWith('blob:') ||
      details.url.startsWith('data:') ||
      (DEV_URL ? isAppUrl(details.url, DEV_URL) || details.url.startsWith(DEV_URL.replace(/^http/, 'ws')) : false);
    callback({ cancel: !ok });
  });
}

function createWindow(): BrowserWindow {
  const saved = readState();
  const workAreas = screen.getAllDisplays().map((d) => d.workArea);
  const bounds = restoreBounds(saved, workAreas);
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

  // No new windows, ever; http(s) links go to the system browser.
  win.webContents.setWindowOpenHandler(({ url }) => {
    if (isExternalHttpUrl(url)) void shell.openExternal(url);
    return { action: 'deny' };
  });
  win.webContents.on('will-navigate', (e, url) => {
    if (!isAppUrl(url, DEV_URL)) e.preventDefault();
  });
  win.webContents.on('will-redirect', (e, url) => {
    if (!isAppUrl(url, DEV_URL)) e.preventDefault();
  });
  win.webContents.on('will-attach-webview', (e) => e.preventDefault());

  let timer: ReturnType<typeof setTimeout> | undefined;
  const save = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (win.isDestroyed()) return;
      writeState({ bounds: win.getNormalBounds(), maximized: win.isMaximized() });
    }, SAVE_STATE_MS);
  };
  win.on('resize', save);
  win.on('move', save);
  win.on('close', () => writeState({ bounds: win.getNormalBounds(), maximized: win.isMaximized() }));

  void win.loadURL(DEV_URL ?? `${APP_ORIGIN}/index.html`);
  return win;
}

function sendMenu(cmd: Record<string, unknown>): void {
  if (mainWindow && !mainWindow.isDestroyed()) mainWindow.webContents.send(HOST_MENU_CHANNEL, cmd);
}

function buildMenu(): void {
  const isMac = process.platform === 'darwin';
  const template: MenuItemConstructorOptions[] = [
    ...(isMac ? [{ role: 'appMenu' as const }] : []),
    {
      label: 'File',
      submenu: [
        {
          label: 'Open Folder…',
          accelerator: 'CmdOrCtrl+O',
          click: async () => {
            if (!mainWindow) return;
            const res = await dialog.showOpenDialog(mainWindow, { properties: ['openDirectory'], title: 'Add a sessions folder' });
            const dir = res.filePaths[0];
            if (res.canceled || !dir) return;
            try {
              await service.invoke('addRoot', { path: dir });
              sendMenu({ command: 'rootsChanged' });
            } catch (err) {
              dialog.showErrorBox('Could not add the folder', err instanceof Error ? err.message : String(err));
            }
          },
        },
        {
          label: 'Open File…',
          accelerator: 'CmdOrCtrl+Shift+O',
          click: async () => {
            if (!mainWindow) return;
            const res = await dialog.showOpenDialog(mainWindow, { properties: ['openFile'], title: 'Analyse a file' });
            const file = res.filePaths[0];
            if (res.canceled || !file) return;
            service.allowDroppedFile(file);
            sendMenu({ command: 'analyzePath', path: file, name: path.basename(file) });
          },
        },
        { type: 'separator' },
        {
          label: 'Reload Index',
          accelerator: 'CmdOrCtrl+Shift+R',
          click: () => {
            sendMenu({ command: 'reindexStarted' });
            void service.invoke('reindex', {}).catch((err: unknown) => dialog.showErrorBox('Reindex failed', String(err)));
          },
        },
        { type: 'separator' },
        isMac ? { role: 'close' } : { role: 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        { label: 'Search Payloads', accelerator: 'CmdOrCtrl+K', click: () => sendMenu({ command: 'search' }) },
        { type: 'separator' },
        { label: 'Payloads', accelerator: 'CmdOrCtrl+1', click: () => sendMenu({ command: 'view', view: 'payloads' }) },
        { label: 'Limit Tuner', accelerator: 'CmdOrCtrl+2', click: () => sendMenu({ command: 'view', view: 'tuner' }) },
        { label: 'Waste Report', accelerator: 'CmdOrCtrl+3', click: () => sendMenu({ command: 'view', view: 'waste' }) },
        { label: 'Analyse', accelerator: 'CmdOrCtrl+4', click: () => sendMenu({ command: 'view', view: 'analyze' }) },
        { type: 'separator' },
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        { type: 'separator' },
        { role: 'togglefullscreen' },
        ...(IS_DEV ? ([{ type: 'separator' }, { role: 'reload' }, { role: 'toggleDevTools' }] as MenuItemConstructorOptions[]) : []),
      ],
    },
    { role: 'windowMenu' },
  ];
  Menu.setApplicationMenu(Menu.buildFromTemplate(template));
}

// One instance: a second launch focuses the first.
if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => {
    if (mainWindow) {
      if (mainWindow.isMinimized()) mainWindow.restore();
      mainWindow.focus();
    }
  });
  app.on('web-contents-created', (_e, wc) => {
    wc.setWindowOpenHandler(() => ({ action: 'deny' }));
    wc.on('will-navigate', (ev, url) => {
      if (!isAppUrl(url, DEV_URL)) ev.preventDefault();
    });
  });
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  void app.whenReady().then(async () => {
    // Roots are remembered by the index itself; folders on the command line (`npm start -- ~/sessions`) are added to them.
    const roots = process.argv.slice(IS_DEV ? 2 : 1).filter((a) => !a.startsWith('-') && fs.existsSync(a)).map((a) => path.resolve(a));
    service = createInspectorService({ transport: 'electron', roots, onWarning: (m) => console.warn(`spillway: ${m}`) });
    hardenSession();
    registerAppProtocol();
    wireIpc();
    buildMenu();
    mainWindow = createWindow();
    mainWindow.on('closed', () => (mainWindow = null));
    app.on('activate', () => {
      if (!mainWindow) {
        mainWindow = createWindow();
        mainWindow.on('closed', () => (mainWindow = null));
      }
    });
  });
  app.on('will-quit', () => {
    void service?.close();
  });
}
