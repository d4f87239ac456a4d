/**
 * Finding sessions: what a root is (detectRootKind), which agent wrote a transcript (sniff), and
 * every unit of incremental indexing under a root (discover), read through a SessionSource.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ADAPTERS, DATABASE_NAMES, GUARDED_HOMES, type ClientAdapter, type ClientId, adapterOf, recogniseTranscript } from '../agents/index.js';
import { LINKED_SUFFIX, LONG_RESPONSES_DIR, META_SUFFIX, classifyLongResponseFile, isInside, openUntrustedSync, sessionPaths } from '../pipeline/index.js';
import { type ClientReader, readerOf } from './clients.js';
import type { RootInfo, SessionKind } from './rows.js';
import type { SessionSource, SourceEntry } from './source.js';
import type { Yielder } from './yielder.js';

/** How deep below a root the walker looks for sessions (`~/.claude/projects/<p>/<s>/subagents/x.jsonl` is 3). */
export const MAX_WALK_DEPTH = 8;
/** Bytes read from a `.jsonl`/`.json` file to tell which agent wrote it. */
export const SNIFF_BYTES = 64 * 1024;
/** Folders never walked into: they hold no sessions and can be huge. */
const SKIP_DIRS = new Set(['node_modules', '.git', 'tool-results']);
/**
 * A client's home where only some folders hold chats (the adapter's `guardedHome`): the rest is
 * settings and credentials, which the walker must not even open to sniff.
 */
const guardedHome = (dirName: string) => GUARDED_HOMES.find((h) => h.dir === dirName);

/** A path inside a guarded client home but outside the parts of it that hold chats. */
function outsideChats(p: string): boolean {
  const segs = p.split(path.sep);
  for (const h of GUARDED_HOMES) {
    const i = segs.lastIndexOf(h.dir);
    if (i === -1 || i >= segs.length - 1) continue;
    const next = segs[i + 1]!;
    // Its database (OpenCode's `opencode.db`, at the top of its home) is the one file there that may be read.
    if (!h.chatDirs.includes(next) && !(i === segs.length - 2 && h.chatFiles?.includes(next))) return true;
  }
  return false;
}

type RootKind = RootInfo['kind'];
export type UnitKind = 'spillway' | ClientId;

export interface FileStat {
  path: string;
  /** Its base name (kept: fingerprints and readers look files up by it). */
  name: string;
  size: number;
  mtimeMs: number;
}

export interface SessionRef {
  path: string;
  name: string;
  kind: SessionKind;
  readOnly: boolean;
  /** A sub-agent transcript: its parent session's path (`<project>/<session>.jsonl`). */
  parentPath?: string;
}

/**
 * One unit of incremental indexing. For Spillway sessions: the files of one stem in
 * `long_responses/` (payload, meta, linked). For imported agents: one transcript file, plus
 * (Claude Code) the `tool-results/` spill files beside it.
 */
export interface Unit {
  key: string;
  kind: UnitKind;
  session: SessionRef;
  files: FileStat[];
  /** Spillway: the stem. */
  stem?: string;
  /** The folder of whole results beside the transcript (the adapter's `around`: Claude Code's `tool-results/`). */
  toolResultsDir?: string;
}

export interface Discovery {
  units: Unit[];
  sessions: Map<string, SessionRef>;
}

/** A file whose size and mtime the walk left for the reader to take from the open file (fstat). */
export const STAT_PENDING = -1;

/** Record what the reader's fstat saw (only for a file the walk did not stat). */
export function fillStat(f: FileStat, size: number | undefined, mtimeMs: number | undefined): void {
  if (f.size === STAT_PENDING && size !== undefined && mtimeMs !== undefined) {
    f.size = size;
    f.mtimeMs = mtimeMs;
  }
}

/**
 * A unit's fingerprint: name, size and mtime of each file whose size is known, and the name of
 * the others. A Spillway stem is fingerprinted by its sidecar (or, without one, its payload):
 * payload and linked files are written once, by rename, and never rewritten in place, so their
 * names say enough, and a scan need not stat them (the full-text phase opens them anyway).
 * A hand-edited payload under an unchanged sidecar is picked up by a rebuild.
 */
