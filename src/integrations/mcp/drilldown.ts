import fs from 'node:fs';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import {
  findProjectionSpec,
  grepFile,
  HandleStore,
  loadProjectionSpecs,
  project,
  readSlice,
  type HandleQuery,
  type PutReceipt,
} from '../../compress/index.js';
import { appPaths, classifyLongResponseFile, isInside, LONG_RESPONSES_DIR, MAX_MESSAGE_CHARS, META_SUFFIX, PathEscapeError, safeCut, type DrillDownToolNames, type GuardResult } from '../../pipeline/index.js';
import { S3Materializer, S3SpillStore, isS3Url } from '../../pipeline/store/s3/index.js';
import type { LocalTools } from './proxy.js';
import { errMessage, isObj } from '../../pipeline/values.js';

/**
 * The drill-down tools the proxy adds to tools/list and answers itself: the model reads any part of
 * a spilled result without loading the whole. All three are confined to the session's
 * `long_responses/` folder: a path argument that leads anywhere else (`..`, an absolute path, a
 * symlink out) is refused.
 */

export const READ_TOOL = 'spillway_read';
export const GREP_TOOL = 'spillway_grep';
export const QUERY_TOOL = 'spillway_query';

/** Each drill-down tool's canonical name → the name it is registered under in this session. */
export type DrillDownNames = Readonly<Record<typeof READ_TOOL | typeof GREP_TOOL | typeof QUERY_TOOL, string>>;
const CANONICAL_NAMES: DrillDownNames = { [READ_TOOL]: READ_TOOL, [GREP_TOOL]: GREP_TOOL, [QUERY_TOOL]: QUERY_TOOL };

/**
 * Names for the drill-down tools that none of the server's tools has. A server may advertise a
 * `spillway_read` of its own (by accident or to catch the model's reads of spilled results): ours is
 * then registered as `spillway_read_2` (or the next free suffix), and every message names the tools
 * as registered, so a drill-down never goes to the server. No name is safe in advance (a server can
 * list any name), so the choice is made against the names actually listed.
 */
export function freeNames(taken: ReadonlySet<string>): DrillDownNames {
  const used = new Set(taken);
  const pick = (name: string): string => {
    let chosen = name;
    for (let n = 2; used.has(chosen); n++) chosen = `${name}_${n}`;
    used.add(chosen);
    return chosen;
  };
  return { [READ_TOOL]: pick(READ_TOOL), [GREP_TOOL]: pick(GREP_TOOL), [QUERY_TOOL]: pick(QUERY_TOOL) };
}

/** The names as the guard's options take them (GuardOptions.drillDownNames: the message's "read more" sentence names these). */
function guardNames(n: DrillDownNames): DrillDownToolNames {
  return { read: n[READ_TOOL], grep: n[GREP_TOOL], query: n[QUERY_TOOL] };
}

/** Largest answer (chars) a drill-down tool returns; it says so and how to go on when it cuts. */
export const MAX_DRILLDOWN_CHARS = MAX_MESSAGE_CHARS;
/** Default slice when the model gives no limit. */
export const DEFAULT_READ_CHARS = 8_000;
export const DEFAULT_READ_LINES = 200;
export const DEFAULT_GREP_MATCHES = 50;
export const MAX_GREP_MATCHES = 500;
export const MAX_GREP_CONTEXT_LINES = 20;
export const DEFAULT_QUERY_ROWS = 50;
export const MAX_QUERY_ROWS = 500;
/** A handle receipt's sample rows are shown only when this small (chars of JSON). */
const MAX_RECEIPT_SAMPLE_CHARS = 2_000;

type Obj = Record<string, unknown>;

const pathProp = {
  type: 'string',
  description: 'The saved payload: the path given in the spill message (absolute, or relative to the session folder), or its file name.',
};
const viewProp = {
  type: 'string',
  enum: ['text', 'raw'],
  description: 'text (default): the text the tool returned, as lines; raw: the saved file as it is on disk.',
};

