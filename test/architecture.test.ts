import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Layering as data (docs/architecture.md; VS Code's `code-layering`): one row per layer says which other layers it may
 * import, which of their modules count as their public face, and which npm packages only it may use; rooms inside
 * a layer have doors of their own (ROOMS), and test/, bench/ and scripts/ use the same doors unless a row of
 * TEST_DOORS says why not. An exception is a row entry with its reason, never a special case in the checks below.
 */
interface Layer {
  /** Layers this one may import. */
  may: string[];
  /** Imports of other layers must be type-only (the renderer never runs our Node code). */
  typeOnly?: boolean;
  /** Why a `may` entry beyond the basic layering (docs/architecture.md) is there. */
  why?: Record<string, string>;
  /** Modules a type-only layer may still import values from, each with its reason. */
  values?: Record<string, string>;
}

const LAYERS: Record<string, Layer> = {
  'src/version': { may: [] },
  'src/pipeline': { may: [] },
  // The package root: src/index.ts, not the src/index/ folder of the same name (the SQLite index).
  'src/index.ts': {
    may: ['src/pipeline', 'src/summarize'],
    why: { 'src/summarize': "the library's guard calls summarize by default, as the CLI, the proxy and the hook do" },
  },
  'src/summarize': { may: ['src/pipeline'] },
  'src/compress': { may: ['src/pipeline'] },
  // One folder per agent client (its own caps on tool results, the image rule of its provider): just above the pipeline.
  'src/agents': {
    may: ['src/pipeline', 'src/integrations'],
    why: { 'src/integrations': "an adapter's setup and hook are built on the setup plumbing and guard options every client shares (OpenCode's plugin and setup)" },
  },
  'src/index': {
    may: ['src/pipeline', 'src/agents'],
    why: { 'src/agents': "the ledger, written at indexing and replayed by the timeline, prices each result as its client would give it (the client's own caps, images by pixels)" },
  },
  'src/integrations': {
    may: ['src/pipeline', 'src/summarize', 'src/compress', 'src/agents'],
    why: {
      'src/agents': "the proxy asks the client's adapter what it shows its model of an MCP result, its names and its tokenizer",
      'src/summarize': 'the proxy and the hook write the summary in the message with the configured provider',
      'src/compress': 'the proxy answers spillway_read/grep/query from the saved payload with the drill-down queries',
    },
  },
  // Summary experiments: datasets, runs through a job queue, comparisons (docs/experiments.md).
  'src/experiments': {
    may: ['src/pipeline', 'src/summarize', 'src/index'],
    why: {
      'src/summarize': 'a run summarizes each item with the variant\'s provider and scores it without a judge (scores.ts)',
      'src/index': "datasets, runs, results and the cache live in the index's database (src/index/experiments.ts): better-sqlite3 stays in src/index, and a dataset selects the index's payloads and read-backs",
    },
  },
  // The timeline: above the index, beside the service. It reads what the index stores of a session (turns, ledgers) through
  // the index's own functions, never SQLite, and replays and prices them; the index never imports it (checked below).
  'src/timeline': {
    may: ['src/pipeline', 'src/index', 'src/agents'],
    why: { 'src/agents': "a session's context rule (window, trigger), prices and which tools the guard reaches are its client's, asked of the registry" },
  },
  'src/service': {
    may: ['src/pipeline', 'src/index', 'src/timeline', 'src/summarize', 'src/compress', 'src/version', 'src/integrations/rules', 'src/experiments'],
    why: {
      'src/timeline': 'getTimeline, the limit tuner and the waste report are the timeline layer\'s, over the index the service opens',
      'src/integrations/rules': "the inspector previews and writes the guard rules files (previewConfig, applyConfig) with the one planner, writer and resolver `spillway config` uses",
      'src/experiments': 'the experiment verbs and methods hand the engine the payloads it reads (the files, their read-backs as lines)',
    },
  },
  'src/server': { may: ['src/service', 'src/pipeline'] },
  'src/cli': {
    may: ['src/service', 'src/pipeline', 'src/integrations', 'src/server', 'src/version', 'src/agents'],
    why: {
      'src/agents': "the hook and setup verbs run a client's own (OpenCode's), until the registry carries them",
      'src/integrations': 'the mcp, hook and setup verbs start the proxy, the hook and the client set-up',
      'src/server': 'the serve verb starts the HTTP server over the service',
    },
  },
  electron: {
    may: ['src/service', 'src/pipeline/values'],
    why: { 'src/pipeline/values': 'the one error-message helper; a leaf that imports nothing' },
  },
  app: {
    may: ['src/service/contract', 'src/service/shell/views', 'src/pipeline/values', 'src/pipeline/vocab', 'src/agents/clients'],
    typeOnly: true,
    values: {
      'src/agents/clients': "the clients' ids, labels, badges and default folders as plain data, written once for the index and the UI: a leaf that imports nothing (checked below)",
      'src/pipeline/values': 'isObj and errMessage, written once for every layer: a leaf that imports nothing (checked below)',
      'src/pipeline/vocab': "the strategy names and content kinds the menus offer are the service's own lists: a leaf that imports nothing (checked below)",
      'src/service/shell/views':
        "the views' ids, keys and labels, written once for the app's rail, shortcuts and palette and the desktop menu: a leaf that imports nothing (checked below)",
      'src/service/contract':
        'the contract is data: its method and event lists and window caps are plain constants, and it imports nothing at run time (checked below), so the renderer and the service cannot drift',
    },
  },
};

/**
 * What another layer may import of a layer: its front door(s). Anything else is that layer's inside.
 * A layer absent here exposes every module (small leaves).
 */
const PUBLIC: Record<string, { modules: string[]; why?: string }> = {
  'src/pipeline': {
    modules: [
      'src/pipeline/index',
      'src/pipeline/types',
      'src/pipeline/layout',
      'src/pipeline/limits',
      'src/pipeline/config',
      'src/pipeline/detect',
      'src/pipeline/prompt',
      'src/pipeline/terminal',
      'src/pipeline/estimate/index',
      'src/pipeline/estimate/options',
      'src/pipeline/store/s3/index',
      'src/pipeline/quick',
      'src/pipeline/values',
      'src/pipeline/vocab',
    ],
    why: 'index.ts is the pipeline\'s named door for the layers above (the package root, src/index.ts, picks the public few from it); the other layers may also take the shared words (types, layout, limits, config, detect, prompt), the estimator\'s two doors (its four verbs, and the words they take: strategies, defaults, the Claude correction), the S3 store\'s face (restore, sync and bucket roots; a door of its own so the package root stays the guard\'s API, and it loads the AWS SDK only when a bucket is opened) and values (isObj, errMessage: a leaf every layer may take) and vocab (the strategy and kind lists, a leaf likewise) and the fast path\'s checks (quick: the limit, base64 and binary scans, without loading the guard, for the hook that runs on every tool call), never its internals or the guard\'s phases',
  },
  'src/index': { modules: ['src/index/index', 'src/index/rows'] },
  'src/timeline': { modules: ['src/timeline/index'], why: 'openTimelines over an open index, and the replay and the tuner\'s words the bench and the validator take' },
  'src/agents': {
    modules: ['src/agents/index', 'src/agents/clients', 'src/agents/opencode/plugin', 'src/agents/opencode/setup'],
    why: "the registry is the one door: a client is one entry in it; clients.ts is its plain-data half, for the renderer and the row types; OpenCode's hook and setup are doors of their own until the registry carries each client's",
  },
  'src/summarize': { modules: ['src/summarize/index'] },
  'src/experiments': { modules: ['src/experiments/index'] },
  'src/compress': { modules: ['src/compress/index'] },
  'src/service': {
    modules: [
      'src/service/contract',
      'src/service/service',
      'src/service/web-policy',
      'src/service/offline',
      'src/service/shell/app-protocol',
      'src/service/shell/ipc',
      'src/service/shell/menu',
      'src/service/shell/policy',
      'src/service/shell/window-state',
      'src/service/shell/views',
    ],
    why: 'service.ts for the inspector; offline.ts is the CLI verbs\' way in (index, summarize, project, handle without a running inspector); shell/* is what electron/ wires, one module each so the sandboxed preload bundles only ipc.ts; shell/views.ts is the list of views the menu and the renderer share',
  },
};

/**
 * Rooms inside a layer with doors of their own: a module outside the room, in the same layer or not,
 * imports only a door. `testDoors` are doors for test/, bench/ and scripts/ alone, each with its reason.
 */
const ROOMS: Record<string, { doors: string[]; testDoors?: Record<string, string>; why: string }> = {
  'src/pipeline/estimate': {
    doors: ['src/pipeline/estimate/index', 'src/pipeline/estimate/options'],
    testDoors: {
      'src/pipeline/estimate/internal':
        'the estimator\'s tests, benches and calibration scripts measure its features, fit, sampler and risk bounds; one module names all of them, so moving one inside the room changes one file',
    },
    why: 'the guard and every other layer see four verbs and their words; the features, the fit and the sampler change with each calibration',
  },
};

/**
 * test/, bench/ and scripts/ sit above every layer and may import any, but through the front doors
 * (PUBLIC, ROOMS) like the layers do. A suite that tests a layer's inside is a row here with its
 * reason: `from` is a path prefix of the importing files, `into` a module prefix it may reach.
 * A row never opens a room (ROOMS): the estimator's inside is `internal.ts` for everyone.
 */
const TEST_DOORS: Array<{ from: string; into: string; why: string }> = [
  { from: 'test/pipeline/', into: 'src/pipeline/', why: "the guard's unit tests take one module each (base64, json-prefix, prune, the journal records prune reads)" },
  { from: 'test/integrations/advice.test.ts', into: 'src/pipeline/message', why: 'the advice the message gives, checked on the builder of the message itself' },
  { from: 'test/s3/', into: 'src/pipeline/store/s3/', why: "the S3 store's tests drive its client, config, journal, source, sync and writer against a real Ceph" },
  { from: 'test/s3/serve.test.ts', into: 'src/service/s3-read', why: "the inspector's reads of a bucket, below the contract" },
  { from: 'test/helpers/ceph-fixture.ts', into: 'src/pipeline/store/s3/', why: 'the Ceph fixture builds the one S3 client the tests share, from the store\'s own config' },
  { from: 'bench/s3.ts', into: 'src/pipeline/store/s3/client', why: 'the S3 bench times the store against the bare client' },
  { from: 'bench/s3-journal.ts', into: 'src/pipeline/store/s3/', why: "the journal bench times the client, the journal, the writer, the source and prune alone" },
  { from: 'bench/binary.ts', into: 'src/pipeline/', why: 'the binary bench times the base64 scan and the JSON bound alone, against the guard that runs them' },
  { from: 'bench/context.ts', into: 'src/index/turns-claude', why: "the context bench times the listing with the turn reader switched off against it on" },
  { from: 'test/clients/opencode-sessions.test.ts', into: 'src/index/import-opencode', why: "OpenCode's database reader, checked against what the real binary writes while it writes (not yet behind the index's door)" },
  { from: 'test/agents/', into: 'src/agents/', why: "each client's rules and the image header reader, checked module by module" },
  { from: 'test/index/', into: 'src/index/', why: "the index's tests check its phases (bulk load, database, sources, importers, turn readers) one by one" },
  { from: 'test/timeline/', into: 'src/timeline/', why: "the timeline's tests check the replay, the offline guard and the reports' totals one by one" },
  { from: 'test/service/', into: 'src/service/', why: "the service's tests check its method groups, its context and its readers below the contract" },
  { from: 'test/contract.test.ts', into: 'src/service/validate', why: "the contract's run-time validator, checked against the contract's own types" },
  { from: 'test/app/memory-api.ts', into: 'src/service/validate', why: "the UI's test double judges each request with the service's own validator, so a request the real service refuses (a 400) fails the UI's tests too" },
];

/** npm packages that only some layers may import. */
const PACKAGES: Array<{ re: RegExp; only: string[]; why: string }> = [
  { re: /^better-sqlite3$/, only: ['src/index', 'src/compress'], why: 'the index; handles live in <session>/handles.sqlite (layer 3), owned by compress' },
  { re: /^@aws-sdk\//, only: ['src/pipeline'], why: 'one S3 client (src/pipeline/store/s3/client.ts), loaded on first use; the index and the inspector read buckets through the S3 store\'s face' },
  { re: /^electron(\/|$)/, only: ['electron'], why: 'the shell stays thin; logic is tested under Node' },
  { re: /^(react|react-dom|zustand|monaco-editor|@monaco-editor\/|@tanstack\/|uplot)(\/|$)/, only: ['app'], why: 'src/ is framework-free' },
  { re: /^(node:|fs$|path$|child_process$|os$|worker_threads$)/, only: Object.keys(LAYERS).filter((l) => l !== 'app'), why: 'the renderer runs in a sandboxed page' },
];

const ROOT = path.resolve(import.meta.dirname, '..');

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : walk(p);
    return /\.(ts|tsx|mts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

const IMPORT_RE = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

interface Imp {
  file: string;
  spec: string;
  typeOnly: boolean;
  /** Repo-relative module path without extension, for relative imports. */
  target?: string;
}

function importsOf(file: string): Imp[] {
  const src = fs.readFileSync(file, 'utf8');
  return [...src.matchAll(IMPORT_RE)].map((m) => {
    const spec = m[3] ?? m[4]!;
    const target = spec.startsWith('.')
      ? path.relative(ROOT, path.resolve(path.dirname(file), spec)).replace(/\.(js|ts|tsx|mjs)$/, '')
      : undefined;
    return { file: path.relative(ROOT, file), spec, typeOnly: Boolean(m[2]), target };
  });
}

const layerOf = (file: string): string | undefined => {
  const p = file.replace(/\.(ts|tsx|mts)$/, '');
  return Object.keys(LAYERS)
    .filter((l) => p === l || file === l || p.startsWith(l + '/'))
    .sort((a, b) => b.length - a.length)[0];
};

const all = ['src', 'electron', 'app'].flatMap((d) => walk(path.join(ROOT, d))).flatMap(importsOf);
/** The code outside every layer that imports the layers: tests, benches, scripts. */
const OUTSIDE = ['test', 'bench', 'scripts'];
const outside = OUTSIDE.flatMap((d) => walk(path.join(ROOT, d))).flatMap(importsOf);
const show = (i: Imp) => `${i.file} imports ${i.spec}`;
const isOutside = (file: string) => OUTSIDE.some((d) => file.startsWith(d + '/'));
const under = (p: string, prefix: string) => (prefix.endsWith('/') ? p.startsWith(prefix) : p === prefix || p.startsWith(prefix + '/'));
const roomOf = (mod: string) => Object.keys(ROOMS).find((r) => mod.startsWith(r + '/'));

/** Imports that enter a room (ROOMS) past its doors, from anywhere outside it. */
function pastRoomDoors(imps: Imp[]): Imp[] {
  return imps.filter((i) => {
    const room = i.target && roomOf(i.target);
    if (!room || i.file.startsWith(room + '/')) return false;
    const r = ROOMS[room]!;
    if (r.doors.includes(i.target!)) return false;
    return !(isOutside(i.file) && i.target! in (r.testDoors ?? {}));
  });
}

/** Imports from test/, bench/ or scripts/ into a layer's inside that no door (PUBLIC, ROOMS, TEST_DOORS) allows. */
function pastLayerDoors(imps: Imp[]): Imp[] {
  return imps.filter((i) => {
    if (!i.target || !isOutside(i.file)) return false;
    if (i.target === 'src/index') return false; // the package root, src/index.ts (not the src/index/ folder)
    const to = layerOf(i.target);
    if (!to || !PUBLIC[to] || PUBLIC[to]!.modules.includes(i.target)) return false;
    const room = roomOf(i.target);
    if (room && (ROOMS[room]!.doors.includes(i.target) || i.target in (ROOMS[room]!.testDoors ?? {}))) return false;
    return !TEST_DOORS.some((d) => under(i.file, d.from) && under(i.target!, d.into));
  });
}

describe('layering (docs/architecture.md, as the table above)', () => {
  it('found the source tree, and every source file belongs to a layer', () => {
    expect(all.filter((i) => i.file.startsWith('src/pipeline/')).length).toBeGreaterThan(5);
    const files = new Set(all.map((i) => i.file));
    const orphans = [...files].filter((f) => !layerOf(f) && f !== 'src/index.ts');
    expect(orphans, 'a file outside every layer: add a row').toEqual([]);
  });

  it('every import of another layer is one the table allows', () => {
    const bad = all.filter((i) => {
      if (!i.target) return false;
      const from = layerOf(i.file);
      const to = layerOf(i.target);
      if (!from || !to || from === to) return false;
      return !LAYERS[from]!.may.some((m) => i.target === m || i.target!.startsWith(m + '/') || to === m);
    });
    expect(bad.map(show)).toEqual([]);
  });

  it('the index imports nothing of the layers above it: it stores sessions, the timeline and the service read it', () => {
    expect(all.filter((i) => i.file.startsWith('src/timeline/')).length, 'found the timeline layer').toBeGreaterThan(3);
    for (const above of ['src/timeline', 'src/service']) expect(LAYERS['src/index']!.may).not.toContain(above);
    const up = all.filter((i) => layerOf(i.file) === 'src/index' && i.target && ['src/timeline', 'src/service'].includes(layerOf(i.target) ?? ''));
    expect(up.map(show)).toEqual([]);
  });

  it('no deep import into another layer\'s inside: only its front door', () => {
    const bad = all.filter((i) => {
      if (!i.target) return false;
      const from = layerOf(i.file);
      const to = layerOf(i.target);
      if (!from || !to || from === to || !PUBLIC[to]) return false;
      return !PUBLIC[to]!.modules.includes(i.target);
    });
    expect(bad.map(show)).toEqual([]);
  });

  it('a type-only layer imports nothing of ours at run time', () => {
    const bad = all.filter((i) => {
      const from = layerOf(i.file);
      if (!from || !LAYERS[from]!.typeOnly || !i.target) return false;
      return layerOf(i.target) !== from && !i.typeOnly && !(i.target in (LAYERS[from]!.values ?? {}));
    });
    expect(bad.map(show)).toEqual([]);
  });

  it('a module a type-only layer takes values from imports nothing at run time itself', () => {
    const valueModules = Object.values(LAYERS).flatMap((l) => Object.keys(l.values ?? {}));
    expect(valueModules.length).toBeGreaterThan(0);
    const bad = all.filter((i) => valueModules.some((m) => i.file.replace(/\.tsx?$/, '') === m) && !i.typeOnly);
    expect(bad.map(show)).toEqual([]);
  });

  it('npm packages stay in the layers that own them', () => {
    const bad = all.filter((i) => {
      if (i.target) return false;
      const from = layerOf(i.file);
      const rule = PACKAGES.find((p) => p.re.test(i.spec));
      return rule !== undefined && from !== undefined && !rule.only.includes(from);
    });
    expect(bad.map(show)).toEqual([]);
  });

  it('no import enters a room past its doors (ROOMS), from src/ or from test/, bench/ and scripts/', () => {
    expect(outside.filter((i) => i.target?.startsWith('src/pipeline/estimate/')).length, 'found the estimator\'s tests').toBeGreaterThan(5);
    expect(pastRoomDoors([...all, ...outside]).map(show)).toEqual([]);
  });

  it('test/, bench/ and scripts/ import a layer through its front doors, or a declared test door (TEST_DOORS)', () => {
    expect(new Set(outside.map((i) => i.file.split('/')[0])), 'read all three folders').toEqual(new Set(OUTSIDE));
    expect(pastLayerDoors(outside).map(show)).toEqual([]);
  });

  it('the door checks catch a planted violation (a test past the estimator\'s doors, src/ past them, a test deep in the service)', () => {
    const plant = (file: string, target: string): Imp => ({ file, spec: target, typeOnly: false, target });
    const planted = [
      plant('test/estimate/x.test.ts', 'src/pipeline/estimate/features'),
      plant('test/pipeline/x.test.ts', 'src/pipeline/estimate/constants'),
      plant('scripts/x.ts', 'src/pipeline/estimate/exact'),
      plant('src/pipeline/guard.ts', 'src/pipeline/estimate/decision'),
      plant('src/cli/commands/x.ts', 'src/pipeline/estimate/internal'),
    ];
    expect(pastRoomDoors(planted)).toEqual(planted);
    expect(pastRoomDoors([plant('test/estimate/x.test.ts', 'src/pipeline/estimate/internal'), plant('src/pipeline/guard.ts', 'src/pipeline/estimate/options')])).toEqual([]);
    const deep = [plant('test/pipeline/x.test.ts', 'src/service/heavy'), plant('bench/x.ts', 'src/index/db'), plant('test/estimate/x.test.ts', 'src/pipeline/store/local')];
    expect(pastLayerDoors(deep)).toEqual(deep);
    expect(pastLayerDoors([plant('test/index/x.test.ts', 'src/index/db'), plant('bench/x.ts', 'src/pipeline/index')])).toEqual([]);
  });

  it('the table itself is sound: every exception names a reason, every layer exists', () => {
    for (const [name, l] of Object.entries(LAYERS)) {
      expect(fs.existsSync(path.join(ROOT, name)) || fs.existsSync(path.join(ROOT, name + '.ts')), name).toBe(true);
      for (const m of l.may) expect(layerOf(m) ?? m.split('/').slice(0, 2).join('/'), `${name} may import ${m}`).toBeTruthy();
      for (const k of Object.keys(l.why ?? {})) expect(l.may, `${name}: a reason for an import it may not make`).toContain(k);
    }
    const exists = (mod: string) => ['.ts', '.tsx', ''].some((ext) => fs.existsSync(path.join(ROOT, mod + ext)));
    for (const [room, r] of Object.entries(ROOMS)) {
      expect(r.why, room).toBeTruthy();
      for (const d of [...r.doors, ...Object.keys(r.testDoors ?? {})]) expect(exists(d) && d.startsWith(room + '/'), `${room}: door ${d}`).toBe(true);
      for (const [d, why] of Object.entries(r.testDoors ?? {})) expect(why, d).toBeTruthy();
    }
    for (const d of TEST_DOORS) {
      expect(d.why, `${d.from} -> ${d.into}`).toBeTruthy();
      expect(exists(d.from.replace(/\/$/, '')), `TEST_DOORS: ${d.from} exists`).toBe(true);
      expect(exists(d.into.replace(/\/$/, '')), `TEST_DOORS: ${d.into} exists`).toBe(true);
      // A declared door is used: an unused one would hide the next deep import silently.
      expect(outside.some((i) => under(i.file, d.from) && i.target && under(i.target, d.into)), `TEST_DOORS row unused: ${d.from} -> ${d.into}`).toBe(true);
    }
  });
});
