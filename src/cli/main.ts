#!/usr/bin/env node
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { COMMANDS } from './commands/index.js';
import { VERSION } from '../version.js';
import { terminalSafe } from '../pipeline/terminal.js';
import { exitBrokenPipe, isBrokenPipe, pipesForProxy, quietBrokenPipes } from './pipes.js';
import { errMessage } from '../pipeline/values.js';

/** Build the `spillway` program. Exported so tests and the README consistency check can list verbs. */
export function buildProgram(): Command {
  const program = new Command('spillway')
    .description('Guard an agent\'s context window from oversized tool results, and inspect what was spilled.')
    .version(VERSION)
    .showHelpAfterError()
    // Commander quotes the arguments it refuses (`unknown command '…'`): they reach the terminal escaped.
    .configureOutput({ writeOut: (str) => process.stdout.write(terminalSafe(str)), writeErr: (str) => process.stderr.write(terminalSafe(str)) })
    .exitOverride();
  // Subcommands copy the output settings when they are created, so this runs before any register().
  for (const register of COMMANDS) register(program);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  const program = buildProgram();
  quietBrokenPipes();
  program.hook('preAction', (_program, action) => {
    let verb = action;
    while (verb.parent && verb.parent !== program) verb = verb.parent;
    if (verb.name() === 'mcp') pipesForProxy();
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version exit 0; usage errors exit 2 (commander already printed the message)
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    if (isBrokenPipe(err)) exitBrokenPipe();
    // Messages quote file names and arguments (`cannot read <file>`): never raw controls.
    process.stderr.write(`spillway: ${terminalSafe(errMessage(err))}\n`);
    process.exitCode = 1;
  }
}

// Run only when this file is the entry point (bin/spillway.js imports it and calls main itself).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) void main();
