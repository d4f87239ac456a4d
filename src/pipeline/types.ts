import type { SpillStore } from './store/seam.js';
import type { ContentKind, Profile, StrategyName } from './vocab.js';

/**
 * Shared types of the guard. Everything under src/ may import these; the renderer may import
 * them as types only (through src/service/contract.ts).
 */

/** What a tool returned. */
export type ToolResult = string | Uint8Array | ArrayBuffer | unknown;

// The profile names live with the other shared words (vocab.ts), a leaf the hook's fast path may load.
export { PROFILES, type Profile } from './vocab.js';

/** Strategy names and content kinds are lists in vocab.ts; their types are re-exported here with the other shared words. */
export type { ContentKind, StrategyName } from './vocab.js';

export interface Estimate {
  tokens: number;
  strategy: StrategyName;
  /** Tokenizer family the estimate is for. */
  profile: Profile;
  /** True only for counts from a real tokenizer. */
  exact: boolean;
  /** Factor applied for newer Claude models (profile `claude`, see `claudeCorrection`); absent when 1. */
  correction?: number;
}

/** Shares (0..1) of a text's chars by class, from the estimator's one pass. */
export interface DensityShares {
  base64: number;
  hex: number;
  uuid: number;
  cjk: number;
  otherNonAscii: number;
  digits: number;
  punctuation: number;
  whitespace: number;
  letters: number;
}

export type GuardAction = 'pass' | 'spill' | 'inline-assets';

/** A reference that replaces an asset inside the linked text / JSON. */
export interface AssetRef {
  /** Absolute path of the asset file. */
  path: string;
  /** Path relative to the session folder, e.g. `long_responses/assets/ab12….png`. */
  relPath: string;
  mimeType: string;
  /** Decoded size in bytes. */
  bytes: number;
  sha256: string;
  /** Where it was found: a JSON path (`$.content[0].data`) or `text[<start>:<end>]` for spans in text. */
  jsonPath: string;
  /** How it was encoded where it was found. */
  /** `binary-string`: a JSON string value that is bytes decoded as text (latin-1, or UTF-8 with U+FFFD). */
  source: 'binary' | 'binary-string' | 'base64' | 'base64url' | 'data-url' | 'mcp-image' | 'mcp-audio' | 'mcp-blob';
  /** True when the type came from magic bytes (file-type); false when only declared or guessed. */
  sniffed: boolean;
}

export interface SummaryRequest {
  /** The payload (linked form: assets already replaced). */
  text: string;
  toolName?: string;
  toolInput?: unknown;
  /** What the caller wants from the payload. */
  focus?: string;
  /** Named template (file-based, see src/summarize). */
  template?: string;
  model?: string;
  maxOutputTokens: number;
  /**
   * The guard's estimate of exactly this text (the figure its message states), so a summary that
   * states a size states that one. Absent when the text is not what the guard measured (the linked
   * form, an MCP result's content): a summary then names what its own figure counts.
   */
  estimate?: Estimate;
}

export interface SummaryOutput {
  summary: string;
  provider: string;
  model: string;
  template?: string;
  focus?: string;
  inputTokens: number;
  outputTokens: number;
  ms: number;
  costUsd?: number;
  /** Map-reduce bookkeeping when the payload was chunked. */
  chunks?: { total: number; summarized: number; skipped: number };
}

/** A provider-backed summarizer (issue: summaries). */
export interface Summarizer {
  readonly provider: string;
  summarize(req: SummaryRequest, opts: { signal: AbortSignal }): Promise<SummaryOutput>;
}

/** The minimal hook: a function from a prompt to a summary. */
export type SummarizeFn = (prompt: string, opts: { signal: AbortSignal }) => Promise<string>;
export type SummarizeHook = SummarizeFn | Summarizer;

/** One summarization of one payload, kept so runs can be compared. */
export interface SummaryRun extends SummaryOutput {
  id: string;
  createdAt: string;
  status: 'ok' | 'error' | 'timeout' | 'fallback';
  error?: string;
}

