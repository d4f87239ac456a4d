/**
 * Issue 14, item 8: the desktop shell's gaps, through the policy functions electron/main.ts wires
 * (src/service/shell) and the app:// protocol handler run against a real service. The Electron
 * binary cannot run here; these are the decisions it delegates.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { createInspectorService, type InspectorService } from '../../src/service/service.js';
import { createAppProtocolHandler } from '../../src/service/shell/app-protocol.js';
import { appMenu, type MenuItemSpec } from '../../src/service/shell/menu.js';
import { checkDroppedPath, devUrlFor, ExternalLinkGate, isAppUrl, isTrustedSender } from '../../src/service/shell/policy.js';
import { readWindowState, saveWindowState } from '../../src/service/shell/window-state.js';
import { mediaAndHtmlResult } from '../helpers/media-result.js';

let tmp: string;
let svc: InspectorService;
let handler: (r: Request) => Promise<Response>;
let payloadId: string;
let assets: Array<{ sha256: string; mimeType: string }>;

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-shell-'));
  const root = path.join(tmp, 'root');
  const big = mediaAndHtmlResult({ type: 'image', mimeType: 'image/png', bytes: PNG }, 20);
  await guardLargeResult(big, { sessionPath: path.join(root, 's1'), toolName: 'shot', limitTokens: 1000 });
  const renderer = path.join(tmp, 'renderer');
  fs.mkdirSync(renderer);
  fs.writeFileSync(path.join(renderer, 'index.html'), '<!doctype html><title>app</title>');
  fs.writeFileSync(path.join(tmp, 'secret.txt'), 'top secret');
  svc = createInspectorService({ env: process.env, appDataDir: path.join(tmp, 'home'), roots: [root], transport: 'electron', scanOnStart: false, watch: false });
  await svc.ready;
  await svc.reindex({});
  const row = (await svc.listPayloads({ tool: 'shot', limit: 1 })).rows[0]!;
  payloadId = row.id;
  assets = (await svc.getPayload({ id: payloadId })).assets;
  handler = createAppProtocolHandler({ service: svc, rendererDir: renderer });
});

afterAll(async () => {
  await svc?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const get = (p: string) => handler(new Request(`app://spillway${p}`));

describe('IPC comes only from the app window main frame', () => {
  const app = (u: string) => isAppUrl(u);
  it('refuses an iframe (a PDF asset frame), another window, and a page that is not the app', () => {
    expect(isTrustedSender({ fromAppWindow: true, fromMainFrame: true, frameUrl: 'app://spillway/index.html' }, app)).toBe(true);
    expect(isTrustedSender({ fromAppWindow: true, fromMainFrame: false, frameUrl: 'app://spillway/api/asset/p/abc' }, app)).toBe(false);
    expect(isTrustedSender({ fromAppWindow: false, fromMainFrame: true, frameUrl: 'app://spillway/index.html' }, app)).toBe(false);
    expect(isTrustedSender({ fromAppWindow: true, fromMainFrame: true, frameUrl: 'https://evil.example/' }, app)).toBe(false);
    expect(isTrustedSender({ fromAppWindow: true, fromMainFrame: true, frameUrl: undefined }, app)).toBe(false);
  });
});

describe('SPILLWAY_DEV_URL', () => {
  it('is ignored in a packaged app, and counts only as a loopback http URL otherwise', () => {
    expect(devUrlFor({ isPackaged: true, requested: 'http://127.0.0.1:5174/' })).toBeUndefined();
    expect(devUrlFor({ isPackaged: false, requested: 'http://127.0.0.1:5174/' })).toBe('http://127.0.0.1:5174/');
    for (const bad of ['https://evil.example/', 'http://192.168.1.2:5174/', 'file:///tmp/x.html', 'not a url']) {
      expect(devUrlFor({ isPackaged: false, requested: bad }), bad).toBeUndefined();
    }
    expect(devUrlFor({ isPackaged: false, requested: undefined })).toBeUndefined();
  });
});

describe('external links', () => {
  it('leave only through one user-confirmed dialog at a time, and only as plain short http(s)', () => {
    const gate = new ExternalLinkGate();
    expect(gate.request('https://docs.example.com/a')).toBe('ask');
    // While the dialog is up, a page asking again (a compromised renderer spamming window.open) is refused.
    expect(gate.request('https://docs.example.com/b')).toBe('refuse');
    gate.done();
    expect(gate.request('https://docs.example.com/b')).toBe('ask');
    gate.done();
    for (const bad of ['file:///etc/passwd', 'javascript:alert(1)', 'https://u:p@example.com/', `https://example.com/?q=${'x'.repeat(3000)}`, 42, undefined]) {
      expect(gate.request(bad), String(bad).slice(0, 40)).toBe('refuse');
    }
  });
});

describe('dropped and opened files', () => {
  it('a path the page names is refused unless the main process saw it dropped; /proc is never a drop', async () => {
    const file = path.join(tmp, 'secret.txt');
    expect(await svc.analyze({ name: 'x', path: file }).then(() => 'read', (e: { code: string }) => e.code)).toBe('FORBIDDEN_PATH');
    expect(checkDroppedPath(file)).toBeNull();
    svc.allowDroppedFile(file);
    expect((await svc.analyze({ name: 'x', path: file })).bytes).toBe(10);
    for (const bad of ['/proc/self/environ', '/proc/1/cmdline', tmp, 'relative.txt', path.join(tmp, 'missing'), `${file}\u202e`, 5]) {
      expect(checkDroppedPath(bad), String(bad)).not.toBeNull();
    }
  });
});

describe('app:// protocol', () => {
  it('serves images inline and everything else as an attachment, with the sandbox CSP and nosniff', async () => {
    const png = assets.find((a) => a.mimeType === 'image/png')!;
    const html = assets.find((a) => a.mimeType === 'text/html')!;
    const img = await get(`/api/asset/${encodeURIComponent(payloadId)}/${png.sha256}`);
    expect(img.status).toBe(200);
    expect(Buffer.from(await img.arrayBuffer()).equals(PNG)).toBe(true);
    expect(img.headers.get('content-disposition')).toMatch(/^inline/);
    const doc = await get(`/api/asset/${encodeURIComponent(payloadId)}/${html.sha256}`);
    expect(doc.status).toBe(200);
    expect(doc.headers.get('content-disposition')).toMatch(/^attachment; filename="[0-9a-f]{32}\.[a-z]+"$/);
    expect(doc.headers.get('content-security-policy')).toContain('sandbox');
    expect(doc.headers.get('x-content-type-options')).toBe('nosniff');
    await doc.arrayBuffer();
  });

  it('refuses a planted asset link without saying where it points', async () => {
    const d = await svc.getPayload({ id: payloadId });
    const png = d.assets.find((a) => a.mimeType === 'image/png')!;
    const secret = path.join(tmp, 'secret.txt');
    fs.rmSync(png.path);
    fs.symlinkSync(secret, png.path);
    try {
      const r = await get(`/api/asset/${encodeURIComponent(payloadId)}/${png.sha256}`);
      const text = await r.text();
      expect(r.status).toBe(404);
      expect(text).not.toContain('top secret');
      expect(text).not.toContain(secret);
    } finally {
      fs.rmSync(png.path);
      fs.writeFileSync(png.path, PNG);
    }
  });

  it('serves the renderer, never a file beside it', async () => {
    expect(await (await get('/')).text()).toContain('<title>app</title>');
    for (const p of ['/../secret.txt', '/%2e%2e/secret.txt', '/..%2f..%2fsecret.txt']) {
      const r = await get(p);
      expect(await r.text(), p).not.toContain('top secret');
    }
    expect((await handler(new Request('app://evil/index.html'))).status).toBe(404);
  });
});

describe('menu and window state', () => {
  it('the menu calls the actions it names', () => {
    const calls: string[] = [];
    const items = appMenu({ isMac: false, isDev: false }, { openFolder: () => calls.push('folder'), openFile: () => calls.push('file'), reindex: () => calls.push('reindex'), send: (c) => calls.push(`send:${c.command}`) });
    const flat = (xs: MenuItemSpec[]): MenuItemSpec[] => xs.flatMap((x) => [x, ...flat(x.submenu ?? [])]);
    for (const label of ['Open Folder…', 'Open File…', 'Reload Index', 'Payloads']) flat(items).find((i) => i.label === label)!.click!();
    expect(calls).toEqual(['folder', 'file', 'reindex', 'send:view']);
    expect(flat(items).some((i) => i.role === 'toggleDevTools')).toBe(false);
  });

  it('window state is written private (0600) and read back', () => {
    const file = path.join(tmp, 'user-data', 'window-state.json');
    saveWindowState(file, { maximized: true });
    saveWindowState(file, { bounds: { x: 1, y: 2, width: 1000, height: 700 } });
    expect(readWindowState(file)).toEqual({ maximized: true, bounds: { x: 1, y: 2, width: 1000, height: 700 } });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });
});
