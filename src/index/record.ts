import type { AssetRef, ContentKind, GuardAction, StrategyName, SummaryRun } from '../pipeline/types.js';

/** Where an imported payload came from in its transcript (enough to read its text again). */
export interface SourceLocation {
  transcript: string;
  /** 0-based line (JSONL) or message index (Gemini). */
  line: number;
  /** Byte offset and length of the line in the transcript (JSONL only). */
  offset?: number;
  length?: number;
  toolUseId?: string;
  /** Which field held the text the payload was measured from. */
  field: 'content' | 'toolUseResult' | 'persisted' | 'output' | 'result';
  /** Claude Code spill file (`tool-results/<id>.txt`) when the result was persisted. */
  persistedPath?: string;
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
  /** Bounded text for full-text search. */
  ftsBody: string;
  b64: { runs: number; chars: number; tokens: number };
  summaryRuns: SummaryRun[];
}

export interface UnitResult {
  payloads: PayloadRecord[];
  /** Content hash of the unit (compared when size/mtime changed). */
  hash: string;
  /** Problems worth telling the user (unreadable meta, skipped lines). */
  warnings: string[];
}
