import {
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { s3Suite, startGateway, type Gateway } from '../helpers/ceph.js';

// The facts about Ceph 16's S3 API that the S3 store is built on. If a Ceph upgrade changes one,
// this file says which, before a subtler test fails.
s3Suite('the Ceph gateway the S3 tests run against', () => {
  let gw: Gateway;
  let s3: S3Client;
  const text = async (key: string) =>
    (await (await s3.send(new GetObjectCommand({ Bucket: gw.bucket, Key: key }))).Body!.transformToString());
  beforeAll(async () => {
    gw = await startGateway();
    console.log(`ceph gateway up in ${gw.timings.ready} ms`, gw.timings, 'RSS KiB', gw.rssKiB());
    s3 = new S3Client({
      endpoint: gw.endpoint,
      region: gw.region,
      forcePathStyle: true,
      credentials: { accessKeyId: gw.accessKeyId, secretAccessKey: gw.secretAccessKey },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  });
  afterAll(async () => {
    s3?.destroy();
    await gw?.stop();
  });

  it('PutObject with If-None-Match: * has exactly one winner among 16 racers', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, (_, i) =>
        s3.send(new PutObjectCommand({ Bucket: gw.bucket, Key: 'race/one', Body: `writer ${i}`, IfNoneMatch: '*' })),
      ),
    );
    const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode).toBe(412);
    expect(await text('race/one')).toBe(`writer ${won[0]}`);
  });

  it('CompleteMultipartUpload and CopyObject ignore If-None-Match and overwrite (why multipart claims a name first)', async () => {
    await s3.send(new PutObjectCommand({ Bucket: gw.bucket, Key: 'quirk/mp', Body: 'first', IfNoneMatch: '*' }));
    const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket: gw.bucket, Key: 'quirk/mp' }));
    const part = await s3.send(new UploadPartCommand({ Bucket: gw.bucket, Key: 'quirk/mp', UploadId, PartNumber: 1, Body: 'second' }));
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: gw.bucket,
        Key: 'quirk/mp',
        UploadId,
        IfNoneMatch: '*',
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
      }),
    );
    expect(await text('quirk/mp')).toBe('second');

    await s3.send(new PutObjectCommand({ Bucket: gw.bucket, Key: 'quirk/copy', Body: 'kept?', IfNoneMatch: '*' }));
    await s3
      .send(new CopyObjectCommand({ Bucket: gw.bucket, Key: 'quirk/copy', CopySource: `${gw.bucket}/quirk/mp`, IfNoneMatch: '*' } as never))
      .catch(() => undefined);
    expect(await text('quirk/copy')).toBe('second');
  });

  it('answers a Range GET with only the bytes asked for', async () => {
    await s3.send(new PutObjectCommand({ Bucket: gw.bucket, Key: 'range/x', Body: '0123456789' }));
    const got = await s3.send(new GetObjectCommand({ Bucket: gw.bucket, Key: 'range/x', Range: 'bytes=3-5' }));
    expect(got.ContentRange).toBe('bytes 3-5/10');
    expect(await got.Body!.transformToString()).toBe('345');
  });
});
