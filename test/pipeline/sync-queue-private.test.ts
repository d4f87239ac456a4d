import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pendingDir, queuePending } from '../../src/pipeline/store/s3/index.js';

// A spill that fell back while the bucket was down is queued in app data for `spillway sync`. When
// that queue is the first thing to create app data, it must still be private (umask 022 would
// otherwise leave it 0755/0644).
describe('the sync queue is private from the first write', () => {
  const before = process.umask();
  afterEach(() => void process.umask(before));

  it('creates app data and the queue 0700, the record 0600, under umask 022', async () => {
    process.umask(0o022);
    const home = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-q-')), 'fresh-home');
    const env = { SPILLWAY_HOME: home };
    const file = await queuePending({ v: 1, store: 's3://b/p', session: '/tmp/s', stem: 'x', remoteSession: 's', reason: 'test', at: '' }, env);
    expect(fs.statSync(home).mode & 0o777).toBe(0o700);
    expect(fs.statSync(pendingDir(env)).mode & 0o777).toBe(0o700);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });
});
