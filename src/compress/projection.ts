import fs from 'node:fs';
import path from 'node:path';
import { estimateTokens } from '../pipeline/estimate/index.js';
import { confine, isInside, sanitizeToolName, tempNameFor } from '../pipeline/layout.js';
import { compilePaths, parsePath, step, type PathNode } from './jsonpath.js';

/**
 * Layer 1: schema projection. A spec keeps only the named fields (JSONPath-like, fields inside
 * arrays of objects included) and applies the usual trims. Specs are saved per tool name
 * (`<app data>/projections/<tool>.json`) so the guard and the MCP proxy apply them automatically.
 */
export interface ProjectionSpec {
  /** Tool name (or a `*` glob like `github_*`) this spec is for. */
  tool?: string;
  /** Fields to keep; everything else goes. Omitted or empty: keep everything (trims only). */
  keep?: string[];
  /** Fields to remove (applied after keep). */
  drop?: string[];
  /** Remove object fields whose value is null. */
  dropNulls?: boolean;
  /** Remove object fields whose value is "", [] or {} (after projection). */
  dropEmpty?: boolean;
  /** Keep the first N items of each array; a final string says how many were cut. */
  maxArray?: number;
  /** Cut strings longer than N chars; the cut says how many chars went. */
  maxString?: number;
  /** Keep the first N keys of larger objects (dictionaries like version → date); a `"…"` key says how many were cut. */
  maxKeys?: number;
  description?: string;
}

const SPEC_KEYS = new Set(['tool', 'keep', 'drop', 'dropNulls', 'dropEmpty', 'maxArray', 'maxString', 'maxKeys', 'description', '$schema']);
/** Largest spec file read (bytes). */
export const MAX_SPEC_FILE_BYTES = 256 * 1024;

export class ProjectionSpecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProjectionSpecError';
  }
}

/** Check a spec from a file or a request: clear errors, nothing half-applied. */
export function validateSpec(x: unknown, where = 'spec'): ProjectionSpec {
  if (!x || typeof x !== 'object' || Array.isArray(x)) throw new ProjectionSpecError(`${where}: a projection spec is a JSON object`);
  const o = x as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!SPEC_KEYS.has(k)) throw new ProjectionSpecError(`${where}: unknown field ${JSON.stringify(k)} (known: ${[...SPEC_KEYS].filter((s) => s !== '$schema').join(', ')})`);
  }
  for (const k of ['keep', 'drop'] as const) {
    if (o[k] === undefined) continue;
    if (!Array.isArray(o[k]) || !(o[k] as unknown[]).every((p) => typeof p === 'string')) throw new ProjectionSpecError(`${where}: ${k} must be an array of path strings`);
    for (const p of o[k] as string[]) {
      try {
        parsePath(p);
      } catch (err) {
        throw new ProjectionSpecError(`${where}: ${(err as Error).message}`);
      }
    }
  }
  for (const k of ['dropNulls', 'dropEmpty'] as const) {
    if (o[k] !== undefined && typeof o[k] !== 'boolean') throw new ProjectionSpecError(`${where}: ${k} must be true or false`);
  }
  for (const k of ['maxArray', 'maxString', 'maxKeys'] as const) {
    if (o[k] !== undefined && (!Number.isInteger(o[k]) || (o[k] as number) < 0)) throw new ProjectionSpecError(`${where}: ${k} must be a whole number ≥ 0`);
  }
  if (o.tool !== undefined && typeof o.tool !== 'string') throw new ProjectionSpecError(`${where}: tool must be a string`);
  return o as ProjectionSpec;
}

export interface ProjectionStats {
  keysCut: number;
  arraysCut: number;
  itemsCut: number;
  stringsCut: number;
  charsCut: number;
  nullsDropped: number;
  emptiesDropped: number;
}

const ABSENT = Symbol('absent');
/** Deepest nesting projected; deeper payloads get a clear error instead of a stack overflow. */
export const MAX_PROJECTION_DEPTH = 256;

function tooDeep(depth: number): void {
  if (depth > MAX_PROJECTION_DEPTH) throw new ProjectionSpecError(`payload nested deeper than ${MAX_PROJECTION_DEPTH} levels: not projected`);
}

