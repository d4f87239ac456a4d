/**
 * The desktop shell without the Electron binary (it cannot be downloaded here): the security
 * policy as pure functions, and the real bundled preload run in a VM against a recording stand-in
 * for the `electron` module (contextBridge / ipcRenderer / webUtils).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import * as esbuild from 'esbuild';
import { describe, expect, it } from 'vitest';
import { channelFor, EVENT_CHANNEL, EVENT_NAMES, HOST_CHANNELS, HOST_DROPPED_FILE_CHANNEL, METHOD_NAMES } from '../../src/service/contract.js';
import {
  isAppUrl,
  isExternalHttpUrl,
  isPlainObject,
  parseAssetPath,
  resolveStaticPath,
  restoreBounds,
  DESKTOP_CSP,
} from '../../src/service/shell/policy.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

describe('security policy', () => {
  it('lets the window show only the app (or the local dev server in dev)', () => {
    expect(isAppUrl('app://spillway/index.html')).toBe(true);
    expect(isAppUrl('app://evil/index.html')).toBe(false);
    expect(isAppUrl('https://example.com/')).toBe(false);
    expect(isAppUrl('file:///etc/passwd')).toBe(false);
    expect(isAppUrl('http://127.0.0.1:5174/x', 'http://127.0.0.1:5174/')).toBe(true);
    expect(isAppUrl('http://127.0.0.1:5175/x', 'http://127.0.0.1:5174/')).toBe(false);
    expect(isAppUrl('not a url')).toBe(false);
  });

  it('opens only plain http(s) links externally', () => {
    expect(isExternalHttpUrl('https://docs.example.com/a')).toBe(true);
    expect(isExternalHttpUrl('http://example.com')).toBe(true);
    for (const bad of ['file:///etc/passwd', 'javascript:alert(1)', 'smb://host/share', 'https://user:pw@example.com', 'app://spillway/x']) {
      expect(isExternalHttpUrl(bad)).toBe(false);
    }
  });

  it('serves only files inside the renderer folder', () => {
    const dir = path.join(os.tmpdir(), 'renderer');
    expect(resolveStaticPath(dir, '/')).toBe(path.join(dir, 'index.html'));
    expect(resolveStaticPath(dir, '/assets/index-abc.js')).toBe(path.join(dir, 'assets', 'index-abc.js'));
    expect(resolveStaticPath(dir, '/some/route')).toBe(path.join(dir, 'index.html'));
    for (const bad of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fx.js', '/a%00.js', '/a\\..\\b.js', '/%E0%A4%A']) {
      const r = resolveStaticPath(dir, bad);
      expect(r === null || r.startsWith(dir + path.sep)).toBe(true);
    }
    expect(resolveStaticPath(dir, '/%2e%2e/secret.txt')).toBe(path.join(dir, 'secret.txt'));
  });

  it('parses asset URLs strictly', () => {
    const sha = 'a'.repeat(64);
    expect(parseAssetPath(`/api/asset/p%2F1/${sha}`)).toEqual({ payloadId: 'p/1', sha256: sha });
    expect(parseAssetPath('/api/asset/p1/not-hex')).toBeNull();
    expect(parseAssetPath(`/api/asset/p1/${sha}/extra`)).toBeNull();
  });

  it('puts a remembered window back only where a screen still is', () => {
    const screen = [{ x: 0, y: 0, width: 1920, height: 1080 }];
    expect(restoreBounds({ bounds: { x: 100, y: 100, width: 1200, height: 800 } }, screen)).toEqual({ x: 100, y: 100, width: 1200, height: 800 });
    expect(restoreBounds({ bounds: { x: 5000, y: 100, width: 1200, height: 800 } }, screen)).toEqual({ width: 1200, height: 800 });
    expect(restoreBounds({ bounds: { x: 0, y: 0, width: 10, height: 10 } }, screen)).toMatchObject({ width: 900, height: 560 });
    expect(restoreBounds(undefined, screen)).toEqual({ width: 1440, height: 900 });
    expect(restoreBounds({ bounds: { x: 'a' } }, screen)).toEqual({ width: 1440, height: 900 });
  });

  it('accepts only plain objects as requests', () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
    for (const bad of [null, [], 'x', 1, new Date(), new (class A {})()]) expect(isPlainObject(bad)).toBe(false);
  });

  it('has a CSP with no remote origin', () => {
    expect(DESKTOP_CSP).toContain("default-src 'self'");
    expect(DESKTOP_CSP).toContain("script-src 'self'");
    expect(DESKTOP_CSP).not.toMatch(/https?:|\*/);
  });
});

