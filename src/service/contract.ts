/**
 * The one typed API between the inspector UI and its back end. Electron registers each method
 * as one `ipcMain.handle` channel (`spillway:<method>`), the preload exposes exactly these,
 * and `spillway serve` maps each to `POST /api/<method>` with events over SSE (`GET /api/events`).
 *
 * The renderer imports TYPES from here only (plus the two name lists, which are plain data).
 * Adding a method is a deliberate change: test/contract.test.ts pins the list.
 */
import type {
  AssetRef,
  ContentKind,
  Estimate,
  GuardAction,
  PayloadMeta,
  Profile,
  ProviderInfo,
  RuleOrigin,
  StrategyName,
  SummaryRun,
  TemplateInfo,
} from '../pipeline/types.js';
import type { SummaryScores } from '../summarize/index.js';

/** The scores of a summary run: src/summarize/scores.ts, re-exported for the UI. */
export type { SummaryScores };

export type {
  AssetRef,
  ContentKind,
  Estimate,
  GuardAction,
  PayloadMeta,
  Profile,
  ProviderInfo,
  RuleOrigin,
  StrategyName,
  SummaryRun,
  TemplateInfo,
};

/** The index's rows and requests: defined in src/index/rows.ts (a leaf both layers import), re-exported here for the UI. */
export type {
  DidIndexEvent,
  IndexProgressEvent,
  IndexStats,
  CallRow,
  LimitTunerRequest,
  LimitTunerResponse,
  ListPayloadsRequest,
  ListPayloadsResponse,
  LedgerProvenance,
  PayloadDetail,
  PayloadLedger,
  PayloadRow,
  ReadBack,
  ReadBackPart,
  ReplayTotals,
  SessionReplay,
  PayloadSortField,
  RootInfo,
  SessionInfo,
  SessionKind,
  WasteReport,
  WasteReportRequest,
  CompareSessionsRequest,
  CompareSessionsResponse,
  SessionGroupFigures,
  SpillRuleInfo,
  SpillRuleOrigin,
  ToolEvidence,
  ToolEvidenceRequest,
  ToolEvidenceResponse,
  ToolSettingsUse,
  ToolSuggestion,
  ContextRule,
  Prices,
  ReplayResult,
  ReplayScenario,
  TimelineCompaction,
  TimelineData,
  TimelineRequest,
  TimelineTool,
  TimelineTurn,
  ToolCost,
} from '../index/rows.js';
import type {
  TimelineData,
  TimelineRequest,
  DidIndexEvent,
  IndexProgressEvent,
  IndexStats,
  LimitTunerRequest,
  LimitTunerResponse,
  ListPayloadsRequest,
  ListPayloadsResponse,
  PayloadDetail,
  RootInfo,
  SessionInfo,
  WasteReport,
  WasteReportRequest,
  CompareSessionsRequest,
  CompareSessionsResponse,
  ToolEvidenceRequest,
  ToolEvidenceResponse,
} from '../index/rows.js';

export interface ReadPayloadRequest {
  id: string;
  variant?: 'raw' | 'linked';
  /** Byte window [start, end). At most MAX_READ_WINDOW_BYTES. */
  start?: number;
  end?: number;
  /** Or a line window (0-based). At most MAX_READ_WINDOW_LINES. */
  startLine?: number;
  lineCount?: number;
}

export interface ReadPayloadResponse {
  text: string;
  /** Byte offsets actually returned (snapped to UTF-8 character boundaries). */
  start: number;
  end: number;
  startLine?: number;
  /** Lines in this window (line windows only). A single line longer than the byte cap counts as 1, cut at `end`. */
  lineCount?: number;
  totalBytes: number;
  /**
   * Lines in the whole file. The first window of a big file does not wait for a full scan:
   * until the scan (which runs in the background) finishes, this is an estimate and
   * `totalLinesExact` is false. Ask again (any window) to get the exact count.
   */
  totalLines: number;
  totalLinesExact?: boolean;
  binary: boolean;
  /** For binary payloads: a hex dump of the window instead of text (text is then ''). Binary windows are at most 256 KiB. */
  hex?: string;
}

export const MAX_READ_WINDOW_BYTES = 4 * 1024 * 1024;
export const MAX_READ_WINDOW_LINES = 20_000;

export interface ReadAssetRequest {
  payloadId: string;
  sha256: string;
  /** Bytes returned as base64 only up to this size; larger assets give path only. */
  maxBytes?: number;
}

export interface ReadAssetResponse {
  mimeType: string;
  bytes: number;
  sha256: string;
  path: string;
  base64?: string;
}

/** Defined in src/pipeline/types.ts (the estimator computes it); re-exported for the UI. */
export type { DensityShares } from '../pipeline/types.js';
import type { DensityShares } from '../pipeline/types.js';

export interface EstimateRequest {
  /** Exactly one of: a payload id, a text, or a path (confined to roots/app data/dropped files). */
  payloadId?: string;
  text?: string;
  path?: string;
  /** Default: a payload's own figure's profile (what the guard counted with), else o200k. */
  profile?: Profile;
  /** Also run the exact tokenizers (slower). */
  exact?: boolean;
}

