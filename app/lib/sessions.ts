/**
 * How sessions are labelled and grouped in the sidebar: the way people know them (the project
 * they worked in, the client that wrote them, the first thing they asked), not the folder names
 * the clients invent (dashed working directories, `rollout-2026-12-01T08-12-21-…`).
 *
 * | call            | for                                                              |
 * | --------------- | ---------------------------------------------------------------- |
 * | guessHome       | the user's home, from the roots opened by default (for `~`)      |
 * | shortenHome     | `/home/gray/x` → `~/x`                                           |
 * | projectOf       | a session's project path, decoded from the folder when unrecorded |
 * | sessionTitle    | the first prompt, one line; a readable fallback without one      |
 * | scopeTitle      | what a view's header calls what it shows (a session by sessionTitle) |
 * | groupSessions   | one root's sessions: by project, sub-agents under their parent   |
 * | rootLabel       | what to call a root (a client's name, Spillway sessions, …)      |
 *
 * Pure functions over contract rows: no React, no store.
 */
import { CLIENTS, type ClientMeta, isClientId } from '../../src/agents/clients.js';
import type { AppInfo, RootInfo, SessionInfo, SessionKind } from '../../src/service/contract.js';
import { basename, formatDateTime, formatInt } from './format.js';

/** The badge of a session kind that is no agent client's. */
const OTHER_KINDS: Record<Exclude<SessionKind, keyof typeof CLIENTS>, string> = {
  spillway: 'Spillway',
  scratch: 'Dropped file',
};

/** The client badge, by session kind (the client's from src/agents/clients.ts). The exact client and version (`Claude Code 2.1.328`) goes in its tooltip. */
export function clientLabel(kind: SessionKind): string {
  return isClientId(kind) ? CLIENTS[kind].badge : (OTHER_KINDS[kind] ?? kind);
}

/** The client a session kind is, or undefined for Spillway's own kinds. */
const metaOf = (kind: string): ClientMeta | undefined => (isClientId(kind) ? CLIENTS[kind] : undefined);

/**
 * The badge of a session: its client. A session the hook or the proxy made names the client it
 * spilled for and how (`Claude Code · hook`, `Codex · proxy`), from the index's `client`
 * ("Claude Code 2.1.328 · Spillway hook").
 */
export function sessionBadge(s: Pick<SessionInfo, 'kind' | 'client'>): string {
  if (s.kind !== 'spillway' || !s.client) return clientLabel(s.kind);
  const [who, via] = s.client.split(' · ');
  const name = who && !who.startsWith('Spillway') ? who.replace(/ \d[\w.+-]*( \(.*\))?$/, '') : undefined;
  const how = (via ?? who ?? '').includes('hook') ? 'hook' : (via ?? who ?? '').includes('proxy') ? 'proxy' : undefined;
  return name ? `${name}${how ? ` · ${how}` : ''}` : how ? `Spillway ${how}` : clientLabel(s.kind);
}

/** Where each agent keeps its sessions under a home folder (the index opens these by default). */
const AGENT_HOME_SUFFIXES = Object.values(CLIENTS).map((c: ClientMeta) => ({ suffix: c.homeSuffix, label: c.label }));

const splitPath = (p: string) => p.split(/[\\/]+/);
const sepOf = (p: string) => (p.includes('/') || !p.includes('\\') ? '/' : '\\');

function agentOfPath(p: string): { label: string; home: string } | undefined {
  const parts = splitPath(p.replace(/[\\/]+$/, ''));
  for (const a of AGENT_HOME_SUFFIXES) {
    const n = a.suffix.length;
    if (parts.length > n && a.suffix.every((s, i) => parts[parts.length - n + i] === s)) {
      return { label: a.label, home: parts.slice(0, parts.length - n).join(sepOf(p)) || sepOf(p) };
    }
  }
  return undefined;
}

/**
 * The user's home folder, as far as the UI can tell: the folder holding a root that was opened
 * by default (`<home>/.claude/projects`, …). Undefined when none was (then paths stay whole,
 * which is never wrong, only longer).
 */
export function guessHome(roots: readonly RootInfo[]): string | undefined {
  for (const r of roots) {
    if (!r.auto) continue;
    const a = agentOfPath(r.path);
    if (a && a.home !== '/' && a.home !== '\\') return a.home;
  }
  return undefined;
}

/** `~` for the home folder, at a path boundary only (`/home/gray2` is not inside `/home/gray`). */
export function shortenHome(p: string, home: string | undefined): string {
  if (!home) return p;
  const h = home.replace(/[\\/]+$/, '');
  if (p === h) return '~';
  if (p.startsWith(h) && (p[h.length] === '/' || p[h.length] === '\\')) return `~${p.slice(h.length)}`;
  return p;
}

