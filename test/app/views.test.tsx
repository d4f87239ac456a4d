// @vitest-environment jsdom
import './setup.js';
import fs from 'node:fs';
import path from 'node:path';
import { act, fireEvent, render, screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { App } from '../../app/App.js';
import { createAppStore, type AppStore } from '../../app/store/index.js';
import { StoreContext } from '../../app/store/react.js';
import type { MenuCommand, SpillwayHost } from '../../app/transport/pick.js';
import { VIEW_REGISTRY } from '../../app/views/registry.js';
import { appMenu, type MenuItemSpec } from '../../src/service/shell/menu.js';
import { VIEWS, type ViewSpec } from '../../src/service/shell/views.js';
import { createMemoryApi } from './memory-api.js';
import { renderApp } from './render.js';

/**
 * The views are one list (src/service/shell/views.ts, with the renderer's half in app/views/registry.tsx):
 * every view is reachable the same ways (its shortcut, the rail, the palette, the desktop menu), and the
 * lists people read (the shortcut help, docs/inspector.md) say exactly what the list says.
 */
// jsdom draws no canvas: the Timeline's chart is a stand-in (test/e2e/timeline.e2e.test.ts draws the real one).
vi.mock('uplot', () => import('./uplot-stub.js'));

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const inspectorDoc = fs.readFileSync(path.join(ROOT, 'docs', 'inspector.md'), 'utf8');

const main = () => screen.getByRole('main');

/** The whole app with a desktop host whose menu commands the test sends. */
async function renderWithHost(): Promise<{ store: AppStore; send: (cmd: MenuCommand) => void }> {
  let listener: ((cmd: MenuCommand) => void) | undefined;
  const host: SpillwayHost = {
    pathForFile: () => undefined,
    onMenu(l) {
      listener = l;
      return () => (listener = undefined);
    },
    openExternal: async () => undefined,
  };
  const store = createAppStore(createMemoryApi({ payloads: 10, sessions: 1 }), host);
  render(
    <StoreContext.Provider value={store}>
      <App />
    </StoreContext.Provider>,
  );
  await act(() => store.getState().init());
  expect(listener, 'the app listens to the menu').toBeDefined();
  return { store, send: (cmd) => act(() => listener!(cmd)) };
}

describe('the view registry', () => {
  it('has one entry per view, each id, key, label and palette command once, and a rail icon and component for each', () => {
    expect(VIEWS.length).toBeGreaterThanOrEqual(5);
    for (const field of ['id', 'key', 'label', 'menu', 'command'] as const) {
      expect(new Set(VIEWS.map((v) => v[field])).size, `${field} repeats`).toBe(VIEWS.length);
    }
    expect(VIEW_REGISTRY.map((v) => v.id)).toEqual(VIEWS.map((v) => v.id));
    for (const v of VIEW_REGISTRY) {
      expect(v.icon, v.id).toBeTruthy();
      expect(v.Component, v.id).toBeTypeOf('function');
    }
  });

  it('every view is reachable by its shortcut, from any other view', async () => {
    const api = createMemoryApi({ payloads: 20, sessions: 1 });
    const store = await renderApp(api);
    // Backwards through the list, so each shortcut is pressed away from its own view.
    for (const v of [...VIEWS].reverse()) {
      fireEvent.keyDown(window, { key: v.key, ctrlKey: true });
      expect(store.getState().view, `Ctrl+${v.key}`).toBe(v.id);
      expect(main().getAttribute('aria-label')).toBe(v.id);
    }
  });

  it('every view is reachable by the rail, whose button names it and its shortcut', async () => {
    const store = await renderApp(createMemoryApi({ payloads: 20, sessions: 1 }));
    const rail = screen.getByRole('navigation', { name: 'Views' });
    for (const v of [...VIEWS].reverse()) {
      const button = within(rail).getByRole('button', { name: v.label });
      expect(button.getAttribute('title')).toBe(`${v.label} (Ctrl+${v.key})`);
      fireEvent.click(button);
      expect(store.getState().view, v.label).toBe(v.id);
      expect(button.getAttribute('aria-current')).toBe('page');
    }
  });

  it('every view is reachable by the command palette, its hint its shortcut', async () => {
    const store = await renderApp(createMemoryApi({ payloads: 20, sessions: 1 }));
    for (const v of [...VIEWS].reverse()) {
      fireEvent.keyDown(window, { key: 'k', ctrlKey: true });
      const palette = await screen.findByRole('dialog', { name: 'Search payloads' });
      const input = within(palette).getByRole('combobox');
      fireEvent.change(input, { target: { value: `>${v.command}` } });
      const first = within(palette).getAllByRole('option')[0]!;
      expect(first.textContent).toBe(`${v.command}Ctrl ${v.key}`);
      fireEvent.keyDown(input, { key: 'Enter' });
      expect(store.getState().view, v.command).toBe(v.id);
      expect(store.getState().paletteOpen).toBe(false);
    }
  });

  it('the desktop View menu lists every view with its shortcut, in order, and the app goes where it says', async () => {
    const sent: Array<{ command: string; [k: string]: unknown }> = [];
    const menu = appMenu({ isMac: false, isDev: false }, { openFolder() {}, openFile() {}, reindex() {}, send: (c) => sent.push(c) });
    const items = menu.find((m) => m.label === 'View')!.submenu!.filter((i: MenuItemSpec) => i.accelerator && /^CmdOrCtrl\+\d$/.test(i.accelerator));
    expect(items.map((i) => [i.label, i.accelerator])).toEqual(VIEWS.map((v) => [v.menu, `CmdOrCtrl+${v.key}`]));
    for (const i of items) i.click!();
    expect(sent).toEqual(VIEWS.map((v) => ({ command: 'view', view: v.id })));

    const { store, send } = await renderWithHost();
    for (const cmd of [...sent].reverse()) {
      send(cmd as MenuCommand);
      expect(store.getState().view).toBe(cmd.view);
    }
    // A view the app does not have (the menu's command crosses IPC) changes nothing.
    send({ command: 'view', view: 'nonsense' });
    expect(store.getState().view).toBe(VIEWS[0].id);
  });

  it('a per-session view asks for a session until one is picked', async () => {
    const store = await renderApp(createMemoryApi({ payloads: 20, sessions: 2 }));
    act(() => store.getState().selectSession(null));
    for (const v of VIEWS) {
      fireEvent.keyDown(window, { key: v.key, ctrlKey: true });
      const asks = within(main()).queryByText('Pick a session') !== null;
      expect(asks, v.id).toBe(v.needsSession);
    }
  });

  it('the shortcut help names every view and its key', async () => {
    const store = await renderApp(createMemoryApi({ payloads: 5, sessions: 1 }));
    act(() => store.getState().setHelpOpen(true));
    const help = screen.getByRole('dialog', { name: 'Keyboard shortcuts' });
    const row = within(help).getByText(VIEWS.map((v) => v.label).join(' · ')).closest('tr')!;
    expect(row.querySelector('.keys')!.textContent).toBe(`Ctrl${VIEWS[0].key}…${VIEWS.at(-1)!.key}`);
  });

  it("docs/inspector.md's shortcut table lists exactly the views, in order, and its prose names each by its label and key", () => {
    const rows = [...inspectorDoc.matchAll(/^\| <kbd>Ctrl<\/kbd>\+<kbd>\d.*$/gm)].map((m) => m[0]);
    const expected = (v: ViewSpec) => `| <kbd>Ctrl</kbd>+<kbd>${v.key}</kbd> | ${v.label}${v.needsSession ? ' (per session)' : ''} |`;
    expect(rows).toEqual(VIEWS.map(expected));
    const named = [...inspectorDoc.matchAll(/\*\*([^*]+)\*\* \(<kbd>Ctrl<\/kbd>\+<kbd>(\d)<\/kbd>\)/g)].map((m) => [m[1], m[2]]);
    for (const [label, key] of named) expect(VIEWS.some((v) => v.label === label && v.key === key), `**${label}** (Ctrl+${key})`).toBe(true);
    for (const v of VIEWS) expect(named, `the prose never names ${v.label} with its shortcut`).toContainEqual([v.label, v.key]);
  });
});
