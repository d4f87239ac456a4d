import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { openBucket } from '../../src/pipeline/store/s3/index.js';
import { createInspectorService, type InspectorService } from '../../src/service/service.js';
import { startServer } from '../../src/server/server.js';
import { s3Suite } from '../helpers/ceph.js';
import { useGateway } from '../helpers/ceph-fixture.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const png = (n: number) => Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), crypto.randomBytes(n)]);

s3Suite('the inspector on a bucket root', () => {
  const f = useGateway('s3serve');
  beforeAll(async () => {
    store = `s3://${f.gw.bucket}/team`;
    const objects = await openBucket(store);
    objects.client.middlewareStack.add(
      (next) => async (args) => {
        const req = (args as { request: { method: string; path: string; headers: Record<string, string> } }).request;
        requests.push({ method: req.method, path: decodeURIComponent(req.path), range: req.headers.range ?? req.headers.Range });
        return next(args);
      },
      { step: 'finalizeRequest', name: 'testRequestLog' },
    );
    const session = path.join(f.tmp, 'agent-7');
    bigText = Array.from({ length: 400_000 }, (_, i) => `line ${i} ${'x'.repeat(90)}`).join('\n');
    image = png(80_000);
    await guardLargeResult(bigText, { sessionPath: session, toolName: 'read_log', store });
    await guardLargeResult(JSON.stringify({ content: [{ type: 'image', mimeType: 'image/png', data: image.toString('base64') }, { type: 'text', text: 'shot '.repeat(20_000) }] }), {
      sessionPath: session,
      toolName: 'screenshot',
      store,
    });
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  });
  let store: string;
  const children: ChildProcess[] = [];
  /** Every S3 request the process makes: method, key, Range header. */
  const requests: Array<{ method: string; path: string; range?: string }> = [];
  let bigText: string;
  let image: Buffer;


  it('lists, reads windows by Range GET (never the whole object), streams assets, polls for new spills, writes nothing', async () => {
    process.env.SPILLWAY_S3_POLL_MS = '300';
    let service: InspectorService | undefined;
    let server: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      service = createInspectorService({ transport: 'http', roots: [store], dbPath: path.join(f.tmp, 'index.sqlite'), scanOnStart: false });
      await service.ready;
      const roots = await service.listRoots({});
      const root = roots.find((r) => r.path === store)!;
      expect(root.readOnly).toBe(true);
      await service.reindex({ rootId: root.id });
      const rows = (await service.listPayloads({ limit: 10 })).rows;
      expect(rows.map((r) => r.tool).sort()).toEqual(['read_log', 'screenshot']);
      const log = rows.find((r) => r.tool === 'read_log')!;
      expect(log.bytes).toBe(Buffer.byteLength(bigText));

      const start = 20_000_000;
      requests.length = 0;
      const w = await service.readPayload({ id: log.id, start, end: start + 65_536 });
      expect(w.totalBytes).toBe(log.bytes);
      expect(w.text).toBe(Buffer.from(bigText).subarray(w.start, w.end).toString());
      const gets = requests.filter((r) => r.method === 'GET' && r.path.includes('read_log'));
      expect(gets.length).toBeGreaterThan(0);
      for (const g of gets) {
        expect(g.range, 'every read of the payload is a Range GET').toMatch(/^bytes=\d+-\d+$/);
        const [a, b] = g.range!.slice(6).split('-').map(Number) as [number, number];
        expect(b - a).toBeLessThan(1024 * 1024);
      }

      // The asset, streamed over HTTP (with a Range too), byte-exact.
      const shot = rows.find((r) => r.tool === 'screenshot')!;
      const detail = await service.getPayload({ id: shot.id });
      expect(detail.assets).toHaveLength(1);
      expect(detail.assets[0]!.path).toMatch(/^s3:\/\//);
      server = await startServer({ service, host: '127.0.0.1', port: 0 });
      const u = new URL(server.url);
      const token = u.searchParams.get('token')!;
      const assetUrl = new URL(`/api/asset/${encodeURIComponent(shot.id)}/${detail.assets[0]!.sha256}`, u);
      const whole = await fetch(assetUrl, { headers: { authorization: `Bearer ${token}` } });
      expect(whole.status).toBe(200);
      expect(Buffer.from(await whole.arrayBuffer()).equals(image)).toBe(true);
      const part = await fetch(assetUrl, { headers: { authorization: `Bearer ${token}`, range: 'bytes=100-199' } });
      expect(part.status).toBe(206);
      expect(Buffer.from(await part.arrayBuffer()).equals(image.subarray(100, 200))).toBe(true);
      const inline = await service.readAsset({ payloadId: shot.id, sha256: detail.assets[0]!.sha256 });
      expect(Buffer.from(inline.base64!, 'base64').equals(image)).toBe(true);

      // A summary run on a bucket payload goes to app data, not into the bucket.
      await service.summarize({ payloadId: log.id, provider: 'structural' });

      // A new spill shows up by polling, with no call from us.
      const seen = new Promise<void>((resolve) => service!.on('onDidIndex', () => resolve()));
      await guardLargeResult('late result ' + 'z'.repeat(100_000), { sessionPath: path.join(f.tmp, 'agent-8'), toolName: 'late', store });
      await seen;
      expect((await service.listPayloads({ limit: 10 })).rows.map((r) => r.tool).sort()).toEqual(['late', 'read_log', 'screenshot']);
      // Only the guard above wrote (its PUTs); the service made none.
      const serviceWrites = requests.filter((r) => r.method !== 'GET' && r.method !== 'HEAD' && !r.path.includes('agent-8')).length;
      expect(serviceWrites).toBe(0);
    } finally {
      await server?.close();
      await service?.close();
      delete process.env.SPILLWAY_S3_POLL_MS;
    }
  });

  it('`spillway serve --root s3://…` registers the bucket as a read-only root', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', path.join(REPO, 'src/cli/main.ts'), 'serve', '--root', store, '--db', path.join(f.tmp, 'cli.sqlite')], {
      cwd: REPO,
      env: { ...process.env, SPILLWAY_HOME: path.join(f.tmp, 'home-cli') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      let err = '';
      child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
      child.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
    });
    const u = new URL(url);
    const call = async (m: string, body: unknown) =>
      (await (await fetch(new URL(`/api/${m}`, u), { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${u.searchParams.get('token')}` }, body: JSON.stringify(body) })).json()) as { result: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
    const roots = (await call('listRoots', {})).result as Array<{ path: string; readOnly: boolean; id: string }>;
    const r = roots.find((x) => x.path === store)!;
    expect(r.readOnly).toBe(true);
    await call('reindex', { rootId: r.id });
    const rows = (await call('listPayloads', { rootId: r.id })).result.rows as unknown[];
    expect(rows.length).toBeGreaterThanOrEqual(2);
    child.kill('SIGTERM');
  });
});
