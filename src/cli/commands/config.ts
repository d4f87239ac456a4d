import type { Command } from 'commander';
import { positiveInt } from '../../integrations/options.js';
import { loadRules, resolveRule, ruleFlagsOf, ruleKeysIn, ruleKeyTarget, RULE_KEYS, type LoadedRules, type ResolvedRule, type RuleKey } from '../../integrations/rules/index.js';
import { ruleKeyOf, ruleSchema, RulesWriteError, setRuleValue } from '../../integrations/rules/config.js';
import { jsonLine, terminalSafe } from '../../pipeline/terminal.js';

/**
 * `spillway config show|set`: the guard rules per tool (docs/config.md). `show` prints, for the
 * folder it runs in, each rule key the files hold (and any `--tool`), every setting's value and
 * where it came from; `set` writes one setting of one rule into the project's or the user's file.
 */

interface ShowOptions {
  json?: boolean;
  tool?: string[];
  limit?: number;
  summarizer?: string;
  provider?: string;
  model?: string;
  template?: string;
  focusArg?: string;
}

const COLUMNS: Record<RuleKey, string> = { limit: 'limit', template: 'template', provider: 'provider', model: 'model', focusArg: 'focus-arg' };

function originText(r: ResolvedRule, k: RuleKey): string {
  const o = r.origins[k];
  return o.match !== undefined ? `${o.source}: ${o.match}` : o.source;
}

function rowsOf(loaded: LoadedRules, tools: string[], flags: ReturnType<typeof ruleFlagsOf>) {
  const keys = [...new Set([...tools, ...ruleKeysIn(loaded).filter((k) => k !== '*'), '*'])];
  return keys.map((key) => {
    const resolved = resolveRule(loaded, ruleKeyTarget(key), flags);
    return { match: key, resolved };
  });
}

async function show(opts: ShowOptions): Promise<void> {
  const cwd = process.cwd();
  const flags = ruleFlagsOf(opts);
  const loaded = await loadRules(cwd, process.env);
  const rows = rowsOf(loaded, opts.tool ?? [], flags);
  if (opts.json) {
    process.stdout.write(
      jsonLine({
        cwd,
        order: ['flag', 'project', 'user', 'default'],
        files: loaded.files.map((f) => ({ scope: f.scope, path: f.path, state: f.state, ...(f.state === 'error' ? { error: f.error } : {}), ...(f.state === 'ok' ? { rules: Object.fromEntries(f.rules) } : {}) })),
        rules: rows.map(({ match, resolved }) => ({
          match,
          settings: Object.fromEntries(RULE_KEYS.map((k) => [k, { value: resolved.values[k] ?? null, ...resolved.origins[k] }])),
        })),
        errors: loaded.errors,
      }) + '\n',
    );
  } else {
    const out: string[] = ['Rules files (the project\'s first):'];
    for (const f of loaded.files) {
      const what = f.state === 'ok' ? `${f.rules.size} rule(s)` : f.state === 'missing' ? 'none' : `LEFT OUT: ${f.error}`;
      out.push(`  ${f.scope.padEnd(8)} ${f.path}  ${what}`);
    }
    out.push('', 'Effective settings, each from the first of: flag, project, user, default.');
    for (const { match, resolved } of rows) {
      out.push(match === '*' ? '* (any other tool)' : match);
      for (const k of RULE_KEYS) {
        const v = resolved.values[k];
        out.push(`  ${COLUMNS[k].padEnd(10)} ${String(v ?? '-').padEnd(24)} ${originText(resolved, k)}`);
      }
    }
    process.stdout.write(terminalSafe(out.join('\n')) + '\n');
  }
  for (const e of loaded.errors) process.stderr.write(`spillway config: ${terminalSafe(e)}\n`);
  // A file that was left out is the user's to fix: say so in the exit status too.
  if (loaded.errors.length) process.exitCode = 1;
}

interface SetOptions {
  project?: boolean;
  user?: boolean;
  unset?: boolean;
}

function usage(message: string): void {
  process.stderr.write(`spillway config: ${terminalSafe(message)}\n`);
  process.exitCode = 2;
}

