import { guardSettingsOf } from '../../integrations/settings.js';
import { GuardRules, loadRules, ruleFlagsOf } from '../../integrations/rules/index.js';
import type { GuardCliOptions } from '../../integrations/options.js';
import { readHookStdin, MAX_HOOK_INPUT_BYTES } from '../../integrations/verb-input.js';
import { terminalSafe } from '../../pipeline/terminal.js';
import { errMessage } from '../../pipeline/values.js';
import { handleOpenCodeEvent } from './guard.js';

/**
 * Spillway's OpenCode plugin: a JS module OpenCode loads from a `plugins/` folder of its config
 * (`~/.config/opencode/plugins/` or `<project>/.opencode/plugins/`). Its `tool.execute.after` hook
 * pipes the event to `spillway hook opencode` and, when the guard answers, sets `output.output` to
 * the guard's message: OpenCode stores that and sends it to the model (measured with 1.18.33).
 *
 * The plugin runs inside OpenCode's own runtime (Bun), so it imports nothing of Spillway: it runs
 * the CLI, whose guard, store and summarizer are Node's. Any failure leaves the output as it was.
 */

/** First line of the file setup writes: how setup knows the file is its own (it never deletes another). */
export const PLUGIN_MARK = '// spillway: the guard inside OpenCode, written by `spillway setup opencode` (`--remove` deletes it)';
export const PLUGIN_FILE_NAME = 'spillway-guard.js';
/** How long the plugin waits for the guard (a summary by a remote model may take up to a minute). */
export const PLUGIN_TIMEOUT_MS = 120_000;

/** The plugin's source, running `argv hook opencode [hookArgs]`. */
export function opencodePluginSource(argv: string[], hookArgs: string[] = []): string {
  const cmd = JSON.stringify([...argv, 'hook', 'opencode', ...hookArgs]);
  return `${PLUGIN_MARK}
import { spawn } from 'node:child_process';

const COMMAND = ${cmd};

function guard(event) {
  return new Promise((resolve) => {
    let out = '';
    let child;
    try {
      // stderr is dropped: OpenCode draws its screen on the terminal this would write to.
      child = spawn(COMMAND[0], COMMAND.slice(1), { stdio: ['pipe', 'pipe', 'ignore'] });
    } catch {
      return resolve(undefined);
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), ${PLUGIN_TIMEOUT_MS});
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c) => (out += c));
    child.on('error', () => resolve(undefined));
    child.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify(event));
  });
}

export const SpillwayGuard = async (ctx) => ({
  'tool.execute.after': async (input, output) => {
    if (!output || typeof output.output !== 'string') return;
    // The project folder OpenCode runs in: the guard reads its rules file (.spillway.json) there.
    const answer = await guard({ input, output, directory: ctx && typeof ctx.directory === 'string' ? ctx.directory : undefined });
    if (!answer) return;
    try {
      const a = JSON.parse(answer);
      if (a && typeof a.output === 'string') output.output = a.output;
    } catch {
      /* not an answer: keep the output */
    }
  },
});
`;
}

/** `spillway hook opencode`: one event on stdin, the answer on stdout, notes on stderr, exit 0 whatever happens. */
export async function runOpenCodeHook(opts: GuardCliOptions): Promise<void> {
  try {
    const stdin = await readHookStdin();
    if (stdin === undefined) {
      process.stderr.write(`spillway hook opencode: input over ${MAX_HOOK_INPUT_BYTES} bytes; left unchanged\n`);
      return;
    }
    // OpenCode runs many model families: o200k unless --profile says otherwise.
    const outcome = await handleOpenCodeEvent(stdin, {
      guard: guardSettingsOf(opts, 'o200k'),
      sessionDir: opts.session,
      // The rules of the folder OpenCode runs in (the plugin sends it; else this process's, which OpenCode started there), after the flags.
      rules: async (cwd) => new GuardRules(await loadRules(cwd ?? process.cwd(), process.env), ruleFlagsOf(opts)),
    });
    if (outcome.note) process.stderr.write(`spillway hook opencode: ${terminalSafe(outcome.note)}\n`);
    if (outcome.output) process.stdout.write(`${JSON.stringify(outcome.output)}\n`);
  } catch (err) {
    process.stderr.write(`spillway hook opencode: ${terminalSafe(errMessage(err))}; result left unchanged\n`);
  } finally {
    process.exitCode = 0;
  }
}
