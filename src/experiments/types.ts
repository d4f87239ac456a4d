/** The words of summary experiments (docs/experiments.md): a dataset, a variant, a run, a budget, a comparison. */
import type { Profile } from '../pipeline/vocab.js';
import type { ReadBackEvidence, SummaryScores } from '../summarize/index.js';

/**
 * Which focus each item is summarized with: `call`, the focus its call had (the agent's intent
 * when it spilled; none when it gave none); `none`, no focus; `fixed:<text>`, that text for every item.
 */
export type FocusPolicy = 'call' | 'none' | `fixed:${string}`;

/** One way to summarize: a template, a provider, a model (absent: the provider's default) and a focus policy. */
export interface Variant {
  template: string;
  provider: string;
  model?: string;
  focus: FocusPolicy;
}

/** Limits a run stops before passing. Tokens are the provider's input + output tokens; dollars need a price. */
export interface Budget {
  usd?: number;
  tokens?: number;
}

/** What the engine needs of one payload; the service reads it (the index's rows, the payload's file, its read-backs). */
export interface ItemInput {
  text: string;
  /** The payload's one token figure and its profile (compression divides by it). */
  payloadTokens?: number;
  profile?: Profile;
  /** The payload's read-backs as lines (read-back recall); empty when none. */
  readBacks: ReadBackEvidence[];
  tool?: string;
  toolInput?: unknown;
}

export interface ItemSource {
  /** Throws when the payload cannot be read: the item is recorded as failed with that error. */
  load(payloadId: string): Promise<ItemInput>;
}

/** A progress event: after each item, and once at the start. */
export interface RunProgress {
  runId: string;
  total: number;
  /** Items with a result (this process and earlier ones, when resumed). */
  done: number;
  ok: number;
  failed: number;
  /** Results taken from the cache in this process. */
  cached: number;
  /** Provider calls this process made (one per item; retries inside the provider not counted). */
  called: number;
  spentUsd: number;
  spentTokens: number;
}

export interface RunReport extends RunProgress {
  status: 'done' | 'cancelled' | 'budget';
  /** Why it stopped before the end: the budget limit it would have passed, or a cancel. */
  stopReason?: string;
  /** Items that already had a result when this process started (a resumed run). */
  resumed: number;
  variant: Variant;
  dataset: string;
}

export type { SummaryScores };