/** The `.meta.json` sidecar. Version it: the indexer reads old ones. */
export interface PayloadMeta {
  version: 1;
  /** The file stem; unique within a session. */
  id: string;
  createdAt: string;
  tool: string;
  toolInput?: unknown;
  intent?: string;
  action: Exclude<GuardAction, 'pass'>;
  /** File name (inside long_responses/) of the saved payload. */
  payloadFile: string;
  /** True when payloadFile holds the exact bytes received; false when it holds the linked form. */
  payloadIsOriginal: boolean;
  /** File name of the linked JSON/text, when assets were cut out. */
  linkedFile?: string;
  kind: ContentKind;
  /** Size of the original payload. */
  bytes: number;
  chars: number;
  /** sha256 of the original bytes: `spillway restore` checks it. */
  sha256: string;
  /** The estimate the decision used. */
  estimate: Estimate;
  /** Every cheap strategy's count, for the inspector. */
  estimates: Partial<Record<StrategyName, number>>;
  limitTokens: number;
  assets: AssetRef[];
  /** Exactly what the model was handed. */
  message: string;
  summaryRuns: SummaryRun[];
  /** Set when saving or summarizing partly failed. */
  errors?: string[];
  /** The client's id of the tool call this result answered (Claude Code's `tool_use_id`, Codex's `call_id`): the inspector joins the transcript's tool call with this spill by it. */
  toolCallId?: string;
  /** The client the call came from: `claude-code`, `codex`, or the name an MCP client gave in `initialize`. */
  client?: string;
  /** The client's own session id (Claude Code's `session_id`, Codex's thread id), when it said. */
  clientSessionId?: string;
  /** The client's transcript of that session (Claude Code hook input `transcript_path`), when it said. */
  transcriptPath?: string;
  /** The working directory the client ran in, when it said. */
  cwd?: string;
  /** What the original bytes are: UTF-8 of a string, bytes as given, the JSON serialization of a parsed value, or bytes carried in a latin1 string. */
  origin?: PayloadOrigin;
  /** How `spillway restore` rebuilds the original from the linked file (present when payloadIsOriginal is false). */
  links?: PayloadLink[];
  /** The guard rule that produced this spill: where its limit came from, and each summary setting (docs/config.md). */
  rule?: SpillRule;
}

export type PayloadOrigin = 'string' | 'bytes' | 'json-value' | 'latin1-string';

/** How an asset was written where it was found: enough to re-create the exact original span. */
export interface AssetEncoding {
  /**
   * `raw`: the span is the bytes themselves; `base64`: text; `text`: the bytes read as `charset`
   * (a JSON string that held binary as characters: with `json`, the literal JSON.stringify makes of it).
   */
  kind: 'raw' | 'base64' | 'text';
  /** For `text`: `latin1` (one char per byte, exact) or `utf8` (what a lossy decode left, U+FFFD included). */
  charset?: 'latin1' | 'utf8';
  alphabet?: 'std' | 'url';
  /** `=` padding present. */
  pad?: boolean;
  /** Line length of wrapped (MIME/PEM) base64; absent when not wrapped. */
  lineWidth?: number;
  eol?: '\n' | '\r\n';
  /** The wrapped block ends with an end-of-line. */
  finalEol?: boolean;
  /** Text before the base64 inside the span, e.g. `data:image/png;base64,`. */
  prefix?: string;
  /** The span is a whole JSON string literal (quotes included), escaped as JSON.stringify does. */
  json?: boolean;
  /** The JSON literal escaped `/` as `\/`. */
  escapeSlash?: boolean;
}

/** One asset reference in the linked file: byte span [start, end) replaced the original encoding of assets[asset]. */
export interface PayloadLink {
  asset: number;
  start: number;
  end: number;
  encoding: AssetEncoding;
}

/** Where one guard setting of a call came from (docs/config.md): a flag, a rules file's key, or the default. */
export interface RuleOrigin {
  source: 'flag' | 'project' | 'user' | 'default';
  /** The rule key that matched: the tool's name, `server/tool`, `server/*` or `*`. */
  match?: string;
  /** The rules file it is in. */
  file?: string;
}

/**
 * Which rule produced a spill, as its sidecar records it: the origin of the limit that decided it,
 * and of each setting (limit, template, provider, model, focusArg).
 */
export interface SpillRule extends RuleOrigin {
  settings: Partial<Record<'limit' | 'template' | 'provider' | 'model' | 'focusArg', RuleOrigin>>;
}

/** Which client tool call a result answered: recorded in the sidecar as is (see PayloadMeta). */
export interface ToolCallRef {
  toolCallId?: string;
  client?: string;
  clientSessionId?: string;
  transcriptPath?: string;
  cwd?: string;
}

