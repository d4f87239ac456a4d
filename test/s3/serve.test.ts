import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { openBucket } from '../../src/pipeline/store/s3/index.js';
import { createInspectorService, type InspectorService } from '../../src/service/service.js';
import { S3_ASSET_KEEP_BYTES } from '../../src/service/s3-read.js';
import { startServer } from '../../src/server/server.js';
import { s3Suite } from '../helpers/ceph.js';
import { useGateway } from '../helpers/ceph-fixture.js';
import { pngHeadedNoise } from '../helpers/png.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');

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
    image = pngHeadedNoise(80_000);
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
      service = createInspectorService({ env: process.env, transport: 'http', roots: [store], dbPath: path.join(f.tmp, 'index.sqlite'), scanOnStart: false });
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
      const u = new URL(server.origin);
      const token = server.token;
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

  it('`spillway serve --root s3://…` registers the bucket as a read-only root; addRoot of a bucket over HTTP is refused', async () => {
    const TOKEN = 's3-serve-test-token-0123456789';
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', path.join(REPO, 'src/cli/main.ts'), 'serve', '--root', store, '--db', path.join(f.tmp, 'cli.sqlite')], {
      cwd: REPO,
      // A fixed token: the printed link carries only a one-time launch code, for the browser.
      env: { ...process.env, SPILLWAY_HOME: path.join(f.tmp, 'home-cli'), SPILLWAY_TOKEN: TOKEN },
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
      (await (await fetch(new URL(`/api/${m}`, u), { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body: JSON.stringify(body) })).json()) as { result: any; error?: { code: string; message: string } };
    const roots = (await call('listRoots', {})).result as Array<{ path: string; readOnly: boolean; id: string }>;
    const r = roots.find((x) => x.path === store)!;
    expect(r.readOnly).toBe(true);
    await call('reindex', { rootId: r.id });
    const rows = (await call('listPayloads', { rootId: r.id })).result.rows as unknown[];
    expect(rows.length).toBeGreaterThanOrEqual(2);
    // Whoever holds the token must not widen what the server reads with the user's AWS credentials.
    const refused = await call('addRoot', { path: `s3://${f.gw.bucket}/elsewhere` });
    expect(refused.error?.code).toBe('FORBIDDEN_PATH');
    expect((await call('listRoots', {})).result.map((x: { path: string }) => x.path)).not.toContain(`s3://${f.gw.bucket}/elsewhere`);
    child.kill('SIGTERM');
  });
  it('an asset object is served only from its own session\'s assets/, when its bytes hash to its sha256, and only the version that was hashed', async () => {
    const sec = `s3://${f.gw.bucket}/sec`;
    const key = (url: string) => url.replace(/^s3:\/\/?[^/]+\//, ''); // payload paths may be path.join'ed (s3:/bucket/…)
    const small = pngHeadedNoise(50_000);
    // Over S3_ASSET_KEEP_BYTES: streamed from the bucket, not kept from the hashing read.
    const big = pngHeadedNoise(S3_ASSET_KEEP_BYTES + 1024 * 1024);
    const shot = (img: Buffer) => JSON.stringify({ content: [{ type: 'image', mimeType: 'image/png', data: img.toString('base64') }, { type: 'text', text: 'shot '.repeat(20_000) }] });
    await guardLargeResult(shot(small), { sessionPath: path.join(f.tmp, 'sec-a'), toolName: 'small_shot', store: sec });
    await guardLargeResult(shot(big), { sessionPath: path.join(f.tmp, 'sec-a'), toolName: 'big_shot', store: sec });
    await guardLargeResult('no assets here ' + crypto.randomBytes(60_000).toString('hex'), { sessionPath: path.join(f.tmp, 'sec-b'), toolName: 'plain', store: sec });
    let service: InspectorService | undefined;
    let server: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      service = createInspectorService({ env: process.env, transport: 'http', roots: [sec], dbPath: path.join(f.tmp, 'sec.sqlite'), scanOnStart: false, watch: false });
      await service.ready;
      const root = (await service.listRoots({})).find((r) => r.path === sec)!;
      await service.reindex({ rootId: root.id });
      const rows = (await service.listPayloads({ rootId: root.id, limit: 10 })).rows;
      const byTool = (t: string) => rows.find((r) => r.tool === t)!;
      const smallDetail = await service.getPayload({ id: byTool('small_shot').id });
      const bigDetail = await service.getPayload({ id: byTool('big_shot').id });
      const smallAsset = smallDetail.assets[0]!;
      const bigAsset = bigDetail.assets[0]!;
      server = await startServer({ service, host: '127.0.0.1', port: 0 });
      const get = (payloadId: string, sha: string) =>
        fetch(new URL(`/api/asset/${encodeURIComponent(payloadId)}/${sha}`, server!.origin), { headers: { authorization: `Bearer ${server!.token}` } });

      // The big one streams whole and byte-exact.
      const whole = await get(bigDetail.row.id, bigAsset.sha256);
      expect(whole.status).toBe(200);
      expect(Buffer.from(await whole.arrayBuffer()).equals(big)).toBe(true);

      // Verified, then replaced in the bucket before it is streamed: the stream is refused, not the new bytes sent.
      const opened = await service.openAsset({ payloadId: bigDetail.row.id, sha256: bigAsset.sha256 });
      await f.s3.putOverwrite(key(bigAsset.path), pngHeadedNoise(S3_ASSET_KEEP_BYTES + 1024 * 1024));
      await expect(opened.stream(0, 99)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect((await get(bigDetail.row.id, bigAsset.sha256)).status).toBe(404);

      // A planted object under the asset's name (listed anew): its bytes do not hash to the name.
      await f.s3.putOverwrite(key(smallAsset.path), pngHeadedNoise(50_000));
      await service.reindex({ rootId: root.id });
      await expect(service.readAsset({ payloadId: smallDetail.row.id, sha256: smallAsset.sha256 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      const planted = await get(smallDetail.row.id, smallAsset.sha256);
      expect(planted.status).toBe(404);
      expect(await planted.text()).not.toContain('\x89PNG');

      // A sidecar of another session that lists session A's asset: looked up in its own assets/ only.
      await f.s3.putOverwrite(key(smallAsset.path), small);
      const plain = await service.getPayload({ id: byTool('plain').id });
      const metaKey = key(plain.path).replace(/\.[^./]+$/, '.meta.json');
      const meta = JSON.parse((await f.s3.get(metaKey))!.toString('utf8')) as Record<string, unknown>;
      const name = path.posix.basename(smallAsset.path);
      meta.assets = [
        { relPath: `long_responses/assets/${name}`, sha256: smallAsset.sha256, mimeType: 'image/png', bytes: small.length, jsonPath: '$', source: 'mcp-image' },
        { relPath: `../sec-a/long_responses/assets/${name}`, sha256: bigAsset.sha256, mimeType: 'image/png', bytes: big.length, jsonPath: '$', source: 'mcp-image' },
      ];
      await f.s3.putOverwrite(metaKey, JSON.stringify(meta));
      await service.reindex({ rootId: root.id });
      const hostile = await service.getPayload({ id: plain.row.id });
      expect(hostile.assets.map((a) => a.sha256)).toEqual([smallAsset.sha256]); // the ../ one is dropped by the index
      await expect(service.readAsset({ payloadId: plain.row.id, sha256: smallAsset.sha256 })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect((await get(plain.row.id, smallAsset.sha256)).status).toBe(404);
      // Session A's own payload still gets it (the object is back to its bytes).
      const back = await service.readAsset({ payloadId: smallDetail.row.id, sha256: smallAsset.sha256 });
      expect(Buffer.from(back.base64!, 'base64').equals(small)).toBe(true);
    } finally {
      await server?.close();
      await service?.close();
    }
  });
});
