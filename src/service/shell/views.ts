/**
 * The inspector's views, written once: the app's rail, router, shortcuts, shortcut help and command
 * palette, the desktop menu (menu.ts) and docs/inspector.md (held to it by test/app/views.test.tsx) all
 * read this list. Plain data that imports nothing, so the type-only renderer may take its values
 * (test/architecture.test.ts). The renderer's half (icon, component) is app/views/registry.tsx, keyed
 * by ViewId: a view added here without its icon and component does not compile.
 *
 * | field        | read by                                                                              |
 * | ------------ | ------------------------------------------------------------------------------------ |
 * | id           | the store's `view`, the menu's `{ command: 'view', view }`                           |
 * | key          | Mod+key in the app, CmdOrCtrl+key in the menu, the help and the palette's hint       |
 * | label        | the rail button's name and tooltip, the shortcut help, the docs' shortcut table      |
 * | menu         | the desktop View menu's item (title case, as the menu's other items)                 |
 * | command      | the command palette's entry (type `>`)                                               |
 * | needsSession | the router shows "Pick a session" until one is selected in the sidebar               |
 *
 * The order of the list is the order of the rail, the menu, the palette and the help.
 */
export const VIEWS = [
  { id: 'payloads', key: '1', label: 'Payloads', menu: 'Payloads', command: 'Go to Payloads', needsSession: false },
  { id: 'tuner', key: '2', label: 'Limit tuner', menu: 'Limit Tuner', command: 'Go to Limit tuner', needsSession: false },
  { id: 'waste', key: '3', label: 'Waste report', menu: 'Waste Report', command: 'Go to Waste report', needsSession: true },
  { id: 'analyze', key: '4', label: 'Analyse a file', menu: 'Analyse', command: 'Analyse a file or pasted text', needsSession: false },
  { id: 'timeline', key: '5', label: 'Context timeline', menu: 'Context Timeline', command: 'Go to Context timeline', needsSession: true },
] as const;

export type ViewSpec = (typeof VIEWS)[number];
export type ViewId = ViewSpec['id'];

/** The view whose shortcut is this key (a KeyboardEvent's `key`), if any. */
export function viewForKey(key: string): ViewSpec | undefined {
  return VIEWS.find((v) => v.key === key);
}

/** A view id from outside the renderer (the menu's command over IPC), checked. */
export function isViewId(v: unknown): v is ViewId {
  return VIEWS.some((x) => x.id === v);
}

/** The views' keys as people read them: `1…5` when they run in order, else each one. */
export function viewKeys(): string {
  const keys = VIEWS.map((v) => v.key);
  const consecutive = keys.every((k, i) => i === 0 || k.charCodeAt(0) === keys[i - 1]!.charCodeAt(0) + 1);
  return consecutive && keys.length > 2 ? `${keys[0]}…${keys.at(-1)}` : keys.join(' ');
}
