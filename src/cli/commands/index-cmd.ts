import path from 'node:path';
import type { Command } from 'commander';
import type { IndexProgressEvent } from '../../service/contract.js';
import { indexFolders } from '../../service/offline.js';
import { terminalSafe } from '../../pipeline/terminal.js';

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

/** What `spillway index` shows while a root is scanned: a bar per phase on a terminal, a line per phase otherwise. */
class Progress {
  private lastDraw = 0;
  private phase: IndexProgressEvent['phase'] | null = null;
  private last = { done: 0, total: 0 };
  private readonly t0 = performance.now();

  constructor(
    private readonly label: string,
    private readonly tty: boolean,
    private readonly quiet: boolean,
  ) {}

  private static title(phase: IndexProgressEvent['phase']): string {
    return phase === 'fulltext' ? 'full-text search' : 'listing';
  }

  update(p: IndexProgressEvent): void {
    if (this.quiet) return;
    const phase = p.phase ?? 'list';
    if (phase !== this.phase) {
      if (this.phase) this.end();
      this.phase = phase;
    }
    this.last = { done: p.done, total: p.total };
    this.draw(false);
  }

  private draw(force: boolean): void {
    if (!this.tty || !this.phase) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < PROGRESS_REDRAW_MS) return;
    this.lastDraw = now;
    const { done, total } = this.last;
    const cells = Math.round((total ? Math.min(1, done / total) : 0) * BAR_CELLS);
    process.stderr.write(`\r\x1b[2K${terminalSafe(this.label)} ${Progress.title(this.phase)} [${'#'.repeat(cells)}${'.'.repeat(BAR_CELLS - cells)}] ${done}/${total}`);
  }

  /** The phase in progress is over: finish its bar, or print its line. */
  end(): void {
    if (this.quiet || !this.phase) return;
    const seconds = ((performance.now() - this.t0) / 1000).toFixed(2);
    if (this.tty) {
      this.last.done = this.last.total;
      this.draw(true);
      process.stderr.write(` ${seconds} s\n`);
    } else {
      const what = this.phase === 'fulltext' ? `${this.last.total} payload(s) searchable` : `${this.last.total} unit(s) listed`;
      process.stderr.write(`spillway: ${terminalSafe(this.label)}: ${Progress.title(this.phase)} done, ${what}, at ${seconds} s\n`);
    }
    this.phase = null;
  }
}

/**
 * `spillway index DIR... [--db FILE] [--json]`: register each DIR as a root (a folder of
 * sessions, one session, one file, or Claude Code's `~/.claude/projects`) and bring the index up
 * to date: every payload listed first, then full-text search. Progress of both phases goes to
 * stderr (a bar on a terminal, one line per phase otherwise); `--json` prints only the totals,
 * as one JSON line.
 */
export function register(program: Command): void {
  program
    .command('index')
    .description('index sessions (Spillway, Claude Code, Codex, Gemini) into the inspector\'s SQLite database')
    .argument('<dir...>', 'sessions folder, session folder, single file, ~/.claude/projects, or s3://bucket/prefix (read-only)')
    .option('--db <file>', 'index database (default: the app-data folder\'s index.sqlite)')
    .option('--json', 'print {"sessions","payloads","assets","bytes","seconds"} as JSON (and no progress)')
    .action(async (dirs: string[], opts: { db?: string; json?: boolean }) => {
      const tty = Boolean(process.stderr.isTTY);
      const labelOf = (root: { path: string }) => path.basename(root.path) || root.path;
      const bars = new Map<string, Progress>();
      const total = await indexFolders({
        dirs,
        env: process.env,
        dbPath: opts.db,
        onProgress: (root, p) => {
          let bar = bars.get(root.path);
          if (!bar) bars.set(root.path, (bar = new Progress(labelOf(root), tty, Boolean(opts.json))));
          bar.update(p);
        },
        onRootDone: (root) => bars.get(root.path)?.end(),
        // Warnings name files inside sessions: payload-derived text.
        onWarning: (w) => process.stderr.write(`spillway: ${terminalSafe(w)}\n`),
      });
      if (opts.json) {
        const { dbPath: _db, ...stats } = total;
        process.stdout.write(JSON.stringify(stats) + '\n');
      } else {
        process.stdout.write(
          `indexed ${total.sessions} session(s), ${total.payloads} payload(s), ${total.assets} asset(s), ${human(total.bytes)} in ${total.seconds.toFixed(2)} s\n` +
            `database: ${terminalSafe(total.dbPath)}\n`,
        );
      }
    });
}
