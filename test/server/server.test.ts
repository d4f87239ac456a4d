import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { METHOD_NAMES } from '../../src/service/contract.js';
import { createInspectorService, type InspectorService } from '../../src/service/service.js';
import { ASSET_CSP, UI_CSP, startServer, type RunningServer } from '../../src/server/server.js';
import { RENEWAL_TTL_MS, ServeAuth } from '../../src/server/auth.js';
import { generateSessionsRoot, type GeneratedRoot } from '../helpers/gen-sessions.js';
import { mediaAndHtmlResult } from '../helpers/media-result.js';

/**
 * `spillway serve` over real loopback HTTP: real service, real SQLite, real files.
 * Raw `http.request` is used where a test must forge headers (Host, Origin) that fetch refuses.
 */

let tmp: string;
let gen: GeneratedRoot;
let svc: InspectorService;
let srv: RunningServer;
let staticDir: string;

interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  json: () => any;
}

function request(
  p: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer; port?: number; auth?: boolean; noEnd?: boolean } = {},
): Promise<Res> {
  const headers: Record<string, string> = { host: `127.0.0.1:${srv.port}`, ...(opts.headers ?? {}) };
  // An empty Host means "send none" (Node would otherwise fill in its own).
  const setHost = headers.host !== '';
  if (!setHost) delete headers.host;
  if (opts.auth !== false && !('authorization' in headers) && !('cookie' in headers)) headers.authorization = `Bearer ${srv.token}`;
  if (opts.body !== undefined && !('content-type' in headers)) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: opts.port ?? srv.port, path: p, method: opts.method ?? 'GET', headers, setHost }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({ status: res.statusCode!, headers: res.headers, body, json: () => JSON.parse(body.toString('utf8')) });
      });
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    // A body shorter than its declared length must not be ended (the client would abort).
    if (!opts.noEnd) req.end();
  });
}

const call = (method: string, body: unknown, headers: Record<string, string> = {}) =>
  request(`/api/${method}`, { method: 'POST', body: JSON.stringify(body), headers });

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-srv-'));
  gen = await generateSessionsRoot(path.join(tmp, 'root'), { sessions: 2, payloads: 10, seed: 3, imageShare: 0.3 });
  staticDir = path.join(tmp, 'ui');
  fs.mkdirSync(path.join(staticDir, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>Spillway</title><script type="module" src="/assets/app.js"></script>');
  fs.writeFileSync(path.join(staticDir, 'assets', 'app.js'), 'console.log("app")');
  fs.writeFileSync(path.join(tmp, 'secret.txt'), 'top secret');
  svc = createInspectorService({ env: process.env, appDataDir: path.join(tmp, 'home'), roots: [gen.root], transport: 'http', scanOnStart: false });
  await svc.ready;
  await svc.reindex({});
  srv = await startServer({ service: svc, port: 0, staticDir });
});

afterAll(async () => {
  await srv?.close();
  await svc?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('binding and the URL', () => {
  it('prints a loopback URL with a one-time launch code (not the token) in its fragment', () => {
    expect(srv.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${srv.port}/#launch=[A-Za-z0-9_-]{43}$`));
    expect(srv.url).not.toContain(srv.token);
    expect(srv.token).toHaveLength(43);
    expect(srv.launchUrl()).not.toBe(srv.url);
  });

  it('refuses to bind anywhere but loopback', async () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'example.com', '']) {
      await expect(startServer({ service: svc, host, port: 0, staticDir: null })).rejects.toThrow(/loopback/);
    }
  });

  it('two servers get different tokens; a weak given token is refused', async () => {
    const other = await startServer({ service: svc, port: 0, staticDir: null });
    try {
      expect(other.token).not.toBe(srv.token);
      expect(other.port).not.toBe(srv.port);
    } finally {
      await other.close();
    }
    await expect(startServer({ service: svc, port: 0, token: 'short' })).rejects.toThrow(/token/);
  });
});