/**
 * Apply a spec to a JSON value (or a JSON string, parsed first). Returns the projected value;
 * use {@link projectWithStats} to also learn what was cut.
 */
export function project(value: unknown, spec: ProjectionSpec): unknown {
  return projectWithStats(value, spec).value;
}

export function projectWithStats(value: unknown, spec: ProjectionSpec): { value: unknown; stats: ProjectionStats } {
  validateSpec(spec);
  if (typeof value === 'string') {
    const t = value.trimStart();
    if (t.startsWith('{') || t.startsWith('[')) {
      try {
        value = JSON.parse(value);
      } catch {
        // not JSON: only the string trims apply
      }
    }
  }
  const stats: ProjectionStats = { keysCut: 0, arraysCut: 0, itemsCut: 0, stringsCut: 0, charsCut: 0, nullsDropped: 0, emptiesDropped: 0 };
  let v = value;
  if (spec.keep?.length) {
    const root = compilePaths(spec.keep);
    const kept = keep(v, [root], root.deep);
    v = kept === ABSENT ? (Array.isArray(v) ? [] : {}) : kept;
  }
  if (spec.drop?.length) {
    const root = compilePaths(spec.drop);
    v = drop(v, [root], root.deep);
    if ((v as unknown) === ABSENT) v = null;
  }
  v = trim(v, spec, stats);
  return { value: v, stats };
}

type Watchers = PathNode['deep'];

function keep(v: unknown, nodes: PathNode[], watchers: Watchers, depth = 0): unknown {
  tooDeep(depth);
  if (nodes.some((n) => n.terminal)) return v;
  if (v === null || typeof v !== 'object') return ABSENT;
  const direct = nodes.length > 0 && nodes.some((n) => n.keys.size || n.indexes.size || n.any);
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (let i = 0; i < v.length; i++) {
      const s = step(nodes, watchers, i);
      if (!s.nodes.length && !s.watchers.length) continue;
      const r = keep(v[i], s.nodes, s.watchers, depth + 1);
      if (r !== ABSENT) out.push(r);
      else if (s.nodes.length && v[i] !== null && typeof v[i] === 'object') out.push(Array.isArray(v[i]) ? [] : {});
    }
    return out.length || direct ? out : ABSENT;
  }
  const out: Record<string, unknown> = {};
  let any = false;
  for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
    const s = step(nodes, watchers, k);
    if (!s.nodes.length && !s.watchers.length) continue;
    const r = keep(child, s.nodes, s.watchers, depth + 1);
    if (r !== ABSENT) {
      out[k] = r;
      any = true;
    }
  }
  return any || direct ? out : ABSENT;
}

function drop(v: unknown, nodes: PathNode[], watchers: Watchers, depth = 0): unknown {
  tooDeep(depth);
  if (nodes.some((n) => n.terminal)) return ABSENT;
  if (v === null || typeof v !== 'object' || (!nodes.length && !watchers.length)) return v;
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    v.forEach((item, i) => {
      const s = step(nodes, watchers, i);
      const r = s.nodes.length || s.watchers.length ? drop(item, s.nodes, s.watchers, depth + 1) : item;
      if (r !== ABSENT) out.push(r);
    });
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
    const s = step(nodes, watchers, k);
    const r = s.nodes.length || s.watchers.length ? drop(child, s.nodes, s.watchers, depth + 1) : child;
    if (r !== ABSENT) out[k] = r;
  }
  return out;
}

const isEmpty = (v: unknown) =>
  v === '' || (Array.isArray(v) && v.length === 0) || (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);

