/**
 * `npm run bench s3`: the S3 store and the bucket root against baselines measured in the same run,
 * on a real Ceph RADOS Gateway started here (test/helpers/ceph.ts; skipped, loudly, without Ceph).
 *
 *   - a spill of a 30 KB and of a 100 MB result: to the bucket vs to the local disk (fresh inputs)
 *   - the first index of a bucket of 10,000 payloads vs a plain ListObjectsV2 + GET of every sidecar
 *   - a re-index with nothing changed vs a plain listing
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openIndex } from '../src/index/index.js';
import { guardLargeResult } from '../src/pipeline/index.js';
import { closeBuckets, openBucket, resetStoreHealth } from '../src/pipeline/store/s3/index.js';
import type { S3Objects } from '../src/pipeline/store/s3/client.js';
import { cephMissing, startGateway } from '../test/helpers/ceph.js';
import { benchLargeBucket } from './s3-journal.js';

const SCALE = Number(process.env.SPILLWAY_BENCH_SCALE ?? '1') || 1;
const PAYLOADS = Math.max(100, Math.round(10_000 * SCALE));
const SESSIONS = Math.max(2, Math.round(50 * SCALE));
const SMALL_SPILLS = 40;
const BIG_SPILLS = 2;
const BIG_BYTES = 100 * 1024 * 1024;
/** Requests in flight while filling the bucket, and in the parallel baseline. */
const UPLOAD_CONCURRENCY = 32;

