/**
 * The guard's message for a saved payload under a replayed limit, strategy and profile, built by
 * the real guard offline: no summary provider (so the library's default, a preview), and a store
 * kept in memory and dropped, so nothing is written. The replay asks for it per slider move, so
 * each (payload, settings) is built once and kept; a request builds what it can within a budget
 * and says how many it could not (docs/timeline.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  DEFAULT_PROFILE,
  DEFAULT_STRATEGY,
  SpillStoreError,
  guardLargeResult,
  openUntrustedSync,
  type NameCandidate,
  type Profile,
  type SpillBody,
  type SpillKey,
  type SpillStore,
  type StrategyName,
} from '../pipeline/index.js';
import { estimateText, type PayloadContent } from '../index/index.js';

/** Entries kept: one number each, so a big session's results at a few dozen settings fit. */
const KEEP = 50_000;
/** A text the guard passes is estimated when it is at most this long (a linked rest is short); a longer one passes whole. */
const PASSED_ESTIMATE_CHARS = 32 * 1024;
/** A payload bigger than this is not read back to rebuild its message (its saved message or the usual size stands). */
const MAX_READ_BYTES = 64 * 1024 * 1024;

export interface GuardSettings {
  limit: number;
  strategy: StrategyName;
  profile: Profile;
}

/**
 * What the guard gives the model for a payload: its message, or (`passed`) the text it passes, which
 * for a payload whose assets the session's guard cut is the rest without them (the saved linked form):
 * the asset is cut again. Null when it was not run on it (far below the limit: passed whole).
 */
export type GuardMessage = { tokens: number; passed?: boolean } | null;

/** A result is handed to the guard when some estimate of it comes this close to the limit (the guard decides, not the index). */
export const GUARD_CANDIDATE_SHARE = 0.8;

/** What the replay knows of a payload to decide whether the real guard is asked about it. */
export interface GuardCandidate {
  payloadId: string;
  /** The largest of the index's estimates of the whole payload. */
  most: number;
  /**
   * Whether its text can be replayed through the guard: not a binary payload (read back as text it
   * is not what the guard saw; its saved message stands), not a result whose images reached the model
   * as images (its base64 as text is not what the guard measured), and one Spillway's guard can
   * reach in its client at all (reGuardable).
   */
  guardable: boolean;
}

/** The one rule for which saved payloads the replay re-guards (see GuardCandidate.guardable). */
export function reGuardable(p: { binary: boolean; images: number; action: string; reached: boolean }): boolean {
  return p.reached && !p.binary && !(p.images > 0 && p.action === 'pass');
}

/**
 * The real guard's answer for a payload at these settings, as every replay reads it (the Timeline's
 * scenarios, the tuner's decisions): undefined when it is not re-guarded (its size and saved message
 * decide) or not built yet; null when every estimate is far below the limit (the guard passes it
 * whole; the units of the API's deltas may differ, the guard decides in its own); else its message.
 */
export function guardAnswer(guard: OfflineGuard, c: GuardCandidate, s: GuardSettings): GuardMessage | undefined {
  if (!c.guardable) return undefined;
  if (c.most < s.limit * GUARD_CANDIDATE_SHARE) return null;
  return guard.known(c.payloadId, s);
}

/** The tuner's word for guardAnswer: a payload not re-guarded is decided by its size, as the replay does. */
export function guardDecision(guard: OfflineGuard, c: GuardCandidate & { tokens: number; reached: boolean; binary?: boolean }, s: GuardSettings): 'spill' | 'pass' | 'pending' {
  // Out of the guard's reach the client's own treatment stands at every limit (the replay's `unguarded`).
  if (!c.reached) return 'pass';
  // Binary is saved at any size and any limit (the guard never lets raw bytes reach the model).
  if (c.binary) return 'spill';
  const m = guardAnswer(guard, c, s);
  if (m === undefined) return c.guardable ? 'pending' : c.tokens > s.limit ? 'spill' : 'pass';
  return m === null ? 'pass' : 'spill';
}

export function settingsOf(limit: number, o: { strategy?: StrategyName; profile?: Profile }): GuardSettings {
  return { limit, strategy: o.strategy ?? DEFAULT_STRATEGY, profile: o.profile ?? DEFAULT_PROFILE };
}

