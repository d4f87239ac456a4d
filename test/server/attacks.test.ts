/**
 * Issue 14, items 2–5: the attacks a probe of `spillway serve` found, replayed over real loopback
 * HTTP against the real service (real SQLite, real files). Each one succeeded on 3a18a0f.
 * Only public surfaces are used (HTTP, Bearer auth, service methods) so the file runs against
 * that commit unchanged.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { httpService } from './helpers.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

const s = httpService('spillway-attacks-', async (root) => {
  const big = JSON.stringify({ content: [{ type: 'image', mimeType: 'image/png', data: PNG.toString('base64') }], pad: crypto.randomBytes(30_000).toString('hex') });
  await guardLargeResult(big, { sessionPath: path.join(root, 'victim'), toolName: 'shot', limitTokens: 1000 });
});

interface Res {
  status: number;
  body: string;
  ms: number;
}

function call(method: string, body: unknown, opts: { auth?: boolean } = {}): Promise<Res> {
  const data = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: s.srv.port,
        path: `/api/${method}`,
        method: 'POST',
        agent: false,
        headers: {
          host: `127.0.0.1:${s.srv.port}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(data),
          ...(opts.auth === false ? {} : { authorization: `Bearer ${s.srv.token}` }),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: text, ms: performance.now() - t0 }));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

function get(p: string): Promise<Res> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: s.srv.port, path: p, agent: false, headers: { host: `127.0.0.1:${s.srv.port}`, authorization: `Bearer ${s.srv.token}` } }, (res) => {
        let text = '';
        res.setEncoding('latin1');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: text, ms: performance.now() - t0 }));
      })
      .on('error', reject);
  });
}

/** A raw connection that sends `head` and then trickles one body byte every `everyMs`; resolves when the server closes it. */
function trickle(head: string, everyMs: number): { closed: Promise<number>; stop: () => void } {
  const t0 = performance.now();
  const sock = net.connect(s.srv.port, '127.0.0.1');
  let timer: NodeJS.Timeout | undefined;
  const closed = new Promise<number>((resolve) => {
    sock.on('connect', () => {
      sock.write(head);
      timer = setInterval(() => sock.writable && sock.write('x'), everyMs);
    });
    sock.on('data', () => undefined);
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearInterval(timer);
      resolve(performance.now() - t0);
    });
  });
  return { closed, stop: () => sock.destroy() };
}

const within = <T,>(p: Promise<T>, ms: number): Promise<T | 'timeout'> => Promise.race([p, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms))]);

describe('2. the token alone cannot widen what is readable', () => {
  it('addRoot /etc, /proc and the home folder over HTTP are refused, and nothing there becomes readable', async () => {
    for (const p of ['/etc', '/proc', os.homedir()]) {
      const r = await call('addRoot', { path: p });
      expect(r.status, `${p}: ${r.body}`).toBeGreaterThanOrEqual(400);
    }
    const roots = JSON.parse((await call('listRoots', {})).body).result as Array<{ path: string }>;
    expect(roots.map((r) => r.path)).not.toContain('/etc');
    for (const p of ['/etc/passwd', `/proc/${process.pid}/environ`, '/proc/self/environ']) {
      const a = await call('analyze', { name: 'x', path: p });
      expect(a.status, p).toBe(403);
      expect(a.body).not.toMatch(/root:x:0:0|PATH=/);
      const e = await call('estimate', { path: p });
      expect(e.status, p).toBe(403);
    }
  });

  it("the app data (the index database, config) is not readable by path", async () => {
    fs.writeFileSync(path.join(s.home, 'config.json'), '{"apiKey":"sk-secret-1234"}');
    for (const p of [path.join(s.home, 'index.sqlite'), path.join(s.home, 'config.json')]) {
      const a = await call('analyze', { name: 'x', path: p });
      expect(a.status, p).toBe(403);
      expect((await call('estimate', { path: p })).status, p).toBe(403);
    }
  });
});

