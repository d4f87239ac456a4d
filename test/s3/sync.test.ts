import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { listPending, queuePending } from '../../src/pipeline/store/s3/sync.js';
import { runSync } from '../../src/cli/commands/sync.js';
import { s3Suite } from '../helpers/ceph.js';
import { useGateway } from '../helpers/ceph-fixture.js';

const png = (n: number) => Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), crypto.randomBytes(n)]);

s3Suite('spillway sync: local spills into the bucket, idempotently', () => {
  const f = useGateway('sync');

  async function localSession(name: string) {
    const dir = path.join(f.tmp, name);
    const text = 'line of text\n'.repeat(20_000);
    const json = JSON.stringify({ content: [{ type: 'image', mimeType: 'image/png', data: png(30_000).toString('base64') }, { type: 'text', text: 'x'.repeat(80_000) }] });
    const bin = crypto.randomBytes(200_000);
    const results = [];
    for (const r of [text, json, bin]) results.push((await guardLargeResult(r, { sessionPath: dir, toolName: 'fetch' }))!);
    for (const r of results) expect(r.metaPath).toBeTruthy();
    return { dir, results };
  }

  it('uploads a session, finds it all there on the second run, and never overwrites a different object', async () => {
    const { dir, results } = await localSession('sess-a');
    const store = `s3://${f.gw.bucket}/team`;
    const first = await runSync({ store, session: [dir] });
    expect(first.failed).toBe(0);
    expect(first.report.outcomes.map((o) => o.status)).toEqual(['uploaded', 'uploaded', 'uploaded']);
    for (const r of results) {
      const name = path.basename(r.payloadPath!);
      const obj = await f.s3.get(`team/sess-a/long_responses/${name}`);
      expect(obj!.equals(fs.readFileSync(r.payloadPath!))).toBe(true);
      for (const a of r.assets) expect((await f.s3.get(`team/sess-a/${a.relPath}`))!.equals(fs.readFileSync(a.path))).toBe(true);
      const meta = JSON.parse((await f.s3.get(`team/sess-a/long_responses/${path.basename(r.metaPath!)}`))!.toString());
      expect(meta.sha256).toBe(JSON.parse(fs.readFileSync(r.metaPath!, 'utf8')).sha256);
      for (const a of meta.assets) expect(a.path).toMatch(new RegExp(`^s3://${f.gw.bucket}/team/sess-a/long_responses/assets/`));
    }
    const second = await runSync({ store, session: [dir] });
    expect(second.report.outcomes.map((o) => o.status)).toEqual(['already', 'already', 'already']);

    // Another machine's session of the same name already holds these stems with other content:
    // the upload moves to free names, and the other objects keep their bytes.
    const { dir: dirB, results: resB } = await localSession('sess-b');
    const stemB = path.basename(resB[0]!.metaPath!).replace('.meta.json', '');
    const otherKey = `team/sess-b/long_responses/${path.basename(resB[0]!.payloadPath!)}`;
    await f.s3.putIfAbsent(`team/sess-b/long_responses/.claims/${stemB}`, JSON.stringify({ v: 1, token: 'someone-else', createdAt: '' }));
    await f.s3.putIfAbsent(otherKey, 'their payload');
    const third = await runSync({ store, session: [dirB] });
    expect(third.report.outcomes[0]!.status).toBe('renamed');
    expect(third.report.outcomes[0]!.stem).not.toBe(stemB);
    expect((await f.s3.get(otherKey))!.toString()).toBe('their payload');
    const moved = JSON.parse((await f.s3.get(`team/sess-b/long_responses/${third.report.outcomes[0]!.stem}.meta.json`))!.toString());
    expect(moved.id).toBe(third.report.outcomes[0]!.stem);
    const movedPayload = await f.s3.get(`team/sess-b/long_responses/${moved.payloadFile}`);
    expect(movedPayload!.equals(fs.readFileSync(resB[0]!.payloadPath!))).toBe(true);
  });

  it('uploads the queue, keeps what the store refused queued, and resumes a claim the failed spill made', async () => {
    const { dir, results } = await localSession('sess-q');
    const store = `s3://${f.gw.bucket}/q`;
    const stems = results.map((r) => path.basename(r.metaPath!).replace('.meta.json', ''));
    // The first spill had claimed its stem in the bucket (and uploaded the payload) before the store failed.
    const token = 'live-claim-token';
    await f.s3.putIfAbsent(`q/sess-q/long_responses/.claims/${stems[0]}`, JSON.stringify({ v: 1, token, createdAt: '' }));
    await f.s3.putIfAbsent(`q/sess-q/long_responses/${path.basename(results[0]!.payloadPath!)}`, fs.readFileSync(results[0]!.payloadPath!));
    for (const [i, stem] of stems.entries()) {
      await queuePending({ v: 1, store, session: dir, stem, remoteSession: 'sess-q', reason: 'test', at: '', ...(i === 0 ? { remoteStem: stem, token } : {}) }, process.env);
    }
    expect(await listPending(process.env)).toHaveLength(3);
    const r = await runSync({ session: [] });
    expect(r.failed).toBe(0);
    expect(r.report.outcomes.map((o) => o.status)).toEqual(expect.arrayContaining(['uploaded', 'uploaded', 'uploaded']));
    expect(r.report.outcomes.map((o) => o.stem).sort()).toEqual([...stems].sort());
    expect(await listPending(process.env)).toHaveLength(0);
    const again = await runSync({ session: [] });
    expect(again.report.outcomes).toHaveLength(0);
  });

  it('a store that is down stops the run and leaves the queue as it was', async () => {
    const { dir, results } = await localSession('sess-down');
    const { freePort } = await import('../helpers/ceph.js');
    const dead = `http://127.0.0.1:${await freePort()}`;
    const store = `s3://${f.gw.bucket}/down`;
    for (const r of results) {
      await queuePending({ v: 1, store, session: dir, stem: path.basename(r.metaPath!).replace('.meta.json', ''), remoteSession: 'sess-down', reason: 'test', at: '' }, process.env);
    }
    const saved = process.env.AWS_ENDPOINT_URL;
    process.env.AWS_ENDPOINT_URL = dead;
    process.env.SPILLWAY_STORE_TIMEOUT_MS = '500';
    try {
      const r = await runSync({ session: [] });
      expect(r.report.stoppedBy).toMatch(/unavailable|ECONNREFUSED|no answer/i);
      expect(r.report.stoppedBy).not.toContain(f.gw.secretAccessKey);
    } finally {
      process.env.AWS_ENDPOINT_URL = saved;
      delete process.env.SPILLWAY_STORE_TIMEOUT_MS;
    }
    expect(await listPending(process.env)).toHaveLength(3);
    const r2 = await runSync({ session: [] });
    expect(r2.failed).toBe(0);
    expect(await listPending(process.env)).toHaveLength(0);
  });
});
