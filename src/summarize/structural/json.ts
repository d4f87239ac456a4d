import { FocusCollector, type FocusTerm } from '../focus.js';
import {
  FOCUS_LINES_PER_BUCKET,
  MAX_DISTINCT_TRACKED,
  MAX_DISTINCT_VALUE_CHARS,
  MAX_SCHEMA_PATHS,
} from '../limits.js';
import { Budget, fmt, pct, renderFocus, sampleOf } from './out.js';

interface PathStat {
  path: string;
  count: number;
  types: Map<string, number>;
  min: number;
  max: number;
  sum: number;
  strChars: number;
  strCount: number;
  distinct: Map<string, number> | null;
  samples: unknown[];
  /** Serialized chars this path costs, descendants included. */
  cost: number;
  /** Of `cost`, what the container itself takes: keys, brackets, commas. */
  own: number;
  arrItems: number;
  arrMin: number;
  arrMax: number;
  keys?: Set<string>;
  container: boolean;
}

interface Hit {
  path: string;
  value: string;
  record?: string;
}

const RECORD_CHARS = 300;
/** Nesting walked; deeper containers are only counted. */
const MAX_JSON_DEPTH = 200;
/** Keys that look like field names; others (paths, ids, names with `@/.-`, numbers) hint at a dictionary. */
const FIELD_KEY_RE = /^[A-Za-z_$][A-Za-z0-9_$]{0,39}$/;
/** An object with more keys than this is a dictionary whatever its keys look like. */
const MAP_KEYS = 200;

/** Schema, stats, where the tokens go, and focus hits of one parsed JSON value (or a stream of records). */
export class JsonProfiler {
  readonly stats = new Map<string, PathStat>();
  private overflow = 0;
  readonly focus: FocusCollector<Hit>;
  private segs: string[] = [];
  private recordStack: unknown[] = [];
  private terms: readonly FocusTerm[];
  private readonly maps = new Set<string>();

  constructor(terms: readonly FocusTerm[]) {
    this.terms = terms;
    this.focus = new FocusCollector<Hit>(terms, FOCUS_LINES_PER_BUCKET);
  }

  private stat(path: string, container: boolean): PathStat | null {
    let s = this.stats.get(path);
    if (!s) {
      if (this.stats.size >= MAX_SCHEMA_PATHS) {
        this.overflow++;
        return null;
      }
      s = {
        path,
        count: 0,
        types: new Map(),
        min: Infinity,
        max: -Infinity,
        sum: 0,
        strChars: 0,
        strCount: 0,
        distinct: new Map(),
        samples: [],
        cost: 0,
        own: 0,
        arrItems: 0,
        arrMin: Infinity,
        arrMax: -Infinity,
        container,
      };
      this.stats.set(path, s);
    }
    return s;
  }

  /** Values nested deeper than MAX_JSON_DEPTH, counted but not walked (a hostile payload cannot blow the stack). */
  tooDeep = 0;
  private depth = 0;

  /** Walk a value at generalized path `path`; returns its serialized size in chars. */
  walk(v: unknown, path: string): number {
    if (this.depth >= MAX_JSON_DEPTH && v !== null && typeof v === 'object') {
      this.tooDeep++;
      return 2;
    }
    this.depth++;
    try {
      return this.walkIn(v, path);
    } finally {
      this.depth--;
    }
  }

