import type { Command } from 'commander';
import { restorePayload, restoreToFile } from '../../pipeline/index.js';
import { terminalSafe } from '../../pipeline/terminal.js';

export function register(program: Command): void {
  program
    .command('restore')
    .description('rebuild a spilled result byte for byte (linked JSON and assets included), sha256-checked')
    .argument('<path>', 'the payload, .linked.json or .meta.json file')
    .option('-o, --output <file>', 'write to this file (atomic replace) instead of stdout')
    .action(async (p: string, opts: { output?: string }) => {
      try {
        if (opts.output) {
          const n = await restoreToFile(p, opts.output);
          process.stderr.write(`restored ${n} bytes to ${opts.output}\n`);
        } else {
          const buf = await restorePayload(p);
          // Byte for byte into a pipe or a file; a terminal gets the text with its controls made visible.
          const data = process.stdout.isTTY ? terminalSafe(buf.toString('utf8')) : buf;
          await new Promise<void>((resolve, reject) => process.stdout.write(data, (e) => (e ? reject(e) : resolve())));
        }
      } catch (err) {
        process.stderr.write(`spillway restore: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exitCode = 1;
      }
    });
}