const ms = (t0: number) => performance.now() - t0;
const fmt = (v: number) => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(v < 10 ? 2 : 0)} ms`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Fresh text of about `bytes` (random words: no two inputs alike, nothing for a cache to reuse). */
function freshText(bytes: number): string {
  const words = crypto.randomBytes(Math.ceil(bytes / 2)).toString('hex');
  let out = '';
  for (let i = 0; i < words.length && out.length < bytes; i += 12) out += words.slice(i, i + 11) + (i % 120 === 0 ? '\n' : ' ');
  return out.slice(0, bytes);
}

async function pool<T>(items: T[], n: number, fn: (x: T) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (i < items.length) await fn(items[i++]!);
  }));
}

export async function run(): Promise<void> {
  const missing = cephMissing();
  if (missing.length) {
    console.log(`SKIPPED: Ceph is not installed (missing ${missing.join(', ')}); apt-get install -y ceph-mon ceph-osd radosgw ceph-common`);
    return;
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-s3-'));
  const gw = await startGateway();
  Object.assign(process.env, gw.env);
  process.env.SPILLWAY_HOME = path.join(tmp, 'home');
  const store = `s3://${gw.bucket}/bench`;
  console.log(`gateway up in ${fmt(gw.timings.ready!)} (monitor ${fmt(gw.timings.mon!)}, OSD ${fmt(gw.timings.osd!)}, radosgw ${fmt(gw.timings.rgw!)}); RSS ${Object.entries(gw.rssKiB()).map(([k, v]) => `${k} ${(v / 1024).toFixed(0)} MiB`).join(', ')}`);
  try {
    const rows: Array<[string, string, string, string, number]> = [];
    // SPILLWAY_BENCH_S3_ONLY=large: only the large-bucket part (s3-journal.ts).
    const only = process.env.SPILLWAY_BENCH_S3_ONLY;
    if (only === 'large') {
      await benchLargeBucket(gw, await openBucket(store), rows, tmp);
      printRows(rows);
      return;
    }

    // 1. Spill cost, bucket vs local disk, interleaved so both see the same machine load.
    await guardLargeResult(freshText(30_000), { sessionPath: path.join(tmp, 'warm'), toolName: 'warm', store }); // the SDK loads once
    const spill = async (bytes: number, n: number, label: string) => {
      const local: number[] = [];
      const bucket: number[] = [];
      for (let i = 0; i < n; i++) {
        for (const where of ['local', 'bucket'] as const) {
          let input: string | undefined = freshText(bytes);
          const t = performance.now();
          const r = await guardLargeResult(input, { sessionPath: path.join(tmp, `spill-${where}`), toolName: `bench_${label}`, ...(where === 'bucket' ? { store } : {}) });
          (where === 'local' ? local : bucket).push(ms(t));
          input = undefined;
          if (!r?.metaPath || (where === 'bucket') !== r.payloadPath!.startsWith('s3://')) throw new Error(`spill to ${where} did not land there: ${r?.message.slice(0, 300)}`);
        }
      }
      rows.push([`spill of a ${label} result, to the bucket (median of ${n})`, fmt(median(bucket)), 'the same spill to the local disk', fmt(median(local)), median(bucket) / median(local)]);
    };
    await spill(30 * 1024, SMALL_SPILLS, '30 KB');
    await spill(BIG_BYTES, BIG_SPILLS, '100 MB');
    fs.rmSync(path.join(tmp, 'spill-local'), { recursive: true, force: true });

    // 2. A bucket of PAYLOADS spills: real guard output (payload + sidecar), each uploaded under its own stem.
    const objects: S3Objects = await openBucket(store);
    const template = path.join(tmp, 'template');
    const kinds = [freshText(24_000), JSON.stringify({ rows: Array.from({ length: 2_000 }, (_, i) => ({ id: i, v: crypto.randomBytes(12).toString('hex') })) }), freshText(60_000)];
    const made: Array<{ payload: string; meta: Buffer; ext: string; metaObj: Record<string, unknown> }> = [];
    for (const [i, k] of kinds.entries()) {
      const r = (await guardLargeResult(k, { sessionPath: template, toolName: `kind${i}` }))!;
      made.push({ payload: fs.readFileSync(r.payloadPath!, 'utf8'), meta: fs.readFileSync(r.metaPath!), ext: path.extname(r.payloadPath!), metaObj: JSON.parse(fs.readFileSync(r.metaPath!, 'utf8')) });
    }
    const t0 = Date.UTC(2026, 10, 1);
    const uploads = Array.from({ length: PAYLOADS }, (_, i) => i);
    let t = performance.now();
    await pool(uploads, UPLOAD_CONCURRENCY, async (i) => {
      const m = made[i % made.length]!;
      const stem = `${new Date(t0 + i * 1000).toISOString().replace(/[-:]/g, '').replace('.', '')}_kind${i % made.length}_0000abcd_0`;
      const dir = `bench-root/session-${String(i % SESSIONS).padStart(3, '0')}/long_responses`;
      const payload = `${i} ${m.payload}`; // every payload different
      await objects.putIfAbsent(`${dir}/${stem}${m.ext}`, payload);
      const meta = { ...m.metaObj, id: stem, payloadFile: stem + m.ext, bytes: Buffer.byteLength(payload) };
      await objects.putIfAbsent(`${dir}/${stem}.meta.json`, JSON.stringify(meta, null, 2));
    });
    console.log(`filled the bucket: ${PAYLOADS} payloads + sidecars in ${SESSIONS} sessions in ${fmt(ms(t))} (scale ${SCALE})`);

    // Baselines: a plain listing, and the listing + a GET of every sidecar (one at a time, as a
    // scan reads; and UPLOAD_CONCURRENCY at a time, the best a client could do).
    const listAll = async () => {
      const keys: string[] = [];
      for await (const page of objects.list('bench-root/')) for (const o of page) keys.push(o.key);
      return keys;
    };
    const listTimes: number[] = [];
    let keys: string[] = [];
    for (let i = 0; i < 3; i++) {
      t = performance.now();
      keys = await listAll();
      listTimes.push(ms(t));
    }
    const listMs = median(listTimes);
    const metas = keys.filter((k) => k.endsWith('.meta.json'));
    t = performance.now();
    for (const k of (await listAll()).filter((x) => x.endsWith('.meta.json'))) JSON.parse((await objects.get(k))!.toString('utf8'));
    const seqMs = ms(t);
    t = performance.now();
    await pool((await listAll()).filter((x) => x.endsWith('.meta.json')), UPLOAD_CONCURRENCY, async (k) => void JSON.parse((await objects.get(k))!.toString('utf8')));
    const parMs = ms(t);
    t = performance.now();
    let allBytes = 0;
    for (const k of await listAll()) allBytes += (await objects.get(k))!.length;
    const allMs = ms(t);

    const index = openIndex({ dbPath: path.join(tmp, 'db', 'index.sqlite') });
    const root = index.addRoot(`s3://${gw.bucket}/bench-root`);
    t = performance.now();
    const first = await index.scan({ rootId: root.id });
    const firstMs = ms(t);
    if (first.payloads !== PAYLOADS) throw new Error(`indexed ${first.payloads} of ${PAYLOADS}`);
    const rescans: number[] = [];
    let again = first;
    for (let i = 0; i < 3; i++) {
      t = performance.now();
      again = await index.scan({ rootId: root.id });
      rescans.push(ms(t));
      if (again.read !== 0) throw new Error(`re-index re-read ${again.read} units`);
    }
    const rescanMs = median(rescans);
    await index.close();

    rows.push([`first index of the bucket, phase 1: all listed (${PAYLOADS} payloads)`, fmt(first.listSeconds * 1000), `ListObjectsV2 + GET of every sidecar (${metas.length}), one at a time`, fmt(seqMs), (first.listSeconds * 1000) / seqMs]);
    rows.push(['', '', `… ${UPLOAD_CONCURRENCY} at a time`, fmt(parMs), (first.listSeconds * 1000) / parMs]);
    rows.push(['first index, both phases (searchable: head and tail of every payload by Range GET)', fmt(firstMs), `ListObjectsV2 + GET of every object (${keys.length}, ${(allBytes / 1024 / 1024).toFixed(0)} MB), one at a time`, fmt(allMs), firstMs / allMs]);
    rows.push([`re-index, nothing changed (${again.unchanged} unchanged, ${again.read} read; median of 3)`, fmt(rescanMs), `a plain listing (${keys.length} keys; median of 3)`, fmt(listMs), rescanMs / listMs]);

    await benchLargeBucket(gw, objects, rows, tmp);
    printRows(rows);
    console.log(`\nload average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores; gateway RSS after: ${Object.entries(gw.rssKiB()).map(([k, v]) => `${k} ${(v / 1024).toFixed(0)} MiB`).join(', ')}`);
  } finally {
    resetStoreHealth();
    await closeBuckets();
    await gw.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function printRows(rows: Array<[string, string, string, string, number]>): void {
  console.log('');
  console.log('| measure | spillway | baseline | baseline time | ratio |');
  console.log('| --- | ---: | --- | ---: | ---: |');
  for (const [m, v, b, bv, ratio] of rows) console.log(`| ${m} | ${v} | ${b} | ${bv} | ${ratio.toFixed(2)}x |`);
}
