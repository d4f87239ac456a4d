import crypto from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { resolveS3Settings } from '../../src/pipeline/store/s3/config.js';
import { S3Objects } from '../../src/pipeline/store/s3/client.js';
import { S3Source, splitS3Path } from '../../src/pipeline/store/s3/source.js';
import { s3Suite, startGateway, type Gateway } from '../helpers/ceph.js';

it('splits s3 paths, also after path.join collapsed the double slash', () => {
  expect(splitS3Path('s3://b-1/a/b')).toEqual({ bucket: 'b-1', key: 'a/b' });
  expect(splitS3Path('s3:/b-1/a/b/')).toEqual({ bucket: 'b-1', key: 'a/b' });
  expect(splitS3Path('s3://b-1')).toEqual({ bucket: 'b-1', key: '' });
  expect(splitS3Path('/tmp/s3/x')).toBeNull();
});

s3Suite('S3Source: a bucket prefix as a tree, read by range', () => {
  let gw: Gateway;
  let s3: S3Objects;
  beforeAll(async () => {
    gw = await startGateway();
    s3 = new S3Objects(resolveS3Settings(`s3://${gw.bucket}`, { env: gw.env }));
  });
  afterAll(async () => {
    s3?.destroy();
    await gw?.stop();
  });

  it('lists folders from one flat listing, reads windows, and sees new and deleted objects after a refresh', async () => {
    const big = crypto.randomBytes(3 * 1024 * 1024);
    await s3.putIfAbsent('root/s1/long_responses/a.txt', big);
    await s3.putIfAbsent('root/s1/long_responses/a.meta.json', '{}');
    await s3.putIfAbsent('root/s1/long_responses/assets/x.png', 'png');
    await s3.putIfAbsent('root/s2/long_responses/b.txt', 'bbb');
    await s3.putIfAbsent('root/s2/long_responses/../evil', 'x');
    await s3.putIfAbsent('rootless/elsewhere', 'not ours');
    const src = new S3Source(s3, `s3://${gw.bucket}/root`);
    const names = async (d: string) => (await src.list(d))?.map((e) => `${e.type}:${e.name}`).sort();
    expect(await names(`s3://${gw.bucket}/root`)).toEqual(['dir:s1', 'dir:s2']);
    expect(await names(`s3:/${gw.bucket}/root/s1/long_responses`)).toEqual(['dir:assets', 'file:a.meta.json', 'file:a.txt']);
    expect(await names(`s3://${gw.bucket}/root/s2/long_responses`)).toEqual(['file:b.txt']);
    expect(src.tree.skipped).toBe(1);
    expect(await src.list(`s3://${gw.bucket}/rootless`)).toBeNull();
    const st = await src.stat(`s3://${gw.bucket}/root/s1/long_responses/a.txt`);
    expect(st!.size).toBe(big.length);
    expect(st!.etag).toMatch(/^[0-9a-f]{32}$/);

    const w = await src.readRange(`s3://${gw.bucket}/root/s1/long_responses/a.txt`, 2_000_000, 65_536);
    expect(w.size).toBe(big.length);
    expect(w.bytes.equals(big.subarray(2_000_000, 2_000_000 + 65_536))).toBe(true);
    const end = await src.readRange(`s3://${gw.bucket}/root/s1/long_responses/a.txt`, big.length - 5, 100);
    expect(end.bytes.equals(big.subarray(big.length - 5))).toBe(true);

    await s3.putIfAbsent('root/s3/long_responses/c.txt', 'new');
    await s3.deleteKeys(['root/s2/long_responses/b.txt', 'root/s2/long_responses/../evil']);
    expect(await names(`s3://${gw.bucket}/root`)).toEqual(['dir:s1', 'dir:s2']); // the snapshot, until refreshed
    await src.refresh();
    expect(await names(`s3://${gw.bucket}/root`)).toEqual(['dir:s1', 'dir:s3']);
    expect(await src.stat(`s3://${gw.bucket}/root/s2/long_responses/b.txt`)).toBeNull();
  });

  it('sidecars read in listing order come from the read-ahead, byte-exact, and a refresh drops what was read ahead', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `ra/s/long_responses/20261201T000000${String(i).padStart(3, '0')}Z_t_00000000_0.meta.json`);
    await Promise.all(keys.map((k, i) => s3.putIfAbsent(k, JSON.stringify({ n: i }))));
    const src = new S3Source(s3, `s3://${gw.bucket}/ra`);
    await src.refresh();
    for (const [i, k] of keys.entries()) {
      const r = await src.readRange(`s3://${gw.bucket}/${k}`, 0, 16 * 1024 * 1024);
      expect(JSON.parse(r.bytes.toString())).toEqual({ n: i });
    }
    await s3.putOverwrite(keys[1]!, JSON.stringify({ n: 'changed' }));
    await src.refresh();
    await src.readRange(`s3://${gw.bucket}/${keys[0]}`, 0, 16 * 1024 * 1024);
    expect(JSON.parse((await src.readRange(`s3://${gw.bucket}/${keys[1]}`, 0, 16 * 1024 * 1024)).bytes.toString())).toEqual({ n: 'changed' });
  });
});
