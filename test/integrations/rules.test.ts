import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GuardRules, loadRules, noRules, resolveRule, ruleFlagsOf, type LoadedRules } from '../../src/integrations/rules/index.js';
import { matchOrder, MAX_RULE_LIMIT_TOKENS, MAX_RULES_FILE_BYTES, readRulesFile, strictestLimit, toolTarget } from '../../src/integrations/rules/match.js';
import { parseRulesText, RulesWriteError, setRuleValue, type Rule } from '../../src/integrations/rules/config.js';
import { DEFAULT_LIMIT_TOKENS } from '../../src/pipeline/limits.js';
import { tmpDir } from './helpers.js';

/** A project folder and an app-data folder, each with the given rules file (text, or an object written as JSON). */
function place(project?: unknown, user?: unknown) {
  const root = tmpDir('spillway-rules-');
  const cwd = path.join(root, 'project');
  const home = path.join(root, 'home');
  fs.mkdirSync(cwd);
  fs.mkdirSync(home);
  const write = (file: string, v: unknown) => {
    if (v !== undefined) fs.writeFileSync(file, typeof v === 'string' ? v : JSON.stringify(v));
  };
  write(path.join(cwd, '.spillway.json'), project);
  write(path.join(home, 'config.json'), user);
  return { root, cwd, home, env: { SPILLWAY_HOME: home } as NodeJS.ProcessEnv };
}

const loaded = async (project?: unknown, user?: unknown): Promise<LoadedRules> => {
  const p = place(project, user);
  return loadRules(p.cwd, p.env);
};

describe('matching: which rule keys a call matches, most specific first', () => {
  it('a built-in tool: its name, then *', () => {
    expect(matchOrder(toolTarget('Bash'))).toEqual(['Bash', '*']);
  });

  it("a client's MCP name: the name, server/tool, server/*, *", () => {
    expect(toolTarget('mcp__fs__read_file')).toEqual({ names: ['mcp__fs__read_file'], server: 'fs', serverTool: 'read_file' });
    expect(matchOrder(toolTarget('mcp__fs__read_file'))).toEqual(['mcp__fs__read_file', 'fs/read_file', 'fs/*', '*']);
    // The server is up to the first `__`, as Claude Code and Codex join them.
    expect(toolTarget('mcp__my_srv__do__it')).toMatchObject({ server: 'my_srv', serverTool: 'do__it' });
  });

  it("behind the proxy: the client's name and the server's own, then server/tool, server/*, *", () => {
    expect(matchOrder(toolTarget('read_file', 'fs', 'mcp__fs__read_file'))).toEqual(['mcp__fs__read_file', 'read_file', 'fs/read_file', 'fs/*', '*']);
  });
});

