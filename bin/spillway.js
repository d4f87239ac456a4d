#!/usr/bin/env node
// Runs the built CLI (npm install runs `prepare`, which builds dist/lib). In a checkout where
// dist is missing, fall back to running the TypeScript source through tsx.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const built = path.join(here, '..', 'dist', 'lib', 'cli', 'main.js');
if (existsSync(built)) {
  const { main } = await import(pathToFileURL(built).href);
  await main(process.argv);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import(pathToFileURL(path.join(here, '..', 'src', 'cli', 'main.ts')).href);
  await main(process.argv);
}
