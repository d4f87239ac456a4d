#!/usr/bin/env node
// The `spillway` command. It imports only the package's public entry points (package.json
// `exports`): `spillway/hook`, the light entry of `spillway hook <client>`, and `spillway/cli`, the
// whole CLI. npm install runs `prepare`, which builds them into dist/lib; in a checkout where they
// are not built, the same entries run from their TypeScript source (each export's `source`) through tsx.
//
// `hook <client>` runs on every tool call of an agent client: the hook's entry reads the command
// line and stdin once, passes a small result after loading a handful of modules, and runs the
// client's hook without commander or the other verbs. Only a command line it cannot read (help, an
// unknown option, a value commander refuses) loads the CLI, which prints its usage message. See
// docs/integrations.md.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);

let tsx = false;

/** The built module of a public entry, or, when it is not built, its source (through tsx). */
async function load(entry) {
  const built = import.meta.resolve(`spillway/${entry}`);
  if (existsSync(fileURLToPath(built))) return import(built);
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  if (!tsx) (await import('tsx/esm/api')).register();
  tsx = true;
  return import(new URL(pkg.exports[`./${entry}`].source, new URL('../', import.meta.url)).href);
}

if (!(args[0] === 'hook' && (await (await load('hook')).runHookCommand(args.slice(1))))) {
  await (await load('cli')).main(process.argv);
}