export function fingerprint(files: FileStat[]): string {
  // A Spillway stem has one to three files, most often two: no array to sort for those.
  if (files.length === 1) return fileMark(files[0]!);
  if (files.length === 2) {
    const a = fileMark(files[0]!);
    const b = fileMark(files[1]!);
    return a < b ? `${a}|${b}` : `${b}|${a}`;
  }
  return files.map(fileMark).sort().join('|');
}

const fileMark = (f: FileStat) => (f.size === STAT_PENDING ? f.name : `${f.name}:${f.size}:${Math.floor(f.mtimeMs)}`);

/** The file of a Spillway stem its fingerprint takes size and mtime from: the sidecar, else the payload. */
export function anchorOf(files: FileStat[]): FileStat | undefined {
  return files.find((f) => f.path.endsWith(META_SUFFIX)) ?? files.find((f) => !f.path.endsWith(LINKED_SUFFIX)) ?? files[0];
}

/** Which agent wrote a transcript, from its name and first bytes; null when none we know (the registry asks each adapter). */
export function sniffHead(name: string, head: string): ClientId | null {
  return recogniseTranscript(name, head);
}

/** A file the walker sniffs: a `.jsonl`/`.json` transcript, or a client's database of sessions (`opencode.db`). */
const isTranscriptName = (name: string) => name.endsWith('.jsonl') || name.endsWith('.json') || DATABASE_NAMES.has(path.basename(name));

/** Sniff a file through a source (the walker). */
async function sniff(source: SessionSource, p: string): Promise<ClientId | null> {
  if (!isTranscriptName(p)) return null;
  try {
    const r = await source.readRange(p, 0, SNIFF_BYTES);
    return sniffHead(path.basename(p), r.bytes.toString('utf8'));
  } catch {
    return null;
  }
}

/** What a local path given as a root is. Throws a clear error when it is none of them. */
export function detectRootKind(p: string): RootKind {
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch {
    throw new Error(`root does not exist: ${p}`);
  }
  if (st.isFile()) {
    if (path.basename(path.dirname(p)) === LONG_RESPONSES_DIR && classifyLongResponseFile(path.basename(p))) return 'file';
    if (isTranscriptName(p) && sniffHead(path.basename(p), readHeadSync(p))) return 'file';
    throw new Error(`not a session file (a payload in long_responses/, or a transcript of an agent client Spillway reads): ${p}`);
  }
  if (!st.isDirectory()) throw new Error(`root is neither a folder nor a file: ${p}`);
  if (isDirSync(path.join(p, LONG_RESPONSES_DIR))) return 'session';
  if (looksLikeClaudeProjects(p)) return 'claude-projects';
  return 'sessions';
}

function readHeadSync(p: string): string {
  try {
    // A root the user named: a FIFO or device in its place must not block the add.
    const { fd } = openUntrustedSync(p);
    try {
      const buf = Buffer.alloc(SNIFF_BYTES);
      return buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0)).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}

