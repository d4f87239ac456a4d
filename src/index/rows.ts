/**
 * The index's rows, requests and responses: what the index returns and what the contract
 * (src/service/contract.ts) re-exports to the UI unchanged. A leaf module: it imports only
 * types from the pipeline, so the index and the service can both depend on it without the
 * index reaching up into the service.
 */
import type { ClientId } from '../agents/clients.js';
import type { AssetRef, ContentKind, GuardAction, PayloadMeta, Profile, StrategyName, SummaryRun } from '../pipeline/types.js';

export type SessionKind = 'spillway' | ClientId | 'scratch';

export interface RootInfo {
  id: string;
  path: string;
  /** A root can be a folder of sessions, one session, or one file. */
  kind: 'sessions' | 'session' | 'file' | 'claude-projects';
  addedAt: string;
  sessionCount: number;
  /** Tool calls listed under it, each once: a spill joined with a transcript's call in another root is counted there. */
  payloadCount: number;
  /** Spills of its sessions joined with a transcript's tool call (counted with the transcript, not here). */
  joinedCount?: number;
  /** Spillway never writes inside it (summary runs of its payloads go to app data). */
  readOnly?: boolean;
  /**
   * Opened by default (an agent's own sessions folder found in $HOME: `~/.claude/projects`,
   * `~/.codex/sessions`, `~/.gemini/tmp`), not chosen by the user; `--no-default-roots` drops it.
   */
  auto?: boolean;
}

export interface SessionInfo {
  id: string;
  rootId: string;
  name: string;
  path: string;
  kind: SessionKind;
  readOnly: boolean;
  payloadCount: number;
  assetCount: number;
  totalBytes: number;
  /** Sum of the default strategy's estimate over payloads. */
  totalTokens: number;
  /**
   * Sum of the ledger's `entered` over its tool results, each call once: what its tool results put
   * in the model's context (measured where the transcript has usage). The sidebar shows this one.
   */
  enteredTokens?: number;
  /** Sum of the ledger's `full` (what the results were whole, images by pixels). */
  fullTokens?: number;
  firstAt?: string;
  lastAt?: string;
  /** The project the agent worked in: the working directory its transcript records. */
  project?: string;
  /** The first thing the user asked (one line, clipped): how people recognise a session. */
  title?: string;
  /** The agent and version that wrote the transcript, e.g. "Claude Code 2.1.328". */
  client?: string;
  /** A sub-agent's transcript: the session that started it. */
  parentSessionId?: string;
  /**
   * A Spillway session made by the hook or the proxy: the client's transcript session its spills
   * were joined with (their tool calls are listed there, once). Its project, title and client come from it.
   */
  joinedSessionId?: string;
  /** Of this session's payloads, how many are joined with another session's rows (a spill with its transcript's call). */
  joinedCount?: number;
  /** The session compacted, or its peak came within 10% of its trigger (the context timeline). */
  contextWarning?: string;
}

export interface PayloadRow {
  id: string;
  sessionId: string;
  tool: string;
  createdAt: string;
  bytes: number;
  /** Default strategy's estimate. */
  tokens: number;
  action: GuardAction;
  kind: ContentKind;
  assetCount: number;
  summaryCount: number;
  /** Short single-line excerpt of the tool input. */
  inputExcerpt?: string;
  /** FTS snippet when the list came from a text query; plain text, never HTML. */
  snippet?: string;
  /**
   * A transcript's tool call joined with the spill Spillway made for it, and how the pair was
   * found: `path` (the message names the spill), `id` (the client's tool call id, recorded in the
   * sidecar), `inferred` (same tool and arguments, close in time: no id was sent). The row shows
   * the spill's size, content, summaries and assets. On a spill's own row: the transcript row's id (`joinedTo`).
   */
  join?: 'path' | 'id' | 'inferred';
  /** A spill joined with a transcript's tool call: that row's id. */
  joinedTo?: string;
  /**
   * The ledger's two figures a table shows (PayloadLedger): what entered the model's context for this
   * result (measured or estimated, `enteredHow`), and the full result (text estimate, images by pixels).
   * Absent on a row indexed before the ledger existed.
   */
  entered?: number;
  enteredHow?: LedgerProvenance;
  full?: number;
}