describe('resolution: per setting, flag, then project, then user, then default', () => {
  it('takes each setting from the first source that gives it, and names the source and the key', async () => {
    const l = await loaded(
      { rules: { Bash: { limit: 4000 }, '*': { template: 'errors' } } },
      { rules: { Bash: { limit: 9000, model: 'm-user', template: 'user-t' }, '*': { provider: 'none' } } },
    );
    const r = resolveRule(l, toolTarget('Bash'));
    expect(r.values).toMatchObject({ limit: 4000, template: 'errors', provider: 'none', model: 'm-user' });
    expect(r.origins.limit).toMatchObject({ source: 'project', match: 'Bash' });
    // The project's `*` comes before the user's exact `Bash`: sources first, then keys within a source.
    expect(r.origins.template).toMatchObject({ source: 'project', match: '*' });
    expect(r.origins.provider).toMatchObject({ source: 'user', match: '*' });
    expect(r.origins.model).toMatchObject({ source: 'user', match: 'Bash' });
    expect(r.origins.focusArg).toEqual({ source: 'default' });
    // A flag comes before every file.
    const f = resolveRule(l, toolTarget('Bash'), ruleFlagsOf({ limit: 100, summarizer: 'structural' }));
    expect(f.values).toMatchObject({ limit: 100, provider: 'structural' });
    expect(f.origins.limit).toEqual({ source: 'flag' });
    // Another tool: only the `*` rules, and the defaults.
    const other = resolveRule(l, toolTarget('Read'));
    expect(other.values.limit).toBe(DEFAULT_LIMIT_TOKENS);
    expect(other.origins.limit).toEqual({ source: 'default' });
    expect(other.values.template).toBe('errors');
  });

  it('inside a file: exact name, then server/tool, then server/*, then *', async () => {
    const rules = { 'mcp__fs__read_file': { limit: 1000 }, 'fs/read_file': { limit: 2000, template: 'a' }, 'fs/*': { limit: 3000, template: 'b', model: 'x' }, '*': { limit: 4000, focusArg: 'q' } };
    const l = await loaded({ rules });
    const r = resolveRule(l, toolTarget('mcp__fs__read_file'));
    expect(r.values).toMatchObject({ limit: 1000, template: 'a', model: 'x', focusArg: 'q' });
    expect([r.origins.limit.match, r.origins.template.match, r.origins.model.match, r.origins.focusArg.match]).toEqual(['mcp__fs__read_file', 'fs/read_file', 'fs/*', '*']);
    expect(resolveRule(l, toolTarget('mcp__fs__write_file')).values.limit).toBe(3000);
    expect(resolveRule(l, toolTarget('mcp__git__log')).values.limit).toBe(4000);
  });

  it('without files: the defaults (the provider from SPILLWAY_SUMMARIZER, its default model)', () => {
    const r = resolveRule(noRules({ SPILLWAY_SUMMARIZER: 'anthropic' }), toolTarget('Bash'));
    expect(r.values.provider).toBe('anthropic');
    expect(r.values.model).toMatch(/^claude-/);
    expect(Object.values(r.origins).every((o) => o.source === 'default')).toBe(true);
  });

  it('leaves a bad file out with an error naming the file and the field; the other file and the defaults still apply', async () => {
    const p = place({ rules: { Bash: { limit: 4000, limt: 5 } } }, { rules: { Bash: { limit: 7000 } } });
    const l = await loadRules(p.cwd, p.env);
    expect(l.errors).toHaveLength(1);
    expect(l.errors[0]).toContain(path.join(p.cwd, '.spillway.json'));
    expect(l.errors[0]).toMatch(/rules\.Bash.*limt/);
    expect(resolveRule(l, toolTarget('Bash')).values.limit).toBe(7000);
  });

  it('says what is wrong, field by field', () => {
    const err = (doc: unknown) => {
      const r = parseRulesText(typeof doc === 'string' ? doc : JSON.stringify(doc), '/p/.spillway.json', 'project');
      return r.state === 'error' ? r.error : 'valid';
    };
    expect(err('{ not json')).toMatch(/^\/p\/\.spillway\.json: not JSON/);
    expect(err({ rules: { Bash: { limit: 0 } } })).toMatch(/rules\.Bash\.limit/);
    expect(err({ rules: { Bash: { limit: MAX_RULE_LIMIT_TOKENS + 1 } } })).toMatch(/rules\.Bash\.limit/);
    expect(err({ rules: { Bash: { limit: 12.5 } } })).toMatch(/rules\.Bash\.limit/);
    expect(err({ rules: { Bash: { provider: 'gpt' } } })).toMatch(/rules\.Bash\.provider/);
    expect(err({ rules: { Bash: { template: '../etc/passwd' } } })).toMatch(/rules\.Bash\.template/);
    expect(err({ rules: { Bash: { focusArg: 'a b' } } })).toMatch(/rules\.Bash\.focusArg/);
    expect(err({ rules: { 'fs*': {} } })).toMatch(/rules\.fs\*/);
    expect(err({ rules: { '*/x': {} } })).toMatch(/stands alone/);
    expect(err('{"rules":{"__proto__":{"limit":5}}}')).toMatch(/__proto__/);
    expect(err({ rule: {} })).toMatch(/Unrecognized key/);
    expect(err({ rules: [] })).toMatch(/rules/);
    expect(err({ $schema: 'x', rules: { 'fs/*': { limit: 10 }, '*': {} } })).toBe('valid');
  });

  it('never blocks on a FIFO, and refuses a folder or an oversized file', async () => {
    const p = place();
    const fifo = path.join(p.cwd, '.spillway.json');
    execFileSync('mkfifo', [fifo]);
    expect(readRulesFile(fifo)).toMatchObject({ state: 'error', error: expect.stringMatching(/not a regular file/) });
    expect((await loadRules(p.cwd, p.env)).errors[0]).toMatch(/not a regular file/);
    fs.rmSync(fifo);
    fs.mkdirSync(fifo);
    expect(readRulesFile(fifo).state).toBe('error');
    fs.rmdirSync(fifo);
    fs.writeFileSync(fifo, `{"rules":{},"$schema":"${'x'.repeat(MAX_RULES_FILE_BYTES)}"}`);
    expect(readRulesFile(fifo)).toMatchObject({ state: 'error', error: expect.stringMatching(/more than/) });
  });

  it('makes one summarizer per provider, model and template, and none for `none`', async () => {
    const l = await loaded({ rules: { Bash: { provider: 'none' }, Read: { template: 'errors' }, Grep: { template: 'errors' } } });
    const rules = new GuardRules(l, {});
    expect(rules.forCall('Bash').summarize).toBeUndefined();
    expect(rules.forCall('Read').summarize).toBeDefined();
    expect(rules.forCall('Read').summarize).toBe(rules.forCall('Grep').summarize);
    expect(rules.forCall('Read').summarize).not.toBe(rules.forCall('Glob').summarize);
    expect(rules.forCall('Bash').rule).toMatchObject({ source: 'default', settings: { provider: { source: 'project', match: 'Bash' } } });
  });
});

