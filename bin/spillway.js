#!/usr/bin/env node
// Runs the built CLI (npm install runs `prepare`, which builds dist/lib). In a checkout where
// dist is missing, fall back to running the TypeScript source through tsx.
//
// `hook claude-code` runs on every tool call of Claude Code: it first tries the pass-through fast
// path, which loads a handful of modules instead of the whole CLI, and loads the CLI only when the
// result may need the guard (the CLI then reads the same stdin). See docs/integrations.md.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const lib = path.join(here, '..', 'dist', 'lib');
const args = process.argv.slice(2);
const hookArgs = args[0] === 'hook' && args[1] === 'claude-code' ? args.slice(2) : undefined;

async function passesFast(fastModule) {
  if (!hookArgs) return false;
  const { runFastHook } = await import(pathToFileURL(fastModule).href);
  return runFastHook(hookArgs);
}

if (existsSync(path.join(lib, 'cli', 'main.js'))) {
  const fast = path.join(lib, 'integrations', 'hooks', 'claude-code-fast.js');
  if (!(existsSync(fast) && (await passesFast(fast)))) {
    const { main } = await import(pathToFileURL(path.join(lib, 'cli', 'main.js')).href);
    await main(process.argv);
  }
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const src = path.join(here, '..', 'src');
  if (!(await passesFast(path.join(src, 'integrations', 'hooks', 'claude-code-fast.ts')))) {
    const { main } = await import(pathToFileURL(path.join(src, 'cli', 'main.ts')).href);
    await main(process.argv);
  }
}