/** A store that keeps nothing past the call: the guard needs somewhere to publish, the replay only its message. */
class DiscardStore implements SpillStore {
  private readonly keys = new Set<SpillKey>();
  constructor(readonly location: string) {}
  describe(key: SpillKey): string {
    return path.join(this.location, key);
  }
  async putPayload(candidates: Iterable<NameCandidate>, body: () => SpillBody): Promise<NameCandidate> {
    void body;
    for (const c of candidates) {
      if (this.keys.has(c.key)) continue;
      this.keys.add(c.key);
      return c;
    }
    throw new SpillStoreError('FAILED', 'no free name');
  }
  async putSidecar(key: SpillKey): Promise<void> {
    if (this.keys.has(key)) throw new SpillStoreError('EXISTS', `${key} exists`, key);
    this.keys.add(key);
  }
  async movePayload(from: SpillKey, candidates: Iterable<NameCandidate>): Promise<NameCandidate> {
    this.keys.delete(from);
    return this.putPayload(candidates, () => '');
  }
  async putAsset(key: SpillKey): Promise<{ reused: boolean }> {
    const reused = this.keys.has(key);
    this.keys.add(key);
    return { reused };
  }
  async read(key: SpillKey): Promise<Uint8Array> {
    throw new SpillStoreError('NOT_FOUND', key, key);
  }
  async stat(): Promise<{ bytes: number } | null> {
    return null;
  }
}

export interface GuardTarget {
  payloadId: string;
  tool: string;
  /** The session folder the message names (as the guard would have written there). */
  sessionPath: string;
}

export class OfflineGuard {
  private readonly kept = new Map<string, GuardMessage>();
  /** Guard runs done, for the bench and the tests. */
  runs = 0;

  constructor(private readonly content: (payloadId: string) => Promise<PayloadContent>) {}

  private key(payloadId: string, s: GuardSettings): string {
    return `${payloadId}\0${s.limit}\0${s.strategy}\0${s.profile}`;
  }

  /** The message kept for these settings; undefined when not built yet. */
  known(payloadId: string, s: GuardSettings): GuardMessage | undefined {
    return this.kept.get(this.key(payloadId, s));
  }

  /**
   * Builds the messages not kept yet, biggest first, until `budgetMs` is spent. Returns how many
   * are left to build. A payload that cannot be read back keeps no entry (the caller falls back).
   */
  async build(targets: GuardTarget[], s: GuardSettings, budgetMs: number): Promise<number> {
    const start = performance.now();
    let left = 0;
    for (const t of targets) {
      if (this.kept.has(this.key(t.payloadId, s))) continue;
      if (performance.now() - start > budgetMs) {
        left++;
        continue;
      }
      const m = await this.run(t, s);
      if (m !== undefined) this.remember(this.key(t.payloadId, s), m);
    }
    return left;
  }

  private async run(t: GuardTarget, s: GuardSettings): Promise<GuardMessage | undefined> {
    let text: string;
    try {
      text = await this.text(t.payloadId);
    } catch {
      return undefined;
    }
    this.runs++;
    const r = await guardLargeResult(text, {
      sessionPath: t.sessionPath,
      toolName: t.tool,
      limitTokens: s.limit,
      strategy: s.strategy,
      profile: s.profile,
      store: new DiscardStore(t.sessionPath),
    });
    // Passed: the saved text as it is. For a payload whose assets were cut that is the small rest with
    // their references (the asset is cut again); a big text passes whole (estimating it would cost more
    // than the replay needs: its size is known).
    if (!r) return text.length <= PASSED_ESTIMATE_CHARS ? { tokens: estimateText(text, s.profile), passed: true } : null;
    // An internal error still hands back a message (the guard never lets the payload through): its size is what the model would get.
    return { tokens: estimateText(r.message, s.profile) };
  }

  private async text(payloadId: string): Promise<string> {
    const c = await this.content(payloadId);
    if (c.type === 'text') return c.text;
    if (c.bytes > MAX_READ_BYTES) throw new Error('too big to read back');
    // An indexed spill file: opened the one safe way (it could have become a FIFO or a link since the scan).
    const { fd } = openUntrustedSync(c.path);
    try {
      return fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  }

  private remember(key: string, m: GuardMessage): void {
    this.kept.set(key, m);
    if (this.kept.size > KEEP) this.kept.delete(this.kept.keys().next().value!);
  }
}
