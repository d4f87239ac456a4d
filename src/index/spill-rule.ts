/**
 * The rule a spill was made under, as the index keeps it (`payloads.rule_json`): the sidecar's
 * `rule` (where the limit and each summary setting came from: a flag, the project's or the user's
 * rules file and its key, or the default; docs/config.md) and the settings it ran with (the
 * sidecar's `limitTokens`; the provider, model and template of the guard's own summary run, the
 * sidecar's first). A sidecar is the user's file, or anyone's: every field is checked here, and what
 * is not what the guard writes is left out, so a hostile or old sidecar is indexed as before with
 * the rule unknown.
 *
 * | export | for |
 * | --- | --- |
 * | `spillRuleJson(rule, limitTokens, runs)` | the column's value at listing (undefined: nothing known) |
 * | `parseSpillRule(json)` | the column read back (a row written by any version: checked again) |
 * | `ruleLabel(r)` | one line naming the rule and its settings: the before/after comparison's group |
 */
import { isObj } from '../pipeline/values.js';
import type { SpillRuleInfo, SpillRuleOrigin } from './rows.js';

const SOURCES: ReadonlySet<string> = new Set(['flag', 'project', 'user', 'default']);
const SETTINGS = ['limit', 'template', 'provider', 'model', 'focusArg'] as const;
/** Longest rule key or file path kept (the guard's own bound on a recorded call field). */
export const MAX_RULE_FIELD_CHARS = 1024;
/** Longest provider or model name kept. */
const MAX_NAME_CHARS = 200;
/** A limit beyond this is not one the guard takes (its rules file caps limits far lower). */
const MAX_KEPT_LIMIT_TOKENS = 1_000_000_000;
// Control characters would reach a terminal (`spillway evidence`) or a log line as they are.
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/;
const TEMPLATE_RE = /^[A-Za-z0-9_-]{1,64}$/;

const text = (v: unknown, max: number): string | undefined => (typeof v === 'string' && v.length > 0 && v.length <= max && !CONTROL_RE.test(v) ? v : undefined);

function originOf(v: unknown): SpillRuleOrigin | undefined {
  if (!isObj(v) || typeof v.source !== 'string' || !SOURCES.has(v.source)) return undefined;
  const match = text(v.match, MAX_RULE_FIELD_CHARS);
  const file = text(v.file, MAX_RULE_FIELD_CHARS);
  return { source: v.source as SpillRuleOrigin['source'], ...(match ? { match } : {}), ...(file ? { file } : {}) };
}

function ruleOf(v: unknown): SpillRuleInfo['rule'] {
  const top = originOf(v);
  if (!top || !isObj(v)) return undefined;
  const settings: NonNullable<SpillRuleInfo['rule']>['settings'] = {};
  if (isObj(v.settings)) {
    for (const k of SETTINGS) {
      // Own keys only: a `__proto__` key in the JSON is an own key, never read through the prototype.
      const o = Object.hasOwn(v.settings, k) ? originOf(v.settings[k]) : undefined;
      if (o) settings[k] = o;
    }
  }
  return { ...top, settings };
}

/** What a spill's row keeps of its rule, checked; undefined when the sidecar says nothing usable. */
export function spillRuleInfo(rule: unknown, limitTokens: unknown, runs: unknown): SpillRuleInfo | undefined {
  const r = ruleOf(rule);
  const limit = typeof limitTokens === 'number' && Number.isInteger(limitTokens) && limitTokens > 0 && limitTokens <= MAX_KEPT_LIMIT_TOKENS ? limitTokens : undefined;
  const first = Array.isArray(runs) && isObj(runs[0]) ? runs[0] : undefined;
  const provider = text(first?.provider, MAX_NAME_CHARS);
  const model = text(first?.model, MAX_NAME_CHARS);
  const template = typeof first?.template === 'string' && TEMPLATE_RE.test(first.template) ? first.template : undefined;
  if (!r && limit === undefined && !provider) return undefined;
  return { ...(r ? { rule: r } : {}), ...(limit !== undefined ? { limit } : {}), ...(provider ? { provider } : {}), ...(model ? { model } : {}), ...(template ? { template } : {}) };
}

/** The column's value at listing: the checked rule as JSON, or undefined. */
export function spillRuleJson(rule: unknown, limitTokens: unknown, runs: unknown): string | undefined {
  const info = spillRuleInfo(rule, limitTokens, runs);
  return info ? JSON.stringify(info) : undefined;
}

/** The column read back, checked again (a database is a file too). */
export function parseSpillRule(json: string | null | undefined): SpillRuleInfo | undefined {
  if (!json) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (!isObj(v)) return undefined;
  const info = spillRuleInfo(v.rule, v.limit, v.provider !== undefined ? [{ provider: v.provider, model: v.model, template: v.template }] : undefined);
  return info;
}

/** Where a setting came from, in words: `project .spillway.json "Bash"`, `flag`, `default`. */
export function originLabel(o: SpillRuleOrigin | undefined): string {
  if (!o) return 'unknown';
  return `${o.source}${o.match ? ` "${o.match}"` : ''}`;
}

/**
 * One line naming the rule and the settings a spill ran with: the before/after comparison groups
 * sessions by it. A spill without a recorded rule is `rule unknown` (with its limit when the sidecar had one).
 */
export function ruleLabel(r: SpillRuleInfo | undefined): string {
  if (!r) return 'rule unknown';
  const parts: string[] = [];
  parts.push(r.rule ? `limit from ${originLabel(r.rule)}` : 'rule unknown');
  if (r.limit !== undefined) parts.push(`limit ${r.limit.toLocaleString('en-US')}`);
  if (r.provider) parts.push(`${r.provider}${r.model && r.model !== r.provider ? `/${r.model}` : ''}`);
  if (r.template) parts.push(`template ${r.template}`);
  else if (r.rule?.settings.template) parts.push(`template from ${originLabel(r.rule.settings.template)}`);
  return parts.join(', ');
}