function trim(v: unknown, spec: ProjectionSpec, st: ProjectionStats, depth = 0): unknown {
  tooDeep(depth);
  if (typeof v === 'string') {
    if (spec.maxString !== undefined && v.length > spec.maxString) {
      let cut = spec.maxString;
      // never split a surrogate pair
      if (cut > 0 && /[\uD800-\uDBFF]/.test(v[cut - 1]!)) cut--;
      st.stringsCut++;
      st.charsCut += v.length - cut;
      return `${v.slice(0, cut)}…[+${v.length - cut} chars]`;
    }
    return v;
  }
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const max = spec.maxArray;
    const items = max !== undefined && v.length > max ? v.slice(0, max) : v;
    const out = items.map((x) => trim(x, spec, st, depth + 1));
    if (items.length < v.length) {
      st.arraysCut++;
      st.itemsCut += v.length - items.length;
      out.push(`… ${v.length - items.length} more items cut (${v.length} in all)`);
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  let entries = Object.entries(v as Record<string, unknown>);
  const cutKeys = spec.maxKeys !== undefined && entries.length > spec.maxKeys ? entries.length - spec.maxKeys : 0;
  if (cutKeys) entries = entries.slice(0, spec.maxKeys);
  for (const [k, child] of entries) {
    if (child === null && spec.dropNulls) {
      st.nullsDropped++;
      continue;
    }
    const t = trim(child, spec, st, depth + 1);
    if (spec.dropEmpty && isEmpty(t)) {
      st.emptiesDropped++;
      continue;
    }
    out[k] = t;
  }
  if (cutKeys) {
    st.keysCut += cutKeys;
    out['…'] = `${cutKeys} more keys cut (${cutKeys + (spec.maxKeys ?? 0)} in all)`;
  }
  return out;
}

/* ---------------------------------------------------------------- suggestions */

export interface FieldCost {
  /** Generalized path (`[*]` for array items, `.*` for dictionary keys). */
  path: string;
  /** Estimated tokens this field costs across the payload (key + value). */
  tokens: number;
  /** Share of the payload's tokens. */
  share: number;
  count: number;
  nulls: number;
  empties: number;
  /** Distinct values (capped at 1,000: "at least"). */
  distinct: number;
  avgChars: number;
  sample?: string;
  keep: boolean;
  /** Why it was dropped or kept. */
  reason: string;
}

export interface ProjectionSuggestion {
  spec: ProjectionSpec;
  fields: FieldCost[];
  tokensBefore: number;
  tokensAfter: number;
}

interface Acc {
  path: string;
  parent: string;
  key: string;
  chars: number;
  count: number;
  nulls: number;
  empties: number;
  values: Set<string> | null;
  strChars: number;
  sample?: string;
  maxStr: number;
  maxArr: number;
}

/** Keys that are almost always noise for an agent: API self-links, hashes, avatars, ETags. */
const NOISE_KEY_RE = /(^|_)(node_id|gravatar_id|avatar_url|etag|signature|integrity|checksum|shasum|_links)$|_url$|^(url|uri)$|(^|_)(hash|sha|sha1|sha256|sha512)$|^(id_str|media_url_https)$/i;
/** Keys that usually carry what an agent wants. */
const VALUE_KEY_RE = /(^|_)(id|name|title|status|state|type|kind|message|error|reason|text|summary|description|body|content|date|time|created|updated|closed|count|total|amount|price|number|score|version|path|file|line|html_url|login|email|label|tags?)($|_|s$)/i;
const MAP_FIELD_RE = /^[A-Za-z_$][A-Za-z0-9_$]{0,39}$/;
/** Distinct values tracked per field. */
const MAX_DISTINCT = 1_000;

/**
 * Rank fields by the tokens they cost across the payload and propose a spec: keep what carries
 * information (ids, names, status, messages, numbers), drop what repeats or only links back to
 * the API (constant fields, always-empty fields, `*_url`, hashes, avatars), cap long arrays and strings.
 */
export function suggestProjection(value: unknown, opts: { maxArray?: number; maxString?: number; maxKeys?: number } = {}): ProjectionSuggestion {
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw new ProjectionSpecError('projection works on JSON: this payload does not parse as JSON');
    }
  }
  let json: string;
  try {
    json = JSON.stringify(value) ?? 'null';
  } catch {
    throw new ProjectionSpecError('payload cannot be serialized (nested too deep?): not projected');
  }
  const tokensBefore = estimateTokens(json).tokens;
  const tokPerChar = tokensBefore / Math.max(1, json.length);
  const accs = new Map<string, Acc>();
  let longestArray = 0;
  let longestString = 0;
  let biggestMap = 0;
  const visit = (v: unknown, p: string, parent: string, key: string, keyChars: number, depth = 0) => {
    tooDeep(depth);
    const isLeaf = v === null || typeof v !== 'object' || (Array.isArray(v) && v.every((x) => x === null || typeof x !== 'object')) || Object.keys(v as object).length === 0;
    if (Array.isArray(v)) longestArray = Math.max(longestArray, v.length);
    if (isLeaf) {
      let a = accs.get(p);
      if (!a) accs.set(p, (a = { path: p, parent, key, chars: 0, count: 0, nulls: 0, empties: 0, values: new Set(), strChars: 0, maxStr: 0, maxArr: 0 }));
      const s = JSON.stringify(v) ?? 'null';
      a.chars += s.length + keyChars;
      a.count++;
      if (v === null) a.nulls++;
      else if (isEmpty(v)) a.empties++;
      if (typeof v === 'string') {
        a.strChars += v.length;
        a.maxStr = Math.max(a.maxStr, v.length);
        longestString = Math.max(longestString, v.length);
      }
      if (Array.isArray(v)) a.maxArr = Math.max(a.maxArr, v.length);
      if (a.values) {
        a.values.add(s.length > 200 ? `${s.slice(0, 200)}#${s.length}` : s);
        if (a.values.size > MAX_DISTINCT) a.values = null;
      }
      a.sample ??= s.length > 80 ? `${s.slice(0, 80)}…` : s;
      return;
    }
    if (Array.isArray(v)) {
      for (const x of v) visit(x, `${p}[*]`, p, '[*]', 1, depth + 1);
      return;
    }
    const keys = Object.keys(v as object);
    const odd = keys.filter((k) => !MAP_FIELD_RE.test(k)).length;
    const isMap = keys.length > 200 || (keys.length >= 8 && odd / keys.length >= 0.3) || (keys.length >= 2 && odd / keys.length >= 0.5);
    if (isMap) biggestMap = Math.max(biggestMap, keys.length);
    for (const k of keys) {
      const seg = isMap ? '.*' : /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
      visit((v as Record<string, unknown>)[k], p + seg, p, isMap ? '*' : k, k.length + 4, depth + 1);
    }
  };
  visit(value, '$', '', '', 0);

  const siblings = new Map<string, Set<string>>();
  for (const a of accs.values()) {
    let s = siblings.get(a.parent);
    if (!s) siblings.set(a.parent, (s = new Set()));
    s.add(a.key);
  }
  const fields: FieldCost[] = [...accs.values()].map((a) => {
    const distinct = a.values ? a.values.size : MAX_DISTINCT;
    const tokens = Math.round(a.chars * tokPerChar);
    let keepIt = true;
    let reason = 'carries values';
    if (a.nulls + a.empties === a.count) {
      keepIt = false;
      reason = 'always null or empty';
    } else if (a.count >= 3 && distinct === 1) {
      keepIt = false;
      reason = `same value everywhere (${a.sample})`;
    } else if (NOISE_KEY_RE.test(a.key) && a.key !== 'html_url' && !(a.key === 'url' && !siblings.get(a.parent)?.has('html_url'))) {
      keepIt = false;
      reason = 'link, hash or avatar noise';
    } else if (VALUE_KEY_RE.test(a.key)) reason = 'looks like an id, name, status, message or number';
    return {
      path: a.path,
      tokens,
      share: tokens / Math.max(1, tokensBefore),
      count: a.count,
      nulls: a.nulls,
      empties: a.empties,
      distinct,
      avgChars: a.count ? Math.round(a.strChars / a.count) : 0,
      sample: a.sample,
      keep: keepIt,
      reason,
    };
  });
  fields.sort((x, y) => y.tokens - x.tokens);
  const spec: ProjectionSpec = {
    keep: collapseKept(fields),
    dropNulls: true,
    dropEmpty: true,
  };
  const maxArray = opts.maxArray ?? 50;
  const maxString = opts.maxString ?? 500;
  if (longestArray > maxArray) spec.maxArray = maxArray;
  if (longestString > maxString) spec.maxString = maxString;
  const maxKeys = opts.maxKeys ?? 50;
  if (biggestMap > maxKeys) spec.maxKeys = maxKeys;
  if (fields.every((f) => f.keep)) delete spec.keep;
  const after = JSON.stringify(project(value, spec)) ?? 'null';
  return { spec, fields, tokensBefore, tokensAfter: estimateTokens(after).tokens };
}

