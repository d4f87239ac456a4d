import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The API report: every name the `spillway` package exports, and whether it is a value or only a
 * type. A name added to or removed from src/index.ts fails here until this list, the README's
 * library section and docs/guard.md's "The exports" say the same, so a new export is a choice.
 */
const API = {
  // the guard calls
  guardLargeResult: 'value',
  handleLargeResponse: 'value',
  GuardOptions: 'type',
  HandleLargeResponseArgs: 'type',
  GuardResult: 'type',
  AssetRef: 'type',
  ToolResult: 'type',
  SummarizeHook: 'type',
  // restore
  restorePayload: 'value',
  restoreToFile: 'value',
  restoreFromStore: 'value',
  readMeta: 'value',
  RestoreError: 'value',
  PayloadMeta: 'type',
  // the four estimate verbs
  estimateTokens: 'value',
  estimateForDecision: 'value',
  countTokens: 'value',
  describeTokens: 'value',
  Estimate: 'type',
  TokenReport: 'type',
  Profile: 'type',
  StrategyName: 'type',
  // the storage seam
  SpillStore: 'type',
  SpillReader: 'type',
  SpillKey: 'type',
  SpillBody: 'type',
  StoreCallOptions: 'type',
  NameCandidate: 'type',
  LocalSpillStore: 'value',
  SpillStoreError: 'value',
} as const satisfies Record<string, 'value' | 'type'>;

const ROOT = path.resolve(import.meta.dirname, '..');
const ENTRY = path.join(ROOT, 'src', 'index.ts');
const sorted = (xs: Iterable<string>) => [...xs].sort();
const valueNames = sorted(Object.entries(API).filter(([, k]) => k === 'value').map(([n]) => n));

/** What the compiler sees src/index.ts export, each with its kind (what the built index.d.ts declares). */
function declaredExports(): Record<string, 'value' | 'type'> {
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    noEmit: true,
  };
  const program = ts.createProgram([ENTRY], options);
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(ENTRY)!)!;
  return Object.fromEntries(
    checker.getExportsOfModule(module).map((s) => {
      const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
      return [s.name, target.flags & ts.SymbolFlags.Value ? 'value' : 'type'];
    }),
  );
}

/** The backticked names of a piece of markdown that look like identifiers. */
const codeNames = (md: string) => new Set([...md.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((m) => m[1]!));

describe('the API report: what `spillway` exports', () => {
  it('src/index.ts declares exactly the listed names, each as a value or a type as listed', () => {
    const declared = declaredExports();
    expect(sorted(Object.keys(declared)), 'an export was added or removed: update API here, README and docs/guard.md').toEqual(sorted(Object.keys(API)));
    expect(declared).toEqual({ ...API });
  }, 180_000);

  it('the module, loaded, has exactly the listed values, and the classes and functions are what they say', async () => {
    const root = (await import('../src/index.js')) as Record<string, unknown>;
    expect(sorted(Object.keys(root))).toEqual(valueNames);
    for (const n of valueNames) expect(typeof root[n], n).toBe('function');
    expect(new (root.SpillStoreError as new (code: string, msg: string) => Error)('UNAVAILABLE', 'down')).toBeInstanceOf(Error);
  });

  it("the README's library section and docs/guard.md's \"The exports\" list exactly these names", () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## The library call'), readme.indexOf('\n## ', readme.indexOf('## The library call') + 1));
    const exportsPara = /\*\*Exports\*\*[\s\S]*?(?:\n\n|$)/.exec(section)?.[0];
    expect(exportsPara, 'README\'s "## The library call" has an **Exports** paragraph').toBeTruthy();
    expect(sorted(codeNames(exportsPara!))).toEqual(sorted(Object.keys(API)));

    const guard = fs.readFileSync(path.join(ROOT, 'docs', 'guard.md'), 'utf8');
    const at = guard.indexOf('\n## The exports\n');
    expect(at, 'docs/guard.md has a "## The exports" section').toBeGreaterThan(0);
    const table = guard.slice(at, guard.indexOf('\n## ', at + 1));
    const rows = [...table.matchAll(/^\| `([^`]+)` \| (value|type) \|/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(Object.fromEntries(rows)).toEqual({ ...API });
    expect(rows.length, 'each name once').toBe(Object.keys(API).length);
  });
});
