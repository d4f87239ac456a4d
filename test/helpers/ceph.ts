/**
 * A real S3 endpoint for tests and benches: Ceph's RADOS Gateway (Debian's 16.2.15), started
 * single-node on 127.0.0.1 in a temp folder, on free ports, so parallel runs never meet.
 *
 * | call                   | for                                                                  |
 * | ---------------------- | -------------------------------------------------------------------- |
 * | `cephMissing()`        | which binaries are absent (empty when the gateway can be started)    |
 * | `s3Suite(name, fn)`    | a `describe` that skips loudly without Ceph, and FAILS on CI (CI=true) |
 * | `startGateway()`       | monitor → one memstore OSD → radosgw (beast), a user, a bucket       |
 * | `gw.stop()`            | ends the daemons by their PID files (they detach) and removes the dir |
 * | `gw.killGateway()`     | SIGKILL radosgw only (the monitor and OSD keep the data)             |
 * | `gw.startGateway()`    | start radosgw again on the same port                                 |
 *
 * The settings that are not obvious (measured in issue 16): `ms mon client mode = crc` (else
 * radosgw cannot log in with auth off and hangs 300 s), `paxos propose interval = 0.05` (else the
 * first start takes ~9 s), `tcp_nodelay=1` on beast (sequential GETs 46 ms → 2–3 ms), short
 * `rgw gc` periods (else deleted data stays in memstore's RAM), and a generous memstore size
 * (a full memstore hangs writes instead of failing them).
 */
import { execFile, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe } from 'vitest';

const run = promisify(execFile);
// The SDK's Node 20 end-of-support notice would repeat in every test file's output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export const CEPH_BINARIES = ['monmaptool', 'ceph-mon', 'ceph-osd', 'radosgw', 'radosgw-admin', 'ceph'] as const;
/** Memstore's logical size: far above what any test or bench stores, so it never fills (a full memstore hangs). */
const MEMSTORE_DEVICE_BYTES = 16 * 1024 ** 3;
/** One step of the start (a daemon's mkfs, a CLI call) may take this long before the start is given up. */
const STEP_TIMEOUT_MS = 60_000;
/** The gateway must answer HTTP within this long after radosgw is launched. */
const GATEWAY_READY_TIMEOUT_MS = 60_000;
/** A daemon gets this long to exit after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 5_000;

export function cephMissing(): string[] {
  return CEPH_BINARIES.filter((b) => spawnSync('sh', ['-c', `command -v ${b}`], { stdio: 'ignore' }).status !== 0);
}

const SKIP_BANNER = (missing: string[]) =>
  `\n${'!'.repeat(78)}\n!! S3 TESTS SKIPPED: Ceph is not installed (missing: ${missing.join(', ')}).\n` +
  `!! Install it with: apt-get install -y ceph-mon ceph-osd radosgw ceph-common\n${'!'.repeat(78)}\n`;

/**
 * `describe` for tests that need the gateway. Without Ceph it skips ONLY these tests, loudly;
 * with CI=true a missing Ceph is an error, so CI can never go green without running them.
 */
export function s3Suite(name: string, fn: () => void): void {
  const missing = cephMissing();
  if (missing.length === 0) {
    describe(name, fn);
    return;
  }
  if (process.env.CI === 'true') {
    throw new Error(`CI=true but Ceph is missing (${missing.join(', ')}): the S3 tests must run on CI. .ci/run installs it.`);
  }
  console.warn(SKIP_BANNER(missing));
  describe.skip(name, fn);
}