/** Where a ledger figure comes from (docs/index.md "The ledger"). */
export type LedgerProvenance = 'measured' | 'estimated';

/**
 * One tool result's ledger, computed once at indexing: the full result, what the client would have
 * given the model without Spillway (its own caps: src/agents), what entered (from the API's usage
 * where the transcript has it), what was kept out, each figure with where it comes from.
 */
export interface PayloadLedger {
  /** The raw result: bytes, and tokens (the text's estimate under `profile`, plus its images by pixels). */
  full: { bytes: number; tokens: number; profile: string; images: number; provenance: 'estimated' };
  /** What the client would have put in context without Spillway, by its rule (`rule`: its id; provenance: observed, reported or inferred). */
  asClient: { tokens: number; rule: string; provenance: 'observed' | 'reported' | 'inferred'; evidence: string };
  /** What reached the model: the API's usage delta split by the calibrated breakdown (measured), else estimated. */
  entered: { tokens: number; provenance: LedgerProvenance };
  /** Assets cut out (their cost had they entered: pixels for images, else their text), and the spilled remainder. */
  keptOut: { assets: number; bytes: number; assetTokens: number; spilled: number; provenance: 'estimated' };
}

/** `entered` and `full` sort by the ledger's figures (PayloadRow.entered, .full); `tokens` by the index's estimate of the text. */
export type PayloadSortField = 'createdAt' | 'tokens' | 'entered' | 'full' | 'bytes' | 'tool' | 'assetCount';

export interface ListPayloadsRequest {
  sessionId?: string;
  rootId?: string;
  /** Full-text query (FTS5 over payload text and summaries). */
  query?: string;
  tool?: string;
  action?: GuardAction;
  kind?: ContentKind;
  minTokens?: number;
  maxTokens?: number;
  sort?: { field: PayloadSortField; dir: 'asc' | 'desc' };
  offset?: number;
  /** At most 1,000 per page. */
  limit?: number;
}

export interface ListPayloadsResponse {
  rows: PayloadRow[];
  total: number;
  /**
   * Set on a text query made while full-text search is still filling in behind a scan: this many
   * of the payloads the filters select are listed but not searchable yet, so hits may be missing.
   * Ask again when `onIndexProgress` reports the `fulltext` phase done.
   */
  partial?: { unsearched: number };
}

export interface PayloadDetail {
  row: PayloadRow;
  /** The sidecar as written (null for imported sessions that have none). */
  meta: PayloadMeta | null;
  /** Absolute path of the saved payload. */
  path: string;
  linkedPath?: string;
  /** Every cheap strategy's estimate (exact ones come from `estimate` on demand). */
  estimates: Partial<Record<StrategyName, number>>;
  assets: AssetRef[];
  summaryRuns: SummaryRun[];
  /** What the model was handed (the guard's message), or what the agent's own transcript shows. */
  message: string;
  /** Safe preview (no base64, structure-first) as the guard would build it. */
  preview: string;
  totalBytes: number;
  totalLines: number;
  binary: boolean;
  /** Its session is read-only (an agent's transcript, or a read-only root): nothing is written beside it. */
  readOnly?: boolean;
  /** For imported sessions: where in the transcript it came from. */
  /** `spilledTo`: the result is Spillway's message, and the payload it names is in no indexed root. */
  source?: { transcript: string; line: number; toolUseId?: string; toolInput?: unknown; spilledTo?: string };
  /**
   * The payload's one token figure (the table's `tokens`): what the guard decided with and the
   * model's message stated, with its strategy and profile; for a payload no guard measured, the
   * index's checked calibrated estimate. `note`: how it was measured, where that explains why a
   * number measured now on the saved file (the Estimates tab, a re-run summary) differs from it.
   */
  figure: { tokens: number; strategy: StrategyName; profile: Profile; exact: boolean; source: 'guard' | 'index'; note?: string };
  /** A transcript's tool call joined with its spill: the spill's row, session and how they were joined (see PayloadRow.join). */
  spill?: { payloadId: string; sessionId: string; how: 'path' | 'id' | 'inferred' };
  /** A spill joined with a transcript's tool call: that call's row and session. */
  calledIn?: { payloadId: string; sessionId: string };
  /** The result's ledger (absent on a row indexed before it existed: re-scan). */
  ledger?: PayloadLedger;
  /** Later calls that read this spill back, oldest first (readback.ts); absent when none did. */
  readBacks?: ReadBack[];
  /** What this call itself read back of earlier spills (it is the reader), in its order; absent when it read none. */
  reads?: ReadBack[];
}

