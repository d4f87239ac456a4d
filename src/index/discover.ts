import fs from 'node:fs';
import path from 'node:path';
import { LONG_RESPONSES_DIR, classifyLongResponseFile, isInside, sessionPaths } from '../pipeline/index.js';
import type { RootInfo, SessionKind } from './rows.js';
import { Yielder } from './yielder.js';

/** How deep below a root the walker looks for sessions (`~/.claude/projects/<p>/<s>/subagents/x.jsonl` is 3). */
export const MAX_WALK_DEPTH = 8;
/** Bytes read from a `.jsonl`/`.json` file to tell which agent wrote it. */
export const SNIFF_BYTES = 64 * 1024;
/** Folders never walked into: they hold no sessions and can be huge. */
const SKIP_DIRS = new Set(['node_modules', '.git', 'tool-results']);

export type RootKind = RootInfo['kind'];
export type UnitKind = 'spillway' | 'claude-code' | 'codex' | 'gemini';

export interface FileStat {
  path: string;
  size: number;
  mtimeMs: number;
}

export interface SessionRef {
  path: string;
  name: string;
  kind: SessionKind;
  readOnly: boolean;
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
  /** Claude Code: folder holding `<tool_use_id>.txt` spill files. */
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

/** lstat one file the walk left unstat'ed (size stays STAT_PENDING if it is gone). */
export function ensureStat(f: FileStat): FileStat {
  if (f.size === STAT_PENDING) {
    const st = statFile(f.path);
    if (st) fillStat(f, st.size, st.mtimeMs);
  }
  return f;
}

/** lstat the files the reader did not open; files gone since the walk are dropped. */
export function completeStats(files: FileStat[]): FileStat[] {
  if (!files.some((f) => f.size === STAT_PENDING)) return files;
  const out: FileStat[] = [];
  for (const f of files) {
    if (f.size !== STAT_PENDING) out.push(f);
    else {
      const st = statFile(f.path);
      if (st) out.push(st);
    }
  }
  return out;
}

export function fingerprint(files: FileStat[]): string {
  return files
    .map((f) => `${path.basename(f.path)}:${f.size}:${Math.floor(f.mtimeMs)}`)
    .sort()
    .join('|');
}

function statFile(p: string): FileStat | null {
  try {
    const st = fs.lstatSync(p);
    if (!st.isFile()) return null;
    return { path: p, size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return null;
  }
}

/** What a path given as a root is. Throws a clear error when it is none of them. */
export function detectRootKind(p: string): RootKind {
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch {
    throw new Error(`root does not exist: ${p}`);
  }
  if (st.isFile()) {
    if (path.basename(path.dirname(p)) === LONG_RESPONSES_DIR && classifyLongResponseFile(path.basename(p))) return 'file';
    if (sniffFile(p)) return 'file';
    throw new Error(`not a session file (a payload in long_responses/, a Claude Code or Codex .jsonl, or a Gemini chat .json): ${p}`);
  }
  if (!st.isDirectory()) throw new Error(`root is neither a folder nor a file: ${p}`);
  if (isDir(path.join(p, LONG_RESPONSES_DIR))) return 'session';
  if (looksLikeClaudeProjects(p)) return 'claude-projects';
  return 'sessions';
}

function isDir(p: string): boolean {
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

/** Which agent wrote a transcript, from its name and first bytes; null when none we know. */
export function sniffFile(p: string): Exclude<UnitKind, 'spillway'> | null {
  const name = path.basename(p);
  const isJsonl = name.endsWith('.jsonl');
  const isJson = name.endsWith('.json');
  if (!isJsonl && !isJson) return null;
  let head: string;
  try {
    const fd = fs.openSync(p, 'r');
    try {
      const buf = Buffer.alloc(SNIFF_BYTES);
      const n = fs.readSync(fd, buf, 0, buf.length, 0);
      head = buf.subarray(0, n).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
  if (isJsonl) {
    if (/"type"\s*:\s*"(session_meta|response_item|turn_context|event_msg)"/.test(head)) return 'codex';
    if (name.startsWith('rollout-') && /"(record_type|call_id|instructions)"/.test(head)) return 'codex';
    if (/"(parentUuid|sessionId|leafUuid)"\s*:/.test(head) || /"type"\s*:\s*"(summary|file-history-snapshot)"/.test(head)) {
      return 'claude-code';
    }
    return null;
  }
  if (/^\s*\{/.test(head) && /"sessionId"\s*:/.test(head) && /"messages"\s*:/.test(head)) return 'gemini';
  return null;
}

/** Where Claude Code keeps `<tool_use_id>.txt` spill files for a transcript. */
export function claudeToolResultsDir(transcript: string): string {
  const dir = path.dirname(transcript);
  if (path.basename(dir) === 'subagents') return path.join(path.dirname(dir), 'tool-results');
  return path.join(dir, path.basename(transcript, '.jsonl'), 'tool-results');
}

function posixRel(from: string, to: string): string {
  return path.relative(from, to).split(path.sep).join('/');
}

export interface DiscoverOptions {
  root: string;
  kind: RootKind;
  /** Limit discovery to these folders/files inside the root (watch events); null = everything. */
  scopes?: string[] | null;
  /** Known unit kinds by key, so unchanged transcripts are not sniffed again. */
  known?: Map<string, UnitKind>;
  yielder: Yielder;
}

/** Find every session and indexing unit under a root (or under some scopes of it). */
export async function discover(o: DiscoverOptions): Promise<Discovery> {
  const out: Discovery = { units: [], sessions: new Map() };
  const root = o.root;
  const sniff = (p: string) => o.known?.get(p) ?? sniffFile(p);

  const addTranscript = (p: string, kind: Exclude<UnitKind, 'spillway'>, name: string) => {
    const st = statFile(p);
    if (!st) return;
    const session: SessionRef = { path: p, name, kind, readOnly: true };
    const files = [st];
    let toolResultsDir: string | undefined;
    if (kind === 'claude-code') {
      toolResultsDir = claudeToolResultsDir(p);
      try {
        for (const n of fs.readdirSync(toolResultsDir)) {
          if (!n.endsWith('.txt') || n.startsWith('.')) continue;
          const fst = statFile(path.join(toolResultsDir, n));
          if (fst) files.push(fst);
        }
      } catch {
        /* no spill files */
      }
    }
    out.sessions.set(p, session);
    out.units.push({ key: p, kind, session, files, toolResultsDir });
  };

  const addSpillwaySession = async (dir: string, name: string, onlyStem?: string) => {
    const sp = sessionPaths(dir);
    const session: SessionRef = { path: sp.session, name, kind: 'spillway', readOnly: false };
    out.sessions.set(sp.session, session);
    let entries: fs.Dirent[];
    try {
      // A long_responses/ that is a symlink could lead anywhere: not followed.
      if (!fs.lstatSync(sp.longResponses).isDirectory()) return;
      entries = fs.readdirSync(sp.longResponses, { withFileTypes: true });
    } catch {
      return;
    }
    const groups = new Map<string, FileStat[]>();
    for (const e of entries) {
      // Symlinks and folders are never payloads (the reader opens with O_NOFOLLOW as well).
      if (!e.isFile()) continue;
      const c = classifyLongResponseFile(e.name);
      if (!c || (onlyStem && c.stem !== onlyStem)) continue;
      let g = groups.get(c.stem);
      if (!g) groups.set(c.stem, (g = []));
      g.push({ path: path.join(sp.longResponses, e.name), size: STAT_PENDING, mtimeMs: STAT_PENDING });
    }
    for (const [stem, pending] of groups) {
      const key = path.join(sp.longResponses, stem);
      let files = pending;
      // A unit seen before is compared by size and mtime, so stat it now. A new one is read
      // anyway: its reader takes size and mtime from the files it opens (no stat twice).
      if (o.known?.has(key)) {
        files = completeStats(pending);
        if (!files.length) continue;
        await o.yielder.maybe();
      }
      out.units.push({ key, kind: 'spillway', session, files, stem });
    }
  };

  const walk = async (dir: string, depth: number): Promise<void> => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    await o.yielder.maybe();
    if (entries.some((e) => e.isDirectory() && e.name === LONG_RESPONSES_DIR)) {
      await addSpillwaySession(dir, posixRel(root, dir) || path.basename(dir));
    }
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name === LONG_RESPONSES_DIR || SKIP_DIRS.has(e.name)) continue;
        if (depth < MAX_WALK_DEPTH) await walk(p, depth + 1);
      } else if (e.isFile() && (e.name.endsWith('.jsonl') || e.name.endsWith('.json'))) {
        const kind = sniff(p);
        if (kind && kind !== 'spillway') addTranscript(p, kind, posixRel(root, p).replace(/\.jsonl?$/, ''));
      }
    }
  };

  if (o.kind === 'file') {
    const dir = path.dirname(root);
    const c = path.basename(dir) === LONG_RESPONSES_DIR ? classifyLongResponseFile(path.basename(root)) : null;
    if (c) {
      const sessionDir = path.dirname(dir);
      await addSpillwaySession(sessionDir, path.basename(sessionDir), c.stem);
    } else {
      const kind = sniff(root);
      if (kind && kind !== 'spillway') addTranscript(root, kind, path.basename(root).replace(/\.jsonl?$/, ''));
    }
    return out;
  }
  if (o.kind === 'session') {
    await addSpillwaySession(root, path.basename(root));
    return out;
  }
  const scopes = o.scopes?.filter((s) => isInside(root, s)) ?? null;
  if (!scopes) {
    await walk(root, 0);
    return out;
  }
  for (const scope of scopes) {
    const depth = posixRel(root, scope).split('/').filter(Boolean).length;
    let st: fs.Stats | null = null;
    try {
      st = fs.lstatSync(scope);
    } catch {
      st = null;
    }
    if (st?.isDirectory()) await walk(scope, depth);
    else if (st?.isFile()) {
      const kind = sniff(scope);
      if (kind && kind !== 'spillway') addTranscript(scope, kind, posixRel(root, scope).replace(/\.jsonl?$/, ''));
    }
  }
  return out;
}