export interface EstimateResponse {
  chars: number;
  bytes: number;
  profile: Profile;
  default: StrategyName;
  estimates: Array<{ strategy: StrategyName; tokens: number; exact: boolean; ms: number }>;
  density: DensityShares;
  /**
   * How far to trust the calibrated estimate for `profile`: the margin its fit holds on the corpus
   * (share of the estimate), and the tokens that content the fit was never validated on may add, by
   * class (biggest first). The guard counts exactly when the limit falls within both.
   */
  trust?: { margin: number; riskTokens: number; parts: Array<{ label: string; tokens: number }> };
}

export interface AnalyzeRequest {
  /** Display name of the dropped file or pasted text. */
  name: string;
  /** Electron: the dropped file's real path. Never modified. */
  path?: string;
  /** serve / paste: the content, base64-encoded (bytes) or as text. */
  base64?: string;
  text?: string;
  limitTokens?: number;
  contextWindowTokens?: number;
  profile?: Profile;
}

export interface AnalyzeResponse {
  name: string;
  bytes: number;
  mimeType: string;
  kind: ContentKind;
  assets: AssetRef[];
  estimate: EstimateResponse;
  /**
   * The guard's decision. `estimate`: the one figure its message states (strategy and profile named),
   * which may differ from the table's counts of the whole text (a sampled estimate, an exact count near
   * the limit); absent when it passed.
   */
  decision: { action: GuardAction; limitTokens: number; message: string | null; estimate?: Estimate };
  /** The scratch payload made for it (so the viewer can open it), when spilled. */
  payloadId?: string;
  sessionId?: string;
}

export interface SummarizeRequest {
  payloadId: string;
  focus?: string;
  provider?: string;
  model?: string;
  template?: string;
}

/** The scores without a judge of every summary run of one payload (docs/scores.md). */
export interface ScoreSummariesRequest {
  payloadId: string;
  /** One focus for every run's anchor recall, to compare runs on one yardstick (default: each run's own). */
  focus?: string;
}

export interface RunScores {
  runId: string;
  /** Absent when the run failed (no summary to score) or the payload could not be scored here: `note` says which. */
  scores?: SummaryScores;
  note?: string;
}

export interface ScoreSummariesResponse {
  runs: RunScores[];
  /** The payload's read-backs (readBacks of getPayload) given to the read-back recall; 0: none, and it is absent. */
  readBacks: number;
  /** Chars of the payload scored. */
  payloadChars: number;
  /** Why no run was scored (a payload too big to score here), when so. */
  note?: string;
}


/** The guard rules' settings one rule may give (docs/config.md). */
export interface RuleSettings {
  limit?: number;
  template?: string;
  provider?: string;
  model?: string;
  focusArg?: string;
}
export type RuleSettingName = keyof RuleSettings;

/** One change to the rule of one tool pattern (a tool name, `server/tool`, `server/*` or `*`). */
export interface ConfigChange {
  tool: string;
  set?: RuleSettings;
  unset?: RuleSettingName[];
}

/**
 * Which rules file: the user's (`<app data>/config.json`) or a project's (`<project>/.spillway.json`).
 * `project` must be a folder the inspector knows: an indexed session's project folder or a root the
 * user gave. With the user's scope, `project` (optional) adds that project's file to the effective rule.
 */
export interface PreviewConfigRequest {
  scope: 'user' | 'project';
  project?: string;
  change: ConfigChange;
}

/** A tool's settings as the guard would resolve them (flags aside: the inspector has none), each with its origin. */
export interface EffectiveRule {
  tool: string;
  settings: Record<RuleSettingName, RuleOrigin & { value: string | number | null }>;
}

export interface PreviewConfigResponse {
  scope: 'user' | 'project';
  /** The project folder, as its real path (project scope, or given with the user's). */
  project?: string;
  /** The file the change goes to. */
  file: string;
  exists: boolean;
  /** The file's text now ('' when it does not exist) and after the change: plain text, never HTML. */
  currentText: string;
  proposedText: string;
  /** A unified diff of the two. */
  diff: string;
  /** Pass both to applyConfig: it writes only while the file is as previewed, and only this text. */
  baseHash: string;
  proposedHash: string;
  /** The change leaves the file as it is. */
  unchanged: boolean;
  before: EffectiveRule;
  after: EffectiveRule;
  /** A rules file left out of the effective rule (not valid), in a line each. */
  notes: string[];
}

export interface ApplyConfigRequest extends PreviewConfigRequest {
  baseHash: string;
  proposedHash: string;
}

export interface ApplyConfigResponse {
  /** The path written (a linked file's target). */
  file: string;
  created: boolean;
  /** The file's mode after the write, e.g. `0600`. */
  mode: string;
  text: string;
  effective: EffectiveRule;
}

export interface AppInfo {
  version: string;
  appDataDir: string;
  dbPath: string;
  defaults: { limitTokens: number; profile: Profile; strategy: StrategyName; pricePerMTok: number };
  strategies: StrategyName[];
  profiles: Profile[];
  transport: 'electron' | 'http';
}

