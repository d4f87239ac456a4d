import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { PROVIDER_NAMES, validateTemplateName } from '../../summarize/index.js';
import { ANY_TOOL, MAX_RULE_LIMIT_TOKENS, MAX_RULE_MATCH_CHARS, readRulesFile, RULE_KEYS, SERVER_WIDE, type RuleKey, type RulesScope } from './match.js';

/**
 * The rules files' schema (zod), and `spillway config set`'s write. Loaded only when a rules file
 * exists (rules/index.ts imports it on demand), so the hook's entry loads no zod without one.
 *
 * | call | for |
 * | --- | --- |
 * | {@link parseRulesText} | one file's text as rules, or an error naming the file and the field |
 * | {@link planRuleChange} | the text a change to one rule would give a file, nothing written |
 * | {@link writeRulesPlan} | that text written, atomically, only if the file is as it was read |
 * | {@link setRuleValue} | one setting written to one file (the two above) |
 *
 * docs/config.md is the user's description; keep the two together.
 */

export interface Rule {
  limit?: number;
  template?: string;
  provider?: string;
  model?: string;
  focusArg?: string;
}

/** The summarizer names a rule may give: the providers, and `none` for the guard's preview. */
export const RULE_PROVIDERS = [...PROVIDER_NAMES, 'none'] as const;

/** A tool argument's name (as `--focus-arg` takes it; the proxy adds it to every tool's schema). */
const FOCUS_ARG_RE = /^[A-Za-z0-9_.-]{1,64}$/;
// Control characters in a name or a model would reach a terminal or a log line as they are.
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/;

/** A rule's key: a tool name, `server/tool`, `server/*` or `*`. */
export const ruleMatchSchema = z
  .string()
  .min(1, 'a rule key is a tool name, server/tool, server/* or *')
  .max(MAX_RULE_MATCH_CHARS, `a rule key has at most ${MAX_RULE_MATCH_CHARS} characters`)
  .refine((k) => !CONTROL_RE.test(k), 'a rule key may not hold control characters')
  .refine((k) => k === ANY_TOOL || !k.includes('*') || (k.endsWith(SERVER_WIDE) && k.indexOf('*') === k.length - 1 && k.length > SERVER_WIDE.length), 'a * stands alone ("*") or after a server name ("server/*")');

export const ruleSchema = z.strictObject({
  limit: z.number().int().min(1).max(MAX_RULE_LIMIT_TOKENS).optional(),
  template: z
    .string()
    .refine((t) => {
      try {
        validateTemplateName(t);
        return true;
      } catch {
        return false;
      }
    }, 'a template name: letters, digits, - and _, at most 64')
    .optional(),
  provider: z.enum(RULE_PROVIDERS).optional(),
  model: z
    .string()
    .min(1)
    .max(200)
    .refine((m) => !CONTROL_RE.test(m), 'a model name may not hold control characters')
    .optional(),
  focusArg: z.string().regex(FOCUS_ARG_RE, 'a tool argument name: letters, digits, _ . and -, at most 64').optional(),
});

export const rulesFileSchema = z.strictObject({
  $schema: z.string().optional(),
  rules: z.record(ruleMatchSchema, ruleSchema).optional(),
});

export type RulesFileState =
  | { scope: RulesScope; path: string; state: 'missing' }
  | { scope: RulesScope; path: string; state: 'ok'; rules: ReadonlyMap<string, Rule> }
  | { scope: RulesScope; path: string; state: 'error'; error: string };

/** Longest error text kept: a hostile file must not fill a log line. */
const MAX_RULES_ERROR_CHARS = 600;

function issuesText(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 3)
    .map((i) => {
      // A bad rule key: zod says "Invalid key in record" and keeps the reason one level down.
      const why = i.code === 'invalid_key' && i.issues.length ? `rule key ${JSON.stringify(String(i.path.at(-1)))}: ${i.issues.map((x) => x.message).join('; ')}` : i.message;
      return `${i.path.length ? i.path.map(String).join('.') : '(the file)'}: ${why}`;
    })
    .join('; ');
}

