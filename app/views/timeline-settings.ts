/**
 * The replay settings of each session's timeline (the guard's limit, strategy and profile, and
 * the compaction threshold it ran with), kept per session in this browser so coming back to a
 * session replays it as it was tuned. Local to the Timeline view on purpose: not app state.
 */
import type { Profile, StrategyName } from '../../src/service/contract.js';

export interface ReplaySettings {
  limit: number;
  /** Undefined: the guard's defaults. */
  strategy?: StrategyName;
  profile?: Profile;
  /** Claude Code's CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, as the session ran. */
  autoCompactPct?: number;
  /** Codex's model_auto_compact_token_limit (or Claude Code's autoCompactWindow). */
  autoCompactLimit?: number;
  autoCompactDisabled?: boolean;
}

export const DEFAULT_REPLAY_SETTINGS: ReplaySettings = { limit: 8_000 };
const KEY = 'spillway.timeline.settings';
/** Sessions remembered; the oldest tuned is forgotten first. */
const KEEP = 200;

function all(): Record<string, ReplaySettings> {
  try {
    const v = JSON.parse(localStorage.getItem(KEY) ?? '{}') as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, ReplaySettings>) : {};
  } catch {
    return {};
  }
}

export function loadReplaySettings(sessionId: string): ReplaySettings {
  const s = all()[sessionId];
  return s && typeof s.limit === 'number' && s.limit > 0 ? { ...DEFAULT_REPLAY_SETTINGS, ...s } : { ...DEFAULT_REPLAY_SETTINGS };
}

export function saveReplaySettings(sessionId: string, s: ReplaySettings): void {
  try {
    const m = all();
    delete m[sessionId];
    m[sessionId] = s;
    const keys = Object.keys(m);
    for (const k of keys.slice(0, Math.max(0, keys.length - KEEP))) delete m[k];
    localStorage.setItem(KEY, JSON.stringify(m));
  } catch {
    /* storage full or refused: the settings hold for this visit only */
  }
}
