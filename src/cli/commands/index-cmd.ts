import path from 'node:path';
import type { Command } from 'commander';
import { indexFolders } from '../../service/offline.js';
import { terminalSafe } from '../terminal.js';

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
      const tty = Boolean(process.stderr.isTTY) && !opts.json;
      let lastDraw = 0;
      const draw = (label: string, done: number, total: number, force = false) => {
        if (!tty) return;
        const now = Date.now();
        if (!force && now - lastDraw < PROGRESS_REDRAW_MS) return;
        lastDraw = now;
        const share = total ? Math.min(1, done / total) : 0;
        const cells = Math.round(share * BAR_CELLS);
        process.stderr.write(`\r\x1b[2K${terminalSafe(label)} [${'#'.repeat(cells)}${'.'.repeat(BAR_CELLS - cells)}] ${done}/${total}`);
      };
      const labelOf = (root: { path: string }) => path.basename(root.path) || root.path;
      const last = new Map<string, number>();
      const total = await indexFolders({
        dirs,
        dbPath: opts.db,
        onProgress: (root, done, of) => {
          last.set(root.path, of);
          draw(labelOf(root), done, of);
        },
        onRootDone: (root) => {
          const of = last.get(root.path) ?? 0;
          draw(labelOf(root), of, of, true);
          if (tty) process.stderr.write('\n');
        },
        // Warnings name files inside sessions: payload-derived text.
        onWarning: (w) => process.stderr.write(`spillway: ${terminalSafe(w)}\n`),
      });
      if (opts.json) {
        const { dbPath: _db, ...stats } = total;
        process.stdout.write(JSON.stringify(stats) + '\n');
      } else {
        process.stdout.write(
          `indexed ${total.sessions} session(s), ${total.payloads} payload(s), ${total.assets} asset(s), ${human(total.bytes)} in ${total.seconds.toFixed(2)} s\n` +
            `database: ${total.dbPath}\n`,
        );
      }
    });
}
