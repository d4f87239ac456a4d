import { spawn } from 'node:child_process';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { createInspectorService } from '../../service/service.js';
import { startServer } from '../../server/server.js';

function parsePort(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port is an integer from 0 to 65535');
  return n;
}

const collect = (v: string, prev: string[]) => [...prev, v];

/** Set (to anything but empty, 0, false or no) to not open the agents' own session folders by default. */
export const NO_DEFAULT_ROOTS_ENV = 'SPILLWAY_NO_DEFAULT_ROOTS';

/**
 * Whether to open the agents' session folders in $HOME (see CreateServiceOptions.defaultRoots):
 * off when the flag or the env var says so (and the ones opened before are dropped), on when no
 * --root is given, left as they are otherwise.
 */
export function defaultRootsChoice(flag: boolean, roots: string[], env: NodeJS.ProcessEnv): boolean | undefined {
  const envOff = /^(?!(0|false|no)$).+/i.test((env[NO_DEFAULT_ROOTS_ENV] ?? '').trim());
  if (!flag || envOff) return false;
  return roots.length === 0 ? true : undefined;
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
    .option('--no-default-roots', `do not open ~/.claude/projects, ~/.codex/sessions and ~/.gemini/tmp (read-only) when no --root is given; also ${NO_DEFAULT_ROOTS_ENV}=1`)
    .addOption(new Option('--token <token>', 'use this token instead of a random one (16+ URL-safe chars)').env('SPILLWAY_TOKEN').hideHelp())
    .addOption(new Option('--static-dir <dir>', 'serve this built UI instead of dist/renderer').hideHelp())
    .addHelpText(
      'after',
      `
Prints the URL (with its token) on the first line of stdout, then keeps serving until
SIGINT/SIGTERM. Without --root and with no root registered yet, the app-data sessions
folder is used. Without --root, the agents' own session folders that exist in $HOME are
opened too, read-only: ~/.claude/projects, ~/.codex/sessions and ~/.gemini/tmp.
Requests without the token get 401; only loopback Host/Origin are accepted.`,
    )
    .action(async (opts: { root: string[]; port: number; db?: string; open?: boolean; defaultRoots: boolean; token?: string; staticDir?: string }) => {
      const warn = (m: string) => process.stderr.write(`spillway serve: ${m}\n`);
      const service = createInspectorService({
        transport: 'http',
        // A bucket root stays a URL (s3://bucket/prefix); folders are resolved.
        roots: opts.root.map((r) => (/^s3:\/\//i.test(r) ? r : path.resolve(r))),
        defaultRoots: defaultRootsChoice(opts.defaultRoots, opts.root, process.env),
        dbPath: opts.db ? path.resolve(opts.db) : undefined,
        onWarning: warn,
      });
      try {
        await service.ready;
      } catch (err) {
        await service.close().catch(() => undefined);
        throw err;
      }
      let server;
      try {
        server = await startServer({
          service,
          host: '127.0.0.1',
          port: opts.port,
          token: opts.token,
          staticDir: opts.staticDir ? path.resolve(opts.staticDir) : undefined,
        });
      } catch (err) {
        await service.close().catch(() => undefined);
        throw err;
      }
      process.stdout.write(`${server.url}\n`);
      const roots = await service.listRoots({});
      const auto = roots.filter((r) => r.auto);
      process.stderr.write(
        `spillway serve: index ${service.dbPath}\n` +
          roots.map((r) => `spillway serve: root ${r.path} (${r.kind}${r.readOnly ? ', read-only' : ''}${r.auto ? ', opened by default' : ''})\n`).join('') +
          (auto.length ? `spillway serve: ${auto.length} agent session folder(s) opened read-only by default; --no-default-roots or ${NO_DEFAULT_ROOTS_ENV}=1 turns that off\n` : '') +
          'spillway serve: press Ctrl+C to stop\n',
      );
      if (opts.open) openBrowser(server.url, warn);

      await new Promise<void>((resolve) => {
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
    });
}
