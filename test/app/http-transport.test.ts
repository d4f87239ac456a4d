// @vitest-environment jsdom
/**
 * The renderer's HTTP transport against the real service behind the real loopback server
 * (src/server), on a generated sessions root.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import crypto from 'node:crypto';
import { createHttpApi, exchangeLaunchCode, takeLaunchCode } from '../../app/transport/http.js';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { ApiError } from '../../app/transport/errors.js';
import { METHOD_NAMES, type InspectorApi } from '../../src/service/contract.js';
import { createInspectorService, type InspectorService } from '../../src/service/service.js';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { generateSessionsRoot } from '../helpers/gen-sessions.js';

let tmp: string;
let service: InspectorService;
let server: RunningServer;
let api: InspectorApi;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-http-'));
  const root = path.join(tmp, 'sessions');
  await generateSessionsRoot(root, { sessions: 2, payloads: 12, seed: 3 });
  service = createInspectorService({ env: process.env, transport: 'http', roots: [root], appDataDir: path.join(tmp, 'home'), dbPath: path.join(tmp, 'home', 'index.sqlite'), watch: false });
  await service.ready;
  await service.reindex({});
  server = await startServer({ service, port: 0, staticDir: null });
  api = createHttpApi({ baseUrl: `${server.origin}/api`, token: server.token, fetch: globalThis.fetch });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await service?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('HTTP transport', () => {
  it('exposes exactly the contract methods plus on()', () => {
    expect(Object.keys(api).sort()).toEqual([...METHOD_NAMES, 'on'].sort());
  });

  it('calls methods over POST /api/<method> and unwraps results', async () => {
    const info = await api.getInfo({});
    expect(info.transport).toBe('http');
    const sessions = await api.listSessions({});
    expect(sessions).toHaveLength(2);
    const page = await api.listPayloads({ sessionId: sessions[0]!.id, limit: 3, sort: { field: 'bytes', dir: 'desc' } });
    expect(page.rows).toHaveLength(3);
    expect(page.total).toBe(6);
    expect(page.rows[0]!.bytes).toBeGreaterThanOrEqual(page.rows[1]!.bytes);
    const win = await api.readPayload({ id: page.rows[0]!.id, start: 0, end: 100 });
    expect(win.start).toBe(0);
    expect(win.end).toBeLessThanOrEqual(100);
    expect(win.totalBytes).toBeGreaterThan(100);
  });

  it('keeps the service error code', async () => {
    const err = await api.getPayload({ id: 'no-such-payload' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('NOT_FOUND');
  });

  it('reports a wrong token as a clear error', async () => {
    const bad = createHttpApi({ baseUrl: `${server.origin}/api`, token: 'x'.repeat(32), fetch: globalThis.fetch });
    const err = await bad.getInfo({}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toMatch(/token/);
  });

  it('reports an unreachable server as UNAVAILABLE', async () => {
    const gone = createHttpApi({ baseUrl: 'http://127.0.0.1:9/api', fetch: globalThis.fetch });
    const err = await gone.getInfo({}).catch((e: unknown) => e);
    expect((err as ApiError).code).toBe('UNAVAILABLE');
  });

  it('takes the launch code out of the address bar once, and trades it for the token only once', async () => {
    window.history.replaceState(null, '', '/x?y=1#launch=abc123abc123&h=2');
    expect(takeLaunchCode()).toBe('abc123abc123');
    expect(window.location.search).toBe('?y=1');
    expect(window.location.hash).toBe('#h=2');
    expect(takeLaunchCode()).toBeUndefined();
    // Nothing is kept anywhere the browser persists.
    expect(JSON.stringify({ ...sessionStorage })).not.toContain('abc123');
    const code = new URL(server.launchUrl()).hash.slice('#launch='.length);
    expect(await exchangeLaunchCode(code, { baseUrl: `${server.origin}/api`, fetch: globalThis.fetch })).toBe(server.token);
    expect(await exchangeLaunchCode(code, { baseUrl: `${server.origin}/api`, fetch: globalThis.fetch })).toBeUndefined();
    // The token may still be on its way: calls wait for it.
    const later = createHttpApi({ baseUrl: `${server.origin}/api`, token: new Promise((r) => setTimeout(() => r(server.token), 50)), fetch: globalThis.fetch });
    expect((await later.getInfo({})).transport).toBe('http');
  });

  it('reads events from the stream with the token in a header', async () => {
    const got: unknown[] = [];
    const off = api.on('onDidIndex', (p) => got.push(p));
    try {
      await new Promise((r) => setTimeout(r, 300));
      const sessions = await api.listSessions({});
      await guardLargeResult(crypto.randomBytes(40_000).toString('hex'), { sessionPath: sessions[0]!.path, toolName: 'sse_http', limitTokens: 1000 });
      await api.reindex({});
      const t0 = Date.now();
      while (got.length === 0 && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 50));
      expect(got.length).toBeGreaterThan(0);
    } finally {
      off();
    }
  });
});