describe("the fast path's bound", () => {
  const limitArb = fc.oneof(fc.integer({ min: -5, max: 3 * DEFAULT_LIMIT_TOKENS }), fc.double({ noNaN: false }), fc.constantFrom('4000', null, true, MAX_RULE_LIMIT_TOKENS + 1));
  const ruleArb = fc.oneof(fc.record({ limit: limitArb }, { requiredKeys: [] }), fc.record({ limit: limitArb, template: fc.constantFrom('errors', 'x y') }), fc.constant('junk'), fc.record({ limit: limitArb, typo: fc.constant(1) }));
  const keyArb = fc.constantFrom('Bash', 'Read', 'mcp__fs__read_file', 'fs/read_file', 'fs/*', '*', 'git/*');
  const fileArb = fc.oneof(
    { weight: 6, arbitrary: fc.dictionary(keyArb, ruleArb, { maxKeys: 4 }).map((rules) => JSON.stringify({ rules })) },
    { weight: 1, arbitrary: fc.constantFrom('{', '[]', '"x"', '{"rules":5}', '') },
  );

  it('is never above the limit the full resolution gives, whatever the files hold', async () => {
    await fc.assert(
      fc.asyncProperty(fc.option(fileArb), fc.option(fileArb), fc.constantFrom('Bash', 'Read', 'mcp__fs__read_file', 'mcp__fs__write_file', 'Glob'), async (project, user, tool) => {
        const p = place(project ?? undefined, user ?? undefined);
        const texts = [project, user].filter((t): t is string => t !== null);
        const bound = strictestLimit(texts, toolTarget(tool));
        const full = resolveRule(await loadRules(p.cwd, p.env), toolTarget(tool)).values.limit;
        if (bound === undefined) {
          // No rule states a limit for this tool: the full resolution has the default too.
          expect(full).toBe(DEFAULT_LIMIT_TOKENS);
        } else if (!Number.isNaN(bound)) {
          expect(Math.min(bound, DEFAULT_LIMIT_TOKENS)).toBeLessThanOrEqual(full);
        }
        fs.rmSync(p.root, { recursive: true, force: true });
      }),
      { numRuns: 150 },
    );
  });
});