/**
 * The part of a spill a read-back read (src/agents/readback.ts ReadPart, as stored): lines are
 * 1-based and inclusive; a grep carries the lines it matched in the spill's file when it could be read.
 */
export type ReadBackPart =
  | { kind: 'whole' }
  | { kind: 'lines'; start: number; end?: number }
  | { kind: 'tail'; count: number }
  | { kind: 'bytes'; start: number; end?: number }
  | { kind: 'chars'; start: number; end?: number }
  | { kind: 'grep'; pattern: string; regex: 'fixed' | 'basic' | 'extended'; ignoreCase: boolean; matched?: number[]; matchCount?: number }
  | { kind: 'json'; path: string }
  | { kind: 'query'; query: string; handle?: string };

/** A later tool call that read a spill back: the evidence of what the agent needed (src/index/readback.ts). */
export interface ReadBack {
  /** The reading call's payload row. */
  readerId: string;
  /** The reading call's id in its transcript (Claude Code's tool_use id, Codex's call_id). */
  toolUseId?: string;
  sessionId: string;
  tool: string;
  at: string;
  via: 'drill-down' | 'read' | 'search' | 'shell';
  /** The file as the call named it. */
  path: string;
  /** The spill's payload row. */
  spillId: string;
  part: ReadBackPart;
  /** Tokens of the reading call's whole result (its row's `tokens`, the table's Full). */
  tokens: number;
  /**
   * What the reading call's result cost in the model's context: its ledger's entered tokens, the
   * table's Entered and the Timeline's figure for that call. Absent on a row indexed before the ledger.
   */
  entered?: number;
  /** The spill that was read: its tool and session, for "reads back Read lines 100–119" and a link to it. */
  spillTool?: string;
  spillSessionId?: string;
  /** The transcript's call the spill answered (the row joined with it), when there is one: what a link in that session opens. */
  spillCalledIn?: { payloadId: string; sessionId: string };
}

export interface LimitTunerRequest {
  sessionId?: string;
  rootId?: string;
  /** The guard's estimator in the replay and the payload-size histogram (default: the guard's). */
  strategy?: StrategyName;
  /** The profile the replayed guard counts with (default: the one each session's own guard used, as its spills' messages say). */
  profile?: Profile;
  /** The limit to replay (tokens): the slider's value. */
  limitTokens: number;
  contextWindowTokens?: number;
  buckets?: number;
  /** Sessions with calls to skip (the next page): the replay runs one session after another, within a time budget. */
  offset?: number;
  /** At most this many sessions replayed by this request (default and cap: MAX_TUNER_SESSIONS_PER_PAGE). */
  maxSessions?: number;
}

/** What one replay (the Timeline's, `getTimeline`) gives a view, summed the same way everywhere. */
export interface ReplayTotals {
  /** Tokens sent over all the session's calls (tokens × calls in context): input, cache writes and cache reads. */
  sentTokens: number;
  cacheReadTokens: number;
  costUsd: number;
  peak: number;
  compactions: number;
  /** Results the guard replaced (0 with no guard). */
  replaced: number;
  /** Guard messages not built yet within the request's budget (ask again). */
  pending: number;
}

/** A session's replay at one limit, beside the session as it ran and with no guard (the client's own rules). */
export interface SessionReplay {
  sessionId: string;
  name: string;
  title?: string;
  client: ContextRule['client'];
  /** Model calls on its main line. */
  calls: number;
  /** The profile the replayed guard counted with. */
  profile: Profile;
  prices: Prices;
  asRan: ReplayTotals;
  noGuard: ReplayTotals;
  atLimit: ReplayTotals;
}