async function set(tool: string, keyName: string, value: string | undefined, opts: SetOptions): Promise<void> {
  if (opts.project && opts.user) return usage('give --project or --user, not both');
  const key = ruleKeyOf(keyName === 'summarizer' ? 'provider' : keyName);
  if (!key) return usage(`unknown setting ${JSON.stringify(keyName)}: use ${RULE_KEYS.map((k) => COLUMNS[k]).join(', ')}`);
  if (opts.unset && value !== undefined) return usage('give a value or --unset, not both');
  if (!opts.unset && value === undefined) return usage(`give a value for ${COLUMNS[key]}, or --unset`);
  let typed: string | number | undefined;
  if (value !== undefined) {
    typed = key === 'limit' ? Number(value) : value;
    const check = ruleSchema.shape[key].safeParse(typed);
    if (!check.success) return usage(`${COLUMNS[key]} ${JSON.stringify(value)}: ${check.error.issues[0]?.message ?? 'not valid'}`);
  }
  const scope = opts.project ? 'project' : 'user';
  const loaded = await loadRules(process.cwd(), process.env);
  const file = loaded.files.find((f) => f.scope === scope)!.path;
  try {
    const rule = setRuleValue(file, tool, key, typed, { privateNew: scope === 'user' });
    const what = typed === undefined ? `removed ${COLUMNS[key]} of ${tool}` : `set ${COLUMNS[key]} of ${tool} to ${String(typed)}`;
    process.stdout.write(terminalSafe(`${what} in ${file} (${scope})${rule ? '' : `; ${tool} has no setting left, so its rule was removed`}`) + '\n');
  } catch (err) {
    if (err instanceof RulesWriteError) return usage(err.message);
    process.stderr.write(`spillway config: ${terminalSafe((err as Error).message)} (nothing was written)\n`);
    process.exitCode = 1;
  }
}

export function register(program: Command): void {
  const config = program
    .command('config')
    .description('guard rules per tool (limit, template, provider, model, focus argument): show the effective ones here, or set one (see docs/config.md)');
  config
    .command('show')
    .description("print each rule's effective settings for this folder and where each came from (flag, project, user, default)")
    .option('--json', 'one JSON object: the files, each rule key with its settings and their origins, the errors')
    .option('--tool <name>', 'also show this tool (a client\'s tool name, mcp__server__tool, or server/tool); repeatable', (v: string, prev: string[] = []) => [...prev, v])
    .option('--limit <tokens>', 'as the guarding verbs: a flag comes before every rule', positiveInt('--limit'))
    .option('--summarizer <provider>', 'as the guarding verbs')
    .option('--provider <provider>', 'same as --summarizer')
    .option('--model <model>', 'as the guarding verbs')
    .option('--template <name>', 'as the guarding verbs')
    .option('--focus-arg <name>', 'as the guarding verbs')
    .addHelpText(
      'after',
      "\nThe project's file is ./.spillway.json; the user's is <app data>/config.json. A file that is not valid is\n" +
        'named with the field at fault, left out, and the exit status is 1.',
    )
    .action((opts: ShowOptions) => show(opts));
  config
    .command('set')
    .description("set one setting of one tool's rule, written atomically into the user's file (default) or the project's")
    .argument('<tool>', 'the rule key: a tool name (Bash, mcp__fs__read_file), server/tool, server/* or *')
    .argument('<key>', `the setting: ${RULE_KEYS.map((k) => COLUMNS[k]).join(', ')}`)
    .argument('[value]', 'its value (a limit is a whole number of tokens)')
    .option('--project', "write ./.spillway.json, the project's file")
    .option('--user', "write <app data>/config.json, the user's file (the default)")
    .option('--unset', 'remove the setting instead (a rule left empty is removed)')
    .addHelpText('after', '\nExamples:\n  spillway config set Bash limit 4000 --project\n  spillway config set fs/* template errors\n  spillway config set Bash limit --unset --project')
    .action((tool: string, key: string, value: string | undefined, opts: SetOptions) => set(tool, key, value, opts));
}