describe('token auth', () => {
  it('every API route answers 401 without the token; the UI files are public and hold no data', async () => {
    for (const p of ['/api/events', '/api/asset/x/' + 'a'.repeat(64), '/api', '/api/nope']) {
      const r = await request(p, { auth: false });
      expect(r.status, p).toBe(401);
    }
    for (const p of ['/', '/index.html', '/assets/app.js']) expect((await request(p, { auth: false })).status, p).toBe(200);
    for (const m of METHOD_NAMES) {
      const r = await request(`/api/${m}`, { method: 'POST', body: '{}', auth: false });
      expect(r.status, m).toBe(401);
      expect(r.json().error.code).toBe('UNAUTHORIZED');
    }
  });

  it('a wrong token, of any length, is 401; the right token only counts in the Authorization header', async () => {
    for (const t of ['x', srv.token.slice(0, -1) + (srv.token.endsWith('A') ? 'B' : 'A'), srv.token + 'x', '']) {
      expect((await request('/api/getInfo', { method: 'POST', body: '{}', headers: { authorization: `Bearer ${t}` } })).status).toBe(401);
    }
    // Neither a query parameter (it would sit in history and logs) nor a cookie (every port of the host receives it).
    expect((await request(`/api/getInfo?token=${srv.token}`, { method: 'POST', body: '{}', auth: false })).status).toBe(401);
    expect((await request('/api/getInfo', { method: 'POST', body: '{}', headers: { cookie: `spillway_token_${srv.port}=${srv.token}` } })).status).toBe(401);
  });

  it('sets no cookie, ever; a launch code buys the token once', async () => {
    for (const p of ['/', `/?token=${srv.token}`, '/assets/app.js']) expect((await request(p, { auth: false })).headers['set-cookie'], p).toBeUndefined();
    const code = new URL(srv.launchUrl()).hash.slice('#launch='.length);
    const trade = (c: unknown) => request('/api/auth/launch', { method: 'POST', body: JSON.stringify({ code: c }), auth: false });
    const first = await trade(code);
    expect(first.status).toBe(200);
    expect(first.json().result.token).toBe(srv.token);
    expect(first.headers['set-cookie']).toBeUndefined();
    expect((await trade(code)).status).toBe(401);
    for (const bad of ['', 'x'.repeat(43), 42, null]) expect((await trade(bad)).status).toBe(401);
    // With the token, a script can mint a link for a browser.
    const minted = await request('/api/auth/launch-url', { method: 'POST', body: '{}' });
    expect(minted.json().result.url).toMatch(/#launch=[A-Za-z0-9_-]{43}$/);
    expect((await request('/api/auth/launch-url', { method: 'POST', body: '{}', auth: false })).status).toBe(401);
  });

  it('issue 29: a launch also buys a renewal secret that outlives a reload, works once, and a replayed one revokes its line', async () => {
    const code = new URL(srv.launchUrl()).hash.slice('#launch='.length);
    const launched = await request('/api/auth/launch', { method: 'POST', body: JSON.stringify({ code }), auth: false });
    const first: string = launched.json().result.renew;
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first).not.toContain(srv.token);
    const renew = (r: unknown, headers?: Record<string, string>) =>
      request('/api/auth/renew', { method: 'POST', body: JSON.stringify({ renew: r }), auth: false, headers });
    // The page after a reload: the secret buys the token and the next secret, and sets no cookie.
    const a = await renew(first);
    expect(a.status).toBe(200);
    expect(a.json().result.token).toBe(srv.token);
    expect(a.headers['set-cookie']).toBeUndefined();
    const second: string = a.json().result.renew;
    expect(second).not.toBe(first);
    // The next reload uses the next one.
    const b = await renew(second);
    expect(b.status).toBe(200);
    const third: string = b.json().result.renew;
    // A copy of a spent secret (someone else read it) is refused, and the tab's live one dies with it.
    expect((await renew(first)).status).toBe(401);
    expect((await renew(third)).status).toBe(401);
    for (const bad of ['', 'x'.repeat(43), 42, null, srv.token]) expect((await renew(bad)).status).toBe(401);
    // A renewal is no way around the Origin check, and it takes JSON only (no HTML form).
    const other = await request('/api/auth/launch', { method: 'POST', body: JSON.stringify({ code: new URL(srv.launchUrl()).hash.slice(8) }), auth: false });
    expect((await renew(other.json().result.renew, { origin: 'http://127.0.0.1:1' })).status).toBe(403);
    expect((await request('/api/auth/renew', { method: 'POST', body: `renew=${other.json().result.renew}`, auth: false, headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(415);
    expect((await renew(other.json().result.renew)).status).toBe(200);
  });

  it('a renewal secret expires an hour after it was issued', () => {
    const auth = new ServeAuth('t'.repeat(43));
    const s = auth.mintRenewal(undefined, 1_000);
    expect(auth.renew(s, 1_000 + RENEWAL_TTL_MS + 1)).toBeUndefined();
    const t = auth.mintRenewal(undefined, 1_000);
    expect(auth.renew(t, 1_000 + RENEWAL_TTL_MS - 1)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('Authorization: Bearer authenticates', async () => {
    expect((await call('listRoots', {})).status).toBe(200);
  });
});

describe('Host and Origin (DNS rebinding, cross-site)', () => {
  it('refuses a Host that is not this loopback server, even with the token', async () => {
    for (const host of ['evil.example', `evil.example:${srv.port}`, `127.0.0.1:${srv.port + 1}`, `127.0.0.2:${srv.port}`, '127.0.0.1', `[::1]:${srv.port}`]) {
      const r = await request('/api/getInfo', { method: 'POST', body: '{}', headers: { host } });
      expect(r.status, host).toBe(403);
      expect(r.json().error.code).toBe('FORBIDDEN');
    }
    // No Host at all: Node's parser already answers 400 (HTTP/1.1 requires one).
    expect((await request('/api/getInfo', { method: 'POST', body: '{}', headers: { host: '' } })).status).toBe(400);
    for (const host of [`127.0.0.1:${srv.port}`, `localhost:${srv.port}`, `LOCALHOST:${srv.port}`]) {
      expect((await request('/api/getInfo', { method: 'POST', body: '{}', headers: { host } })).status, host).toBe(200);
    }
  });

  it('refuses a foreign Origin and cross-site fetches; accepts its own', async () => {
    for (const origin of ['http://evil.example', `http://evil.example:${srv.port}`, 'null', `https://127.0.0.1:${srv.port}`, `http://127.0.0.1:${srv.port + 1}`]) {
      expect((await call('getInfo', {}, { origin })).status, origin).toBe(403);
    }
    expect((await call('getInfo', {}, { origin: `http://127.0.0.1:${srv.port}` })).status).toBe(200);
    expect((await call('getInfo', {}, { origin: `http://localhost:${srv.port}` })).status).toBe(200);
    expect((await call('getInfo', {}, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
  });
});

describe('the API', () => {
  it('exposes exactly the contract methods, each as POST /api/<method>', async () => {
    for (const m of METHOD_NAMES) {
      const r = await call(m, {});
      // Validation may refuse `{}`; what matters is the method exists (not a 404 "no such method").
      expect(r.status === 404 && /no such method/.test(r.json().error.message), m).toBe(false);
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    }
    for (const name of ['invoke', 'close', 'resolveAsset', 'allowDroppedFile', 'on', 'constructor', '__proto__', 'toString', 'hasOwnProperty', 'GETINFO', 'getInfo/x']) {
      const r = await call(name, {});
      expect(r.status, name).toBe(404);
      expect(r.json().error.code).toBe('NOT_FOUND');
    }
  });

  it('answers { result } and { error: { code, message } } with the right status', async () => {
    const ok = await call('listPayloads', { limit: 3, sort: { field: 'bytes', dir: 'desc' } });
    expect(ok.status).toBe(200);
    expect(ok.json().result.rows).toHaveLength(3);
    expect(ok.json().result.total).toBe(10);
    expect(ok.headers['cache-control']).toBe('no-store');
    expect(ok.headers['x-content-type-options']).toBe('nosniff');
    const nf = await call('getPayload', { id: 'no-such-payload' });
    expect(nf.status).toBe(404);
    expect(nf.json().error.code).toBe('NOT_FOUND');
    const bad = await call('listPayloads', { limit: 5000 });
    expect(bad.status).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'BAD_REQUEST' });
    expect(bad.json().error.message).toMatch(/limit/);
    const forbidden = await call('estimate', { path: path.join(tmp, 'secret.txt') });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json().error.code).toBe('FORBIDDEN_PATH');
    expect(forbidden.body.toString()).not.toContain('top secret');
    const unavailable = await call('summarize', { payloadId: ok.json().result.rows[0].id, provider: 'anthropic' });
    expect(unavailable.status).toBe(503);
  });

  it('refuses non-JSON bodies, wrong verbs and oversized bodies', async () => {
    expect((await request('/api/getInfo', { method: 'POST', body: '{}', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    expect((await request('/api/getInfo', { method: 'POST', body: '{not json' })).status).toBe(400);
    expect((await request('/api/getInfo', { method: 'POST', body: '[]' })).status).toBe(400);
    expect((await request('/api/getInfo', { method: 'POST', body: 'null' })).status).toBe(400);
    const get = await request('/api/getInfo');
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect((await request('/api/getInfo', { method: 'PUT', body: '{}' })).status).toBe(405);
    expect((await request('/', { method: 'DELETE' })).status).toBe(405);
    const huge = await request('/api/analyze', { method: 'POST', body: '{}', noEnd: true, headers: { 'content-length': String(1024 * 1024 * 1024) } });
    expect(huge.status).toBe(413);
    expect(huge.json().error.code).toBe('PAYLOAD_TOO_LARGE');
    // An empty body is {}.
    expect((await request('/api/getInfo', { method: 'POST', body: '' })).status).toBe(200);
  });

  it('reads a payload window through HTTP', async () => {
    const { rows } = (await call('listPayloads', { kind: 'json', limit: 1 })).json().result;
    const d = (await call('getPayload', { id: rows[0].id })).json().result;
    const w = (await call('readPayload', { id: rows[0].id, start: 0, end: 100 })).json().result;
    expect(w.text).toBe(fs.readFileSync(d.path).subarray(0, w.end).toString('utf8'));
  });
});

describe('assets over GET /api/asset/<payloadId>/<sha256>', () => {
  it('serves an image inline with its type, nosniff and a sandbox CSP; supports ranges', async () => {
    const { rows } = (await call('listPayloads', { sort: { field: 'assetCount', dir: 'desc' }, limit: 1 })).json().result;
    const d = (await call('getPayload', { id: rows[0].id })).json().result;
    const a = d.assets.find((x: { mimeType: string }) => x.mimeType === 'image/png');
    expect(a).toBeDefined();
    const r = await request(`/api/asset/${encodeURIComponent(d.row.id)}/${a.sha256}`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('image/png');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['content-security-policy']).toBe(ASSET_CSP);
    expect(r.headers['content-disposition']).toMatch(/^inline/);
    expect(crypto.createHash('sha256').update(r.body).digest('hex')).toBe(a.sha256);
    const part = await request(`/api/asset/${encodeURIComponent(d.row.id)}/${a.sha256}`, { headers: { range: 'bytes=0-9' } });
    expect(part.status).toBe(206);
    expect(part.body).toHaveLength(10);
    expect(part.headers['content-range']).toBe(`bytes 0-9/${r.body.length}`);
    expect((await request(`/api/asset/${encodeURIComponent(d.row.id)}/${a.sha256}`, { headers: { range: 'bytes=999999999-' } })).status).toBe(416);
  });

  it('serves anything that is not an image or PDF as an attachment, never inline', async () => {
    const s = path.join(gen.root, 'audio-session');
    const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt '), crypto.randomBytes(4000)]);
    const big = mediaAndHtmlResult({ type: 'audio', mimeType: 'audio/wav', bytes: wav }, 10);
    const res = await guardLargeResult(big, { sessionPath: s, toolName: 'record', limitTokens: 1000 });
    expect(res?.assets.length).toBeGreaterThanOrEqual(1);
    await svc.reindex({});
    const { rows } = (await call('listPayloads', { tool: 'record', limit: 1 })).json().result;
    const d = (await call('getPayload', { id: rows[0].id })).json().result;
    for (const a of d.assets as Array<{ sha256: string; mimeType: string }>) {
      const r = await request(`/api/asset/${encodeURIComponent(d.row.id)}/${a.sha256}`);
      expect(r.status).toBe(200);
      expect(r.headers['content-disposition']).toMatch(/^attachment; filename="[0-9a-f]{32}\.[a-z0-9]+"$/);
      expect(r.headers['content-security-policy']).toBe(ASSET_CSP);
      expect(r.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('refuses traversal and unknown assets', async () => {
    const { rows } = (await call('listPayloads', { limit: 1 })).json().result;
    const id = encodeURIComponent(rows[0].id);
    expect((await request(`/api/asset/${id}/${'0'.repeat(64)}`)).status).toBe(404);
    expect((await request(`/api/asset/${id}/..%2F..%2Fsecret.txt`)).status).toBe(400);
    expect((await request(`/api/asset/..%2F..%2F/${'0'.repeat(64)}`)).status).toBe(404);
    expect((await request(`/api/asset/${id}`)).status).toBe(404);
  });
});

describe('the UI', () => {
  it('serves the built UI with a strict CSP, nosniff and no framing; SPA routes get index.html', async () => {
    const r = await request('/');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['content-security-policy']).toBe(UI_CSP);
    expect(UI_CSP).not.toMatch(/https?:|\*/);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['x-frame-options']).toBe('DENY');
    const js = await request('/assets/app.js');
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.body.toString()).toBe('console.log("app")');
    expect((await request('/sessions/abc')).body.toString()).toContain('<title>Spillway</title>');
    expect((await request('/assets/missing.js')).status).toBe(404);
  });

  it('never serves a file outside the UI folder', async () => {
    for (const p of ['/../secret.txt', '/%2e%2e/secret.txt', '/%2e%2e%2fsecret.txt', '/assets/..%2f..%2fsecret.txt', '/..%5csecret.txt', '/%00index.html']) {
      const r = await request(p);
      expect(r.body.toString(), p).not.toContain('top secret');
      expect([200, 400, 404], p).toContain(r.status);
    }
    fs.symlinkSync(path.join(tmp, 'secret.txt'), path.join(staticDir, 'assets', 'link.txt'));
    const viaLink = await request('/assets/link.txt');
    expect(viaLink.status).toBe(404);
    expect(viaLink.body.toString()).not.toContain('top secret');
  });

  it('without a built UI, a plain page says how to build it', async () => {
    const bare = await startServer({ service: svc, port: 0, staticDir: path.join(tmp, 'no-ui') });
    try {
      const r = await request('/', { port: bare.port, headers: { host: `127.0.0.1:${bare.port}`, authorization: `Bearer ${bare.token}` } });
      expect(r.status).toBe(200);
      expect(r.body.toString()).toContain('npm run build');
    } finally {
      await bare.close();
    }
  });
});

describe('events over SSE', () => {
  function openEvents(): Promise<{ events: Array<{ event: string; data: unknown }>; close: () => void; ready: Promise<void> }> {
    return new Promise((resolve, reject) => {
      const events: Array<{ event: string; data: unknown }> = [];
      let buf = '';
      let onReady: () => void;
      const ready = new Promise<void>((r) => (onReady = r));
      const req = http.get(
        { host: '127.0.0.1', port: srv.port, path: '/api/events', headers: { host: `127.0.0.1:${srv.port}`, accept: 'text/event-stream', authorization: `Bearer ${srv.token}` } },
        (res) => {
          expect(res.statusCode).toBe(200);
          expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buf += chunk;
            if (buf.includes(': connected')) onReady();
            let i: number;
            while ((i = buf.indexOf('\n\n')) !== -1) {
              const block = buf.slice(0, i);
              buf = buf.slice(i + 2);
              const ev = /^event: (.+)$/m.exec(block)?.[1];
              const data = /^data: (.+)$/m.exec(block)?.[1];
              if (ev && data) events.push({ event: ev, data: JSON.parse(data) });
            }
          });
          resolve({ events, close: () => req.destroy(), ready });
        },
      );
      req.on('error', reject);
    });
  }

  it('sends onDidIndex when the guard writes a payload into a root, and onDidSummarize after a run', async () => {
    const es = await openEvents();
    await es.ready;
    try {
      const s = gen.sessions[1]!;
      const spilled = await guardLargeResult(crypto.randomBytes(40_000).toString('hex'), { sessionPath: s, toolName: 'sse_tool', limitTokens: 1000 });
      expect(spilled?.payloadPath).toBeDefined();
      const t0 = Date.now();
      while (!es.events.some((e) => e.event === 'onDidIndex') && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 25));
      const idx = es.events.find((e) => e.event === 'onDidIndex');
      expect(idx).toBeDefined();
      expect((idx!.data as { added: number }).added).toBeGreaterThanOrEqual(1);
      const { rows } = (await call('listPayloads', { tool: 'sse_tool', limit: 1 })).json().result;
      const run = (await call('summarize', { payloadId: rows[0].id, focus: 'errors' })).json().result;
      const t1 = Date.now();
      while (!es.events.some((e) => e.event === 'onDidSummarize') && Date.now() - t1 < 10_000) await new Promise((r) => setTimeout(r, 25));
      expect(es.events.find((e) => e.event === 'onDidSummarize')?.data).toEqual({ payloadId: rows[0].id, run });
    } finally {
      es.close();
    }
  });

  it('the event stream needs the token and GET', async () => {
    expect((await request('/api/events', { auth: false })).status).toBe(401);
    expect((await request('/api/events', { method: 'POST', body: '{}' })).status).toBe(405);
  });
});
