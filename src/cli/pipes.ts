/**
 * A verb whose reader went away (`spillway restore X | head -c 300`) stops quietly, as Unix tools
 * do: a C tool is killed by SIGPIPE and the shell reports 141 (128 + 13). Node ignores SIGPIPE, so a
 * write to the closed pipe fails with EPIPE instead, and unhandled that is a stack trace and exit 1.
 * Here the verb exits with the same 141 and prints nothing: what it would print has nowhere to go,
 * and `set -o pipefail` scripts see what they see for `cat X | head`.
 */

/** The status a shell shows for a process killed by SIGPIPE. */
export const BROKEN_PIPE_EXIT = 128 + 13;

export const isBrokenPipe = (err: unknown): boolean => (err as NodeJS.ErrnoException | undefined)?.code === 'EPIPE';

/** Exit at once, quietly: stdout or stderr is a pipe nobody reads any more. */
export function exitBrokenPipe(): never {
  process.exit(BROKEN_PIPE_EXIT);
}

const mode = { stdout: true, stderrFatal: true };
let installed = false;

/** Let a closed stdout or stderr end the process quietly (installed once, before any verb runs). */
export function quietBrokenPipes(): void {
  if (installed) return;
  installed = true;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (!mode.stdout) return;
    if (!isBrokenPipe(err)) throw err;
    exitBrokenPipe();
  });
  process.stderr.on('error', (err: NodeJS.ErrnoException) => {
    // The proxy's log lines have nowhere to go (EPIPE, then writes to the destroyed stream): it keeps serving.
    if (!mode.stderrFatal) return;
    if (!isBrokenPipe(err)) throw err;
    exitBrokenPipe();
  });
}

/**
 * For `mcp`: its stdout is the MCP channel, and the proxy stops its server itself when the client
 * leaves; a proxy whose log reader went away keeps serving its client.
 */
export function pipesForProxy(): void {
  mode.stdout = false;
  mode.stderrFatal = false;
}
