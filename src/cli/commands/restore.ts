import type { Command } from 'commander';
import path from 'node:path';
import { restoreFromStore, restorePayload, restoreToFile, writeFileAtomic } from '../../pipeline/index.js';
import { S3SpillStore, closeBuckets, isS3Url } from '../../pipeline/store/s3/index.js';
import { terminalSafe } from '../../pipeline/terminal.js';
import { exitBrokenPipe, isBrokenPipe } from '../pipes.js';
import { errMessage } from '../../pipeline/values.js';

/** A spill in a bucket (`s3://…/long_responses/<file>`), read through the S3 store. */
async function restoreS3(url: string, out?: string): Promise<Buffer | number> {
  try {
    const { store, metaKey } = S3SpillStore.locate(url);
    const buf = await restoreFromStore(store, metaKey);
    return out ? writeFileAtomic(path.resolve(out), buf) : buf;
  } finally {
    await closeBuckets();
  }
}

/** Byte for byte into a pipe or a file; a terminal gets the text with its controls made visible. */
function toStdout(buf: Buffer): Promise<void> {
  const data = process.stdout.isTTY ? terminalSafe(buf.toString('utf8')) : buf;
  return new Promise<void>((resolve, reject) => process.stdout.write(data, (e) => (e ? reject(e) : resolve())));
}

export function register(program: Command): void {
  program
    .command('restore')
    .description('rebuild a spilled result byte for byte (linked JSON and assets included), sha256-checked')
    .argument('<path>', 'the payload, .linked.json or .meta.json file (or its s3://bucket/… URL)')
    .option('-o, --output <file>', 'write to this file (atomic replace) instead of stdout')
    .action(async (p: string, opts: { output?: string }) => {
      try {
        if (isS3Url(p)) {
          const r = await restoreS3(p, opts.output);
          if (typeof r === 'number') process.stderr.write(`restored ${r} bytes to ${terminalSafe(opts.output!)}\n`);
          else await toStdout(r);
        } else if (opts.output) {
          const n = await restoreToFile(p, opts.output);
          process.stderr.write(`restored ${n} bytes to ${terminalSafe(opts.output)}\n`);
        } else await toStdout(await restorePayload(p));
      } catch (err) {
        // The reader went away (`| head -c 300`): stop quietly, like a Unix tool.
        if (isBrokenPipe(err)) exitBrokenPipe();
        process.stderr.write(`spillway restore: ${terminalSafe(errMessage(err))}\n`);
        process.exitCode = 1;
      }
    });
}