/** One tool call, as a row: its arguments, and what it cost in the replay's terms. */
export interface CallRow {
  /** The tool call's id in its transcript (or the payload's id when the call has none). */
  id: string;
  /** The indexed payload of the call: what a row opens. */
  payloadId?: string;
  sessionId: string;
  tool: string;
  /** The call's arguments, one line (the payload's input excerpt). */
  args?: string;
  /** Tokens it added to the context as it ran (measured growth, split by estimate); for a session without calls, the payload's size. */
  tokens: number;
  /** Calls it stayed in context, the one it entered with included (as it ran). Absent without calls. */
  calls?: number;
  /** tokens × calls, and their cost at the session's cache prices, as the Timeline's costliest list. */
  tokensTimesCalls?: number;
  costUsd?: number;
  /** The whole result's tokens, as the index measured it. */
  fullTokens?: number;
  /** What the session's guard did with it. */
  action?: string;
  /** What the real guard, offline, does with it at the replayed limit: `pending` while its message is being built. */
  atLimit?: 'spill' | 'pass' | 'pending';
}

export interface LimitTunerResponse {
  strategy: StrategyName;
  /** The profile the replay's guard counted with (the one sessions' own guards used, unless asked): what "Copy config" says. */
  profile: Profile;
  limitTokens: number;
  /** Log-spaced histogram of payload sizes in tokens (each payload once: sizes, not costs). */
  histogram: Array<{ from: number; to: number; count: number }>;
  /** Every payload's size (id + tokens), sorted, for the histogram's marker. Capped at 100,000. */
  sizes: Array<{ id: string; tokens: number; tool: string }>;
  total: number;
  /**
   * Payloads with no figure of this strategy (its tokenizer never run on them), sized by their listed
   * tokens instead (the calibrated estimate, checked where the fit misprices). 0 for cheap strategies.
   */
  fallbacks: number;
  /** The Timeline's replay of each session with calls, at `limitTokens`: the one answer to "what would this limit do". */
  replay: {
    /** Sessions in scope with model calls. */
    sessionsTotal: number;
    offset: number;
    /** This page's sessions, in order. */
    sessions: SessionReplay[];
    /** Where the next page starts, when sessions are left (the view asks for it). */
    next?: number;
    /** Calls whose decision at this limit differs from the session's own (biggest tokens × calls first, at most MAX_TUNER_CALL_ROWS). */
    flips: CallRow[];
  };
  /** Sessions without model calls (bare spill folders): no calls to multiply, so only their payload sizes, each once. */
  payloadsOnly: { sessions: number; payloads: number; tokens: number; overLimit: number; tokensOverLimit: number };
  /** What the numbers assume, in words. */
  assumptions: string[];
}

export interface WasteReportRequest {
  sessionId: string;
  /** The limit to replay (default: the guard's default). */
  limitTokens?: number;
  strategy?: StrategyName;
  profile?: Profile;
}

export interface WasteReport {
  sessionId: string;
  strategy: StrategyName;
  limitTokens: number;
  /**
   * `replay`: the session has model calls: per tool tokens × calls at its cache prices, and the Timeline's
   * replays; `payload-sizes`: it has none (a bare spill folder), so each payload once, and no cost.
   */
  basis: 'replay' | 'payload-sizes';
  /** Tool results' tokens: entered × calls in context (replay), or payload sizes (payload-sizes). */
  totalTokens: number;
  /** At the session's cache prices (replay only). */
  totalUsd?: number;
  byTool: Array<{ tool: string; calls: number; tokens: number; maxTokens: number; tokensTimesCalls?: number; costUsd?: number }>;
  biggest: CallRow[];
  inlineBase64: { payloads: number; bytes: number; tokens: number };
  /** The session as it ran, with no guard and at `limitTokens` (replay only). */
  replay?: SessionReplay;
  assumptions: string[];
}

export interface IndexStats {
  sessions: number;
  payloads: number;
  assets: number;
  bytes: number;
  seconds: number;
}

/** `onDidIndex`: payloads/sessions were added, changed or removed by the indexer. */
export interface DidIndexEvent {
  sessionIds: string[];
  added: number;
  changed: number;
  removed: number;
}