/** One file's text as rules, or why not (the error names the file and the field). */
export function parseRulesText(text: string, file: string, scope: RulesScope): RulesFileState {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { scope, path: file, state: 'error', error: cap(`${file}: not JSON (${(err as Error).message})`) };
  }
  // JSON.parse makes `__proto__` an own key, which zod's record passes over without a word.
  const given = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>).rules : undefined;
  if (typeof given === 'object' && given !== null && Object.hasOwn(given, '__proto__')) {
    return { scope, path: file, state: 'error', error: `${file}: rules.__proto__: "__proto__" is not a tool name` };
  }
  const r = rulesFileSchema.safeParse(doc);
  if (!r.success) return { scope, path: file, state: 'error', error: cap(`${file}: ${issuesText(r.error.issues)}`) };
  return { scope, path: file, state: 'ok', rules: new Map(Object.entries(r.data.rules ?? {})) };
}

const cap = (s: string) => (s.length > MAX_RULES_ERROR_CHARS ? `${s.slice(0, MAX_RULES_ERROR_CHARS - 1)}…` : s);

/** The setting names `spillway config set` takes (the rule's keys, and `focus-arg` as the flag spells it). */
export function ruleKeyOf(name: string): RuleKey | undefined {
  const k = name === 'focus-arg' ? 'focusArg' : name;
  return (RULE_KEYS as readonly string[]).includes(k) ? (k as RuleKey) : undefined;
}

/** Why a write was refused: the file or the change is not valid, the file changed since it was read, or it is another account's. */
export type RulesWriteErrorCode = 'INVALID' | 'STALE' | 'FOREIGN';

export class RulesWriteError extends Error {
  constructor(
    message: string,
    readonly code: RulesWriteErrorCode = 'INVALID',
  ) {
    super(message);
    this.name = 'RulesWriteError';
  }
}

/** A change to one rule: settings to set, and settings to remove. */
export interface RuleChange {
  match: string;
  set?: Rule;
  unset?: readonly RuleKey[];
}

/**
 * What a change would do to one rules file: its text now (empty when the file is missing), the text
 * after, and a hash of the text now, so a write can refuse a file that changed in between.
 */
export interface RulesPlan {
  file: string;
  exists: boolean;
  currentText: string;
  /** {@link rulesTextHash} of the file as read. */
  baseHash: string;
  nextText: string;
  /** The rule after the change; undefined when it is left with no setting (and so removed). */
  rule: Rule | undefined;
}

