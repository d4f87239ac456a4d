/**
 * OpenCode's context rule, as its 1.18.33 binary reads (SessionCompaction.isOverflow): after a call,
 * it compacts when the call's tokens (its `total`, or input + output + cache read + cache write) reach
 * the model's `limit.input` less a reserve, or else `limit.context` less the model's output limit;
 * never when `compaction.auto` is false or the context limit is 0. Those limits come from its model
 * data (models.dev) or the provider's config, and are not in its database: the window is not known here.
 */
import type { ClientContextRule, ContextInputs, ContextSettings } from '../adapter.js';

export function opencodeContext(_model: string | undefined, turns: readonly ContextInputs[], o: ContextSettings): ClientContextRule {
  const window = turns.find((t) => t.window)?.window ?? null;
  const windowSource = window ? 'read' : 'inferred';
  if (o.autoCompactDisabled) return { window, windowSource, trigger: null, triggerSource: 'read', when: 'after-call', keeps: 'summary-and-newest', how: 'compaction.auto is false' };
  if (o.autoCompactLimit !== undefined) return { window, windowSource, trigger: o.autoCompactLimit, triggerSource: 'read', when: 'after-call', keeps: 'summary-and-newest', how: 'the limit given' };
  return {
    window,
    windowSource,
    trigger: null,
    triggerSource: 'inferred',
    when: 'after-call',
    keeps: 'summary-and-newest',
    how: "the model's context limit less its output limit (its model data, not in opencode.db): not known here",
  };
}