/**
 * `onIndexProgress`: a scan in flight. A scan runs in two phases: `list` (every payload becomes
 * listed, sortable and openable) and then `fulltext` (search fills in behind). Events without a
 * phase come from before phases existed and mean `list`.
 */
export interface IndexProgressEvent {
  rootId: string;
  done: number;
  total: number;
  phase?: 'list' | 'fulltext';
}

/** Where a timeline number comes from (docs/timeline.md). */
export type Provenance = 'measured' | 'read' | 'inferred' | 'estimated' | 'simulated';

/** The window and auto-compact trigger of a session, by its client's rule. */
export interface ContextRule {
  client: ClientId | 'unknown';
  model?: string;
  window: number | null;
  windowSource: Provenance;
  /** The context at which the client compacts by itself; null: it never does (disabled, or unknown). */
  trigger: number | null;
  triggerSource: Provenance;
  /**
   * 'before-call': the client compacts before a request when the last call's context plus what
   * was added since reaches the trigger (seen in both Claude Code 2.1.328 and Codex 0.171.0);
   * 'after-call': when the last call's context alone reached it.
   */
  when: 'after-call' | 'before-call';
  /** What a compaction leaves, by the client's rule: the summary alone, or the summary and the newest messages (absent: the latter). */
  keeps?: 'summary' | 'summary-and-newest';
  how: string;
}

export interface TimelineTool {
  id: string;
  name: string;
  /** `mcp:<server>` for an MCP tool, else the tool's name: the group it is stacked in. */
  group: string;
  /** Tokens it added to the context: the estimate scaled to the call's API delta. */
  tokens: number;
  /** Spillway's estimate of what the model was shown, before scaling. */
  estimated: number;
  /** The indexed payload of this result, when there is one. */
  payloadId?: string;
  /** The full result's tokens as the index measured them (what an unguarded client would have sent). */
  fullTokens?: number;
  action?: string;
  /** The result's ledger, as the table and the payload's header show it (`spillway context --json`). */
  ledger?: PayloadLedger;
}

export interface TimelineTurn {
  seq: number;
  at: string;
  model?: string;
  kind: 'main' | 'sidechain' | 'summary';
  /** Measured: input + cache writes + cache reads of the call. */
  context: number | null;
  input: number | null;
  cacheWrite: number | null;
  cacheRead: number | null;
  output: number | null;
  /** Measured growth since the call before (the whole context after a compaction). */
  delta: number | null;
  /** What entered with this call, estimated and scaled to `delta`, by part and tool group. */
  parts: Record<string, number>;
  /** What is in context at this call, by part and tool group (the stacked chart). */
  stack: Record<string, number>;
  /** `delta` minus the unscaled estimate of what entered: how far to trust the split. */
  residual: number | null;
  tools: TimelineTool[];
}

export interface TimelineCompaction {
  /** Index in `turns` of the first call after it. */
  turn: number;
  at: string;
  kind: 'compact' | 'microcompact';
  trigger?: string;
  preTokens?: number;
  postTokens?: number;
  tokensSaved?: number;
}

export interface ToolCost {
  id: string;
  payloadId?: string;
  name: string;
  group: string;
  /** Index in `turns` of the call it entered with. */
  turn: number;
  tokens: number;
  /** Calls it rode along in, the one it entered with included, until a compaction or the end. */
  turnsInContext: number;
  /**
   * How its tokens were paid for over those calls, in the session's own caching proportions (as the
   * replay prices them): a caching client writes it once and reads it on every later call; with no
   * caching every call sends it again as plain input.
   */
  cacheWriteTokens: number;
  cacheReadTokens: number;
  inputTokens: number;
  /** What the client would have let in for it without Spillway (its own caps), in the API's units. */
  clientTokens?: number;
  /** (clientTokens − tokens) × the calls it stayed: tokens the spill kept out against what the client would have done anyway; negative when the message outweighed it. */
  savedTokens?: number;
  /** Those tokens at the session's cache prices (as the replay prices them). */
  savedUsd?: number;
}

/** USD per million tokens. */
export interface Prices {
  input: number;
  cacheWrite: number;
  cacheRead: number;
  output: number;
}

