import type { ImageInfo, ImageSize } from '../agents/index.js';
import type { AssetRef, ContentKind, GuardAction, StrategyName, SummaryRun } from '../pipeline/types.js';
import type { TurnsResult } from './turns.js';

/** Where an imported payload came from in its transcript (enough to read its text again). */
export interface SourceLocation {
  transcript: string;
  /** 0-based line (JSONL) or message index (Gemini). */
  line: number;
  /** Byte offset and length of the line in the transcript (JSONL only). */
  offset?: number;
  length?: number;
  toolUseId?: string;
  /**
   * Which field held the text the payload was measured from: a tool_result's `content`, the
   * line's `toolUseResult` or `mcpMeta` (Claude Code), a spill file (`persisted`), a Codex
   * `output` or a fuller copy in an `event` line, a Gemini `result`, or the payload a Spillway
   * message in the result points to (`spillway`, read from `persistedPath`).
   */
  field: 'content' | 'toolUseResult' | 'mcpMeta' | 'persisted' | 'output' | 'event' | 'result' | 'spillway';
  /** A file that holds the whole result: Claude Code's spill file in `tool-results/` (any name). */
  persistedPath?: string;
  /**
   * The result is Spillway's message and names this payload, which is in no registered root (another
   * app-data folder, a bucket): the record is the message, marked a spill, never read from this path.
   */
  spilledTo?: string;
  /** Gemini: index of the call within the message. */
  call?: number;
}

/** One payload as the indexer writes it: from a sidecar, a bare payload file, or a transcript. */
export interface PayloadRecord {
  id: string;
  tool: string;
  createdAt: string;
  /** Size of the original result. */
  bytes: number;
  action: GuardAction;
  kind: ContentKind;
  assets: AssetRef[];
  input?: unknown;
  intent?: string;
  estimates: Partial<Record<StrategyName, number>>;
  /** Default strategy (calibrated) estimate. */
  tokens: number;
  /** Readable file: the spilled payload, a Claude spill file, or the transcript. */
  path: string;
  linkedPath?: string;
  metaPath?: string;
  message?: string;
  binary: boolean;
  lines?: number;
  source?: SourceLocation;
  /**
   * Inline base64 in the result (the waste report). A Spillway payload's count here covers the
   * assets its sidecar lists; the full-text phase adds runs it finds in the payload's head and tail.
   */
  b64: { runs: number; chars: number; tokens: number };
  summaryRuns: SummaryRun[];
  /**
   * The client's id of the tool call: a transcript's tool_use id / call_id, or the `toolCallId`
   * the hook or the proxy recorded in a spill's sidecar. The index joins the two by it.
   */
  callId?: string;
  /** A transcript's result that is Spillway's message: the id of the spill it names (joined by the path in the message). */
  spillId?: string;
  /** A spill's sidecar: the client the call came from (`claude-code`, `codex`, …). */
  callClient?: string;
  /** A spill's sidecar: the rule that produced it and the settings it ran with, as checked JSON (spill-rule.ts `spillRuleJson`). */
  ruleJson?: string;
  /**
   * For the ledger (ledger.ts): images the result carries (image blocks, data URLs, a client's saved
   * image files), sized from their headers, priced by pixels; the share of `tokens` and of the
   * characters their base64 took as text; the text's characters when known (else `bytes`).
   */
  images?: ImageInfo[];
  imageTextTokens?: number;
  imageChars?: number;
  chars?: number;
  /** Characters of what the model was handed when `message` is not kept on the row (a spill's sidecar has it). */
  messageChars?: number;
  /** Sizes of `assets` that are images (null: not an image, or unreadable), in their order. */
  assetSizes?: Array<ImageSize | null>;
}

/** What a transcript says about its session: how people recognise it. */
export interface SessionFacts {
  /** The working directory the agent ran in. */
  project?: string;
  /** The first user prompt, one line, clipped. */
  title?: string;
  /** Agent and version, e.g. "Claude Code 2.1.328". */
  client?: string;
}

/** What a Spillway spill's sidecar says about the session it was made in (hook and proxy sessions). */
export interface SpillFacts {
  /** The client the call came from, as recorded (`claude-code`, `codex`, …). */
  client?: string;
  /** The working directory the client ran in. */
  cwd?: string;
}

export interface UnitResult {
  payloads: PayloadRecord[];
  session?: SessionFacts;
  /** Content hash of the unit (compared when size/mtime changed). */
  hash: string;
  /** Problems worth telling the user (unreadable meta, skipped lines). */
  warnings: string[];
  /** A spill's: what its sidecar says of the client session (only project and client are used). */
  spill?: SpillFacts;
  /** The model calls and compactions of a transcript (turns.ts). */
  turns?: TurnsResult;
}