/** Every method: request → response. */
export interface InspectorMethods {
  getInfo(req: Record<string, never>): AppInfo;
  listRoots(req: Record<string, never>): RootInfo[];
  addRoot(req: { path: string }): RootInfo;
  removeRoot(req: { id: string }): { ok: true };
  reindex(req: { rootId?: string }): IndexStats;
  listSessions(req: { rootId?: string }): SessionInfo[];
  listPayloads(req: ListPayloadsRequest): ListPayloadsResponse;
  getPayload(req: { id: string }): PayloadDetail;
  readPayload(req: ReadPayloadRequest): ReadPayloadResponse;
  readAsset(req: ReadAssetRequest): ReadAssetResponse;
  revealPath(req: { payloadId: string; sha256?: string }): { path: string };
  estimate(req: EstimateRequest): EstimateResponse;
  analyze(req: AnalyzeRequest): AnalyzeResponse;
  summarize(req: SummarizeRequest): SummaryRun;
  scoreSummaries(req: ScoreSummariesRequest): ScoreSummariesResponse;
  listProviders(req: Record<string, never>): ProviderInfo[];
  listTemplates(req: Record<string, never>): TemplateInfo[];
  saveTemplate(req: { name: string; body: string }): TemplateInfo;
  deleteTemplate(req: { name: string }): { ok: true };
  limitTuner(req: LimitTunerRequest): LimitTunerResponse;
  wasteReport(req: WasteReportRequest): WasteReport;
  toolEvidence(req: ToolEvidenceRequest): ToolEvidenceResponse;
  compareSessions(req: CompareSessionsRequest): CompareSessionsResponse;
  getTimeline(req: TimelineRequest): TimelineData;
  previewConfig(req: PreviewConfigRequest): PreviewConfigResponse;
  applyConfig(req: ApplyConfigRequest): ApplyConfigResponse;
}

export type MethodName = keyof InspectorMethods;
export type MethodRequest<M extends MethodName> = Parameters<InspectorMethods[M]>[0];
export type MethodResponse<M extends MethodName> = ReturnType<InspectorMethods[M]>;

/** The runtime list (preload and serve check names against it). Keep in the same order as above. */
export const METHOD_NAMES = [
  'getInfo',
  'listRoots',
  'addRoot',
  'removeRoot',
  'reindex',
  'listSessions',
  'listPayloads',
  'getPayload',
  'readPayload',
  'readAsset',
  'revealPath',
  'estimate',
  'analyze',
  'summarize',
  'scoreSummaries',
  'listProviders',
  'listTemplates',
  'saveTemplate',
  'deleteTemplate',
  'limitTuner',
  'wasteReport',
  'toolEvidence',
  'compareSessions',
  'getTimeline',
  'previewConfig',
  'applyConfig',
] as const satisfies readonly MethodName[];

export interface InspectorEvents {
  /** Payloads/sessions were added, changed or removed by the indexer. */
  onDidIndex: DidIndexEvent;
  /** Indexing progress (a scan in flight): its `list` phase, then its `fulltext` phase. */
  onIndexProgress: IndexProgressEvent;
  /** A summary run finished (from any client). */
  onDidSummarize: { payloadId: string; run: SummaryRun };
}

export type EventName = keyof InspectorEvents;
export const EVENT_NAMES = ['onDidIndex', 'onIndexProgress', 'onDidSummarize'] as const satisfies readonly EventName[];

/** What the renderer gets, from `window.spillway` (Electron) or the HTTP client (serve). */
export type InspectorApi = {
  [M in MethodName]: (req: MethodRequest<M>) => Promise<MethodResponse<M>>;
} & {
  on<E extends EventName>(event: E, listener: (payload: InspectorEvents[E]) => void): () => void;
};

/**
 * The desktop shell's host channels (Electron only; `serve` has no equivalent). They are part of
 * the contract so the preload exposes nothing outside this file: the app menu's commands
 * (main → renderer), opening an http(s) link (renderer → main, which asks the user first), and a
 * file the user dropped, as the preload read it with `webUtils.getPathForFile` (renderer → main,
 * which then lets the service read that one file).
 */
export const HOST_MENU_CHANNEL = 'spillway-host:menu';
export const HOST_OPEN_EXTERNAL_CHANNEL = 'spillway-host:open-external';
export const HOST_DROPPED_FILE_CHANNEL = 'spillway-host:dropped-file';
export const HOST_CHANNELS = [HOST_MENU_CHANNEL, HOST_OPEN_EXTERNAL_CHANNEL, HOST_DROPPED_FILE_CHANNEL] as const;

/** Electron IPC channel for a method. */
export const channelFor = (m: MethodName) => `spillway:${m}` as const;
export const EVENT_CHANNEL = 'spillway:event';

/** Typed error that crosses every transport as `{ error: { code, message } }`. */
/** CONFLICT: what the call would change changed since it was read (applyConfig after another write). */
export type ErrorCode = 'BAD_REQUEST' | 'NOT_FOUND' | 'FORBIDDEN_PATH' | 'CONFLICT' | 'UNAVAILABLE' | 'INTERNAL';
export class ServiceError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}
