#!/usr/bin/env node
// Runs the built CLI (npm install runs `prepare`, which builds dist/lib). In a checkout where
// dist is missing, fall back to running the TypeScript source through tsx.
//
// `hook claude-code` runs on every tool call of Claude Code: it first tries the pass-through fast
// path, which loads a handful of modules instead of the whole CLI; a result that may need the guard
// goes to the hook's own entry (the hook, the guard and the summarizer, without commander and the
// other verbs), and only a command line that entry cannot read loads the CLI (which then reads the
// same stdin and prints its usage message). See docs/integrations.md.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const lib = path.join(here, '..', 'dist', 'lib');
const args = process.argv.slice(2);
const hookArgs = args[0] === 'hook' && args[1] === 'claude-code' ? args.slice(2) : undefined;

/** True when the hook ran without the CLI: passed by the fast path, or handled by the hook's entry. */
async function hookRan(dir, ext) {
  if (!hookArgs) return false;
  const fast = path.join(dir, 'integrations', 'hooks', `claude-code-fast${ext}`);
  const entry = path.join(dir, 'integrations', 'hooks', `claude-code-entry${ext}`);
  if (!existsSync(fast)) return false;
  const { runFastHook, parseHookArgs } = await import(pathToFileURL(fast).href);
  if (await runFastHook(hookArgs)) return true;
  // help, an unknown option, a value commander refuses: the CLI's usage message
  if (!existsSync(entry) || !parseHookArgs(hookArgs)) return false;
  // As main() does before any verb: a reader that went away ends the process quietly (exit 141).
  const { quietBrokenPipes } = await import(pathToFileURL(path.join(dir, 'cli', `pipes${ext}`)).href);
  quietBrokenPipes();
  const { runHookEntry } = await import(pathToFileURL(entry).href);
  return runHookEntry(hookArgs);
}

if (existsSync(path.join(lib, 'cli', 'main.js'))) {
  if (!(await hookRan(lib, '.js'))) {
    const { main } = await import(pathToFileURL(path.join(lib, 'cli', 'main.js')).href);
    await main(process.argv);
  }
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const src = path.join(here, '..', 'src');
  if (!(await hookRan(src, '.ts'))) {
    const { main } = await import(pathToFileURL(path.join(src, 'cli', 'main.ts')).href);
    await main(process.argv);
  }
}
