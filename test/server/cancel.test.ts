/**
 * A client that goes away cancels its call: `spillway serve` aborts the service call when the HTTP
 * request closes before the answer, so a big structural summary in the compute worker stops and
 * records nothing. Real service, real index, real worker thread, real HTTP.
 */
import http from 'node:http';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { handleLargeResponse } from '../../src/pipeline/index.js';
import { httpService } from './helpers.js';

let payloadId: string;

/** ~24 MB of JSON records: a structural summary of it takes a while in the worker. */
function bigJson(bytes: number): string {
  const parts: string[] = [];
  for (let i = 0, size = 2; size < bytes; i++) {
    const r = JSON.stringify({ id: `ord_${i}`, tier: ['free', 'pro', 'team'][i % 3], qty: 1 + (i % 4), status: i % 17 ? 'paid' : 'failed' });
    parts.push(r);
    size += r.length + 1;
  }
  return `[${parts.join(',')}]`;
}

/** POST a contract call; resolves with the request so the test can destroy it mid-flight. */
function startCall(method: string, body: unknown): { req: http.ClientRequest; done: Promise<number | 'aborted'> } {
  const data = JSON.stringify(body);
  const req = http.request({
    host: '127.0.0.1',
    port: s.srv.port,
    path: `/api/${method}`,
    method: 'POST',
    headers: { host: `127.0.0.1:${s.srv.port}`, authorization: `Bearer ${s.srv.token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
  });
  const done = new Promise<number | 'aborted'>((resolve) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', () => resolve('aborted'));
  });
  req.end(data);
  return { req, done };
}

async function until(cond: () => boolean, what: string, ms = 60_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const s = httpService(
  'spillway-cancel-',
  (root) => handleLargeResponse({ text: bigJson(24 * 1024 * 1024), sessionPath: path.join(root, 'session'), context: { toolName: 'orders', limitTokens: 100 } }),
  { computeInlineMaxBytes: 0 },
);

beforeAll(async () => {
  payloadId = (await s.svc.listPayloads({ limit: 1 })).rows[0]!.id;
});

describe('serve cancels a call whose client went away', () => {
  it('a summary aborted by the client stops the worker and records nothing; the next one completes', async () => {
    const before = (await s.svc.getPayload({ id: payloadId })).summaryRuns.length;
    const first = startCall('summarize', { payloadId, provider: 'structural' });
    await until(() => s.svc.computeBusy, 'the summary to reach the compute worker');
    first.req.destroy();
    expect(await first.done).toBe('aborted');
    // the worker is stopped, not left to finish a summary nobody will read
    await until(() => !s.svc.computeBusy, 'the worker to stop');
    expect((await s.svc.getPayload({ id: payloadId })).summaryRuns.length).toBe(before);

    const second = startCall('summarize', { payloadId, provider: 'structural' });
    expect(await second.done).toBe(200);
    expect((await s.svc.getPayload({ id: payloadId })).summaryRuns.length).toBe(before + 1);
  }, 180_000);
});