export interface Gateway {
  endpoint: string;
  region: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Environment for a child process (CLI, guard) that should talk to this gateway. */
  env: Record<string, string>;
  dir: string;
  /** Milliseconds from nothing to a signed S3 answer, and per step. */
  timings: Record<string, number>;
  /** Resident memory of the three daemons, KiB (from /proc). */
  rssKiB(): Record<string, number>;
  killGateway(): Promise<void>;
  startGateway(): Promise<void>;
  /** Create another bucket on this gateway. */
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function conf(dir: string, fsid: string, monPort: number, rgwPort: number): string {
  return `[global]
fsid = ${fsid}
mon host = v2:127.0.0.1:${monPort}
mon initial members = a
public addr = 127.0.0.1
ms bind ipv6 = false
auth cluster required = none
auth service required = none
auth client required = none
auth supported = none
ms mon client mode = crc
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon data avail crit = 0
mon data avail warn = 0
run dir = ${dir}/run
log file = ${dir}/log/$name.log
admin socket = ${dir}/run/$name.asok
pid file = ${dir}/run/$name.pid
[mon]
mon data = ${dir}/mon/$cluster-$id
paxos propose interval = 0.05
[osd]
osd objectstore = memstore
osd data = ${dir}/osd/$cluster-$id
memstore device bytes = ${MEMSTORE_DEVICE_BYTES}
[client.rgw.t]
rgw frontends = beast endpoint=127.0.0.1:${rgwPort} tcp_nodelay=1
rgw gc obj min wait = 1
rgw gc processor period = 1
rgw gc processor max time = 1
rgw enable usage log = false
`;
}

const live = new Set<Gateway>();
let exitHookInstalled = false;

/** Our daemons only: the pid file's process must name this gateway's config on its command line. */
function ownPid(dir: string, name: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(dir, 'run', `${name}.pid`), 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 1) return undefined;
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return cmd.includes(path.join(dir, 'ceph.conf')) ? pid : undefined;
  } catch {
    return undefined;
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    // A zombie (already exited, not yet reaped by init) still answers signal 0.
    return !/^\d+ \([^)]*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

async function endDaemon(dir: string, name: string, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const pid = ownPid(dir, name);
  if (pid === undefined) return;
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const until = Date.now() + STOP_GRACE_MS;
  while (alive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
  if (alive(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
    while (alive(pid)) await new Promise((r) => setTimeout(r, 25));
  }
  fs.rmSync(path.join(dir, 'run', `${name}.pid`), { force: true });
}

const DAEMONS = ['client.rgw.t', 'osd.0', 'mon.a'] as const;

async function waitHttp(port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.write('GET / HTTP/1.0\r\n\r\n');
      });
      s.once('data', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
      s.setTimeout(1000, () => {
        s.destroy();
        resolve(false);
      });
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`radosgw did not answer on 127.0.0.1:${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function logTail(dir: string): string {
  return DAEMONS.map((d) => {
    try {
      const t = fs.readFileSync(path.join(dir, 'log', `${d}.log`), 'utf8');
      return `--- ${d}.log ---\n${t.slice(-1500)}`;
    } catch {
      return '';
    }
  }).join('\n');
}

export interface StartOptions {
  bucket?: string;
}

export async function startGateway(opts: StartOptions = {}): Promise<Gateway> {
  const missing = cephMissing();
  if (missing.length) throw new Error(`Ceph is missing: ${missing.join(', ')}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-ceph-'));
  for (const d of ['run', 'log', 'mon', 'osd/ceph-0']) fs.mkdirSync(path.join(dir, d), { recursive: true });
  const [monPort, rgwPort] = await Promise.all([freePort(), freePort()]);
  const fsid = crypto.randomUUID();
  const cfg = path.join(dir, 'ceph.conf');
  fs.writeFileSync(cfg, conf(dir, fsid, monPort, rgwPort));
  const c = ['-c', cfg];
  const step = (cmd: string, args: string[]) => run(cmd, args, { timeout: STEP_TIMEOUT_MS, cwd: dir });
  const timings: Record<string, number> = {};
  const t0 = performance.now();
  const mark = (k: string) => (timings[k] = Math.round(performance.now() - t0));
  const accessKeyId = 'SPILL' + crypto.randomBytes(8).toString('hex').toUpperCase();
  const secretAccessKey = crypto.randomBytes(24).toString('base64url');
  const bucket = opts.bucket ?? 'spill-' + crypto.randomBytes(4).toString('hex');
  const endpoint = `http://127.0.0.1:${rgwPort}`;
  const region = 'us-east-1';

  const gw: Gateway = {
    endpoint,
    region,
    bucket,
    accessKeyId,
    secretAccessKey,
    dir,
    timings,
    env: {
      AWS_ENDPOINT_URL: endpoint,
      AWS_REGION: region,
      AWS_ACCESS_KEY_ID: accessKeyId,
      AWS_SECRET_ACCESS_KEY: secretAccessKey,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    rssKiB() {
      const out: Record<string, number> = {};
      for (const d of DAEMONS) {
        const pid = ownPid(dir, d);
        if (pid === undefined) continue;
        const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
        if (m) out[d] = Number(m[1]);
      }
      return out;
    },
    async killGateway() {
      await endDaemon(dir, 'client.rgw.t', 'SIGKILL');
    },
    async startGateway() {
      await step('radosgw', [...c, '-n', 'client.rgw.t']);
      await waitHttp(rgwPort, GATEWAY_READY_TIMEOUT_MS);
    },
    async createBucket(name: string) {
      const { S3Client, CreateBucketCommand } = await import('@aws-sdk/client-s3');
      const s3 = new S3Client({
        endpoint,
        region,
        forcePathStyle: true,
        credentials: { accessKeyId, secretAccessKey },
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
      try {
        await s3.send(new CreateBucketCommand({ Bucket: name }));
      } finally {
        s3.destroy();
      }
    },
    async stop() {
      live.delete(gw);
      for (const d of DAEMONS) await endDaemon(dir, d);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  live.add(gw);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // A crashed or interrupted test must not leave detached daemons behind.
    process.on('exit', () => {
      for (const g of live) {
        for (const d of DAEMONS) {
          const pid = ownPid(g.dir, d);
          if (pid !== undefined) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              /* gone */
            }
          }
        }
        fs.rmSync(g.dir, { recursive: true, force: true });
      }
    });
  }

  try {
    await step('monmaptool', ['--create', '--addv', 'a', `[v2:127.0.0.1:${monPort}]`, '--fsid', fsid, path.join(dir, 'monmap')]);
    await step('ceph-mon', [...c, '--mkfs', '-i', 'a', '--monmap', path.join(dir, 'monmap')]);
    await step('ceph-mon', [...c, '-i', 'a']);
    mark('mon');
    const osdUuid = crypto.randomUUID();
    const { stdout: osdId } = await step('ceph', [...c, '--connect-timeout', '30', 'osd', 'new', osdUuid]);
    if (osdId.trim() !== '0') throw new Error(`expected osd id 0, got ${osdId.trim()}`);
    await step('ceph-osd', [...c, '-i', '0', '--mkfs', '--osd-uuid', osdUuid]);
    await step('ceph-osd', [...c, '-i', '0']);
    mark('osd');
    await gw.startGateway();
    mark('rgw');
    await step('radosgw-admin', [
      ...c,
      'user',
      'create',
      '--uid=spillway',
      '--display-name=spillway tests',
      `--access-key=${accessKeyId}`,
      `--secret-key=${secretAccessKey}`,
    ]);
    await gw.createBucket(bucket);
    mark('ready');
  } catch (err) {
    const tail = logTail(dir);
    await gw.stop().catch(() => undefined);
    throw new Error(`Ceph gateway did not start: ${(err as Error).message}\n${tail}`);
  }
  return gw;
}
