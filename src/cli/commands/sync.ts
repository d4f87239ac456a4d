import path from 'node:path';
import type { Command } from 'commander';
import {
  closeBuckets,
  isS3Url,
  openSessionWriter,
  parseS3Url,
  redactSecrets,
  resolveS3Settings,
  syncPending,
  syncSession,
  type SyncReport,
} from '../../pipeline/store/s3/index.js';
import { jsonLine, terminalSafe } from '../../pipeline/terminal.js';
import { checkOwnAppData } from '../../service/offline.js';

interface SyncOptions {
  store?: string;
  session: string[];
  as?: string;
  dryRun?: boolean;
  json?: boolean;
}

const collect = (v: string, prev: string[]) => [...prev, v];

function storeSetting(opts: SyncOptions): string | undefined {
  const s = opts.store ?? process.env.SPILLWAY_STORE;
  if (s === undefined || s === '') return undefined;
  if (!isS3Url(s)) throw new Error(`--store / SPILLWAY_STORE must be s3://bucket/prefix (got a local path: nothing to sync to)`);
  parseS3Url(s);
  return s;
}

export async function runSync(opts: SyncOptions): Promise<{ report: SyncReport; failed: number }> {
  const store = storeSetting(opts);
  const target = { writer: (s: string, remoteSession: string) => openSessionWriter(s, remoteSession) };
  let report: SyncReport = { outcomes: [] };
  try {
    if (opts.session.length) {
      if (!store) throw new Error('--session needs --store s3://bucket/prefix (or SPILLWAY_STORE)');
      if (opts.as !== undefined && opts.session.length > 1) throw new Error('--as names one session: give one --session with it');
      for (const dir of opts.session) {
        const r = await syncSession(target, store, path.resolve(dir), { remoteSession: opts.as, dryRun: opts.dryRun });
        report.outcomes.push(...r.outcomes);
        if (r.stoppedBy) {
          report.stoppedBy = r.stoppedBy;
          break;
        }
      }
    } else {
      // The queue is in app data: records another account could plant there would say what to upload, and where.
      checkOwnAppData({ env: process.env });
      report = await syncPending(target, { store, dryRun: opts.dryRun, env: process.env });
    }
  } finally {
    await closeBuckets();
  }
  const failed = report.outcomes.filter((o) => o.status === 'failed' || o.status === 'incomplete').length;
  return { report, failed };
}

export function register(program: Command): void {
  program
    .command('sync')
    .description('upload spills that fell back to a local folder while the S3 store was down (idempotent, never overwrites)')
    .option('--store <url>', 's3://bucket/prefix (default $SPILLWAY_STORE); without --session, only that store\'s queued spills')
    .option('--session <dir>', 'upload every spill of this local session instead of the queue (repeatable)', collect, [] as string[])
    .option('--as <name>', 'the session name in the bucket (default: the folder name)')
    .option('--dry-run', 'list what would be uploaded')
    .option('--json', 'print one JSON object: outcomes and whether the store stopped the run')
    .addHelpText(
      'after',
      '\nWhen the store is down or slow, the guard saves the spill locally, says so in the message, and\n' +
        'queues it in <app data>/pending-sync/. `spillway sync` uploads the queue (assets, payload, then the\n' +
        'sidecar); running it again skips what is already there. Local files are kept: the model was told\n' +
        'their path.\n\nExit status: 0 all uploaded, 1 some failed or the store is still unavailable, 2 bad usage.',
    )
    .action(async (opts: SyncOptions) => {
      let result;
      try {
        result = await runSync(opts);
      } catch (err) {
        process.stderr.write(`spillway sync: ${terminalSafe(redactSecrets((err as Error).message, resolveSecrets()))}\n`);
        process.exitCode = 2;
        return;
      }
      const { report, failed } = result;
      // File names and the store's own error texts reach a terminal: never raw controls (terminal.ts).
      if (opts.json) process.stdout.write(jsonLine(report) + '\n');
      else {
        for (const o of report.outcomes) {
          process.stdout.write(terminalSafe(`${o.status.padEnd(10)} ${o.local}${o.url ? ` -> ${o.url}` : ''}${o.error ? ` (${o.error})` : ''}`) + '\n');
        }
        const up = report.outcomes.filter((o) => o.status === 'uploaded' || o.status === 'renamed').length;
        const already = report.outcomes.filter((o) => o.status === 'already').length;
        process.stderr.write(`spillway sync: ${up} uploaded, ${already} already there, ${failed} not uploaded\n`);
      }
      if (report.stoppedBy) process.stderr.write(`spillway sync: the store is still unavailable (${terminalSafe(report.stoppedBy)}); the rest stays queued\n`);
      if (failed || report.stoppedBy) process.exitCode = 1;
    });
}

function resolveSecrets(): string[] {
  try {
    return resolveS3Settings('s3://placeholder-bucket').secrets;
  } catch {
    return [];
  }
}