describe('config set: one setting, written atomically', () => {
  it('makes a new user file 0600 in a private folder, and keeps the mode of an existing file', () => {
    const p = place();
    const user = path.join(p.home, 'deeper', 'config.json');
    setRuleValue(user, 'Bash', 'limit', 4000, { privateNew: true });
    expect(fs.statSync(user).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(user)).mode & 0o777).toBe(0o700);
    const project = path.join(p.cwd, '.spillway.json');
    fs.writeFileSync(project, JSON.stringify({ $schema: 'keep me', rules: { Read: { template: 'errors' } } }));
    fs.chmodSync(project, 0o640);
    setRuleValue(project, 'Bash', 'limit', 4000, { privateNew: false });
    expect(fs.statSync(project).mode & 0o777).toBe(0o640);
    expect(JSON.parse(fs.readFileSync(project, 'utf8'))).toEqual({ $schema: 'keep me', rules: { Read: { template: 'errors' }, Bash: { limit: 4000 } } });
    // Removing the last setting removes the rule.
    expect(setRuleValue(project, 'Bash', 'limit', undefined, { privateNew: false })).toBeUndefined();
    expect(JSON.parse(fs.readFileSync(project, 'utf8')).rules).toEqual({ Read: { template: 'errors' } });
    // No temp file left beside it.
    expect(fs.readdirSync(p.cwd)).toEqual(['.spillway.json']);
  });

  it('writes through a link to the file it points to, and refuses to touch a file that is not valid', () => {
    const p = place();
    const real = path.join(p.root, 'dotfiles-config.json');
    fs.writeFileSync(real, '{"rules":{}}');
    const link = path.join(p.home, 'config.json');
    fs.symlinkSync(real, link);
    setRuleValue(link, '*', 'template', 'errors', { privateNew: true });
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(fs.readFileSync(real, 'utf8')).rules).toEqual({ '*': { template: 'errors' } } satisfies Record<string, Rule>);
    const bad = path.join(p.cwd, '.spillway.json');
    fs.writeFileSync(bad, '{"rules":{"Bash":{"limit":"x"}}}');
    expect(() => setRuleValue(bad, 'Bash', 'limit', 5, { privateNew: false })).toThrow(RulesWriteError);
    expect(fs.readFileSync(bad, 'utf8')).toBe('{"rules":{"Bash":{"limit":"x"}}}');
    expect(() => setRuleValue(path.join(p.cwd, 'new.json'), 'a*', 'limit', 5, { privateNew: false })).toThrow(/nothing was written/);
    expect(fs.existsSync(path.join(p.cwd, 'new.json'))).toBe(false);
  });
});

describe('the Codex hook', () => {
  it("applies its shell's rule (named Bash or exec_command) and records it; a bad file is a note", async () => {
    const { handleCodexHook } = await import('../../src/integrations/hooks/codex.js');
    const p = place({ rules: { exec_command: { limit: 50, provider: 'none', focusArg: 'command' } } });
    const stdin = JSON.stringify({ session_id: 's1', cwd: p.cwd, hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: { command: 'cat words.txt' }, tool_response: 'word '.repeat(200), tool_use_id: 'call_1' });
    const rules = async (cwd: string | undefined) => new GuardRules(await loadRules(cwd ?? p.cwd, p.env), {});
    const out = await handleCodexHook(stdin, { guard: { profile: 'o200k', env: p.env }, sessionDir: path.join(p.root, 'session'), rules });
    expect(out.output?.decision).toBe('block');
    const meta = JSON.parse(fs.readFileSync(out.guard!.metaPath!, 'utf8')) as { limitTokens: number; intent?: string; rule?: unknown };
    expect(meta).toMatchObject({ limitTokens: 50, intent: 'cat words.txt', rule: { source: 'project', match: 'exec_command' } });
    // Without the rule the same output fits the default.
    expect((await handleCodexHook(stdin, { guard: { profile: 'o200k', env: p.env }, sessionDir: path.join(p.root, 's2') })).output).toBeUndefined();
    fs.writeFileSync(path.join(p.cwd, '.spillway.json'), '{"rules":{"Bash":{"limit":"x"}}}');
    const bad = await handleCodexHook(stdin, { guard: { profile: 'o200k', env: p.env }, sessionDir: path.join(p.root, 's3'), rules });
    expect(bad.output).toBeUndefined();
    expect(bad.note).toMatch(/rules\.Bash\.limit/);
  });
});

describe('the default model', () => {
  it("is the provider's variable, else its default, and is left to the provider", () => {
    const env = { SPILLWAY_ANTHROPIC_MODEL: 'claude-from-env' };
    const r = resolveRule(noRules(env), toolTarget('Bash'), { provider: 'anthropic' });
    expect(r.values.model).toBe('claude-from-env');
    expect(r.origins.model).toEqual({ source: 'default' });
    expect(resolveRule(noRules({}), toolTarget('Bash'), { provider: 'local' }).values.model).toBeUndefined();
    expect(resolveRule(noRules({}), toolTarget('Bash'), { provider: 'openai', model: 'm' }).values.model).toBe('m');
  });
});