  private walkIn(v: unknown, path: string): number {
    const type = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
    const container = type === 'array' || type === 'object';
    const s = this.stat(path, container);
    let cost: number;
    let children = 0;
    if (s) {
      s.count++;
      s.types.set(type, (s.types.get(type) ?? 0) + 1);
    }
    if (type === 'array') {
      const a = v as unknown[];
      cost = 2;
      const isRecords = a.length > 0 && typeof a[0] === 'object' && a[0] !== null;
      for (let i = 0; i < a.length; i++) {
        this.segs.push(`[${i}]`);
        if (isRecords) this.recordStack.push(a[i]);
        const c = this.walk(a[i], `${path}[*]`);
        children += c;
        cost += c + 1;
        if (isRecords) this.recordStack.pop();
        this.segs.pop();
      }
      if (s) {
        s.arrItems += a.length;
        s.arrMin = Math.min(s.arrMin, a.length);
        s.arrMax = Math.max(s.arrMax, a.length);
      }
    } else if (type === 'object') {
      const o = v as Record<string, unknown>;
      cost = 2;
      if (s && !s.keys) s.keys = new Set();
      const keys = Object.keys(o);
      const map = this.isMap(path, keys);
      for (const k of keys) {
        if (s && s.keys!.size < 64) s.keys!.add(k);
        const seg = /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
        this.segs.push(seg);
        if (this.terms.length) {
          const kl = k.toLowerCase();
          this.focus.offer(kl, () => this.hit(o[k]));
        }
        const c = this.walk(o[k], map ? `${path}.*` : path + seg);
        children += c;
        cost += k.length + 4 + c;
        this.segs.pop();
      }
    } else if (type === 'string') {
      const str = v as string;
      cost = str.length + 2;
      if (s) {
        s.strChars += str.length;
        s.strCount++;
        this.distinct(s, str.length <= MAX_DISTINCT_VALUE_CHARS ? `s:${str}` : null, str);
      }
      if (this.terms.length) this.focus.offer(str.length > 100_000 ? str.slice(0, 100_000).toLowerCase() : str.toLowerCase(), () => this.hit(str));
    } else if (type === 'number') {
      const n = v as number;
      const txt = String(n);
      cost = txt.length;
      if (s) {
        if (n < s.min) s.min = n;
        if (n > s.max) s.max = n;
        s.sum += n;
        this.distinct(s, `n:${txt}`, n);
      }
      if (this.terms.length && /\d/.test(this.terms.map((t) => t.stem).join(''))) this.focus.offer(txt, () => this.hit(n));
    } else {
      cost = type === 'boolean' ? ((v as boolean) ? 4 : 5) : 4;
      if (s) this.distinct(s, `${type}:${String(v)}`, v);
    }
    if (s) {
      s.cost += cost;
      s.own += cost - children;
    }
    return cost;
  }

  /**
   * Objects used as dictionaries (package names, ids, file paths as keys) are generalized to
   * `path.*` like arrays, or every key would become its own schema path. Sticky per path.
   */
  private isMap(path: string, keys: string[]): boolean {
    if (this.maps.has(path)) return true;
    if (keys.length < 2) return false;
    let odd = 0;
    for (const k of keys) if (!FIELD_KEY_RE.test(k)) odd++;
    const share = odd / keys.length;
    const map = (keys.length >= 8 && share >= 0.3) || share >= 0.5 || keys.length > MAP_KEYS;
    if (map) this.maps.add(path);
    return map;
  }

  private distinct(s: PathStat, key: string | null, v: unknown): void {
    if (s.samples.length < 3 && !s.samples.some((x) => x === v)) s.samples.push(v);
    if (!s.distinct) return;
    if (key === null) {
      s.distinct = null;
      return;
    }
    s.distinct.set(key, (s.distinct.get(key) ?? 0) + 1);
    if (s.distinct.size > MAX_DISTINCT_TRACKED) s.distinct = null;
  }

  private hit(v: unknown): Hit {
    const rec = this.recordStack[this.recordStack.length - 1];
    return {
      path: '$' + this.segs.join(''),
      value: sampleOf(v, 160),
      record: rec !== undefined && rec !== v ? sampleOf(rec, RECORD_CHARS) : undefined,
    };
  }

