/**
 * Summary runs of imported (read-only) payloads, which have no sidecar to hold them: one JSON line
 * per run in `<app data>/summary-runs/<payload id>.jsonl` (0600), put back into the index after
 * every scan, so a rebuilt database loses none.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { SummaryRun } from '../pipeline/types.js';
import { IndexError, type SpillIndex } from '../index/index.js';
import { ServiceError } from './contract.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from './private-files.js';

export function createImportedRuns(dir: string, warn: (m: string) => void) {
  /** Payload ids are opaque, URL-safe hashes; anything else never becomes a file name. */
  const fileFor = (payloadId: string) => {
    if (!/^[A-Za-z0-9_-]{1,200}$/.test(payloadId)) throw new ServiceError('BAD_REQUEST', `bad payload id ${JSON.stringify(payloadId)}`);
    return path.join(dir, `${payloadId}.jsonl`);
  };

  return {
    /** A single O_APPEND write of a line is atomic and never rewrites earlier runs. */
    async keep(payloadId: string, run: SummaryRun): Promise<void> {
      const file = fileFor(payloadId);
      await ensurePrivateDir(dir);
      await fs.promises.appendFile(file, JSON.stringify(run) + '\n', { flag: 'a', mode: PRIVATE_FILE_MODE });
    },

    /** After a scan (a rebuilt database included), put kept runs back into the index. */
    async restore(ix: SpillIndex): Promise<void> {
      let files: string[];
      try {
        files = await fs.promises.readdir(dir);
      } catch {
        return;
      }
      for (const f of files) {
        if (!f.endsWith('.jsonl')) continue;
        const payloadId = f.slice(0, -'.jsonl'.length);
        let text: string;
        try {
          text = await fs.promises.readFile(fileFor(payloadId), 'utf8');
        } catch {
          continue;
        }
        const known = new Set(ix.summaryRuns(payloadId).map((run) => run.id));
        for (const line of text.split('\n')) {
          if (!line.trim()) continue;
          try {
            const run = JSON.parse(line) as SummaryRun;
            if (!known.has(run.id)) ix.addSummaryRun(payloadId, run);
          } catch (err) {
            // The payload is gone (its transcript was deleted): keep the file, it may come back.
            if (err instanceof IndexError && err.code === 'NOT_FOUND') break;
            warn(`skipped a damaged summary run in ${f}: ${(err as Error).message}`);
          }
        }
      }
    },
  };
}