export interface GuardOptions {
  /** Session folder; payloads go under `<session>/long_responses/`. */
  sessionPath: string;
  /** The client's tool call this result answers, recorded in the sidecar so the inspector can join it with the client's transcript. */
  call?: ToolCallRef;
  /** The guard rule (docs/config.md) that set this call's limit and summary settings, recorded in the sidecar. */
  rule?: SpillRule;
  toolName?: string;
  toolInput?: unknown;
  /** What the caller wants from the result (also the summary focus). */
  intent?: string;
  /** Token limit; default DEFAULT_LIMIT_TOKENS, or derived from contextWindow. */
  limitTokens?: number;
  contextWindowTokens?: number;
  profile?: Profile;
  strategy?: StrategyName;
  /**
   * Factor on the `claude` profile's counts (see EstimateOptions.claudeCorrection); default: the
   * `env`'s SPILLWAY_CLAUDE_CORRECTION, else 1. A value outside 0.5–3 is ignored.
   */
  claudeCorrection?: number;
  summarize?: SummarizeHook;
  summaryTimeoutMs?: number;
  signal?: AbortSignal;
  /** Clock, for tests. */
  now?: () => Date;
  /** Which tools the model has to read a spilled payload with: the message's "Read more" advice names them. Default `generic`. */
  readMore?: ReadMoreTools;
  /**
   * With `readMore: 'drill-down'`: the names the drill-down tools are registered under, which the
   * message (and the sidecar's copy of it) names. The MCP proxy lists them under a free suffix
   * (`spillway_read_2`) when the wrapped server lists the canonical name itself, so a drill-down
   * never goes to that server. Default: the canonical names. A name that is not a plain MCP tool
   * name (1–128 of `A-Za-z0-9_-.`) is ignored.
   */
  drillDownNames?: DrillDownToolNames;
  /** The result handed to the guard is not the whole tool output: what is missing, said in the message and kept in the meta's errors. */
  incomplete?: string;
  /**
   * For a JSON value: the text the client actually shows the model of it (e.g. an MCP client that
   * shows only the serialized structuredContent). The decision and the message's token count use
   * it; the whole value is still what is saved.
   */
  shown?: string;
  /**
   * Where spills are written; default: `env.SPILLWAY_STORE`, else a LocalSpillStore over `sessionPath`
   * (store/local.ts). An `s3://bucket/prefix` URL writes to the bucket (store/s3/), with the
   * session folder as the fallback, queued for `spillway sync`.
   */
  store?: SpillStore | string;
  /**
   * Where a spill goes when `store` fails with UNAVAILABLE (down, unreachable, slow, full); none by
   * default. The message then says where the result really went.
   */
  fallbackStore?: SpillStore;
  /** Deadline of each store call; default STORE_CALL_TIMEOUT_MS. */
  storeTimeoutMs?: number;
  /**
   * The variables the store settings come from (SPILLWAY_STORE, SPILLWAY_STORE_TIMEOUT_MS, the AWS
   * ones), as a value: the guard itself never reads SPILLWAY_STORE from the process. The package
   * root, the CLI, the proxy and the hook pass `process.env`; none: SPILLWAY_STORE does not apply,
   * and a bucket's settings come from the AWS SDK's own variables.
   */
  env?: NodeJS.ProcessEnv;
  /**
   * The agent reads spills as local files (Claude Code's Read, Bash): with an object store, also keep
   * a copy of the payload and its assets in `<sessionPath>/.local-copy/`, and name that path in the
   * message, with the bucket URL as the durable copy. No effect when spills are local anyway.
   */
  localCopy?: boolean;
  /**
   * Also cut MCP `image`/`audio` blocks out of results that fit the limit. Off by default:
   * multimodal clients show those blocks to the model as media, not text.
   */
  cutMediaBlocks?: boolean;
  /**
   * The caller knows the result is too large for the model (its client already cut it, or saved it
   * where the caller cannot read it): spill it whatever it measures.
   */
  knownLarge?: boolean;
}

/**
 * The tools a model has for reading a spilled payload: `claude-code` (Read, and grep in Bash or the Grep
 * tool when it is offered), `drill-down` (the proxy's spillway_read / spillway_grep / spillway_query, under
 * the names of {@link GuardOptions.drillDownNames}), `files` (a file-reading tool; names no drill-down tool:
 * the MCP proxy without them, where a server's tool of that name would answer), `generic` (a file-reading
 * tool, or the drill-down tools when the proxy is connected: the library cannot know the agent's).
 */
export type ReadMoreTools = 'claude-code' | 'drill-down' | 'files' | 'generic';

/** The drill-down tools' names as the client lists them (see {@link GuardOptions.drillDownNames}). */
export interface DrillDownToolNames {
  read: string;
  grep: string;
  query: string;
}

export interface GuardResult {
  action: Exclude<GuardAction, 'pass'>;
  /** What the model should see instead of the result. */
  message: string;
  estimate: Estimate;
  limitTokens: number;
  /** Where the payload was saved, as its store describes it: an absolute path locally (undefined only if saving failed). */
  payloadPath?: string;
  /** With `localCopy` and an object store: the local copy of the payload the message names (payloadPath is the bucket's). */
  localPath?: string;
  linkedPath?: string;
  metaPath?: string;
  assets: AssetRef[];
  summary?: SummaryRun;
  errors: string[];
}

/** A summary provider as listed to users (CLI, inspector). */
export interface ProviderInfo {
  name: string;
  models: string[];
  defaultModel: string;
  available: boolean;
  /** Why not, when unavailable (missing key, ...). */
  reason?: string;
}

/** A named prompt template (built in, or a `<name>.md` file in the templates folder). */
export interface TemplateInfo {
  name: string;
  body: string;
  builtIn: boolean;
  path?: string;
}
