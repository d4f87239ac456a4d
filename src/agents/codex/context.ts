/** Codex's context rule: the window its turns record, and its auto-compact share of the raw window. */
import type { ClientContextRule, ContextInputs, ContextSettings } from '../adapter.js';

/** Codex compacts at 90% of the raw window when `model_auto_compact_token_limit` is not set. */
export const CODEX_DEFAULT_COMPACT_SHARE = 0.9;
/** Codex reports `model_context_window` as 95% of the model's raw window (codex-rs effective_context_window_percent). */
export const CODEX_EFFECTIVE_SHARE = 0.95;

export function codexContext(_model: string | undefined, turns: readonly ContextInputs[], o: ContextSettings): ClientContextRule {
  const window = turns.find((t) => t.window)?.window ?? null;
  if (o.autoCompactLimit !== undefined) {
    return { window, windowSource: window ? 'read' : 'inferred', trigger: o.autoCompactLimit, triggerSource: 'read', when: 'before-call', keeps: 'summary', how: 'model_auto_compact_token_limit' };
  }
  const trigger = window ? Math.floor((window / CODEX_EFFECTIVE_SHARE) * CODEX_DEFAULT_COMPACT_SHARE) : null;
  return { window, windowSource: window ? 'read' : 'inferred', trigger, triggerSource: 'inferred', when: 'before-call', keeps: 'summary', how: '90% of the raw window (model_auto_compact_token_limit not known)' };
}