/** The hash a plan and a write compare: of the file's bytes as read, or `absent` for no file. */
export function rulesTextHash(text: string | undefined): string {
  return text === undefined ? 'absent' : `sha256:${crypto.createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

/**
 * The text `file` would have after `change`, keeping the rest of the file; nothing is written. A
 * file that cannot be read or is not valid is refused (fix it by hand first), and so is a change
 * that would make it not valid.
 */
export function planRuleChange(file: string, change: RuleChange): RulesPlan {
  const { match } = change;
  if (match === '__proto__') throw new RulesWriteError('"__proto__" is not a tool name (nothing was written)');
  const t = readRulesFile(file);
  if (t.state === 'error') throw new RulesWriteError(`${t.error} (nothing was written)`);
  let doc: Record<string, unknown> = {};
  if (t.state === 'read') {
    const parsed = parseRulesText(t.text, file, 'project');
    if (parsed.state === 'error') throw new RulesWriteError(`${parsed.error}; fix it by hand first (nothing was written)`);
    doc = JSON.parse(t.text) as Record<string, unknown>;
  }
  const given = (doc.rules ?? {}) as Record<string, Rule>;
  // Rebuilt key by key: the file's object may hold keys that copying with a spread would mishandle.
  const rules: Record<string, Rule> = {};
  for (const [k, v] of Object.entries(given)) rules[k] = v;
  const rule: Rule = { ...(Object.hasOwn(rules, match) ? rules[match] : {}) };
  for (const key of change.unset ?? []) delete rule[key];
  for (const key of RULE_KEYS) {
    const v = change.set?.[key];
    if (v !== undefined) (rule as Record<string, unknown>)[key] = v;
  }
  if (Object.keys(rule).length) rules[match] = rule;
  else delete rules[match];
  const next = { ...doc, rules };
  const check = rulesFileSchema.safeParse(next);
  if (!check.success) throw new RulesWriteError(`${issuesText(check.error.issues)} (nothing was written to ${file})`);
  const currentText = t.state === 'read' ? t.text : '';
  return {
    file,
    exists: t.state === 'read',
    currentText,
    baseHash: rulesTextHash(t.state === 'read' ? t.text : undefined),
    nextText: `${JSON.stringify(next, null, 2)}\n`,
    rule: Object.keys(rule).length ? rule : undefined,
  };
}

/**
 * Write a plan's text, atomically: only while the file is still as the plan read it (its hash is
 * checked again just before the write), else {@link RulesWriteError} `STALE` and nothing written.
 * The text goes to a temp file beside the target and is renamed over it. A new file is made 0600
 * when `privateNew` (the app-data one, in a folder made 0700) and 0644 otherwise (less the umask).
 * An existing file keeps its mode: the temp file gets it before the rename. Its owner cannot be kept
 * by a rename, so a file owned by someone else is refused, and a link is followed so the file it
 * points to is the one replaced. Returns the path written (a link's target).
 */
export function writeRulesPlan(plan: RulesPlan, o: { privateNew: boolean }): string {
  const now = readRulesFile(plan.file);
  const nowHash = now.state === 'read' ? rulesTextHash(now.text) : now.state === 'missing' ? rulesTextHash(undefined) : undefined;
  if (nowHash !== plan.baseHash) {
    throw new RulesWriteError(`${plan.file} changed since it was read${now.state === 'error' ? ` (${now.error})` : ''}: look at it again (nothing was written)`, 'STALE');
  }
  const target = plan.exists ? fs.realpathSync(plan.file) : plan.file;
  writeAtomic(target, plan.nextText, plan.exists ? 'keep' : o.privateNew ? 0o600 : 0o644);
  return target;
}

/**
 * Set (or with `value` undefined, remove) one setting of one rule in `file`, keeping the rest of
 * the file: {@link planRuleChange}, then {@link writeRulesPlan}.
 */
export function setRuleValue(file: string, match: string, key: RuleKey, value: string | number | undefined, o: { privateNew: boolean }): Rule | undefined {
  const plan = planRuleChange(file, value === undefined ? { match, unset: [key] } : { match, set: { [key]: value } as Rule });
  writeRulesPlan(plan, o);
  return plan.rule;
}

function writeAtomic(file: string, text: string, mode: number | 'keep'): void {
  const dir = path.dirname(file);
  let fileMode = typeof mode === 'number' ? mode : 0o644;
  if (mode === 'keep') {
    const st = fs.statSync(file);
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
      throw new RulesWriteError(`${file} belongs to another user: writing it would change its owner (nothing was written)`, 'FOREIGN');
    }
    fileMode = st.mode & 0o777;
  }
  // Only a folder this makes gets a mode: the app-data folder is private, as the index makes it.
  if (!fs.existsSync(dir)) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${Date.now().toString(36)}.tmp`);
  const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, fileMode);
  try {
    fs.writeSync(fd, text);
    // The umask narrowed the open's mode: a kept mode is the file's own, exactly (this is our temp file).
    if (mode === 'keep') fs.fchmodSync(fd, fileMode);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(tmp, file);
  } catch (err) {
    try {
      fs.closeSync(fd);
    } catch {
      /* closed already */
    }
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}
