/**
 * A small JSONPath-like syntax for projection specs:
 *   `$.items[*].user.login`   fields inside arrays of objects (`[]` works like `[*]`)
 *   `$.data.*.name`           every key of a dictionary
 *   `$['odd key'].x`, `$[0]`  quoted keys and indexes
 *   `$..id`                   a key at any depth
 * The leading `$` / `$.` is optional: `items[].title` is fine.
 */

export type Segment =
  | { t: 'key'; key: string }
  | { t: 'index'; index: number }
  | { t: 'any' }
  | { t: 'deep'; key: string | null };

export class PathSyntaxError extends Error {
  constructor(
    readonly path: string,
    readonly at: number,
    why: string,
  ) {
    super(`bad path ${JSON.stringify(path)} at char ${at}: ${why}`);
    this.name = 'PathSyntaxError';
  }
}

const IDENT = /[A-Za-z0-9_$@-]/;
/** Longest path accepted (chars). */
export const MAX_PATH_CHARS = 1_000;

export function parsePath(path: string): Segment[] {
  if (typeof path !== 'string' || !path.trim()) throw new PathSyntaxError(String(path), 0, 'empty');
  if (path.length > MAX_PATH_CHARS) throw new PathSyntaxError(path.slice(0, 40), 0, `longer than ${MAX_PATH_CHARS} chars`);
  const s = path.trim();
  let i = 0;
  const out: Segment[] = [];
  if (s[0] === '$') i = 1;
  const ident = (): string => {
    const start = i;
    while (i < s.length && IDENT.test(s[i]!)) i++;
    if (i === start) throw new PathSyntaxError(path, i, 'expected a field name');
    return s.slice(start, i);
  };
  const first = i;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '.') {
      if (s[i + 1] === '.') {
        i += 2;
        if (s[i] === '*') {
          i++;
          out.push({ t: 'deep', key: null });
        } else out.push({ t: 'deep', key: ident() });
        continue;
      }
      i++;
      if (s[i] === '*') {
        i++;
        out.push({ t: 'any' });
      } else out.push({ t: 'key', key: ident() });
    } else if (c === '[') {
      i++;
      if (s[i] === ']') {
        i++;
        out.push({ t: 'any' });
        continue;
      }
      if (s[i] === '*' && s[i + 1] === ']') {
        i += 2;
        out.push({ t: 'any' });
        continue;
      }
      if (s[i] === '"' || s[i] === "'") {
        const q = s[i]!;
        i++;
        let key = '';
        while (i < s.length && s[i] !== q) {
          if (s[i] === '\\' && i + 1 < s.length) i++;
          key += s[i]!;
          i++;
        }
        if (s[i] !== q) throw new PathSyntaxError(path, i, 'unterminated quote');
        i++;
        if (s[i] !== ']') throw new PathSyntaxError(path, i, "expected ']'");
        i++;
        out.push({ t: 'key', key });
        continue;
      }
      const m = /^\d+/.exec(s.slice(i));
      if (!m) throw new PathSyntaxError(path, i, "expected an index, '*', or a quoted key");
      i += m[0].length;
      if (s[i] !== ']') throw new PathSyntaxError(path, i, "expected ']'");
      i++;
      out.push({ t: 'index', index: Number(m[0]) });
    } else if (i === first && IDENT.test(c)) {
      out.push({ t: 'key', key: ident() });
    } else if (c === '*' && i === first) {
      i++;
      out.push({ t: 'any' });
    } else throw new PathSyntaxError(path, i, `unexpected ${JSON.stringify(c)}`);
  }
  return out;
}

export function formatPath(segs: readonly Segment[]): string {
  let out = '$';
  for (const s of segs) {
    if (s.t === 'key') out += /^[A-Za-z_$][\w$]*$/.test(s.key) ? `.${s.key}` : `[${JSON.stringify(s.key)}]`;
    else if (s.t === 'index') out += `[${s.index}]`;
    else if (s.t === 'any') out += '[*]';
    else out += s.key === null ? '..*' : `..${s.key}`;
  }
  return out;
}

/** A trie of compiled paths; a node is "terminal" when a path ends there (keep / drop the whole value). */
export interface PathNode {
  terminal: boolean;
  keys: Map<string, PathNode>;
  indexes: Map<number, PathNode>;
  any?: PathNode;
  /** `..key` watchers that apply at this node and every depth below it. */
  deep: Array<{ key: string | null; next: PathNode }>;
}

const node = (): PathNode => ({ terminal: false, keys: new Map(), indexes: new Map(), deep: [] });

export function compilePaths(paths: readonly string[]): PathNode {
  const root = node();
  for (const p of paths) {
    let n = root;
    for (const seg of parsePath(p)) {
      if (seg.t === 'key') {
        let next = n.keys.get(seg.key);
        if (!next) n.keys.set(seg.key, (next = node()));
        n = next;
      } else if (seg.t === 'index') {
        let next = n.indexes.get(seg.index);
        if (!next) n.indexes.set(seg.index, (next = node()));
        n = next;
      } else if (seg.t === 'any') {
        n = n.any ??= node();
      } else {
        const w = { key: seg.key, next: node() };
        n.deep.push(w);
        n = w.next;
      }
    }
    n.terminal = true;
  }
  return root;
}

/** The trie nodes active at a child of a position with active `nodes` (plus inherited deep watchers). */
export function step(
  nodes: readonly PathNode[],
  watchers: ReadonlyArray<{ key: string | null; next: PathNode }>,
  key: string | number,
): { nodes: PathNode[]; watchers: Array<{ key: string | null; next: PathNode }> } {
  const next: PathNode[] = [];
  const w2 = [...watchers];
  for (const n of nodes) {
    if (typeof key === 'string') {
      const k = n.keys.get(key);
      if (k) next.push(k);
    } else {
      const k = n.indexes.get(key);
      if (k) next.push(k);
    }
    if (n.any) next.push(n.any);
  }
  for (const w of w2) if (w.key === null || w.key === key) next.push(w.next);
  // watchers declared by the newly active nodes apply from here down
  for (const n of next) for (const d of n.deep) if (!w2.includes(d)) w2.push(d);
  return { nodes: next, watchers: w2 };
}
