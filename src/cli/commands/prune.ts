import path from 'node:path';
import type { Command } from 'commander';
import { parseDuration, pruneLocalSession, type PruneReport } from '../../pipeline/index.js';
import { closeBuckets, forgetPending, isS3Url, openBucket, parseS3Url, pruneBucket, redactSecrets, resolveS3Settings } from '../../pipeline/store/s3/index.js';
import { jsonLine, terminalSafe } from '../../pipeline/terminal.js';
import { checkOwnAppData, forgetPruned } from '../../service/offline.js';

interface PruneCliOptions {
  olderThan?: string;
  session: string[];
  store?: string;
  dryRun?: boolean;
  db?: string;
  json?: boolean;
}

const collect = (v: string, prev: string[]) => [...prev, v];

export interface PruneRun {
  targets: Array<{ target: string } & PruneReport>;
  indexRemoved: number;
  /** Sync-queue records dropped: of spills pruned locally, or queued for the bucket and past its cutoff. */
  queueRemoved: number;
}

/** Prune every `--session` folder and the `--store` bucket; then the index forgets what went. */
export async function runPrune(opts: PruneCliOptions): Promise<PruneRun> {
  const olderThanMs = opts.olderThan === undefined ? null : parseDuration(opts.olderThan);
  if (olderThanMs === null) throw new Error(`--older-than needs a duration such as 30d, 12h or 90m${opts.olderThan !== undefined ? ` (got ${JSON.stringify(opts.olderThan)})` : ''}`);
  if (!opts.session.length && !opts.store) throw new Error('say what to prune: --session DIR (repeatable) and/or --store s3://bucket/prefix');
  if (opts.store && !isS3Url(opts.store)) throw new Error('--store must be s3://bucket/prefix (a local session folder goes with --session)');
  // App data and the index another account owns or can write: refused before anything is deleted.
  checkOwnAppData({ dbPath: opts.db, env: process.env });
  const now = Date.now();
  const out: PruneRun = { targets: [], indexRemoved: 0, queueRemoved: 0 };
  for (const dir of opts.session) {
    const abs = path.resolve(dir);
    out.targets.push({ target: abs, ...pruneLocalSession(abs, { olderThanMs, dryRun: opts.dryRun, now }) });
  }
  if (opts.store) {
    const loc = parseS3Url(opts.store);
    try {
      const objects = await openBucket(loc);
      out.targets.push({ target: opts.store, ...(await pruneBucket(objects, loc, { olderThanMs, dryRun: opts.dryRun, now })) });
    } finally {
      await closeBuckets();
    }
  }
  const local = out.targets.filter((t) => !isS3Url(t.target)).flatMap((t) => t.units);
  out.queueRemoved = await forgetPending({ units: local, ...(opts.store ? { store: opts.store, cutoffMs: now - olderThanMs } : {}), dryRun: opts.dryRun, env: process.env });
  if (!opts.dryRun) out.indexRemoved = (await forgetPruned(out.targets.flatMap((t) => t.units), { dbPath: opts.db, env: process.env })).removed;
  return out;
}

export function register(program: Command): void {
  program
    .command('prune')
    .description('delete spills older than a duration from local sessions and buckets: sidecar first, then payload, unreferenced assets and journal entries')
    .requiredOption('--older-than <duration>', 'spills older than this go: 30d, 12h, 90m, 2w')
    .option('--session <dir>', 'a local session folder (the one holding long_responses/); repeatable', collect, [] as string[])
    .option('--store <url>', 'a bucket prefix, s3://bucket/prefix: every session under it')
    .option('--dry-run', 'say what would go, delete nothing')
    .option('--db <file>', 'the index that drops what was pruned (default: the app-data folder\'s index.sqlite, when it exists)')
    .option('--json', 'print one JSON object per target')
    .addHelpText(
      'after',
      '\nA spill is dated by the UTC time its name starts with. Its sidecar (the commit marker) is deleted\n' +
        'first: a prune that is interrupted leaves at most payloads without sidecars, which the index\n' +
        'lists as incomplete and the next prune removes. An asset goes when no remaining sidecar of its\n' +
        'session names it. docs/storage.md gives the S3 lifecycle rule that does the same on the server.\n\n' +
        'Exit status: 0 done, 1 a target failed, 2 bad usage.',
    )
    .action(async (opts: PruneCliOptions) => {
      let run: PruneRun;
      try {
        run = await runPrune(opts);
      } catch (err) {
        const msg = redactSecrets((err as Error).message, secrets());
        const usage = /^(--|say what)/.test(msg);
        process.stderr.write(`spillway prune: ${terminalSafe(msg)}\n`);
        process.exitCode = usage ? 2 : 1;
        return;
      }
      const verb = opts.dryRun ? 'would remove' : 'removed';
      for (const t of run.targets) {
        const { units: _u, ...rest } = t;
        if (opts.json) process.stdout.write(jsonLine({ ...rest, dryRun: opts.dryRun === true }) + '\n');
        else {
          process.stdout.write(
            terminalSafe(
              `${t.target}: ${verb} ${t.spills} spill(s)${t.orphans ? ` (${t.orphans} without a sidecar)` : ''}, ${t.assets} asset(s), ${t.journal} journal entr${t.journal === 1 ? 'y' : 'ies'}; ${(t.bytes / 1024 / 1024).toFixed(1)} MiB; kept ${t.kept}`,
            ) + '\n',
          );
        }
        for (const w of t.warnings) process.stderr.write(`spillway prune: ${terminalSafe(w)}\n`);
      }
      if (!opts.json && run.queueRemoved) process.stderr.write(`spillway prune: ${opts.dryRun ? 'would drop' : 'dropped'} ${run.queueRemoved} sync-queue record(s) of pruned spills\n`);
      if (!opts.json && run.indexRemoved) process.stderr.write(`spillway prune: the index dropped ${run.indexRemoved} payload(s)\n`);
    });
}

function secrets(): string[] {
  try {
    return resolveS3Settings('s3://placeholder-bucket').secrets;
  } catch {
    return [];
  }
}