/** The drill-down tools' definitions under the names they are registered as (see {@link freeNames}). */
export function drillDownToolDefs(n: DrillDownNames = CANONICAL_NAMES): Array<Record<string, unknown>> {
  return [
    {
      name: n[READ_TOOL],
      title: 'Read part of a spilled result',
      description:
        'Read a slice of a tool result that Spillway saved to disk because it was too large for the context. ' +
        'Give either startLine/endLine (1-based, inclusive) or offset/limit (characters). Long answers are cut and say where to continue.',
      inputSchema: {
        type: 'object',
        properties: {
          path: pathProp,
          startLine: { type: 'integer', minimum: 1 },
          endLine: { type: 'integer', minimum: 1 },
          offset: { type: 'integer', minimum: 0, description: 'character offset' },
          limit: { type: 'integer', minimum: 1, description: `characters (at most ${MAX_DRILLDOWN_CHARS})` },
          view: viewProp,
        },
        required: ['path'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true, openWorldHint: false, idempotentHint: true },
    },
    {
      name: n[GREP_TOOL],
      title: 'Search a spilled result',
      description:
        'Find the lines of a spilled tool result that contain a text (case-insensitive by default), or match a regular expression with regex: true. ' +
        `Returns line numbers (use them with ${n[READ_TOOL]}) and context lines.`,
      inputSchema: {
        type: 'object',
        properties: {
          path: pathProp,
          pattern: { type: 'string', description: 'text to find, or a regular expression with regex: true' },
          regex: { type: 'boolean', description: 'treat pattern as a JavaScript regular expression (no backreferences, lookarounds or nested quantifiers)' },
          ignoreCase: { type: 'boolean', description: 'default true' },
          context: { type: 'integer', minimum: 0, maximum: MAX_GREP_CONTEXT_LINES, description: 'lines before and after each match' },
          maxMatches: { type: 'integer', minimum: 1, maximum: MAX_GREP_MATCHES },
          view: viewProp,
        },
        required: ['path', 'pattern'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true, openWorldHint: false, idempotentHint: true },
    },
    {
      name: n[QUERY_TOOL],
      title: 'Query a spilled result as a table',
      description:
        'Query a spilled result as rows (arrays of objects become rows; text becomes lines): filter, sort, group with aggregates, and page. ' +
        'Pass `path` the first time; the answer gives a handle that later queries may use instead.',
      inputSchema: {
        type: 'object',
        properties: {
          path: pathProp,
          handle: { type: 'string', description: 'a handle from an earlier answer' },
          where: {
            type: 'array',
            items: { type: 'string' },
            description: 'conditions, ANDed: field=value, field!=value, field>n, field<n, field>=n, field<=n, field~text (contains), ~text (anywhere in the row)',
          },
          select: { type: 'array', items: { type: 'string' }, description: 'fields to return' },
          groupBy: { type: 'array', items: { type: 'string' }, description: 'fields to group by' },
          aggregate: { type: 'array', items: { type: 'string' }, description: 'with groupBy: count, sum:F, avg:F, min:F, max:F (default count)' },
          distinct: { type: 'array', items: { type: 'string' }, description: 'distinct values (combinations) of these fields' },
          sort: { type: 'array', items: { type: 'string' }, description: 'fields, -field for descending' },
          offset: { type: 'integer', minimum: 0 },
          limit: { type: 'integer', minimum: 1, maximum: MAX_QUERY_ROWS },
        },
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
  ];
}

export const DRILLDOWN_TOOL_DEFS: Array<Record<string, unknown>> = drillDownToolDefs();

export interface DrillDownOptions {
  /** Makes the session folder (if needed) and returns it. */
  session: () => Promise<string>;
  sessionDir: () => string;
  /** Where the guard spills (`s3://bucket/prefix`; default SPILLWAY_STORE): payloads named by URL or file name are read from there too. */
  store?: string;
}

function text(t: string, isError = false): Obj {
  return { content: [{ type: 'text', text: t }], ...(isError ? { isError: true } : {}) };
}

function clip(t: string, max = MAX_DRILLDOWN_CHARS): { text: string; cut: boolean } {
  return t.length <= max ? { text: t, cut: false } : { text: t.slice(0, safeCut(t, max)), cut: true };
}

function intArg(args: Obj, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new Error(`${name} must be a whole number between ${min} and ${max}`);
  return v;
}

/**
 * Resolve a payload reference inside `<session>/long_responses/`, refusing escapes (also through
 * symlinks: both sides are compared after realpath).
 */
export async function resolvePayload(sessionDir: string, ref: unknown): Promise<string> {
  if (typeof ref !== 'string' || !ref.trim() || ref.includes('\0')) throw new Error('path must be a non-empty string');
  const base = path.join(path.resolve(sessionDir), LONG_RESPONSES_DIR);
  let realBase: string;
  try {
    realBase = await fs.promises.realpath(base);
  } catch {
    throw new Error('nothing has been spilled in this session yet');
  }
  let target: string;
  if (path.isAbsolute(ref)) target = path.resolve(ref);
  else {
    // `long_responses/x.json` (session-relative) or `x.json` (a file name from the message).
    const fromSession = path.resolve(sessionDir, ref);
    target = isInside(base, fromSession) ? fromSession : path.resolve(base, ref);
  }
  if (!isInside(base, target) && !isInside(realBase, target)) throw new PathEscapeError(base, ref);
  let real: string;
  try {
    real = await fs.promises.realpath(target);
  } catch {
    throw new Error(`no saved payload ${JSON.stringify(ref)} in this session`);
  }
  // A symlink inside the folder may still point out of it.
  if (!isInside(realBase, real)) throw new PathEscapeError(base, ref);
  const st = await fs.promises.stat(real);
  if (!st.isFile()) throw new Error(`${JSON.stringify(ref)} is not a file`);
  if (real.endsWith(META_SUFFIX)) {
    // A meta sidecar stands for its payload.
    try {
      const meta = JSON.parse(await fs.promises.readFile(real, 'utf8')) as { payloadFile?: unknown };
      if (typeof meta.payloadFile === 'string' && !meta.payloadFile.endsWith(META_SUFFIX)) return await resolvePayload(sessionDir, meta.payloadFile);
    } catch {
      /* read the sidecar itself */
    }
  }
  return real;
}

/** The text a model would have read: text blocks and text resources of an MCP result; else the file itself. */
export function textView(raw: string): string {
  const t = raw.trimStart();
  if (!t.startsWith('{')) return raw;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return raw;
  }
  if (!isObj(v) || !Array.isArray(v.content)) return raw;
  const parts: string[] = [];
  for (const b of v.content) {
    if (!isObj(b)) continue;
    if (b.type === 'text' && typeof b.text === 'string') parts.push(b.text);
    else if (b.type === 'resource' && isObj(b.resource) && typeof b.resource.text === 'string') parts.push(b.resource.text);
  }
  if (parts.length) return parts.join('\n');
  return v.structuredContent !== undefined ? JSON.stringify(v.structuredContent, null, 2) : raw;
}

/** The value a table query should see: structuredContent arrays, JSON carried in text, else the text's lines. */
export function queryValue(raw: string): unknown {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return raw;
  }
  if (!isObj(v) || !Array.isArray(v.content)) return v;
  if (Array.isArray(v.structuredContent)) return v.structuredContent;
  const t = textView(raw);
  if (t !== raw) {
    const s = t.trimStart();
    if (s.startsWith('[') || s.startsWith('{')) {
      try {
        return JSON.parse(t);
      } catch {
        /* text */
      }
    }
    return t;
  }
  return v.structuredContent !== undefined ? v.structuredContent : v;
}

/** Payloads larger than this are read raw: their text view would not fit in one string. */
const MAX_TEXT_VIEW_BYTES = 256 * 1024 * 1024;

export function createDrillDownTools(opts: DrillDownOptions): LocalTools {
  // Registered names: the canonical ones until a server's tools/list takes one (see freeNames).
  let named: DrillDownNames = CANONICAL_NAMES;
  const views = new Map<string, { mtimeMs: number; size: number; file: string }>();
  const handles = new Map<string, string>();
  let viewDir: string | undefined;
  let store: HandleStore | undefined;
  // Spills that went to a bucket are read from a private local copy (the helpers work on files).
  const storeUrl = opts.store ?? process.env.SPILLWAY_STORE;
  let remote: S3Materializer | null | undefined;
  const bucket = (): S3Materializer | null => {
    if (remote !== undefined) return remote;
    try {
      remote = storeUrl && isS3Url(storeUrl) ? new S3Materializer(S3SpillStore.forSession(storeUrl, opts.sessionDir()), async () => (viewDir ??= await fs.promises.mkdtemp(path.join(os.tmpdir(), 'spillway-views-')))) : null;
    } catch {
      remote = null;
    }
    return remote;
  };
  /** A payload reference: local first (confined), else an object of this session in the bucket. */
  const resolveRef = async (sessionDir: string, ref: unknown): Promise<string> => {
    const b = bucket();
    if (b && typeof ref === 'string' && isS3Url(ref)) {
      const f = await b.fetch(ref);
      if (!f) throw new Error(`no saved payload ${JSON.stringify(ref)} in this session`);
      return f;
    }
    try {
      return await resolvePayload(sessionDir, ref);
    } catch (err) {
      const f = b && typeof ref === 'string' && !(err instanceof PathEscapeError) ? await b.fetch(ref) : null;
      if (f) return f;
      throw err;
    }
  };

  process.once('exit', () => {
    store?.close();
    if (viewDir) fs.rmSync(viewDir, { recursive: true, force: true });
  });

  /**
   * The file a read or grep runs on. `raw`: the saved payload. `text` (default): the text the tool
   * returned (an MCP result's text blocks), written once to a private temp file so the compress
   * helpers (streaming, bounded, regex-safe) work on it like on any file.
   */
  async function viewFile(payload: string, view: unknown): Promise<string> {
    if (view !== undefined && view !== 'text' && view !== 'raw') throw new Error('view must be "text" or "raw"');
    if (view === 'raw') return payload;
    const st = await fs.promises.stat(payload);
    if (st.size > MAX_TEXT_VIEW_BYTES) return payload;
    const hit = views.get(payload);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.file;
    const raw = await fs.promises.readFile(payload, 'utf8');
    const t = textView(raw);
    if (t === raw) return payload;
    viewDir ??= await fs.promises.mkdtemp(path.join(os.tmpdir(), 'spillway-views-'));
    const file = path.join(viewDir, `${crypto.createHash('sha256').update(payload).digest('hex').slice(0, 24)}.txt`);
    await fs.promises.writeFile(file, t);
    views.set(payload, { mtimeMs: st.mtimeMs, size: st.size, file });
    return file;
  }

  async function read(args: Obj): Promise<Obj> {
    const payload = await resolveRef(opts.sessionDir(), args.path);
    const file = await viewFile(payload, args.view);
    const startLine = intArg(args, 'startLine', 1);
    const endLine = intArg(args, 'endLine', 1);
    const offset = intArg(args, 'offset', 0);
    const limit = intArg(args, 'limit', 1);
    if ((startLine !== undefined || endLine !== undefined) && (offset !== undefined || limit !== undefined)) {
      throw new Error('give either startLine/endLine or offset/limit, not both');
    }
    if (offset !== undefined || limit !== undefined) {
      const sl = await readSlice(file, { offset: offset ?? 0, limit: Math.min(limit ?? DEFAULT_READ_CHARS, MAX_DRILLDOWN_CHARS) });
      const more = sl.more ? `; next: offset ${sl.end}` : '; end of text';
      return text(`${sl.text}\n[${named[READ_TOOL]}: bytes ${sl.start}–${sl.end} of ${sl.totalBytes}${more}]`);
    }
    const s = startLine ?? 1;
    if (endLine !== undefined && endLine < s) throw new Error('endLine must not be before startLine');
    const sl = await readSlice(file, { startLine: s, endLine: endLine ?? s + DEFAULT_READ_LINES - 1 });
    if (!sl.text && (sl.endLine ?? 0) < s) return text(`[${named[READ_TOOL]}: startLine ${s} is past the end of the text]`);
    let body = sl.text;
    let last = sl.endLine ?? s;
    let more = sl.more;
    if (body.length > MAX_DRILLDOWN_CHARS) {
      // Keep whole lines within the answer's budget, and say where to go on.
      const cut = body.lastIndexOf('\n', MAX_DRILLDOWN_CHARS);
      if (cut > 0) {
        last = s + body.slice(0, cut).split('\n').length - 1;
        body = body.slice(0, cut);
      } else {
        body = `${body.slice(0, MAX_DRILLDOWN_CHARS)}… [line cut: read it with offset/limit]`;
        last = s;
      }
      more = true;
    }
    const tail = more ? `; next: startLine ${last + 1}` : '; end of text';
    return text(`${body}\n[${named[READ_TOOL]}: lines ${s}–${last}${tail}]`);
  }

  async function grep(args: Obj): Promise<Obj> {
    const payload = await resolveRef(opts.sessionDir(), args.path);
    if (typeof args.pattern !== 'string' || !args.pattern) throw new Error('pattern must be a non-empty string');
    const context = intArg(args, 'context', 0, MAX_GREP_CONTEXT_LINES) ?? 0;
    const maxMatches = intArg(args, 'maxMatches', 1, MAX_GREP_MATCHES) ?? DEFAULT_GREP_MATCHES;
    const file = await viewFile(payload, args.view);
    const found = await grepFile(file, args.pattern, {
      context,
      maxMatches,
      regex: args.regex === true,
      ignoreCase: args.ignoreCase !== false,
    });
    const out: string[] = [];
    let shown = 0;
    for (const m of found.matches) {
      const first = m.before?.[0]?.line ?? m.line;
      if (context > 0 && out.length && first > shown + 1) out.push('--');
      for (const b of m.before ?? []) if (b.line > shown) out.push(`${b.line}- ${b.text}`);
      if (m.line > shown) out.push(`${m.line}: ${m.text}`);
      shown = Math.max(shown, m.line);
      for (const a of m.after ?? []) {
        if (a.line > shown) {
          out.push(`${a.line}- ${a.text}`);
          shown = a.line;
        }
      }
    }
    const summary = `[${named[GREP_TOOL]}: ${found.total} matching line${found.total === 1 ? '' : 's'} in ${found.linesScanned}${
      found.truncated ? `; the first ${found.matches.length} shown (raise maxMatches or narrow the pattern)` : ''
    }]`;
    const body = out.join('\n');
    const c = clip(body, MAX_DRILLDOWN_CHARS - summary.length - 60);
    return text(`${c.text}${c.cut ? '\n… [cut: ask for fewer matches or less context]' : ''}${body ? '\n' : ''}${summary}`);
  }

  async function query(args: Obj): Promise<Obj> {
    const session = await opts.session();
    store ??= HandleStore.open(session);
    let handle = typeof args.handle === 'string' && args.handle ? args.handle : undefined;
    let receipt: PutReceipt | undefined;
    if (!handle) {
      if (args.path === undefined) throw new Error('give the path of a spilled result (or a handle from an earlier answer)');
      const payload = await resolveRef(session, args.path);
      handle = handles.get(payload);
      if (!handle) {
        const raw = await fs.promises.readFile(payload, 'utf8');
        const meta = await readMetaTool(payload);
        receipt = store.put(queryValue(raw), { tool: meta, fileName: path.basename(payload) });
        handle = receipt.handle;
        handles.set(payload, handle);
      }
    }
    const q: HandleQuery = {
      limit: Math.min(intArg(args, 'limit', 1, MAX_QUERY_ROWS) ?? DEFAULT_QUERY_ROWS, MAX_QUERY_ROWS),
    };
    const offset = intArg(args, 'offset', 0);
    if (offset !== undefined) q.offset = offset;
    const strs = (k: string): string[] | undefined => {
      const v = args[k];
      if (v === undefined) return undefined;
      const list = Array.isArray(v) ? v : [v];
      if (!list.every((x) => typeof x === 'string')) throw new Error(`${k} must be a string or a list of strings`);
      return list as string[];
    };
    if (strs('where')) q.where = strs('where');
    if (strs('select')) q.select = strs('select');
    if (strs('sort')) q.sort = strs('sort');
    if (strs('groupBy')) q.groupBy = strs('groupBy');
    if (strs('aggregate')) q.agg = strs('aggregate');
    if (strs('distinct')) q.distinct = strs('distinct');
    const res = store.query(handle, q);
    let brief: Obj | undefined;
    if (receipt) {
      const { sample, ...rest } = receipt;
      brief = JSON.stringify(sample).length <= MAX_RECEIPT_SAMPLE_CHARS ? receipt : rest;
    }
    // Always valid JSON: when the rows do not fit, fewer are shown and the answer says so.
    let rows = res.rows;
    for (;;) {
      const answer: Obj = { handle, ...(brief ? { receipt: brief } : {}), ...res, rows };
      if (rows.length < res.rows.length) answer.cut = `only ${rows.length} of ${res.rows.length} rows fit in one answer: use select, or a smaller limit with offset`;
      const out = JSON.stringify(answer);
      if (out.length <= MAX_DRILLDOWN_CHARS || rows.length === 0) return text(out.length <= MAX_DRILLDOWN_CHARS ? out : clip(out).text);
      rows = rows.slice(0, Math.floor(rows.length / 2));
    }
  }

  return {
    list(taken) {
      named = freeNames(taken);
      return drillDownToolDefs(named);
    },
    resolve(name) {
      for (const canonical of [READ_TOOL, GREP_TOOL, QUERY_TOOL] as const) if (named[canonical] === name) return canonical;
      return undefined;
    },
    names: () => guardNames(named),
    async call(name, args) {
      try {
        if (name === READ_TOOL) return await read(args);
        if (name === GREP_TOOL) return await grep(args);
        return await query(args);
      } catch (err) {
        // The name as registered: the canonical one may be the server's.
        return text(`${named[name as keyof DrillDownNames] ?? name}: ${errMessage(err)}`, true);
      }
    },
    hint: (g: GuardResult) =>
      g.payloadPath
        ? `For example: ${named[READ_TOOL]} {"path": ${JSON.stringify(g.payloadPath)}, "startLine": 1, "endLine": 200}; ` +
          `${named[GREP_TOOL]} {"path": …, "pattern": "…", "context": 2}; ${named[QUERY_TOOL]} {"path": …, "where": ["field=value"]}.`
        : '',
  };
}

/** The tool name recorded in the payload's meta sidecar, for the handle's bookkeeping. */
async function readMetaTool(payload: string): Promise<string | undefined> {
  const stem = classifyLongResponseFile(path.basename(payload))?.stem;
  if (!stem) return undefined;
  try {
    const meta = JSON.parse(await fs.promises.readFile(path.join(path.dirname(payload), `${stem}${META_SUFFIX}`), 'utf8')) as { tool?: unknown };
    return typeof meta.tool === 'string' ? meta.tool : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Per-tool projections, through compress's `project`: from `--projection` (a spec file or a folder
 * of `<tool>.json`), else from the saved specs in `<app data>/projections/` when there are any.
 */
export function loadProjectionFor(fileOrDir: string | undefined): ((toolName: string) => ((value: unknown) => unknown) | undefined) | undefined {
  if (fileOrDir !== undefined && !fs.existsSync(path.resolve(fileOrDir))) throw new Error(`--projection: no such file or folder: ${fileOrDir}`);
  const specs = loadProjectionSpecs(path.resolve(fileOrDir ?? appPaths(process.env).projections));
  if (specs.size === 0) return undefined;
  return (tool) => {
    const spec = findProjectionSpec(specs, tool);
    return spec ? (value) => project(value, spec) : undefined;
  };
}