export interface ReplayScenario {
  /** The guard at this limit (tokens): each result over it is replaced by the guard's message. */
  limit?: number;
  /** Keep the last N tool results whole, mask older ones (observation masking). */
  keepLast?: number;
  /** Every result whole, as an unguarded client would send it. */
  noGuard?: boolean;
}

export interface ReplayResult {
  label: string;
  scenario: ReplayScenario;
  /** Context per call (simulated). */
  contexts: number[];
  /** Call indexes before which the client's rule compacts. */
  compactionsAt: number[];
  peak: number;
  inputTokens: number;
  cacheWriteTokens: number;
  cacheReadTokens: number;
  outputTokens: number;
  costUsd: number;
  /** Results the guard replaced. */
  replaced: number;
  /**
   * Where the message of each replaced result came from: built by the real guard offline from the
   * saved payload (`guard`), the message saved when it was spilled (`saved`), or the usual size (`fixed`).
   */
  messages: { guard: number; saved: number; fixed: number };
  /** Results over the limit whose guard message was not built within this request's budget (ask again). */
  pending?: number;
  provenance: 'simulated';
}

export interface TimelineRequest {
  /** A session id, or a transcript path indexed on the fly (CLI). */
  sessionId: string;
  /** Guard limits to replay (tokens). */
  limits?: number[];
  keepLast?: number[];
  prices?: Partial<Prices>;
  /** The settings the session ran with, where the user knows them (Claude Code env, Codex config). */
  autoCompactPct?: number;
  autoCompactDisabled?: boolean;
  autoCompactLimit?: number;
  /** The guard's estimator for the replayed limits (default: the guard's own defaults). */
  strategy?: StrategyName;
  profile?: Profile;
  /** Replays only (a slider move): turns, costs and notes left out. */
  replayOnly?: boolean;
}

export interface TimelineData {
  sessionId: string;
  rule: ContextRule;
  turns: TimelineTurn[];
  compactions: TimelineCompaction[];
  baselineTokens: number | null;
  baselineSource: Provenance;
  /** Biggest costs first (tokens × calls in context). */
  topCosts: ToolCost[];
  /** The session as it ran, priced from its measured usage. */
  measured: { peak: number; compactions: number; inputTokens: number; cacheWriteTokens: number; cacheReadTokens: number; outputTokens: number; costUsd: number; calls: number };
  /** First the session as it ran (replayed, as a check of the model), then one per scenario asked. */
  replays: ReplayResult[];
  prices: Prices;
  /** Sub-agent sessions under this one: their own lines. */
  subagents: Array<{ sessionId: string; name: string; calls: number; peak: number }>;
  /** What could not be read, per transcript. */
  notes: string[];
  /** Set when the session compacted, or came within 10% of the trigger. */
  warning?: string;
  /** The profile the session's own guard counted with, as its spills' messages say: what the guard replays count with unless asked otherwise. */
  guardProfile?: Profile;
  /**
   * Read-backs read in this session or of its spills, oldest first (readback.ts): the calls the
   * Timeline marks. Filled by the service's getTimeline (not on `replayOnly`) and `spillway context`.
   */
  readBacks?: ReadBack[];
}

// ------------------------------------------------------------------ per-tool evidence (evidence.ts)

/** Where one guard setting of a spill came from (its sidecar's `rule`, docs/config.md). */
export interface SpillRuleOrigin {
  source: 'flag' | 'project' | 'user' | 'default';
  /** The rule key that matched: the tool's name, `server/tool`, `server/*` or `*`. */
  match?: string;
  /** The rules file it is in. */
  file?: string;
}

/** What the index keeps of the rule a spill was made under (spill-rule.ts): the rule, and the settings it ran with. */
export interface SpillRuleInfo {
  /** The sidecar's rule: the origin of the limit, and of each setting. Absent: the rule is unknown (an older or a hostile sidecar). */
  rule?: SpillRuleOrigin & { settings: Partial<Record<'limit' | 'template' | 'provider' | 'model' | 'focusArg', SpillRuleOrigin>> };
  /** The limit the spill was decided at (the sidecar's `limitTokens`). */
  limit?: number;
  /** The guard's own summary run (the sidecar's first): its provider, model and template (a template only when the provider used one). */
  provider?: string;
  model?: string;
  template?: string;
}