/** Keep paths, shortest form: a container whose leaves are all kept is kept whole. */
function collapseKept(fields: FieldCost[]): string[] {
  const kept = fields.filter((f) => f.keep).map((f) => f.path);
  const dropped = fields.filter((f) => !f.keep).map((f) => f.path);
  const out = new Set<string>();
  for (const p of kept) {
    // climb while no dropped field lives under the ancestor
    let best = p;
    for (let anc = parentOf(p); anc && anc !== '$'; anc = parentOf(anc)) {
      if (dropped.some((d) => d.startsWith(anc + '.') || d.startsWith(anc + '['))) break;
      best = anc;
    }
    out.add(best);
  }
  return [...out].sort();
}

function parentOf(p: string): string | null {
  const m = /^(.*?)(\.[^.[\]]+|\.\*|\[\*\]|\[\d+\]|\["(?:[^"\\]|\\.)*"\])$/.exec(p);
  return m ? m[1]! : null;
}

/* ---------------------------------------------------------------- specs on disk */

/**
 * Load specs from one file or a folder of `<tool>.json` files. A file holds one spec (with
 * `tool`), or `{ "tools": { "<tool>": spec } }`. Returns tool name (or glob) → spec.
 */
export function loadProjectionSpecs(fileOrDir: string): Map<string, ProjectionSpec> {
  const out = new Map<string, ProjectionSpec>();
  let st: fs.Stats;
  try {
    st = fs.statSync(fileOrDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw err;
  }
  const readOne = (file: string, fallbackTool?: string) => {
    const size = fs.statSync(file).size;
    if (size > MAX_SPEC_FILE_BYTES) throw new ProjectionSpecError(`${file}: larger than ${MAX_SPEC_FILE_BYTES} bytes`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (err) {
      throw new ProjectionSpecError(`${file}: not valid JSON (${(err as Error).message})`);
    }
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed) && 'tools' in parsed) {
      const tools = (parsed as { tools: unknown }).tools;
      if (!tools || typeof tools !== 'object') throw new ProjectionSpecError(`${file}: "tools" must map tool names to specs`);
      for (const [tool, spec] of Object.entries(tools as Record<string, unknown>)) out.set(tool, { ...validateSpec(spec, `${file} → ${tool}`), tool });
      return;
    }
    const spec = validateSpec(parsed, file);
    const tool = spec.tool ?? fallbackTool;
    if (!tool) throw new ProjectionSpecError(`${file}: a single spec needs a "tool" field`);
    out.set(tool, { ...spec, tool });
  };
  if (st.isDirectory()) {
    const realDir = fs.realpathSync(fileOrDir);
    for (const f of fs.readdirSync(fileOrDir).sort()) {
      if (!f.endsWith('.json') || f.startsWith('.')) continue;
      const p = path.join(fileOrDir, f);
      if (!isInside(realDir, fs.realpathSync(p))) continue; // a symlink out of the folder is ignored
      readOne(p, f.slice(0, -5));
    }
  } else readOne(fileOrDir);
  return out;
}

/** The spec for a tool: exact name first, then the longest matching `*` glob. */
export function findProjectionSpec(specs: Map<string, ProjectionSpec>, toolName: string): ProjectionSpec | undefined {
  const exact = specs.get(toolName) ?? specs.get(sanitizeToolName(toolName));
  if (exact) return exact;
  let best: { len: number; spec: ProjectionSpec } | undefined;
  for (const [pattern, spec] of specs) {
    if (!pattern.includes('*')) continue;
    const re = new RegExp(`^${pattern.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    if (re.test(toolName) && (!best || pattern.length > best.len)) best = { len: pattern.length, spec };
  }
  return best?.spec;
}

/** Save a spec as `<dir>/<tool>.json` (tool name sanitized; written atomically). Returns the path. */
export function saveProjectionSpec(dir: string, tool: string, spec: ProjectionSpec): string {
  const clean = validateSpec({ ...spec, tool });
  const name = sanitizeToolName(tool);
  fs.mkdirSync(dir, { recursive: true });
  const file = confine(dir, `${name}.json`);
  const tmp = tempNameFor(file);
  fs.writeFileSync(tmp, JSON.stringify(clean, null, 2) + '\n', { flag: 'wx' });
  try {
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return file;
}
