/**
 * The desktop app's menu as data (Electron's MenuItemConstructorOptions shape, without importing
 * electron): File (Open Folder, Open File, Reload Index), Edit, View (every view of views.ts, zoom), Window.
 */
import { VIEWS } from './views.js';

export interface MenuItemSpec {
  label?: string;
  accelerator?: string;
  /** One of Electron's menu roles (`quit`, `editMenu`, `zoomIn`…). */
  role?: string;
  type?: 'separator';
  click?: () => void;
  submenu?: MenuItemSpec[];
}

export interface MenuActions {
  /** The Open Folder dialog; the folder becomes a root. */
  openFolder(): void;
  /** The Open File dialog; the file is analysed. */
  openFile(): void;
  reindex(): void;
  /** A command for the renderer (HOST_MENU_CHANNEL). */
  send(cmd: { command: string; [k: string]: unknown }): void;
}

const SEP: MenuItemSpec = { type: 'separator' };

export function appMenu(o: { isMac: boolean; isDev: boolean }, a: MenuActions): MenuItemSpec[] {
  return [
    ...(o.isMac ? [{ role: 'appMenu' }] : []),
    {
      label: 'File',
      submenu: [
        { label: 'Open Folder…', accelerator: 'CmdOrCtrl+O', click: a.openFolder },
        { label: 'Open File…', accelerator: 'CmdOrCtrl+Shift+O', click: a.openFile },
        SEP,
        { label: 'Reload Index', accelerator: 'CmdOrCtrl+Shift+R', click: a.reindex },
        SEP,
        { role: o.isMac ? 'close' : 'quit' },
      ],
    },
    { role: 'editMenu' },
    {
      label: 'View',
      submenu: [
        { label: 'Search Payloads', accelerator: 'CmdOrCtrl+K', click: () => a.send({ command: 'search' }) },
        SEP,
        ...VIEWS.map((v): MenuItemSpec => ({ label: v.menu, accelerator: `CmdOrCtrl+${v.key}`, click: () => a.send({ command: 'view', view: v.id }) })),
        SEP,
        { role: 'resetZoom' },
        { role: 'zoomIn' },
        { role: 'zoomOut' },
        SEP,
        { role: 'togglefullscreen' },
        ...(o.isDev ? [SEP, { role: 'reload' }, { role: 'toggleDevTools' }] : []),
      ],
    },
    { role: 'windowMenu' },
  ];
}
