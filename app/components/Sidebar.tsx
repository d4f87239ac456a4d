import { useMemo, useState, type KeyboardEvent } from 'react';
import type { RootInfo, SessionInfo } from '../../src/service/contract.js';
import { useApp, useAppStore } from '../store/react.js';
import { progressKey } from '../store/events.js';
import { formatAgo, formatDateTime, formatInt, formatRelative, formatTokens } from '../lib/format.js';
import { share, summarizeProgress } from '../lib/progress.js';
import { ClientBadge } from './common.js';
import {
  groupSessions,
  guessHome,
  rootLabel,
  rootPayloads,
  isShownRoot,
  sessionMatches,
  sessionTitle,
  shortenHome,
  type ProjectGroup,
  type ProjectLabel,
  type SessionNode,
} from '../lib/sessions.js';

/** Sessions shown per project before "Show N more": the sidebar stays small with thousands of transcripts. */
export const SESSIONS_SHOWN_PER_PROJECT = 6;
/** Project groups shown per root before "Show N more projects". */
export const PROJECTS_SHOWN_PER_ROOT = 25;
/** The filter box appears once there is something to filter. */
const FILTER_FROM_SESSIONS = 7;

/** Arrow keys move between the sidebar's items (VS Code's list behaviour). */
function onListKey(e: KeyboardEvent<HTMLElement>) {
  if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
  if (e.target instanceof HTMLInputElement) return;
  const items = Array.from(e.currentTarget.querySelectorAll<HTMLElement>('[data-nav-item]'));
  const i = items.indexOf(document.activeElement as HTMLElement);
  const next = items[e.key === 'ArrowDown' ? Math.min(items.length - 1, i + 1) : Math.max(0, i - 1)];
  if (next) {
    e.preventDefault();
    next.focus();
  }
}

export function Sidebar() {
  const roots = useApp((s) => s.roots);
  const sessions = useApp((s) => s.sessions);
  const loading = useApp((s) => s.rootsLoading);
  const error = useApp((s) => s.rootsError);
  const filter = useApp((s) => s.sessionFilter);
  const setFilter = useApp((s) => s.setSessionFilter);
  const info = useApp((s) => s.info);
  const store = useAppStore();
  const [adding, setAdding] = useState(false);
  const home = useMemo(() => guessHome(roots), [roots]);
  // Neither page can name a folder to read: serve refuses addRoot over HTTP, and the desktop window
  // adds only a folder the user dropped or picked in the main process's dialog (roots-policy.ts).
  const desktop = info?.transport === 'electron';

  const q = filter.trim().toLowerCase();
  const visible = useMemo(() => (q ? sessions.filter((s) => sessionMatches(s, q, home)) : sessions), [sessions, q, home]);
  const byRoot = useMemo(() => {
    const m = new Map<string, SessionInfo[]>();
    for (const s of visible) {
      const list = m.get(s.rootId);
      if (list) list.push(s);
      else m.set(s.rootId, [s]);
    }
    return m;
  }, [visible]);
  const labelled = roots.map((root) => ({ root, label: rootLabel(root, info, home) }));
  // Dropped-file analyses only when there are some; Spillway's own folders after the agents'.
  const order = { agent: 0, user: 1, 'app-sessions': 2, scratch: 3 } as const;
  const shown = labelled
    .filter(({ root }) => isShownRoot(root, info))
    .sort((a, b) => order[a.label.role] - order[b.label.role]);

  return (
    <nav className="sidebar" aria-label="Roots and sessions" onKeyDown={onListKey}>
      <div className="sidebar-head">
        <span className="eyebrow">Sessions</span>
        <span className="spacer" />
        <button className="icon-btn" title="Add a sessions folder" aria-label="Add a sessions folder" aria-expanded={adding} onClick={() => setAdding(!adding)}>
          <svg viewBox="0 0 16 16" aria-hidden><path d="M8 3v10M3 8h10" /></svg>
        </button>
        <button className="icon-btn" title="Reindex everything" aria-label="Reindex everything" onClick={() => void store.getState().reindex()}>
          <svg viewBox="0 0 16 16" aria-hidden><path d="M13 8a5 5 0 1 1-1.5-3.5M13 2.5V5h-2.5" /></svg>
        </button>
      </div>
      {adding && desktop ? (
        <div className="sidebar-note" role="note">
          Drop a sessions folder on the window, or choose it with <b>File → Open Folder…</b>
        </div>
      ) : adding ? (
        <div className="sidebar-note" role="note">
          From the browser, folders are added in the terminal: <code>spillway index DIR</code> (this page lists it after <b>Reindex</b>), or
          start with <code>spillway serve --root DIR</code>.
        </div>
      ) : null}
      {sessions.length >= FILTER_FROM_SESSIONS ? (
        <input
          className="sidebar-filter"
          type="search"
          aria-label="Filter sessions"
          placeholder="Filter: prompt, project, client"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
        />
      ) : null}
      <div className="sidebar-scroll">
        {error ? (
          <div className="state error small" role="alert">
            <span>{error}</span>
            <button className="btn sm" onClick={() => void store.getState().loadRoots()}>Retry</button>
          </div>
        ) : null}
        {!loading && roots.length === 0 && !error ? (
          <div className="state small">
            <strong>No folders yet</strong>
            <span>Start with <code>spillway serve --root DIR</code> or <code>npm start -- DIR</code>.</span>
          </div>
        ) : null}
        {q && visible.length === 0 ? <div className="dim session-empty">No session matches “{filter.trim()}”.</div> : null}
        {shown.map(({ root, label }) => (
          <RootGroup key={root.id} root={root} name={label.name} detail={label.detail} sessions={byRoot.get(root.id) ?? []} home={home} filtered={Boolean(q)} />
        ))}
      </div>
    </nav>
  );
}

