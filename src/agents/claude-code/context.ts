/**
 * Claude Code's context rule: its window by model, and the auto-compact trigger below it (docs/timeline.md says
 * which parts were seen in a run).
 */
import type { ClientContextRule, ContextInputs, ContextSettings } from '../adapter.js';

/** Claude Code keeps this much below the effective window (observed: 980,000 → 967,000 with 2.1.328). */
export const CLAUDE_AUTOCOMPACT_BUFFER = 13_000;
/** Claude Code's effective window is the model's less this output reserve (observed 1,000,000 → 980,000). */
export const CLAUDE_OUTPUT_RESERVE = 20_000;

export function claudeContext(model: string | undefined, _turns: readonly ContextInputs[], o: ContextSettings): ClientContextRule {
  const m = model ?? '';
  const big = /\[1m\]|-1m\b/i.test(m) || /^claude-opus-5/.test(m);
  const window = big ? 1_000_000 : 200_000;
  const effective = window - CLAUDE_OUTPUT_RESERVE;
  let trigger: number | null = effective - CLAUDE_AUTOCOMPACT_BUFFER;
  let how = `effective window ${effective.toLocaleString('en-US')} (window less a ${CLAUDE_OUTPUT_RESERVE.toLocaleString('en-US')} output reserve) less ${CLAUDE_AUTOCOMPACT_BUFFER.toLocaleString('en-US')}`;
  let triggerSource: ClientContextRule['triggerSource'] = 'inferred';
  if (o.autoCompactPct !== undefined && o.autoCompactPct > 0 && o.autoCompactPct < 100) {
    // The override only ever lowers the trigger.
    const byPct = Math.floor((effective * o.autoCompactPct) / 100);
    if (byPct < trigger) {
      trigger = byPct;
      how += `, lowered to ${o.autoCompactPct}% of the effective window by CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`;
    }
    triggerSource = 'read';
  }
  if (o.autoCompactLimit !== undefined) {
    trigger = Math.min(trigger, o.autoCompactLimit);
    how += `, autoCompactWindow ${o.autoCompactLimit}`;
    triggerSource = 'read';
  }
  const given = o.autoCompactPct !== undefined || o.autoCompactLimit !== undefined || o.autoCompactDisabled;
  if (!given && o.observed && trigger !== null && o.observed.atMost < trigger) {
    // It compacted by itself below the default trigger: a lower one was set (the transcript does not
    // record CLAUDE_AUTOCOMPACT_PCT_OVERRIDE). The smallest whole percentage the compactions allow.
    const { above, atMost, count } = o.observed;
    let pct: number | undefined;
    for (let p = 1; p < 100 && pct === undefined; p++) {
      const t = Math.floor((effective * p) / 100);
      if (t > above && t <= atMost) pct = p;
    }
    const seen = `${count} auto compaction${count === 1 ? '' : 's'} at ${atMost.toLocaleString('en-US')} tokens, below the default ${trigger.toLocaleString('en-US')}`;
    if (pct !== undefined) {
      trigger = Math.floor((effective * pct) / 100);
      how = `${pct}% of the effective window ${effective.toLocaleString('en-US')}: the session's ${seen} (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=${pct} fits them; set it below if it was another setting)`;
    } else {
      trigger = atMost;
      how = `the session's ${seen}; no whole CLAUDE_AUTOCOMPACT_PCT_OVERRIDE fits them (autoCompactWindow?)`;
    }
  }
  if (o.autoCompactDisabled) {
    trigger = null;
    how = 'DISABLE_AUTO_COMPACT: never compacts by itself';
    triggerSource = 'read';
  }
  return { window, windowSource: 'inferred', trigger, triggerSource, when: 'before-call', keeps: 'summary-and-newest', how };
}
