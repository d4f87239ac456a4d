import { expect, it } from 'vitest';
import { S3SpillStore, resetStoreHealth } from '../../src/pipeline/store/s3/index.js';
import { freePort, s3Suite } from '../helpers/ceph.js';
import { useGateway } from '../helpers/ceph-fixture.js';

const candidates = function* (base: string, from = 0) {
  for (let i = from; i < from + 50; i++) yield { stem: `${base}_${i}`, key: `long_responses/${base}_${i}.txt` };
};

s3Suite('S3SpillStore: the storage seam over a bucket', () => {
  const f = useGateway('s3store');

  it('writes create-only under free names, commits with the sidecar, reads back, refuses keys outside the layout', async () => {
    const store = new S3SpillStore(`s3://${f.gw.bucket}/seam`, 'sess');
    expect(store.location).toBe(`s3://${f.gw.bucket}/seam/sess`);
    const a = await store.putPayload(candidates('20261201T000000000Z_t_00000000'), () => 'first');
    const b = await store.putPayload(candidates('20261201T000000000Z_t_00000000'), () => ['sec', 'ond']);
    expect(a.stem).not.toBe(b.stem);
    await store.putSidecar(`long_responses/${a.stem}.meta.json`, '{"a":1}');
    await expect(store.putSidecar(`long_responses/${a.stem}.meta.json`, '{"a":2}')).rejects.toMatchObject({ code: 'EXISTS' });
    expect(Buffer.from(await store.read(b.key)).toString()).toBe('second');
    expect(await store.stat(a.key)).toEqual({ bytes: 5 });
    expect(await store.stat('long_responses/nothing.txt')).toBeNull();
    await expect(store.read('long_responses/nothing.txt')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    for (const bad of ['../x', 'long_responses/../../x', 'long_responses/.claims/x', 'other/x.txt', 'long_responses/a/b/c']) {
      await expect(store.read(bad), bad).rejects.toMatchObject({ code: 'REFUSED' });
    }
    expect(store.describe(a.key)).toBe(`s3://${f.gw.bucket}/seam/sess/${a.key}`);
  });

  it('moves a payload to a fresh claimed name when its sidecar name was taken by a writer that did not claim', async () => {
    const store = new S3SpillStore(`s3://${f.gw.bucket}/seam`, 'move');
    const a = await store.putPayload(candidates('20261201T000000000Z_m_00000000'), () => 'payload bytes');
    await f.s3.putIfAbsent(`seam/move/long_responses/${a.stem}.meta.json`, '{"someone":"else"}');
    const moved = await store.movePayload(a.key, candidates('20261201T000000000Z_m_00000000', 1));
    expect(moved.stem).not.toBe(a.stem);
    expect(Buffer.from(await store.read(moved.key)).toString()).toBe('payload bytes');
    expect(await store.stat(a.key)).toBeNull();
    await store.putSidecar(`long_responses/${moved.stem}.meta.json`, '{}');
  });

  it('a store that failed is skipped for a while: the next spill falls back at once', async () => {
    resetStoreHealth();
    const dead = new S3SpillStore(`s3://${f.gw.bucket}/seam`, 'down', { endpoint: `http://127.0.0.1:${await freePort()}`, timeoutMs: 1_000 });
    await expect(dead.putPayload(candidates('20261201T000000000Z_d_00000000'), () => 'x')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    const t0 = performance.now();
    await expect(dead.putPayload(candidates('20261201T000000000Z_d_00000000'), () => 'x')).rejects.toThrow(/not retried for/);
    expect(performance.now() - t0).toBeLessThan(50);
    resetStoreHealth();
  });
});
