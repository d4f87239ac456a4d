import crypto from 'node:crypto';
import { expect, it } from 'vitest';
import { resolveS3Settings } from '../../src/pipeline/store/s3/config.js';
import { S3Objects, S3StoreError } from '../../src/pipeline/store/s3/client.js';
import { s3Suite } from '../helpers/ceph.js';
import { useGateway } from '../helpers/ceph-fixture.js';

s3Suite('S3Objects against the real gateway', () => {
  const f = useGateway('s3client');

  it('creates a key once: a second create-only PUT reports it exists and changes nothing', async () => {
    expect((await f.s3.putIfAbsent('c/a', 'one')).created).toBe(true);
    expect((await f.s3.putIfAbsent('c/a', 'two')).created).toBe(false);
    expect((await f.s3.get('c/a'))!.toString()).toBe('one');
    expect(await f.s3.get('c/missing')).toBeNull();
    expect(await f.s3.head('c/missing')).toBeNull();
  });

  it('streams a 40 MB upload in parts and reads windows of it back by range', async () => {
    const part = crypto.randomBytes(1024 * 1024);
    const pieces = function* () {
      for (let i = 0; i < 40; i++) yield Buffer.concat([Buffer.from(`#${i}#`), part]);
    };
    const whole = Buffer.concat([...pieces()]);
    await f.s3.upload('c/big', pieces());
    const h = await f.s3.head('c/big');
    expect(h!.size).toBe(whole.length);
    expect(h!.etag).toMatch(/-\d+$/); // a multipart ETag: it went up in parts
    const start = 17 * 1024 * 1024 + 5;
    const r = await f.s3.getRange('c/big', start, start + 100_000);
    expect(r.total).toBe(whole.length);
    expect(r.bytes.equals(whole.subarray(start, start + 100_000))).toBe(true);
    const tail = await f.s3.getRange('c/big', whole.length - 10, whole.length + 1000);
    expect(tail.bytes.equals(whole.subarray(whole.length - 10))).toBe(true);
    expect((await f.s3.getRange('c/big', whole.length + 5, whole.length + 10)).bytes.length).toBe(0);
  });

  it('lists past one page with continuation, and deletes in batches', async () => {
    const keys = Array.from({ length: 1_234 }, (_, i) => `c/list/${String(i).padStart(5, '0')}`);
    for (let i = 0; i < keys.length; i += 64) await Promise.all(keys.slice(i, i + 64).map((k) => f.s3.putIfAbsent(k, k)));
    const seen: string[] = [];
    let pages = 0;
    for await (const page of f.s3.list('c/list/')) {
      pages++;
      seen.push(...page.map((o) => o.key));
      for (const o of page) expect(o.size).toBe(o.key.length);
    }
    expect(pages).toBe(2);
    expect(seen).toEqual(keys);
    await f.s3.deleteKeys(keys.slice(0, 1_100));
    const left: string[] = [];
    for await (const page of f.s3.list('c/list/')) left.push(...page.map((o) => o.key));
    expect(left).toEqual(keys.slice(1_100));
  });

  it('wrong credentials: DENIED, and neither key appears in the error', async () => {
    const secret = 'wrong-secret-' + crypto.randomBytes(8).toString('hex');
    const keyId = 'SPILLBADKEY' + crypto.randomBytes(4).toString('hex').toUpperCase();
    const bad = new S3Objects(
      resolveS3Settings(`s3://${f.gw.bucket}/c`, { env: { ...f.gw.env, AWS_ACCESS_KEY_ID: keyId, AWS_SECRET_ACCESS_KEY: secret } }),
    );
    const err = await bad.putIfAbsent('c/denied', 'x').catch((e: unknown) => e);
    bad.destroy();
    expect(err).toBeInstanceOf(S3StoreError);
    expect((err as S3StoreError).code).toBe('DENIED');
    const text = `${(err as Error).message} ${(err as Error).stack} ${JSON.stringify(err)}`;
    expect(text).not.toContain(secret);
    expect(text).not.toContain(keyId);
    expect(text).not.toContain(f.gw.secretAccessKey);
  });

  it('a port nobody answers on: UNAVAILABLE, quickly', async () => {
    const { freePort } = await import('../helpers/ceph.js');
    const dead = new S3Objects(
      resolveS3Settings(`s3://${f.gw.bucket}/c`, { env: { ...f.gw.env, AWS_ENDPOINT_URL: `http://127.0.0.1:${await freePort()}` }, timeoutMs: 1_000 }),
    );
    const t0 = performance.now();
    const err = await dead.putIfAbsent('c/x', 'x').catch((e: unknown) => e);
    dead.destroy();
    expect((err as S3StoreError).code).toBe('UNAVAILABLE');
    expect(performance.now() - t0).toBeLessThan(3_000);
  });
});