export interface ToolEvidenceRequest {
  /** One root's sessions (default: every indexed session). */
  rootId?: string;
}

/** One set of settings a tool's spills ran with, and how many sessions and spills used it. */
export interface ToolSettingsUse {
  /** The rule and settings in words (spill-rule.ts `ruleLabel`). */
  label: string;
  limit?: number;
  template?: string;
  provider?: string;
  sessions: number;
  spills: number;
}

/** Per tool (or, for `servers`, per MCP server): what it spilled, what was read back and what reading back cost. */
export interface ToolEvidence {
  /** The tool's name as the client gave it (`Bash`, `mcp__fs__read_file`), or `server/*` for a server's total. */
  tool: string;
  /** The MCP server and its tool's name there, when the name says (`mcp__<server>__<tool>`). */
  server?: string;
  serverTool?: string;
  /** Calls the index counts once each (a transcript's call, a spill whose transcript is not indexed). */
  calls: number;
  /** Of those, the ones spilled. */
  spills: number;
  /** spills ÷ calls (null without calls). */
  spillRate: number | null;
  /** Spills read back at least once by a later call. */
  spillsReadBack: number;
  /** spillsReadBack ÷ spills (null without spills). */
  readBackRate: number | null;
  /** Read-backs (one call may read several parts). */
  readBacks: number;
  /** The calls that read back, each once. */
  readBackCalls: number;
  /** What those calls' results cost in context: their entered tokens (their whole result where not known), each call once. */
  readBackTokens: number;
  /** Sessions with a call of it, with a spill of it, with a read-back of one of its spills. */
  sessions: number;
  spillSessions: number;
  readBackSessions: number;
  /** The settings its spills ran with, most spills first. */
  settings: ToolSettingsUse[];
  /** What was read back most, in words (`grep \`ERROR\``, `lines 120–180`), most often first (at most 5). */
  parts: Array<{ part: string; count: number }>;
  /** Median full tokens of its spills that were read back (absent without one): what a limit would have to be to pass half of them whole. */
  readBackMedianTokens?: number;
}

/** A suggested rule for one tool, labelled as a suggestion with the evidence it rests on. */
export interface ToolSuggestion {
  tool: string;
  kind: 'template' | 'limit' | 'keep';
  /** One line: the evidence, then the suggestion. */
  text: string;
  template?: string;
  limit?: number;
  evidence: { spills: number; spillsReadBack: number; readBackRate: number; sessions: number; readBackCalls: number; readBackTokens: number };
}

export interface ToolEvidenceResponse {
  tools: ToolEvidence[];
  servers: ToolEvidence[];
  suggestions: ToolSuggestion[];
  /** A tool is given a suggestion only with at least this many spills, in at least this many sessions (docs/inspector.md). */
  thresholds: { minSpills: number; minSessions: number };
  totals: { sessions: number; calls: number; spills: number; spillsReadBack: number; readBackCalls: number; readBackTokens: number };
}

export interface CompareSessionsRequest {
  rootId?: string;
  /** One tool's calls only (its name as listed), else every tool's. */
  tool?: string;
  /** `rule`: sessions grouped by the rule recorded in their spills; `date`: before and from `since`. */
  by: 'rule' | 'date';
  /** With `by: 'date'`: an ISO date or time; sessions whose first call is earlier are "before". */
  since?: string;
}

/** One group of sessions' figures. */
export interface SessionGroupFigures {
  /** `before`/`after`, or the rule in words (several: joined with ` + `; none: `no spill`). */
  label: string;
  sessions: number;
  /** The first and last call of the group's sessions. */
  from?: string;
  to?: string;
  calls: number;
  spills: number;
  spillRate: number | null;
  spillsReadBack: number;
  readBackRate: number | null;
  readBackCalls: number;
  readBackTokens: number;
  /** Tokens the guard kept out (assets and the spilled remainder, the ledger's) and tokens that entered the context, over the group's calls. */
  keptOutTokens: number;
  enteredTokens: number;
}

export interface CompareSessionsResponse {
  by: 'rule' | 'date';
  since?: string;
  tool?: string;
  /** Earliest group first. */
  groups: SessionGroupFigures[];
}
