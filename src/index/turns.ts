/**
 * Turns: one row per model call of a session, from the usage the API itself reported, and the
 * compactions the client recorded. The per-client readers (turns-claude.ts, turns-codex.ts,
 * turns-gemini.ts) fill a TurnsResult while the importer streams the transcript; nothing here
 * throws on a line it does not understand: a record it cannot read is counted in `notes`, a
 * call without usage is kept with `context: null`.
 *
 * The parts of a turn (what entered its context since the call before) are estimated with
 * Spillway's own estimator on the text as the model saw it; the timeline later scales them to
 * the API's delta (src/timeline/replay.ts), so the estimate only splits a measured number.
 */
import { MAX_BUILT_BLOCKS_PER_LINE } from './huge-line.js';
import { estimateTokens } from '../pipeline/estimate/index.js';
import type { Profile } from '../pipeline/types.js';
import { isObj } from '../pipeline/values.js';


/** Which part of the context a piece of text is. Tool results are kept per result (TurnTool). */
export type PartName = 'baseline' | 'user' | 'assistant' | 'thinking' | 'summary' | 'other';

/** One tool result that entered the context with a call: its id links it to the payload row. */
export interface TurnTool {
  /** tool_use id (Claude Code), call_id (Codex), call id (Gemini). */
  id: string;
  name: string;
  /** Estimated tokens of what the model was shown (Spillway's estimator). */
  tokens: number;
  /**
   * Where the result is in its transcript. A listing only notes it, `tokens` 0 (estimating every
   * result was most of what turns cost a listing); the first timeline of the session estimates it
   * from there and keeps the number with it (timeline-rows.ts).
   */
  at?: TurnToolAt;
}

/** A tool result's place in a transcript: its line (byte offset and length) and its block in the line's content. */
export interface TurnToolAt {
  offset: number;
  length: number;
  block: number;
}

/** Where a line is in its transcript (bytes), as the importer streaming it knows. */
export interface LineAt {
  offset: number;
  length: number;
}

export interface TurnRecord {
  /** 0-based order of the call in its transcript. */
  seq: number;
  at: string;
  model?: string;
  /** What the model received, from the API's usage: input + cache writes + cache reads. Null: no usage recorded. */
  context: number | null;
  input: number | null;
  cacheWrite: number | null;
  cacheRead: number | null;
  output: number | null;
  /** The window the client recorded with the call (Codex `model_context_window`). */
  window?: number;
  /** 'main'; 'sidechain' for a Claude Code sidechain line in the main file; 'summary' for a compaction's own call. */
  kind: 'main' | 'sidechain' | 'summary';
  /** Estimated tokens of what entered since the previous call, by part (tool results apart). */
  parts: Partial<Record<PartName, number>>;
  tools: TurnTool[];
  /** 0-based transcript line of the call's first record. */
  line: number;
}

export interface CompactionRecord {
  /** Number of calls before it: it happened between call `seq - 1` and call `seq`. */
  seq: number;
  at: string;
  /** 'compact' (a summary replaced the conversation), 'microcompact' (old tool results cleared). */
  kind: 'compact' | 'microcompact';
  /** 'auto' | 'manual' as the client wrote it; undefined when it did not say. */
  trigger?: string;
  preTokens?: number;
  postTokens?: number;
  tokensSaved?: number;
  toolIds: string[];
  line: number;
}

export interface TurnsResult {
  turns: TurnRecord[];
  compactions: CompactionRecord[];
  /** Estimated tokens of the fixed prefix (system prompt, tools) when the transcript recorded it. */
  baselineTokens?: number;
  /** What could not be read: record types skipped, calls without usage, a torn last line. */
  notes: string[];
}

/** Spillway's estimate of a piece of text, never throwing. */
export function estimateText(text: string, profile: Profile): number {
  if (!text) return 0;
  try {
    return estimateTokens(text, { profile }).tokens;
  } catch {
    return Math.ceil(text.length / 4);
  }
}

export function addPart(parts: Partial<Record<PartName, number>>, name: PartName, tokens: number): void {
  if (tokens > 0) parts[name] = (parts[name] ?? 0) + tokens;
}

/** A note counter: "N call(s) without usage" instead of N lines of the same note. */
export class Notes {
  private readonly counts = new Map<string, number>();
  add(what: string): void {
    this.counts.set(what, (this.counts.get(what) ?? 0) + 1);
  }
  list(): string[] {
    return [...this.counts].map(([what, n]) => (n === 1 ? what : `${what} (×${n})`));
  }
}

/**
 * A reader of one JSONL transcript, line by line: only lines holding one of `markers` are decoded;
 * a line that does not parse, or a record its reader trips on, is a note, never an error.
 */
export abstract class JsonlTurnReader {
  protected readonly notes = new Notes();
  private lastBad = -1;
  private lines = 0;

  constructor(private readonly markers: readonly string[]) {}

  line(buf: Buffer, index: number): void {
    this.seen(index);
    if (!this.wants(buf)) return;
    let o: unknown;
    try {
      o = JSON.parse(buf.toString('utf8'));
    } catch {
      this.unparsable(index);
      return;
    }
    this.take(o, index);
  }

  /**
   * The same as {@link line}, in three steps, for an importer that reads the same lines: it calls
   * `seen` for every line, decodes a line once when `wants` says so (or it needs it itself), and
   * hands the value to `take`, or reports `unparsable`. One parse per line instead of two.
   */
  seen(index: number): void {
    this.lines = index + 1;
  }

  wants(buf: Buffer): boolean {
    return this.markers.some((m) => buf.includes(m));
  }

  unparsable(index: number): void {
    this.lastBad = index;
    this.notes.add('unparsable line skipped');
  }

  /** A line whose content blocks past a budget were merged into runs (huge-line.ts): its parts are estimated in bulk. */
  merged(): void {
    this.notes.add(`a line of more than ${MAX_BUILT_BLOCKS_PER_LINE.toLocaleString('en-US')} content blocks: the blocks past that were merged into runs and estimated in bulk`);
  }

  /** `at`: where the line is, so a reader may note a part's place instead of estimating it now (TurnTool.at). */
  take(o: unknown, index: number, at?: LineAt): void {
    if (!isObj(o)) return;
    try {
      this.record(o, index, at);
    } catch {
      this.notes.add(`unreadable ${String(o.type)} record skipped`);
    }
  }

  protected abstract record(o: Record<string, unknown>, index: number, at?: LineAt): void;

  /** The notes so far, and whether the last line was torn (a write in progress). */
  protected readNotes(): string[] {
    const notes = this.notes.list();
    if (this.lastBad === this.lines - 1 && this.lastBad >= 0) notes.push('the last line is torn (a write in progress?): read up to the line before');
    return notes;
  }
}

export const numOr = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null);
