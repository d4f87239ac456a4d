import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../src/cli/main.js';
import { VERSION } from '../src/version.js';
import { EVENT_NAMES, METHOD_NAMES } from '../src/service/contract.js';

// The lists the README repeats must match the code (docs/architecture.md: a list repeated in prose is held to the code).
const ROOT = path.resolve(import.meta.dirname, '..');
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
// Depth lives in docs/: the CLI reference and the architecture page (the contract's list) are held to the code too.
const cliDoc = fs.readFileSync(path.join(ROOT, 'docs', 'cli.md'), 'utf8');
const architectureDoc = fs.readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
  scripts: Record<string, string>;
};

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : /\.tsx?$/.test(e.name) ? [p] : [];
  });
}

describe('README and help agree with the code', () => {
  const verbs = buildProgram().commands.map((c) => c.name());

  it('every CLI verb has a README entry, and every README entry is a verb', () => {
    const documented = new Set([...readme.matchAll(/^### spillway ([a-z-]+)/gm)].map((m) => m[1]!));
    expect(verbs.length).toBeGreaterThanOrEqual(10);
    for (const v of verbs) expect(documented, `README lacks "### spillway ${v}"`).toContain(v);
    for (const d of documented) expect(verbs, `README documents a verb that does not exist: ${d}`).toContain(d);
  });

  it('every CLI verb has a section in docs/cli.md, and every section there is a verb', () => {
    const documented = new Set([...cliDoc.matchAll(/^### spillway ([a-z-]+)/gm)].map((m) => m[1]!));
    for (const v of verbs) expect(documented, `docs/cli.md lacks "### spillway ${v}"`).toContain(v);
    for (const d of documented) expect(verbs, `docs/cli.md documents a verb that does not exist: ${d}`).toContain(d);
  });

  it('every link from the README into docs/ names a file that exists', () => {
    const links = [...readme.matchAll(/\]\((docs\/[^)#]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(5);
    for (const l of links) expect(fs.existsSync(path.join(ROOT, l)), l).toBe(true);
  });

  it('no verb is still a skeleton', () => {
    for (const c of buildProgram().commands) expect(c.description(), c.name()).not.toMatch(/not built/i);
  });

  it('every SPILLWAY_* environment variable read in src/ is in the README table', () => {
    const used = new Set<string>();
    for (const f of sourceFiles(path.join(ROOT, 'src'))) {
      for (const m of fs.readFileSync(f, 'utf8').matchAll(/\b(SPILLWAY_[A-Z0-9_]+)\b/g)) used.add(m[1]!);
    }
    expect(used.size).toBeGreaterThan(0);
    for (const v of used) expect(readme, `README lacks ${v}`).toContain('`' + v + '`');
  });

  it('every contract method and event is listed in docs/architecture.md', () => {
    for (const m of [...METHOD_NAMES, ...EVENT_NAMES]) expect(architectureDoc, `docs/architecture.md lacks contract name ${m}`).toContain('`' + m + '`');
  });

  it('the version and the README set-up commands match package.json', () => {
    expect(VERSION).toBe(pkg.version);
    for (const s of ['start', 'test', 'bench', 'dev', 'dist']) expect(pkg.scripts[s], s).toBeTruthy();
    expect(readme).toMatch(/npm install/);
    expect(readme).toMatch(/npm start/);
    expect(readme).toMatch(/npm test/);
  });
});
