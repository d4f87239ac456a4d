import path from 'node:path';
import type { Command } from 'commander';
import { appPaths } from '../../pipeline/index.js';
import { openIndex } from '../../index/index.js';
import type { IndexStats } from '../../service/contract.js';

/** Redraw the progress bar at most this often (a TTY write per unit would cost more than the unit). */
const PROGRESS_REDRAW_MS = 80;
const BAR_CELLS = 30;

function human(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

/**
 * `spillway index DIR... [--db FILE] [--json]`: register each DIR as a root (a folder of
 * sessions, one session, one file, or Claude Code's `~/.claude/projects`) and bring the index up
 * to date. Progress goes to stderr on a TTY; `--json` prints the totals as one JSON line.
 */
export function register(program: Command): void {
  program
    .command('index')
    .description('index sessions (Spillway, Claude Code, Codex, Gemini) into the inspector\'s SQLite database')
    .argument('<dir...>', 'sessions folder, session folder, single file, or ~/.claude/projects')
    .option('--db <file>', 'index database (default: the app-data folder\'s index.sqlite)')
    .option('--json', 'print {"sessions","payloads","assets","bytes","seconds"} as JSON')
    .action(async (dirs: string[], opts: { db?: string; json?: boolean }) => {
      const dbPath = path.resolve(opts.db ?? appPaths().db);
      const index = openIndex({ dbPath });
      const tty = Boolean(process.stderr.isTTY) && !opts.json;
      let lastDraw = 0;
      const draw = (label: string, done: number, total: number, force = false) => {
        if (!tty) return;
        const now = Date.now();
        if (!force && now - lastDraw < PROGRESS_REDRAW_MS) return;
        lastDraw = now;
        const share = total ? Math.min(1, done / total) : 0;
        const cells = Math.round(share * BAR_CELLS);
        process.stderr.write(`\r\x1b[2K${label} [${'#'.repeat(cells)}${'.'.repeat(BAR_CELLS - cells)}] ${done}/${total}`);
      };
      try {
        for (const w of index.warnings) process.stderr.write(`spillway: ${w}\n`);
        const rootIds: string[] = [];
        for (const dir of dirs) {
          const abs = path.resolve(dir);
          const covering = index.rootFor(abs);
          const root = covering ?? index.addRoot(abs);
          if (!rootIds.includes(root.id)) rootIds.push(root.id);
        }
        const t0 = performance.now();
        const total: IndexStats = { sessions: 0, payloads: 0, assets: 0, bytes: 0, seconds: 0 };
        for (const rootId of rootIds) {
          const root = index.listRoots().find((r) => r.id === rootId)!;
          const label = path.basename(root.path) || root.path;
          let last = { done: 0, total: 0 };
          const res = await index.scan({
            rootId,
            onProgress: (p) => {
              last = p;
              draw(label, p.done, p.total);
            },
          });
          draw(label, last.total, last.total, true);
          if (tty) process.stderr.write('\n');
          for (const w of res.warnings) process.stderr.write(`spillway: ${w}\n`);
          total.sessions += res.sessions;
          total.payloads += res.payloads;
          total.assets += res.assets;
          total.bytes += res.bytes;
        }
        total.seconds = Math.round((performance.now() - t0) / 10) / 100;
        if (opts.json) {
          process.stdout.write(JSON.stringify(total) + '\n');
        } else {
          process.stdout.write(
            `indexed ${total.sessions} session(s), ${total.payloads} payload(s), ${total.assets} asset(s), ${human(total.bytes)} in ${total.seconds.toFixed(2)} s\n` +
              `database: ${dbPath}\n`,
          );
        }
      } finally {
        await index.close();
      }
    });
}