describe('3. unauthenticated slow requests cannot hold connections', () => {
  it('a trickled unauthenticated body is cut at once, many at a time, while normal requests keep working', async () => {
    const head = `POST /api/analyze HTTP/1.1\r\nHost: 127.0.0.1:${s.srv.port}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n{`;
    const conns = Array.from({ length: 40 }, () => trickle(head, 200));
    try {
      const t0 = performance.now();
      const ok = await call('getInfo', {});
      expect(ok.status).toBe(200);
      expect(performance.now() - t0).toBeLessThan(2_000);
      const all = await within(Promise.all(conns.map((c) => c.closed)), 3_000);
      expect(all, 'the server kept reading unauthenticated bodies').not.toBe('timeout');
      expect(Math.max(...(all as number[]))).toBeLessThan(3_000);
    } finally {
      for (const c of conns) c.stop();
    }
  });

  it('the one unauthenticated body (trading a launch code) is cut within seconds', async () => {
    const conn = trickle(`POST /api/auth/launch HTTP/1.1\r\nHost: 127.0.0.1:${s.srv.port}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"code":"`, 200);
    try {
      const ms = await within(conn.closed, 8_000);
      expect(ms, 'a trickled launch request was read for 8 s').not.toBe('timeout');
    } finally {
      conn.stop();
    }
  });

  it('a client that trickles its headers, or opens a connection and says nothing, is cut once the headers deadline passes', async () => {
    const slow = trickle(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${s.srv.port}\r\nX-Slow: `, 500);
    const mute = net.connect(s.srv.port, '127.0.0.1');
    mute.on('error', () => undefined);
    const muteClosed = new Promise<void>((r) => mute.on('close', () => r()));
    try {
      const ms = await within(slow.closed, 14_000);
      expect(ms, 'headers trickled for 14 s were still being read').not.toBe('timeout');
      expect(await within(muteClosed, 2_000), 'a silent connection was still open after 14 s').not.toBe('timeout');
      expect((await call('getInfo', {})).status).toBe(200);
    } finally {
      slow.stop();
      mute.destroy();
    }
  }, 20_000);
});

describe('4. one authenticated request cannot stall the server', () => {
  it('a 40 MB deeply nested body is refused without stalling a concurrent request', async () => {
    const depth = 20_000_000;
    // Encoded before the probe starts: the client shares this process, and turning a 40 MB string
    // into bytes inside the measured window would charge the test's own work to the server.
    const body = Buffer.from(`{"text":${'['.repeat(depth)}${']'.repeat(depth)}}`);
    let stop = false;
    // The server runs in this process: a stalled event loop shows as a long gap between two answers.
    const gaps: number[] = [];
    const probe = (async () => {
      let last = performance.now();
      while (!stop) {
        const r = await call('getInfo', {});
        expect(r.status).toBe(200);
        const now = performance.now();
        gaps.push(now - last);
        last = now;
        await new Promise((r2) => setTimeout(r2, 25));
      }
    })();
    const rss0 = process.memoryUsage().rss;
    const r = await call('estimate', body);
    stop = true;
    await probe;
    expect(r.status).toBe(400);
    expect(gaps.length).toBeGreaterThan(1);
    expect(Math.max(...gaps), `gaps between getInfo answers: ${gaps.map((w) => Math.round(w)).join(', ')} ms`).toBeLessThan(1_500);
    // The nested value was never built (20 million arrays would take over a GB).
    expect(process.memoryUsage().rss - rss0).toBeLessThan(600 * 1024 * 1024);
  }, 60_000);

  it('at most two large bodies are received at once; a third is told to come back', async () => {
    const head = (n: number) =>
      `POST /api/analyze HTTP/1.1\r\nHost: 127.0.0.1:${s.srv.port}\r\nAuthorization: Bearer ${s.srv.token}\r\nContent-Type: application/json\r\nContent-Length: ${n}\r\n\r\n{"name":"x","text":"`;
    const slow = [trickle(head(5_000_000), 100), trickle(head(5_000_000), 100)];
    try {
      await new Promise((r) => setTimeout(r, 300));
      const third = await within(call('analyze', `{"name":"y","text":"${'a'.repeat(200_000)}"}`), 5_000);
      expect(third === 'timeout' ? 'timeout' : third.status).toBe(503);
      // Small requests are never queued behind them.
      expect((await call('getInfo', {})).status).toBe(200);
    } finally {
      for (const s of slow) s.stop();
    }
  });

  it('a body bigger than its method allows is refused by size', async () => {
    const r = await call('listPayloads', `{"query":"${'a'.repeat(2 * 1024 * 1024)}"}`);
    expect(r.status).toBe(413);
  });
});

describe("5. assets come only from their own session's assets folder, sha256-checked", () => {
  it('a planted asset link to the index database (or a secret) is refused on GET /api/asset and readAsset, and the error names no target', async () => {
    const id = JSON.parse((await call('listPayloads', { tool: 'shot', limit: 1 })).body).result.rows[0].id as string;
    const detail = JSON.parse((await call('getPayload', { id })).body).result as { path: string; meta: { assets: unknown[] } };
    const metaPath = detail.path.replace(/(\.linked)?\.json$/, '.meta.json');
    const assetsDir = path.join(path.dirname(detail.path), 'assets');
    const secret = path.join(s.home, 'config.json');
    fs.writeFileSync(secret, '{"apiKey":"sk-secret-1234"}');
    const secretSha = crypto.createHash('sha256').update(fs.readFileSync(secret)).digest('hex');
    fs.symlinkSync(path.join(s.home, 'index.sqlite'), path.join(assetsDir, 'cccc.png'));
    fs.symlinkSync(secret, path.join(assetsDir, 'dddd.png'));
    const meta = JSON.parse(fs.readFileSync(metaPath, 'utf8'));
    meta.assets.push(
      { path: path.join(assetsDir, 'cccc.png'), relPath: 'long_responses/assets/cccc.png', mimeType: 'image/png', bytes: 1, sha256: 'c'.repeat(64), jsonPath: '$.x', source: 'binary', sniffed: false },
      // The right hash of the target: a check of the bytes alone would let it through.
      { path: path.join(assetsDir, 'dddd.png'), relPath: 'long_responses/assets/dddd.png', mimeType: 'image/png', bytes: 27, sha256: secretSha, jsonPath: '$.y', source: 'binary', sniffed: false },
    );
    fs.writeFileSync(metaPath, JSON.stringify(meta));
    await call('reindex', {});
    for (const sha of ['c'.repeat(64), secretSha]) {
      const g = await get(`/api/asset/${encodeURIComponent(id)}/${sha}`);
      expect(g.status, sha).toBe(404);
      expect(g.body).not.toContain('SQLite format');
      expect(g.body).not.toContain('sk-secret');
      expect(g.body).not.toContain(s.home);
      const r = await call('readAsset', { payloadId: id, sha256: sha });
      expect(r.status, sha).toBe(404);
      expect(r.body).not.toContain('sk-secret');
      expect(r.body).not.toContain(s.home);
    }
  });

  it('an asset file whose bytes do not match its hash is not streamed', async () => {
    const id = JSON.parse((await call('listPayloads', { tool: 'shot', limit: 1 })).body).result.rows[0].id as string;
    const d = JSON.parse((await call('getPayload', { id })).body).result as { assets: Array<{ path: string; sha256: string; mimeType: string }> };
    const png = d.assets.find((a) => a.mimeType === 'image/png' && fs.existsSync(a.path) && !fs.lstatSync(a.path).isSymbolicLink())!;
    expect((await get(`/api/asset/${encodeURIComponent(id)}/${png.sha256}`)).status).toBe(200);
    fs.writeFileSync(png.path, 'not the image it claims to be');
    try {
      const g = await get(`/api/asset/${encodeURIComponent(id)}/${png.sha256}`);
      expect(g.status).toBe(404);
      expect(g.body).not.toContain('not the image');
    } finally {
      fs.writeFileSync(png.path, PNG);
    }
  });
});
