/**
 * What an agent client is to Spillway: one `ClientAdapter` per client, in `<client>/index.ts`, listed once in the
 * registry (`./index.ts`, `satisfies Record<ClientId, ClientAdapter>`), so a new client is a folder plus one line
 * and the compiler names any member it lacks. Code outside `src/agents` asks the registry; it never names a client.
 *
 * | member | what it holds | read by |
 * | --- | --- | --- |
 * | `meta` | id, label, badge and its colours (pure data: the renderer takes it through `clients.ts`) | the app, the index's labels |
 * | `files` | how to recognise its transcripts (or its database of sessions) from a name and the first bytes; its default folders under a home | the walker, the default roots |
 * | `rules` | its own treatment of tool results (caps, persisted previews) | the ledger, the timeline's baseline |
 * | `provider`, `prices` | whose image and price rules its sessions pay by | the ledger, the timeline |
 * | `context` | its context rule: window, auto-compact trigger, when it compacts | the timeline |
 * | `mcp` | what it shows its model of an MCP result | the MCP proxy |
 *
 * The reading of its transcripts (import, re-read by place, turns) needs the index's own machinery
 * (line readers, the sources, the yielder), so it is the index's half of the adapter: one entry per
 * client in `src/index/clients.ts`, also keyed by `ClientId`.
 */
import type { ClientMeta } from './clients.js';
import type { Profile } from '../pipeline/types.js';
import type { Provider } from './media.js';
import type { ClientRules } from './rules.js';

export type { ClientId, ClientMeta } from './clients.js';

/** The variables a client's default folders may move with (`$CLAUDE_CONFIG_DIR`, `$CODEX_HOME`, …), read at the edge. */
export type AgentEnv = Readonly<Record<string, string | undefined>>;

/** Dollars per million tokens. */
export interface Prices {
  input: number;
  cacheWrite: number;
  cacheRead: number;
  output: number;
}

/** How a client's transcripts are found. */
export interface ClientFiles {
  /**
   * Whether a transcript named `name`, opening with `head` (the first bytes, as text), is this client's.
   * The registry asks the clients in order of `recognisePriority` (lower first), so a stricter test can
   * go before a looser one that would also pass (Gemini's `.jsonl` carries a `sessionId` too).
   */
  recognise(name: string, head: string): boolean;
  recognisePriority: number;
  /** Its session folders under `home`, before the walk checks they exist (the first is its main one). */
  homeRoots(home: string, env: AgentEnv): string[];
  /**
   * A folder name that marks the client's home (`.gemini`) where only `chatDirs` may be walked
   * into: the rest is settings and credentials, which the walker must not even open.
   */
  guardedHome?: { dir: string; chatDirs: readonly string[]; chatFiles?: readonly string[] };
  /**
   * A client that keeps every session in one database file (OpenCode's `opencode.db`) instead of a
   * transcript per session: the file's name, which the walker sniffs wherever it finds it (besides
   * `.json`/`.jsonl`). The index's half of the adapter lists the sessions in it, one unit each.
   */
  database?: { name: string };
  /** Where the user finds its sessions, in words for a hint (`~/.claude/projects`). */
  hint: string;
  /**
   * Files that belong to a transcript beside it: the session a sub-agent's transcript belongs to, and a
   * folder of whole results the transcript points into (Claude Code's `tool-results/`), indexed with it.
   */
  around?(transcript: string): { parent?: string; sideFilesDir?: string };
}

/** The inputs of a context rule: the turns' models and windows, and what the user set. */
export interface ContextInputs {
  model?: string;
  /** The window a turn recorded, if the client writes one. */
  window?: number;
}

/** A client as an MCP client of the proxy. */
export interface ClientMcp {
  /** What it shows its model of a tool result (decides when a result is too large). */
  shows: McpShape;
  /** The `clientInfo.name` values it introduces itself with (`codex-mcp-client`). */
  names: readonly string[];
  /** The tokenizer family its models count with (the proxy's default `--profile` for it). */
  profile: Profile;
  /** The `_meta` key of a tools/call that carries its transcript's tool call id, if it sends one. */
  callIdKey?: string;
  /** The name it gives an MCP tool (`server` already made safe), when it is not `mcp__<server>__<tool>`. */
  toolName?(server: string, tool: string): string;
}

/** What the MCP client shows its model of a tool result. */
export type McpShape =
  /** the serialized structuredContent when there is one, else the content blocks (Claude Code, Codex) */
  | 'structured-first'
  /** the content blocks' text; structuredContent ignored (Gemini CLI) */
  | 'content-only';

/** What the user set (or the session's own compactions show) that moves a context rule's trigger. */
export interface ContextSettings {
  autoCompactPct?: number;
  autoCompactDisabled?: boolean;
  autoCompactLimit?: number;
  /** Bounds from the compactions the client made by itself: above every main call let through, at most the lowest pre-compaction context. */
  observed?: { above: number; atMost: number; count: number };
}

/** A client's window and auto-compact trigger; `src/index/rows.ts`' `ContextRule` adds the client and the model. */
export interface ClientContextRule {
  window: number | null;
  windowSource: 'read' | 'inferred';
  /** The context at which the client compacts by itself; null: it never does (disabled, or unknown). */
  trigger: number | null;
  triggerSource: 'read' | 'inferred';
  /** 'before-call': compacts when the last context plus what was added reaches the trigger; 'after-call': when the last context alone did. */
  when: 'after-call' | 'before-call';
  /** What a compaction leaves: the summary alone (Codex summarises what pushed it over), or the summary and the newest messages (Claude Code). */
  keeps: 'summary' | 'summary-and-newest';
  how: string;
}

export interface ClientAdapter {
  meta: ClientMeta;
  files: ClientFiles;
  rules: ClientRules;
  /** Its context rule, from the session's model and recorded windows. */
  context(model: string | undefined, turns: readonly ContextInputs[], o: ContextSettings): ClientContextRule;
  /** Whose image rule (and default prices) its sessions pay by when the model name does not say. */
  provider: Provider;
  prices: Prices;
  mcp: ClientMcp;
}
