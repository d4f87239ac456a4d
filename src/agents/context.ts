/** The context rule of a client we know no rule for: no window, a trigger only when the user set one. */
import type { ClientContextRule, ContextInputs, ContextSettings } from './adapter.js';

export function unknownContext(_model: string | undefined, _turns: readonly ContextInputs[], o: ContextSettings): ClientContextRule {
  return { window: null, windowSource: 'inferred', trigger: o.autoCompactLimit ?? null, triggerSource: o.autoCompactLimit ? 'read' : 'inferred', when: 'after-call', keeps: 'summary-and-newest', how: 'no rule known for this client' };
}
