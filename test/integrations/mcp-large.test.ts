import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MESSAGE_CHARS } from '../../src/pipeline/index.js';
import { FILESYSTEM, makeLog, rawProxy, rawServer, tmpDir, type RawPeer } from './helpers.js';

const SIZE_BYTES = 32 * 1024 * 1024;
/** The server itself takes seconds to read and serialize 64 MB; on a busy 2-core machine, tens of seconds. */
const BIG_TEST_TIMEOUT_MS = 240_000;

describe('a 32 MB tool result', () => {
  let data: string;
  let file: string;
  const peers: RawPeer[] = [];
  let alone: RawPeer;
  /** The server's own answer, fetched once and compared with both proxy runs. */
  let direct: Promise<{ msg: Record<string, unknown>; raw: Buffer }>;

  beforeAll(async () => {
    data = fs.realpathSync(tmpDir('spillway-big-'));
    file = path.join(data, 'huge.log');
    fs.writeFileSync(file, makeLog(SIZE_BYTES));
    alone = rawServer(FILESYSTEM, [data]);
    peers.push(alone);
    await alone.initialize();
    direct = alone.request('tools/call', { name: 'read_text_file', arguments: { path: file } }, 9, BIG_TEST_TIMEOUT_MS);
    direct.catch(() => {}); // awaited by the tests; this only keeps an early failure from being unhandled
  }, BIG_TEST_TIMEOUT_MS);
  afterAll(async () => {
    await Promise.allSettled(peers.map((p) => p.close()));
    fs.rmSync(data, { recursive: true, force: true });
  });

  it('passes through byte for byte when under the limit (the SDK reader would stop at 10 MiB)', async () => {
    const home = tmpDir();
    const viaProxy = rawProxy(home, ['--limit', '1000000000', '--session', path.join(home, 's')], FILESYSTEM, [data]);
    peers.push(viaProxy);
    await viaProxy.initialize();
    const a = await viaProxy.request('tools/call', { name: 'read_text_file', arguments: { path: file } }, 9, BIG_TEST_TIMEOUT_MS);
    const b = await direct;
    expect(a.raw.length).toBeGreaterThan(2 * SIZE_BYTES); // text + structuredContent
    expect(a.raw.equals(b.raw)).toBe(true);
    // The proxy is still usable afterwards.
    const small = await viaProxy.request('tools/call', { name: 'list_allowed_directories', arguments: {} }, 10);
    expect(JSON.stringify(small.msg)).toContain(data);
  }, BIG_TEST_TIMEOUT_MS);

  it('is spilled whole under the default limit, and the client gets a bounded result', async () => {
    const home = tmpDir();
    const session = path.join(home, 's');
    const viaProxy = rawProxy(home, ['--session', session], FILESYSTEM, [data]);
    peers.push(viaProxy);
    await viaProxy.initialize();
    await viaProxy.request('tools/list', {}, 'l');
    const a = await viaProxy.request('tools/call', { name: 'read_text_file', arguments: { path: file } }, 11, BIG_TEST_TIMEOUT_MS);
    const b = await direct;
    expect(a.raw.length).toBeLessThan(2 * MAX_MESSAGE_CHARS + 8_000);
    const result = a.msg.result as { _meta: Record<string, { payloadPath: string }> };
    const saved = fs.readFileSync(result._meta['spillway/spill']!.payloadPath);
    const expected = Buffer.from(JSON.stringify((b.msg as { result: unknown }).result));
    expect(saved.length).toBe(expected.length);
    expect(crypto.createHash('sha256').update(saved).digest('hex')).toBe(crypto.createHash('sha256').update(expected).digest('hex'));
  }, BIG_TEST_TIMEOUT_MS);
});
