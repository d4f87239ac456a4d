/**
 * The set-up most S3 test files share: a gateway of their own (ceph.ts), its credentials in this
 * process's environment (the CLI code under test reads the standard AWS variables), a temp folder
 * with its own app-data folder, and an S3 client for looking at the bucket directly.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { S3Objects } from '../../src/pipeline/store/s3/client.js';
import { resolveS3Settings } from '../../src/pipeline/store/s3/config.js';
import { closeBuckets, resetStoreHealth } from '../../src/pipeline/store/s3/index.js';
import { startGateway, type Gateway } from './ceph.js';

export interface GatewayFixture {
  gw: Gateway;
  /** Raw S3 calls on the gateway's bucket (keys from the bucket's top). */
  s3: S3Objects;
  tmp: string;
}

/** Call inside an `s3Suite`: the fields are set once its beforeAll ran. */
export function useGateway(tmpPrefix: string): GatewayFixture {
  const f = {} as GatewayFixture;
  beforeAll(async () => {
    f.gw = await startGateway();
    Object.assign(process.env, f.gw.env);
    f.tmp = fs.mkdtempSync(path.join(os.tmpdir(), `spillway-${tmpPrefix}-`));
    process.env.SPILLWAY_HOME = path.join(f.tmp, 'home');
    f.s3 = new S3Objects(resolveS3Settings(`s3://${f.gw.bucket}`, { env: f.gw.env }));
  });
  afterAll(async () => {
    f.s3?.destroy();
    await closeBuckets();
    resetStoreHealth();
    await f.gw?.stop();
    if (f.tmp) fs.rmSync(f.tmp, { recursive: true, force: true });
  });
  return f;
}
