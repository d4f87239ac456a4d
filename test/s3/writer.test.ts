import crypto from 'node:crypto';
import { expect, it } from 'vitest';
import { S3SessionWriter, newClaimToken } from '../../src/pipeline/store/s3/writer.js';
import { S3_SINGLE_PUT_MAX_BYTES } from '../../src/pipeline/store/s3/config.js';
import { s3Suite } from '../helpers/ceph.js';
import { useGateway } from '../helpers/ceph-fixture.js';

s3Suite('S3SessionWriter: claims, create-only files, sidecar last', () => {
  const f = useGateway('s3writer');

  it('multipart payloads racing for the same names never overwrite each other', async () => {
    // Each writer walks the same candidate stems; Ceph ignores If-None-Match on multipart, so only
    // the claim keeps them apart. Every payload is over the single-PUT size: all go up in parts.
    const writers = 6;
    const size = S3_SINGLE_PUT_MAX_BYTES + 1024 * 1024;
    const writer = new S3SessionWriter(f.s3, { bucket: f.gw.bucket, prefix: 'w' }, 'race');
    const outcomes = await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        const body = Buffer.alloc(size, w + 1);
        const token = newClaimToken();
        for (let seq = 0; ; seq++) {
          const stem = `20261201T000000000Z_tool_00000000_${seq}`;
          if (!(await writer.claim(stem, token))) continue;
          await writer.putFile(`${stem}.txt`, [body.subarray(0, 1000), body.subarray(1000)]);
          await writer.putSidecar(`${stem}.meta.json`, JSON.stringify({ id: stem, writer: w }));
          return { w, stem };
        }
      }),
    );
    expect(new Set(outcomes.map((o) => o.stem)).size).toBe(writers);
    for (const { w, stem } of outcomes) {
      const head = await f.s3.head(writer.keys.file(`${stem}.txt`));
      expect(head!.size).toBe(size);
      expect(head!.etag).toMatch(/-\d+$/);
      const { bytes } = await f.s3.getRange(writer.keys.file(`${stem}.txt`), size - 8, size);
      expect([...bytes]).toEqual(new Array(8).fill(w + 1));
      const meta = JSON.parse((await f.s3.get(writer.keys.file(`${stem}.meta.json`)))!.toString());
      expect(meta.writer).toBe(w);
    }
  });

  it('a claim with the same token resumes; another token is refused', async () => {
    const writer = new S3SessionWriter(f.s3, { bucket: f.gw.bucket, prefix: 'w' }, 'resume');
    const t = newClaimToken();
    expect(await writer.claim('s_1', t)).toBe('new');
    expect(await writer.claim('s_1', t)).toBe('resumed');
    expect(await writer.claim('s_1', newClaimToken())).toBe(false);
    await writer.putFile('s_1.txt', 'payload');
    // A resumed writer finds its own file: done, not an error, and the bytes stay.
    expect(await writer.putFile('s_1.txt', 'payload', { resumed: true })).toBe(7);
    await expect(writer.putFile('s_1.txt', 'other!!', {})).rejects.toMatchObject({ code: 'EXISTS' });
    await writer.putSidecar('s_1.meta.json', '{"a":1}');
    await writer.putSidecar('s_1.meta.json', '{"a":1}', { resumed: true });
    await expect(writer.putSidecar('s_1.meta.json', '{"a":2}', { resumed: true })).rejects.toMatchObject({ code: 'EXISTS' });
    expect((await f.s3.get(writer.keys.file('s_1.txt')))!.toString()).toBe('payload');
  });

  it('assets: identical bytes are reused, a damaged object under the name is repaired', async () => {
    const writer = new S3SessionWriter(f.s3, { bucket: f.gw.bucket, prefix: 'w' }, 'assets');
    const bytes = crypto.randomBytes(50_000);
    const sha = crypto.createHash('sha256').update(bytes).digest('hex');
    const name = `${sha.slice(0, 32)}.png`;
    expect(await writer.putAsset(name, bytes, sha)).toEqual({ reused: false });
    expect(await writer.putAsset(name, bytes, sha)).toEqual({ reused: true });
    await f.s3.putOverwrite(writer.keys.file(`assets/${name}`), bytes.subarray(0, 100)); // truncated by someone
    expect(await writer.putAsset(name, bytes, sha)).toEqual({ reused: false });
    expect((await f.s3.get(writer.keys.file(`assets/${name}`)))!.equals(bytes)).toBe(true);
  });
});
