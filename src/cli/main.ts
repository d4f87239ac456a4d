#!/usr/bin/env node
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { COMMANDS } from './commands/index.js';
import { VERSION } from '../version.js';

/** Build the `spillway` program. Exported so tests and the README consistency check can list verbs. */
export function buildProgram(): Command {
  const program = new Command('spillway')
    .description('Guard an agent\'s context window from oversized tool results, and inspect what was spilled.')
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride();
  for (const register of COMMANDS) register(program);
  return program;
}

export async function main(argv: string[] = process.argv): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version exit 0; usage errors exit 2 (commander already printed the message)
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    process.stderr.write(`spillway: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}

// Run only when this file is the entry point (bin/spillway.js imports it and calls main itself).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) void main();
