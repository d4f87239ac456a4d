import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { createInspectorService, defaultRootsChoice, NO_DEFAULT_ROOTS_ENV } from '../../service/service.js';
import { startServer, type RunningServer } from '../../server/server.js';
import { terminalSafe } from '../../pipeline/terminal.js';
import { ADAPTERS, type ClientAdapter } from '../../agents/index.js';

/** Every client's default session folder as the help names it (each adapter's `files.hint`): written once, in the adapters. */
const DEFAULT_FOLDERS = Object.values(ADAPTERS)
  .map((a: ClientAdapter) => a.files.hint)
  .join(', ');

function parsePort(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port is an integer from 0 to 65535');
  return n;
}

const collect = (v: string, prev: string[]) => [...prev, v];

/** A link handed to a browser process (its argv is readable by every local account) dies unused after this. */
export const OPEN_LINK_TTL_MS = 2 * 60_000;

/**
 * The token a caller fixes, from `--token-file` or $SPILLWAY_TOKEN, never from argv (every local
 * account can read /proc/<pid>/cmdline). Like ssh with a private key, a file others can read is refused.
 */
export function readFixedToken(file: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (file === undefined) return env.SPILLWAY_TOKEN || undefined;
  const st = fs.statSync(file);
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0) {
    throw new Error(`${file} is readable by other accounts (mode ${(st.mode & 0o777).toString(8)}): chmod 600 it first`);
  }
  return fs.readFileSync(file, 'utf8').trim();
}

/** A second stop signal within this window is the same Ctrl+C delivered twice, not "force quit". */
const DUPLICATE_SIGNAL_MS = 1_000;

/** Open `url` in the system browser; never throws (a headless box has none). */
export function openBrowser(url: string, warn: (msg: string) => void): void {
  const [cmd, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url.replace(/&/g, '^&')]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(cmd, args as string[], { stdio: 'ignore', detached: true });
    child.on('error', (err) => warn(`could not open a browser (${cmd}: ${err.message}); open the URL yourself`));
    child.on('exit', (code) => {
      if (code) warn(`could not open a browser (${cmd} exited with ${code}); open the URL yourself`);
    });
    child.unref();
  } catch (err) {
    warn(`could not open a browser (${(err as Error).message}); open the URL yourself`);
  }
}

export function register(program: Command): void {
  program
    .command('serve')
    .description('Serve the inspector (UI + API) on 127.0.0.1 with a random token in the URL')
    .option('--root <dir>', 'register a sessions root: a folder or s3://bucket/prefix, read-only (repeatable; remembered in the index)', collect, [] as string[])
    .option('--port <n>', 'port (0 = a free one)', parsePort, 0)
    .option('--db <file>', 'index database (default: <app data>/index.sqlite)')
    .option('--open', 'open the system browser at the URL')
    .addOption(new Option('--token-file <file>', 'read the bearer token from this 0600 file instead of making a random one (or set $SPILLWAY_TOKEN)').hideHelp())
    .option('--no-default-roots', `do not open ${DEFAULT_FOLDERS} (read-only) when no --root is given; also ${NO_DEFAULT_ROOTS_ENV}=1`)
    .addOption(new Option('--static-dir <dir>', 'serve this built UI instead of dist/renderer').hideHelp())
    .addHelpText(
      'after',
      `
Prints a one-time link on the first line of stdout, then keeps serving until SIGINT/SIGTERM;
each time a link is used, stderr shows a fresh one (for another tab, or after a reload). Without
--root and with no root registered yet, the app-data sessions folder is used. Without --root, the
agents' own session folders that exist in $HOME are opened too, read-only: ${DEFAULT_FOLDERS}.
Roots come from --root (or \`spillway index\`), never from the
browser. Requests without the token get 401; only loopback Host/Origin are accepted.`,
    )
    .action(async (opts: { root: string[]; port: number; db?: string; open?: boolean; defaultRoots: boolean; tokenFile?: string; staticDir?: string }) => {
      const warn = (m: string) => process.stderr.write(`spillway serve: ${terminalSafe(m)}\n`);
      const token = readFixedToken(opts.tokenFile);
      const service = createInspectorService({
        transport: 'http',
        // A bucket root stays a URL (s3://bucket/prefix); folders are resolved.
        roots: opts.root.map((r) => (/^s3:\/\//i.test(r) ? r : path.resolve(r))),
        defaultRoots: defaultRootsChoice(opts.defaultRoots, opts.root, process.env),
        dbPath: opts.db ? path.resolve(opts.db) : undefined,
        env: process.env,
        onWarning: warn,
      });
      try {
        await service.ready;
      } catch (err) {
        await service.close().catch(() => undefined);
        throw err;
      }
      let started: RunningServer | undefined;
      try {
        started = await startServer({
          service,
          host: '127.0.0.1',
          port: opts.port,
          token,
          staticDir: opts.staticDir ? path.resolve(opts.staticDir) : undefined,
          onLaunchUsed: () => process.stderr.write(`spillway serve: link used; for another tab or after a reload open ${started?.launchUrl()}\n`),
        });
      } catch (err) {
        await service.close().catch(() => undefined);
        throw err;
      }
      const server = started;
      // Listening for signals before the URL is printed: whoever reads the URL may stop us at once,
      // and a SIGTERM before the handler exists would kill the process without closing the index.
      const stopped = new Promise<void>((resolve) => {
        let stoppingSince = 0;
        const stop = (signal: NodeJS.Signals) => {
          if (stoppingSince) {
            // The same Ctrl+C often arrives twice (terminal + a parent like `npm start`): ignore
            // that; a deliberate second one later means "leave now".
            if (Date.now() - stoppingSince > DUPLICATE_SIGNAL_MS) process.exit(130);
            return;
          }
          stoppingSince = Date.now();
          process.stderr.write(`spillway serve: ${signal}, closing\n`);
          void (async () => {
            await server.close().catch(() => undefined);
            await service.close().catch((err: unknown) => warn(`closing the index failed: ${(err as Error).message}`));
            resolve();
          })();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      process.stdout.write(`${server.url}\n`);
      // A signal may already have closed the service: then there is nothing to list.
      const roots = await service.listRoots({}).catch(() => []);
      const auto = roots.filter((r) => r.auto);
      process.stderr.write(
        `spillway serve: index ${terminalSafe(service.dbPath)}\n` +
          roots.map((r) => `spillway serve: root ${terminalSafe(r.path)} (${r.kind}${r.readOnly ? ', read-only' : ''}${r.auto ? ', opened by default' : ''})\n`).join('') +
          (auto.length ? `spillway serve: ${auto.length} agent session folder(s) opened read-only by default; --no-default-roots or ${NO_DEFAULT_ROOTS_ENV}=1 turns that off\n` : '') +
          'spillway serve: press Ctrl+C to stop\n',
      );
      // The browser gets its own link, which expires: xdg-open's argv is readable by every local account.
      if (opts.open) openBrowser(server.launchUrl({ ttlMs: OPEN_LINK_TTL_MS }), warn);

      await stopped;
    });
}
