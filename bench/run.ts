/**
 * `npm run bench [area...]`: runs every bench/<area>.ts (or only the named ones). Each module exports
 * `run(): Promise<void>` and prints its own table, with ratios against a baseline measured in the same run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const here = import.meta.dirname;
const wanted = process.argv.slice(2);
const areas = fs
  .readdirSync(here)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
  .map((f) => f.replace(/\.ts$/, ''))
  .filter((a) => wanted.length === 0 || wanted.includes(a))
  .sort();

for (const area of areas) {
  console.log(`\n=== bench: ${area} ===`);
  const mod = (await import(pathToFileURL(path.join(here, `${area}.ts`)).href)) as { run: () => Promise<void> };
  await mod.run();
}