export interface ProjectLabel {
  /** Full path, home shortened. */
  path: string;
  /** The folder the project is (shown strong), and what holds it (shown dim, ellipsized first). */
  leaf: string;
  parent: string;
  /**
   * Decoded from Claude Code's folder name, not recorded in the transcript: the name turns every
   * `/`, `.` and `-` into `-`, so `-Users-gray-my-app` may be `/Users/gray/my-app` or `/Users/gray/my/app`.
   */
  approximate: boolean;
}

function labelFor(p: string, approximate: boolean): ProjectLabel {
  const sep = sepOf(p);
  const trimmed = p.length > 1 ? p.replace(/[\\/]+$/, '') : p;
  const i = Math.max(trimmed.lastIndexOf('/'), trimmed.lastIndexOf('\\'));
  if (i < 0 || trimmed === '~') return { path: trimmed, leaf: trimmed, parent: '', approximate };
  return { path: trimmed, leaf: trimmed.slice(i + 1) || sep, parent: trimmed.slice(0, i + 1), approximate };
}

/** The project a session belongs to, home shortened; undefined when neither recorded nor decodable. */
export function projectOf(s: SessionInfo, home: string | undefined): ProjectLabel | undefined {
  if (s.project) return labelFor(shortenHome(s.project, home), false);
  // A client that names its project folders after the working directory (see ProjectLabel.approximate).
  const decode = metaOf(s.kind)?.projectOfFolder;
  if (decode) {
    const folder = splitPath(s.name)[0];
    const decoded = folder ? decode(folder) : undefined;
    if (decoded) return labelFor(shortenHome(decoded, home), true);
  }
  return undefined;
}

/** One line: newlines and runs of whitespace become single spaces. */
export const oneLine = (t: string) => t.replace(/\s+/g, ' ').trim();

/**
 * The session's title: its first prompt. Without one, something a person can still tell apart:
 * a Spillway session's folder name, or the transcript's file name without the client's prefix.
 */
export function sessionTitle(s: SessionInfo): { text: string; fromPrompt: boolean } {
  const t = s.title ? oneLine(s.title) : '';
  if (t) return { text: t, fromPrompt: true };
  const leaf = basename(s.name).replace(/\.(jsonl?|json)$/i, '');
  const prefix = metaOf(s.kind)?.titlePrefix;
  if (prefix) return { text: leaf.startsWith(prefix) ? leaf.slice(prefix.length) : leaf, fromPrompt: false };
  // A dropped file's scratch session is named `<UTC time>_<file name>_<random>` (src/service/methods/analysis.ts).
  const scratch = s.kind === 'scratch' ? /^\d{8}T\d{9}Z_(.+)_[0-9a-f]{6}$/.exec(leaf) : null;
  if (scratch) return { text: scratch[1]!, fromPrompt: false };
  // A hook or proxy session with no transcript joined: its client and when it started, not `claude-code_607c3d0b-…`.
  if (s.kind === 'spillway' && s.client) return { text: `${s.client}${s.firstAt ? `, ${formatDateTime(s.firstAt).slice(0, 16)}` : ''}`, fromPrompt: false };
  return { text: leaf || s.name, fromPrompt: false };
}

/**
 * What a view's header names as its scope: a session by its title (sessionTitle, the sidebar's
 * words: never its folder name), a folder by its label, or every folder. The one source for every
 * header, so the sidebar, the payload list, the Timeline, the tuner and the waste report agree.
 */
export function scopeTitle(o: {
  sessionId: string | null;
  rootId: string | null;
  sessions: readonly SessionInfo[];
  roots: readonly RootInfo[];
  info: AppInfo | null;
}): string {
  const session = o.sessionId ? o.sessions.find((x) => x.id === o.sessionId) : undefined;
  if (session) return `Session: ${sessionTitle(session).text}`;
  const root = o.rootId ? o.roots.find((r) => r.id === o.rootId) : undefined;
  if (root) return `Folder: ${rootLabel(root, o.info, guessHome(o.roots)).name}`;
  return 'All folders';
}

export interface SessionNode {
  session: SessionInfo;
  /** Sub-agent transcripts this session started, theirs included (listed under it). */
  children: SessionInfo[];
  /** A sub-agent whose parent is not in the list (filtered out, not indexed, or a cycle): shown on its own, marked. */
  orphan: boolean;
}

export interface ProjectGroup {
  /** Stable key (the project path, or '' for sessions with none). */
  key: string;
  project?: ProjectLabel;
  nodes: SessionNode[];
  /** Sessions in the group, sub-agents included. */
  count: number;
  /** Their payloads. */
  payloads: number;
  lastAt: string;
}

const latest = (s: SessionInfo) => s.lastAt ?? s.firstAt ?? '';

/**
 * One root's sessions, by project (most recent project first; sessions most recent first), each
 * sub-agent under the session that started it. Sessions with no project come last, in one group
 * with no header. Order inside is stable for equal times (by name).
 */
