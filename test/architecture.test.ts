import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// DESIGN.md's layering rules, checked by reading every import in the tree.
const ROOT = path.resolve(import.meta.dirname, '..');

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : walk(p);
    return /\.(ts|tsx|mts)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

const IMPORT_RE = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

interface Imp {
  file: string;
  spec: string;
  typeOnly: boolean;
  resolved?: string;
}

function importsOf(file: string): Imp[] {
  const src = fs.readFileSync(file, 'utf8');
  const out: Imp[] = [];
  for (const m of src.matchAll(IMPORT_RE)) {
    const spec = m[3] ?? m[4]!;
    const typeOnly = Boolean(m[2]);
    const resolved = spec.startsWith('.') ? path.relative(ROOT, path.resolve(path.dirname(file), spec)) : undefined;
    out.push({ file: path.relative(ROOT, file), spec, typeOnly, resolved });
  }
  return out;
}

const all = ['src', 'electron', 'app'].flatMap((d) => walk(path.join(ROOT, d))).flatMap(importsOf);
const inDir = (p: string | undefined, dir: string) => p !== undefined && (p === dir || p.startsWith(dir + '/'));

describe('layering (DESIGN.md)', () => {
  it('found the source tree', () => {
    expect(all.filter((i) => i.file.startsWith('src/pipeline/')).length).toBeGreaterThan(5);
  });

  it('src/pipeline imports nothing else of ours', () => {
    const bad = all.filter((i) => i.file.startsWith('src/pipeline/') && i.resolved && !inDir(i.resolved, 'src/pipeline'));
    expect(bad).toEqual([]);
  });

  it('index, summarize and compress never import each other', () => {
    const layers = ['src/index', 'src/summarize', 'src/compress'];
    const bad = all.filter((i) => {
      const own = layers.find((l) => i.file.startsWith(l + '/'));
      return own && layers.some((l) => l !== own && inDir(i.resolved, l));
    });
    expect(bad).toEqual([]);
  });

  it('src/ never imports electron, react or DOM-only code', () => {
    const bad = all.filter(
      (i) => i.file.startsWith('src/') && /^(electron|react|react-dom|zustand|monaco-editor|@monaco-editor\/)/.test(i.spec),
    );
    expect(bad).toEqual([]);
  });

  it('better-sqlite3 only under src/index and the handle store', () => {
    const bad = all.filter(
      (i) => i.spec === 'better-sqlite3' && !i.file.startsWith('src/index/') && !i.file.startsWith('src/compress/handles'),
    );
    expect(bad).toEqual([]);
  });

  it('electron only under electron/', () => {
    const bad = all.filter((i) => /^electron(\/|$)/.test(i.spec) && !i.file.startsWith('electron/'));
    expect(bad).toEqual([]);
  });

  it('app/ imports only types from src/, and only from the contract', () => {
    const bad = all.filter(
      (i) =>
        i.file.startsWith('app/') &&
        inDir(i.resolved, 'src') &&
        !(i.resolved === 'src/service/contract.js' || i.resolved === 'src/service/contract'),
    );
    expect(bad).toEqual([]);
    const nodeBuiltins = all.filter((i) => i.file.startsWith('app/') && /^(node:|fs$|path$|child_process$|better-sqlite3$)/.test(i.spec));
    expect(nodeBuiltins).toEqual([]);
  });
});
