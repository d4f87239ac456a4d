/**
 * What the hook tests share about `spillway hook claude-code`: a module recorder, to see which files a
 * hook process loads (the fast path, the hook's entry or the full CLI), and commander's own reading of
 * the hook's command line, the reference the light entry's parsers are held to.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { expect } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { tmpDir } from './helpers.js';

/**
 * A module hook that writes every file URL the process loads to $SPILLWAY_TEST_MODULE_LOG, in a fresh
 * temp folder: returns the URL to give node's `--import`.
 */
export function moduleRecorder(): string {
  const dir = tmpDir('spillway-modlog-');
  fs.writeFileSync(
    path.join(dir, 'hooks.mjs'),
    "import fs from 'node:fs';\nexport async function load(url, context, next) {\n  if (url.startsWith('file:')) fs.appendFileSync(process.env.SPILLWAY_TEST_MODULE_LOG, url + '\\n');\n  return next(url, context);\n}\n",
  );
  fs.writeFileSync(path.join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n");
  return pathToFileURL(path.join(dir, 'register.mjs')).href;
}

/**
 * `hook claude-code` as commander reads it, without running it: a copy of the options its action
 * gets, or undefined when commander refuses the command line.
 */
export function commanderRead(args: string[]): Record<string, unknown> | undefined {
  const program = buildProgram();
  const silent = { writeOut: () => {}, writeErr: () => {} };
  program.configureOutput(silent);
  const hook = program.commands.find((c) => c.name() === 'hook')!;
  const cc = hook.commands.find((c) => c.name() === 'claude-code')!;
  for (const c of [hook, cc]) c.configureOutput(silent).exitOverride();
  let opts: Record<string, unknown> | undefined;
  cc.action((o: Record<string, unknown>) => {
    opts = { ...o };
  });
  try {
    program.parse(['hook', 'claude-code', ...args], { from: 'user' });
  } catch {
    return undefined;
  }
  return opts;
}

/**
 * A property over command lines of at most `maxTokens` tokens: `check` runs on each line `parse`
 * takes (500 tries), and more than 50 must be taken, so that the property says something.
 */
export function checkTaken<T>(token: fc.Arbitrary<readonly string[]>, maxTokens: number, parse: (args: string[]) => T | undefined, check: (args: string[], parsed: T) => void): void {
  let taken = 0;
  fc.assert(
    fc.property(fc.array(token, { maxLength: maxTokens }), (tokens) => {
      const args = tokens.flat();
      const parsed = parse(args);
      if (!parsed) return;
      taken++;
      check(args, parsed);
    }),
    { numRuns: 500 },
  );
  expect(taken).toBeGreaterThan(50);
}