function isDirSync(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** `~/.claude/projects`: named `projects` under `.claude`, or folders of `<uuid>.jsonl` transcripts. */
function looksLikeClaudeProjects(p: string): boolean {
  if (path.basename(p) === 'projects' && path.basename(path.dirname(p)) === '.claude') return true;
  let dirs: fs.Dirent[];
  try {
    dirs = fs.readdirSync(p, { withFileTypes: true }).filter((d) => d.isDirectory()).slice(0, 20);
  } catch {
    return false;
  }
  let hits = 0;
  for (const d of dirs) {
    try {
      if (fs.readdirSync(path.join(p, d.name)).some((n) => /^[0-9a-f-]{36}\.jsonl$/.test(n))) hits++;
    } catch {
      /* unreadable: not ours */
    }
  }
  return hits > 0 && hits >= dirs.length / 2;
}

/**
 * The folders of whole results a transcript given as a root may point into (Claude Code's `tool-results/`),
 * from every adapter that keeps one: the root's file was recognised, but the grant is decided before it is read.
 */
export function sideFilesDirsOf(transcript: string): string[] {
  return Object.values(ADAPTERS).flatMap((a: ClientAdapter) => {
    const d = a.files.around?.(transcript).sideFilesDir;
    return d ? [d] : [];
  });
}

function posixRel(from: string, to: string): string {
  return path.relative(from, to).split(path.sep).join('/');
}

export interface DiscoverOptions {
  source: SessionSource;
  root: string;
  kind: RootKind;
  /** The root is read-only: its Spillway sessions are listed read-only too. */
  readOnly?: boolean;
  /** Limit discovery to these folders/files inside the root (watch events); null = everything. */
  scopes?: string[] | null;
  /** Known unit kinds by key, so unchanged transcripts are not sniffed again. */
  known?: Map<string, UnitKind>;
  yielder: Yielder;
}

/** Find every session and indexing unit under a root (or under some scopes of it). */
export async function discover(o: DiscoverOptions): Promise<Discovery> {
  return new Walk(o).run();
}

class Walk {
  readonly out: Discovery = { units: [], sessions: new Map() };
  private readonly src: SessionSource;
  constructor(private readonly o: DiscoverOptions) {
    this.src = o.source;
  }

  async run(): Promise<Discovery> {
    const { o } = this;
    if (o.kind === 'file') await this.fileRoot(o.root);
    else if (o.kind === 'session') await this.spillwaySession(o.root, path.basename(o.root));
    else {
      const scopes = o.scopes?.filter((s) => isInside(o.root, s)) ?? null;
      if (!scopes) await this.walk(o.root, 0);
      else for (const scope of scopes) await this.scope(scope);
    }
    return this.out;
  }

  private async fileRoot(file: string): Promise<void> {
    const dir = path.dirname(file);
    const c = path.basename(dir) === LONG_RESPONSES_DIR ? classifyLongResponseFile(path.basename(file)) : null;
    if (c) {
      const sessionDir = path.dirname(dir);
      await this.spillwaySession(sessionDir, path.basename(sessionDir), c.stem);
      return;
    }
    await this.maybeTranscript(file, path.basename(file).replace(/\.jsonl?$/, ''));
  }

  private async scope(scope: string): Promise<void> {
    if (outsideChats(scope)) return;
    const depth = posixRel(this.o.root, scope).split('/').filter(Boolean).length;
    const entries = await this.src.list(scope);
    if (entries) await this.walk(scope, depth, entries);
    else if (await this.src.stat(scope)) await this.maybeTranscript(scope, this.nameOf(scope));
  }

  private nameOf(p: string): string {
    return posixRel(this.o.root, p).replace(/\.jsonl?$/, '');
  }

  private async maybeTranscript(p: string, name: string): Promise<void> {
    const kind = this.o.known?.get(p) ?? (await sniff(this.src, p));
    if (kind && kind !== 'spillway') await this.transcript(p, kind, name);
  }

  private async walk(dir: string, depth: number, listed?: SourceEntry[]): Promise<void> {
    const entries = listed ?? (await this.src.list(dir));
    if (!entries) return;
    await this.o.yielder.maybe();
    if (entries.some((e) => e.type === 'dir' && e.name === LONG_RESPONSES_DIR)) {
      await this.spillwaySession(dir, posixRel(this.o.root, dir) || path.basename(dir));
    }
    const guarded = guardedHome(path.basename(dir));
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const p = path.join(dir, e.name);
      if (e.type === 'dir') {
        if (e.name === LONG_RESPONSES_DIR || SKIP_DIRS.has(e.name) || (guarded && !guarded.chatDirs.includes(e.name))) continue;
        if (depth < MAX_WALK_DEPTH) await this.walk(p, depth + 1);
      } else if (e.type === 'file' && isTranscriptName(e.name) && (!guarded || guarded.chatFiles?.includes(e.name))) {
        await this.maybeTranscript(p, this.nameOf(p));
      }
    }
  }

  private async transcript(p: string, kind: ClientId, name: string): Promise<void> {
    const st = await this.src.stat(p);
    if (!st) return;
    const sessionsIn = readerOf(kind)?.sessionsIn;
    if (sessionsIn) return this.database(p, kind, name, st, sessionsIn);
    const session: SessionRef = { path: p, name, kind, readOnly: true };
    const files: FileStat[] = [{ path: p, name: path.basename(p), size: st.size, mtimeMs: st.mtimeMs }];
    const around = adapterOf(kind)?.files.around?.(p);
    const toolResultsDir = around?.sideFilesDir;
    if (around?.parent) session.parentPath = around.parent;
    if (toolResultsDir) {
      // Every spill file, whatever its name (`<tool_use_id>.txt`, Bash's `b1x2y3z4.txt`, MCP's `mcp-…-<id>.txt`).
      for (const e of (await this.src.list(toolResultsDir)) ?? []) {
        if (e.type !== 'file' || e.name.startsWith('.')) continue;
        const fp = path.join(toolResultsDir, e.name);
        const fst = e.stat ?? (await this.src.stat(fp));
        if (fst) files.push({ path: fp, name: e.name, size: fst.size, mtimeMs: fst.mtimeMs });
      }
    }
    this.out.sessions.set(p, session);
    this.out.units.push({ key: p, kind, session, files, toolResultsDir });
  }

  /**
   * A client's database of sessions (OpenCode's `opencode.db`): one session and one unit per session in
   * it, keyed `<file>/<id>`, fingerprinted by the session's stamp. A file whose sessions cannot be listed
   * (not this client's, a schema we do not know) becomes one unit of its own, whose import says why.
   */
  private async database(p: string, kind: ClientId, name: string, st: { size: number; mtimeMs: number }, sessionsIn: NonNullable<ClientReader['sessionsIn']>): Promise<void> {
    let listed: ReturnType<typeof sessionsIn> | null;
    try {
      // Only a local file (not a bucket's key): SQLite opens it by name.
      listed = path.isAbsolute(p) ? sessionsIn(p) : null;
    } catch {
      listed = null;
    }
    if (!listed) {
      const session: SessionRef = { path: p, name, kind, readOnly: true };
      this.out.sessions.set(p, session);
      this.out.units.push({ key: p, kind, session, files: [{ path: p, name: path.basename(p), size: st.size, mtimeMs: st.mtimeMs }] });
      return;
    }
    for (const s of listed) {
      const sp = path.join(p, s.id);
      const session: SessionRef = { path: sp, name: `${name}/${s.id}`, kind, readOnly: true, ...(s.parent ? { parentPath: path.join(p, s.parent) } : {}) };
      this.out.sessions.set(sp, session);
      this.out.units.push({ key: sp, kind, session, files: [{ path: p, name: `${path.basename(p)}#${s.id}`, size: s.stamp.size, mtimeMs: s.stamp.mtimeMs }] });
      await this.o.yielder.maybe();
    }
  }

  private async spillwaySession(dir: string, name: string, onlyStem?: string): Promise<void> {
    const sp = sessionPaths(dir);
    const session: SessionRef = { path: sp.session, name, kind: 'spillway', readOnly: this.o.readOnly === true };
    this.out.sessions.set(sp.session, session);
    // Symlinks are never payloads, and a long_responses/ that is a symlink is not followed (listed as `other`).
    const entries = await this.src.list(sp.longResponses);
    if (!entries) return;
    const groups = new Map<string, FileStat[]>();
    for (const e of entries) {
      if (e.type !== 'file') continue;
      const c = classifyLongResponseFile(e.name);
      if (!c || (onlyStem && c.stem !== onlyStem)) continue;
      let g = groups.get(c.stem);
      if (!g) groups.set(c.stem, (g = []));
      g.push({ path: `${sp.longResponses}${path.sep}${e.name}`, name: e.name, size: e.stat?.size ?? STAT_PENDING, mtimeMs: e.stat?.mtimeMs ?? STAT_PENDING });
    }
    for (const [stem, files] of groups) {
      const key = `${sp.longResponses}${path.sep}${stem}`;
      // A unit seen before is compared by its fingerprint, so stat its anchor now. A new one is
      // read anyway: its reader takes size and mtime from the file it opens (no stat twice).
      if (this.o.known?.has(key)) {
        const anchor = anchorOf(files)!;
        const st = anchor.size === STAT_PENDING ? await this.src.stat(anchor.path) : anchor;
        if (!st) continue;
        fillStat(anchor, st.size, st.mtimeMs);
        await this.o.yielder.maybe();
      }
      this.out.units.push({ key, kind: 'spillway', session, files, stem });
    }
  }
}