  /** Render into the budget. `root` labels the top value. */
  render(b: Budget, totalCost: number, opts: { focus?: string; records?: number }): void {
    if (this.terms.length) this.renderFocus(b, opts.focus ?? '');
    const focusStems = this.terms.map((t) => t.stem);
    const lines: string[] = [];
    const stats = [...this.stats.values()];
    // Fields whose name matches the focus go first.
    const rank = (s: PathStat) => (focusStems.some((t) => s.path.toLowerCase().includes(t)) ? 0 : 1);
    stats.sort((a, b) => rank(a) - rank(b));
    for (const s of stats) lines.push(describe(s, rank(s) === 0));
    if (this.overflow) lines.push(`  (+ ${fmt(this.overflow)} values under paths beyond the first ${fmt(MAX_SCHEMA_PATHS)})`);
    if (this.tooDeep) lines.unshift(`  (${fmt(this.tooDeep)} values nested deeper than ${MAX_JSON_DEPTH} levels were not profiled)`);
    const parts = stats
      .map((s) => (s.container ? { label: `${s.path} (keys, brackets)`, cost: s.own } : { label: s.path, cost: s.cost }))
      .sort((a, b) => b.cost - a.cost);
    const where = parts
      .slice(0, 8)
      .filter((p) => p.cost / totalCost >= 0.01)
      .map((p) => `${p.label} ${pct(p.cost, totalCost)}`);
    if (where.length) b.line(`Where the tokens go: ${where.join(', ')}`, 200);
    b.section('Schema (path: type ×count, stats):', lines, { reserve: 0, moreLabel: 'paths' });
  }

  private renderFocus(b: Budget, focus: string): void {
    const seenRecords = new Set<string>();
    renderFocus(b, this.focus, focus, 'value', (item) => {
      let l = `${item.path} = ${item.value}`;
      if (item.record && !seenRecords.has(item.record)) {
        seenRecords.add(item.record);
        l += `\n      in ${item.record}`;
      }
      return l;
    }, { reserve: Math.max(400, Math.floor(b.maxChars * 0.4)) });
  }
}

function describe(s: PathStat, focused: boolean): string {
  if (!s.container && s.distinct && s.distinct.size === 1) {
    const only = sampleOf(s.samples[0], 120);
    return `  ${focused ? '★ ' : ''}${s.path}: ${s.count === 1 ? only : `always ${only} ×${fmt(s.count)}`}`;
  }
  const types = [...s.types.entries()].sort((a, b) => b[1] - a[1]).map(([t, n]) => (s.types.size > 1 ? `${t} ×${fmt(n)}` : t));
  let out = `  ${focused ? '★ ' : ''}${s.path}: ${types.join(' | ')}${s.types.size === 1 && s.count > 1 ? ` ×${fmt(s.count)}` : ''}`;
  const extra: string[] = [];
  if (s.types.has('array')) {
    extra.push(s.arrMin === s.arrMax ? `${fmt(s.arrMin)} items` : `${fmt(s.arrMin)}–${fmt(s.arrMax)} items (${fmt(s.arrItems)} total)`);
  }
  if (s.types.has('object') && s.keys) extra.push(`keys ${[...s.keys].slice(0, 12).join(', ')}${s.keys.size > 12 ? ', …' : ''}`);
  if (s.types.has('number')) extra.push(`${fmt(s.min)} … ${fmt(s.max)}`);
  if (s.strCount) extra.push(`avg ${fmt(Math.round(s.strChars / s.strCount))} chars`);
  if (!s.container) {
    if (s.distinct) {
      const d = s.distinct.size;
      if (d <= 8 && s.count > d) {
        const top = [...s.distinct.entries()]
          .sort((a, b) => b[1] - a[1])
          .map(([k, n]) => `${distinctLabel(k)} ×${fmt(n)}`);
        extra.push(`${d} distinct: ${top.join(', ')}`);
      } else {
        extra.push(`${fmt(d)} distinct`);
        extra.push(`e.g. ${s.samples.map((x) => sampleOf(x, 48)).join(', ')}`);
      }
    } else {
      extra.push(`≥${fmt(MAX_DISTINCT_TRACKED)} distinct`);
      extra.push(`e.g. ${s.samples.map((x) => sampleOf(x, 48)).join(', ')}`);
    }
  }
  if (extra.length) out += `, ${extra.join('; ')}`;
  return out;
}

function distinctLabel(key: string): string {
  const raw = key.slice(key.indexOf(':') + 1);
  const cut = raw.length > 40 ? `${raw.slice(0, 40)}…` : raw;
  return key.startsWith('s:') ? JSON.stringify(cut) : cut;
}