function RootGroup(props: { root: RootInfo; name: string; detail: string; sessions: SessionInfo[]; home: string | undefined; filtered: boolean }) {
  const { root, sessions, home, filtered } = props;
  const selectedRootId = useApp((s) => s.selectedRootId);
  const selectedSessionId = useApp((s) => s.selectedSessionId);
  const progress = useApp((s) => s.progress);
  const store = useAppStore();
  const [open, setOpen] = useState(true);
  const [explain, setExplain] = useState(false);
  const [allProjects, setAllProjects] = useState(false);
  const groups = useMemo(() => groupSessions(sessions, home), [sessions, home]);
  const { list, fulltext } = summarizeProgress(progress, root.id);
  const phase = list ? { label: 'listing', p: list } : fulltext ? { label: 'search', p: fulltext } : null;
  const payloads = rootPayloads(root);
  const shownGroups = allProjects || filtered ? groups : groups.slice(0, PROJECTS_SHOWN_PER_ROOT);
  const removeLabel = root.auto
    ? `Hide ${shortenHome(root.path, home)} until the next start (start with --no-default-roots to stop opening it)`
    : `Remove ${shortenHome(root.path, home)} from the index (its files stay)`;
  if (filtered && sessions.length === 0) return null;
  return (
    <div className="root-group" data-root-id={root.id} data-auto={root.auto ? 'true' : undefined} data-read-only={root.readOnly ? 'true' : undefined}>
      <div className={`root-row ${selectedRootId === root.id && !selectedSessionId ? 'selected' : ''}`}>
        <button className="twisty" aria-label={open ? `Collapse ${props.name}` : `Expand ${props.name}`} aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? '▾' : '▸'}
        </button>
        <button data-nav-item className="root-name" title={`${props.detail}\nShow every payload in this folder`} onClick={() => store.getState().selectSession(null, root.id)}>
          <span className="ellipsis">{props.name}</span>
          {phase ? (
            <span className="root-phase" title={`${phase.label === 'listing' ? 'Listing' : 'Making searchable'} ${formatInt(phase.p.done)} / ${formatInt(phase.p.total)}`}>
              {phase.label} {phase.p.total ? `${Math.floor(share(phase.p) * 100)}%` : '…'}
            </span>
          ) : null}
          <span className="count mono" title={payloads.title}>{formatInt(payloads.count)}</span>
        </button>
        <button className="icon-btn hover-only" aria-label={removeLabel} title={removeLabel} onClick={() => void store.getState().removeRoot(root.id)}>
          <svg viewBox="0 0 16 16" aria-hidden><path d="M4 4l8 8M12 4l-8 8" /></svg>
        </button>
      </div>
      {root.readOnly || root.auto ? (
        <button className="root-flags" aria-expanded={explain} onClick={() => setExplain(!explain)} data-testid="root-flags" title={root.auto ? 'Why is this open, and how to turn it off' : 'What read-only means'}>
          {root.auto ? 'read-only · opened by default' : 'read-only'}
          <svg viewBox="0 0 12 12" aria-hidden><circle cx="6" cy="6" r="5" /><path d="M6 5.5v3M6 3.5v.01" /></svg>
        </button>
      ) : null}
      {explain ? (
        <div className="sidebar-note" role="note" data-testid="root-note">
          <span className="mono">{props.detail}</span>
          <br />
          Spillway only reads here: it never writes next to these sessions (summary runs of their payloads are kept in its app data).
          {root.auto ? (
            <>
              {' '}Opened by default because it is in your home (Spillway opens the agents' own session folders when started without a
              folder). Start with <code>--no-default-roots</code> (or <code>SPILLWAY_NO_DEFAULT_ROOTS=1</code>) to stop.
            </>
          ) : null}
        </div>
      ) : null}
      {open ? (
        <div className="session-tree">
          {groups.length === 0 ? <div className="dim session-empty">{phase ? 'Looking for sessions…' : 'No sessions'}</div> : null}
          {shownGroups.map((g) => (
            <ProjectSection key={g.key || '(none)'} group={g} selectedSessionId={selectedSessionId} filtered={filtered} />
          ))}
          {shownGroups.length < groups.length ? (
            <button className="more-btn" onClick={() => setAllProjects(true)}>
              Show {formatInt(groups.length - shownGroups.length)} more projects
            </button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function ProjectHeading({ project }: { project: ProjectLabel }) {
  const tip = project.approximate
    ? `${project.path}\n(decoded from Claude Code's folder name; the transcript records no working directory, so a "-" may stand for "/", "." or "-")`
    : project.path;
  return (
    <span className={`project-label ${project.approximate ? 'approximate' : ''}`} title={tip}>
      {project.parent ? <span className="project-parent">{project.parent}</span> : null}
      <span className="project-leaf">{project.leaf}</span>
      {project.approximate ? <span className="project-approx" aria-label="decoded from the folder name">≈</span> : null}
    </span>
  );
}

function ProjectSection({ group, selectedSessionId, filtered }: { group: ProjectGroup; selectedSessionId: string | null; filtered: boolean }) {
  const [open, setOpen] = useState(true);
  const [all, setAll] = useState(false);
  const nodes = all || filtered ? group.nodes : group.nodes.slice(0, SESSIONS_SHOWN_PER_PROJECT);
  const list = (
    <ul className="session-list" role="list">
      {nodes.map((n) => (
        <SessionItem key={n.session.id} node={n} selectedSessionId={selectedSessionId} />
      ))}
      {nodes.length < group.nodes.length ? (
        <li>
          <button className="more-btn" onClick={() => setAll(true)}>
            Show {formatInt(group.nodes.length - nodes.length)} more
          </button>
        </li>
      ) : null}
    </ul>
  );
  if (!group.project) return list;
  return (
    <section className="project-group" data-project={group.project.path}>
      <button className="project-row" aria-expanded={open} onClick={() => setOpen(!open)} data-testid="project">
        <span className="project-twisty" aria-hidden>{open ? '▾' : '▸'}</span>
        <ProjectHeading project={group.project} />
        <span className="count mono" title={`${formatInt(group.payloads)} payloads in ${formatInt(group.count)} sessions`}>{formatInt(group.payloads)}</span>
      </button>
      {open ? list : null}
    </section>
  );
}

function SessionItem({ node, selectedSessionId }: { node: SessionNode; selectedSessionId: string | null }) {
  return (
    <li>
      <SessionButton s={node.session} selected={selectedSessionId === node.session.id} subagent={node.orphan} />
      {node.children.length ? (
        <ul className="session-list subagents" role="list" aria-label="Sub-agents">
          {node.children.map((c) => (
            <li key={c.id}>
              <SessionButton s={c} selected={selectedSessionId === c.id} subagent />
            </li>
          ))}
        </ul>
      ) : null}
    </li>
  );
}

function SessionButton({ s, selected, subagent }: { s: SessionInfo; selected: boolean; subagent: boolean }) {
  // Sessions are listed before their payloads: while the root is listing, an empty one may not be.
  const listing = useApp((st) => progressKey({ rootId: s.rootId, phase: 'list' }) in st.progress);
  const store = useAppStore();
  const title = sessionTitle(s);
  const when = s.lastAt ?? s.firstAt;
  // Plain text in title attributes: the prompt is the user's words, never markup.
  const tip = [title.fromPrompt ? title.text : null, s.path, s.client, when ? formatDateTime(when) : null].filter(Boolean).join('\n');
  return (
    <button
      data-nav-item
      className={`session-row ${selected ? 'selected' : ''} ${subagent ? 'subagent' : ''} ${s.payloadCount === 0 ? 'empty' : ''}`}
      aria-current={selected ? 'true' : undefined}
      onClick={() => store.getState().selectSession(s.id)}
      title={tip}
      data-session-id={s.id}
    >
      <span className={`session-name ellipsis ${title.fromPrompt ? '' : 'untitled'}`} data-testid="session-title">
        {subagent ? <span className="subagent-mark" aria-label="sub-agent">↳ </span> : null}
        {title.text}
      </span>
      <span className="session-meta">
        <ClientBadge s={s} />
        {s.contextWarning ? <span className="context-warning" role="img" aria-label={`context: ${s.contextWarning}`} title={`Context: ${s.contextWarning} (see the Context timeline)`}>⚠</span> : null}
        {s.payloadCount ? (
          <>
            <span className="mono" title={`${formatInt(s.payloadCount)} payloads`}>{formatInt(s.payloadCount)}</span>
            <span className="dim mono" data-testid="session-entered" title={s.enteredTokens !== undefined ? `Tool results entered the model's context: ${formatInt(s.enteredTokens)} tokens (the whole results: ${formatInt(s.fullTokens ?? s.totalTokens)})` : 'Tool results, the whole of each (not in the ledger yet: re-scan)'}>
              {formatTokens(s.enteredTokens ?? s.totalTokens)} {s.enteredTokens !== undefined ? 'entered' : 'tok'}
            </span>
          </>
        ) : (
          <span className="dim">{listing ? 'listing…' : s.kind === 'spillway' || s.kind === 'scratch' ? 'no payloads yet' : 'no tool results'}</span>
        )}
        <span className="dim when" title={when ? `${formatDateTime(when)} (${formatRelative(when)})` : undefined}>{formatAgo(when)}</span>
      </span>
    </button>
  );
}