describe('preload bridge (bundled, run against a stand-in electron module)', () => {
  async function loadPreload(o: { pathForFile?: () => string; mainAllows?: boolean | 'folder' } = {}) {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-preload-')), 'preload.cjs');
    await esbuild.build({ entryPoints: [path.join(ROOT, 'electron', 'preload.ts')], outfile: out, bundle: true, platform: 'node', format: 'cjs', external: ['electron'], logLevel: 'silent' });
    const exposed: Record<string, Record<string, (...a: unknown[]) => unknown>> = {};
    const invoked: Array<{ channel: string; args: unknown[] }> = [];
    const sentSync: Array<{ channel: string; args: unknown[] }> = [];
    const listeners = new Map<string, Set<(...a: unknown[]) => void>>();
    const electron = {
      contextBridge: { exposeInMainWorld: (name: string, value: Record<string, (...a: unknown[]) => unknown>) => (exposed[name] = value) },
      ipcRenderer: {
        invoke: async (channel: string, ...args: unknown[]) => {
          invoked.push({ channel, args });
          if (channel === channelFor('getPayload')) return { error: { code: 'NOT_FOUND', message: 'no payload x' } };
          return { result: { ok: channel } };
        },
        on: (ch: string, l: (...a: unknown[]) => void) => {
          if (!listeners.has(ch)) listeners.set(ch, new Set());
          listeners.get(ch)!.add(l);
        },
        removeListener: (ch: string, l: (...a: unknown[]) => void) => listeners.get(ch)?.delete(l),
        sendSync: (channel: string, ...args: unknown[]) => {
          sentSync.push({ channel, args });
          return o.mainAllows ?? true;
        },
      },
      webUtils: { getPathForFile: o.pathForFile ?? (() => '/home/me/dropped.json') },
    };
    const requireStub = (id: string) => {
      if (id === 'electron') return electron;
      throw new Error(`the sandboxed preload may not require ${id}`);
    };
    const module = { exports: {} };
    vm.runInNewContext(fs.readFileSync(out, 'utf8'), { require: requireStub, module, exports: module.exports, console });
    const emit = (ch: string, msg: unknown) => listeners.get(ch)?.forEach((l) => l({}, msg));
    return { exposed, invoked, sentSync, emit, listeners };
  }

  it('exposes exactly the contract methods plus on(), on fixed channels', async () => {
    const { exposed, invoked } = await loadPreload();
    expect(Object.keys(exposed.spillway!).sort()).toEqual([...METHOD_NAMES, 'on'].sort());
    for (const m of METHOD_NAMES) await Promise.resolve(exposed.spillway![m]!({})).catch(() => undefined);
    expect(invoked.map((i) => i.channel)).toEqual(METHOD_NAMES.map((m) => channelFor(m)));
  });

  it('touches no IPC channel outside the contract (methods, the event channel, the host channels)', async () => {
    const { exposed, invoked, sentSync, listeners } = await loadPreload();
    expect(Object.keys(exposed).sort()).toEqual(['spillway', 'spillwayHost']);
    exposed.spillwayHost!.pathForFile!({});
    for (const m of METHOD_NAMES) await Promise.resolve(exposed.spillway![m]!({})).catch(() => undefined);
    for (const e of EVENT_NAMES) exposed.spillway!.on!(e, () => undefined);
    exposed.spillwayHost!.onMenu!(() => undefined);
    await exposed.spillwayHost!.openExternal!('https://example.com/');
    const allowed = new Set<string>([...METHOD_NAMES.map((m) => channelFor(m)), EVENT_CHANNEL, ...HOST_CHANNELS]);
    const used = [...invoked.map((i) => i.channel), ...sentSync.map((i) => i.channel), ...listeners.keys()];
    expect(used.length).toBeGreaterThan(METHOD_NAMES.length);
    for (const ch of used) expect(allowed, ch).toContain(ch);
  });

  it('rejects requests that are not plain objects before they reach IPC, and keeps error codes', async () => {
    const { exposed, invoked } = await loadPreload();
    for (const bad of [[1], 'x', new Date(), 5]) {
      await expect(exposed.spillway!.listPayloads!(bad)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    }
    expect(invoked).toHaveLength(0);
    await expect(exposed.spillway!.getPayload!({ id: 'x' })).rejects.toMatchObject({ code: 'NOT_FOUND', message: 'no payload x' });
  });

  it('delivers only the subscribed event, and unsubscribes', async () => {
    const { exposed, emit, listeners } = await loadPreload();
    const got: unknown[] = [];
    expect(() => exposed.spillway!.on!('onSomethingElse', () => {})).toThrow(/unknown event/);
    const off = exposed.spillway!.on!('onDidIndex', (p: unknown) => got.push(p)) as () => void;
    emit(EVENT_CHANNEL, { event: 'onDidSummarize', payload: 1 });
    emit(EVENT_CHANNEL, { event: 'onDidIndex', payload: 2 });
    expect(got).toEqual([2]);
    off();
    expect(listeners.get(EVENT_CHANNEL)!.size).toBe(0);
    expect(exposed.spillwayHost!.pathForFile!({})).toBe('/home/me/dropped.json');
  });

  it('pathForFile tells the main process the real path (synchronously) and returns it only if main accepts', async () => {
    const a = await loadPreload({ pathForFile: () => '/home/me/drop.json', mainAllows: true });
    expect(a.exposed.spillwayHost!.pathForFile!({})).toBe('/home/me/drop.json');
    expect(a.sentSync).toEqual([{ channel: HOST_DROPPED_FILE_CHANNEL, args: ['/home/me/drop.json'] }]);
    const refused = await loadPreload({ pathForFile: () => '/proc/self/environ', mainAllows: false });
    expect(refused.exposed.spillwayHost!.pathForFile!({})).toBeUndefined();
    // Not a real drop (a File the page made up has no path): nothing is sent, nothing allowed.
    const madeUp = await loadPreload({ pathForFile: () => '' });
    expect(madeUp.exposed.spillwayHost!.pathForFile!({})).toBeUndefined();
    expect(madeUp.sentSync).toEqual([]);
  });

  it('folderForFile returns a dropped folder only when the main process accepted it as a folder (then addRoot takes it)', async () => {
    const folder = await loadPreload({ pathForFile: () => '/home/me/sessions', mainAllows: 'folder' });
    expect(folder.exposed.spillwayHost!.folderForFile!({})).toBe('/home/me/sessions');
    expect(folder.exposed.spillwayHost!.pathForFile!({})).toBeUndefined();
    expect(folder.sentSync.map((s) => s.channel)).toEqual([HOST_DROPPED_FILE_CHANNEL, HOST_DROPPED_FILE_CHANNEL]);
    const file = await loadPreload({ pathForFile: () => '/home/me/drop.json', mainAllows: true });
    expect(file.exposed.spillwayHost!.folderForFile!({})).toBeUndefined();
    const refused = await loadPreload({ pathForFile: () => '/proc/self', mainAllows: false });
    expect(refused.exposed.spillwayHost!.folderForFile!({})).toBeUndefined();
  });
});