export function groupSessions(sessions: readonly SessionInfo[], home: string | undefined): ProjectGroup[] {
  const byId = new Map(sessions.map((s) => [s.id, s]));
  // Each session's top ancestor among those listed: a sub-agent's sub-agent goes under the first
  // session too. A cycle of parent links (a bad transcript) is cut at its smallest id.
  const topOf = (s: SessionInfo): SessionInfo => {
    const chain = [s];
    const seen = new Set([s.id]);
    let cur = s;
    for (;;) {
      const parent = cur.parentSessionId ? byId.get(cur.parentSessionId) : undefined;
      if (!parent) return cur;
      if (seen.has(parent.id)) {
        const cycle = chain.slice(chain.indexOf(parent));
        return cycle.reduce((a, b) => (b.id < a.id ? b : a));
      }
      chain.push(parent);
      seen.add(parent.id);
      cur = parent;
    }
  };
  const children = new Map<string, SessionInfo[]>();
  const tops: SessionInfo[] = [];
  for (const s of sessions) {
    const top = topOf(s);
    if (top === s) tops.push(s);
    else {
      const list = children.get(top.id);
      if (list) list.push(s);
      else children.set(top.id, [s]);
    }
  }
  const byRecent = (a: SessionInfo, b: SessionInfo) => latest(b).localeCompare(latest(a)) || a.name.localeCompare(b.name);
  const groups = new Map<string, ProjectGroup>();
  for (const s of tops.sort(byRecent)) {
    const project = projectOf(s, home);
    const key = project?.path ?? '';
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { key, project, nodes: [], count: 0, payloads: 0, lastAt: '' }));
    // One decoded (approximate) session must not make a recorded project look approximate.
    if (g.project?.approximate && project && !project.approximate) g.project = project;
    const kids = (children.get(s.id) ?? []).sort(byRecent);
    g.nodes.push({ session: s, children: kids, orphan: Boolean(s.parentSessionId) });
    g.count += 1 + kids.length;
    for (const x of [s, ...kids]) {
      g.payloads += x.payloadCount;
      if (latest(x) > g.lastAt) g.lastAt = latest(x);
    }
  }
  return [...groups.values()].sort((a, b) => {
    if (!a.project !== !b.project) return a.project ? -1 : 1;
    return b.lastAt.localeCompare(a.lastAt) || a.key.localeCompare(b.key);
  });
}

/** Does the sidebar filter's text match this session (title, project, client, name, path)? */
export function sessionMatches(s: SessionInfo, q: string, home: string | undefined): boolean {
  if (!q) return true;
  const hay = [s.title ?? '', projectOf(s, home)?.path ?? '', s.project ?? '', s.client ?? '', clientLabel(s.kind), s.name, s.path];
  return hay.some((h) => h.toLowerCase().includes(q));
}

export interface RootLabel {
  name: string;
  /** What the root is, for the tooltip. */
  detail: string;
  /** Spillway's own folders in app data (never removable from the UI: the scratch root; hidden when empty). */
  role: 'agent' | 'app-sessions' | 'scratch' | 'user';
}

const joinPath = (dir: string, leaf: string) => `${dir.replace(/[\\/]+$/, '')}${sepOf(dir)}${leaf}`;

/** App data's `summary-runs/` folder: where runs of read-only payloads are kept. */
export const summaryRunsDir = (info: AppInfo | null) => (info ? joinPath(info.appDataDir, 'summary-runs') : 'app data');

/** What to call a root in the sidebar. */
/** The scratch folder of dropped-file analyses is listed only once it holds something: the sidebar and the status bar agree on this. */
export function isShownRoot(root: RootInfo, info: AppInfo | null): boolean {
  return !(info && root.path === joinPath(info.appDataDir, 'scratch')) || root.sessionCount > 0;
}

/**
 * A root's own count, as its sessions add up: every payload in it, spills joined with a
 * transcript's tool call included (those are counted once, in the transcript's root, by the status
 * bar's total, which is why the title says how many are joined).
 */
export function rootPayloads(root: RootInfo): { count: number; title: string } {
  const joined = root.joinedCount ?? 0;
  const count = root.payloadCount + joined;
  const base = `${formatInt(count)} payloads in ${formatInt(root.sessionCount)} sessions`;
  return { count, title: joined ? `${base}; ${formatInt(joined)} of them are spills joined with a transcript's tool call, counted once there in the total` : base };
}

export function rootLabel(root: RootInfo, info: AppInfo | null, home: string | undefined): RootLabel {
  const shown = shortenHome(root.path, home);
  if (info && root.path === joinPath(info.appDataDir, 'scratch')) return { name: 'Dropped files', detail: `${shown}: files you dropped or pasted to analyse`, role: 'scratch' };
  if (info && root.path === joinPath(info.appDataDir, 'sessions')) return { name: 'Spillway sessions', detail: `${shown}: where the hook and the MCP proxy spill`, role: 'app-sessions' };
  const agent = agentOfPath(root.path);
  if (agent) return { name: agent.label, detail: shown, role: 'agent' };
  return { name: basename(root.path), detail: shown, role: 'user' };
}
