import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { handleClaudeCodeHook } from '../../src/integrations/hooks/claude-code.js';
import { eventPasses } from '../../src/cli/hook-entry.js';
import { HookEvent } from '../../src/integrations/verb-input.js';
import { GuardRules, loadRules } from '../../src/integrations/rules/index.js';
import { MAX_RULE_LIMIT_TOKENS } from '../../src/integrations/rules/match.js';
import { DEFAULT_LIMIT_TOKENS } from '../../src/pipeline/limits.js';
import { tmpDir } from './helpers.js';

/**
 * Rules files are input Spillway did not write: a project's `.spillway.json` comes with whatever
 * repository was cloned. Whatever they hold, the hook never throws and never lets through a result
 * over every limit the files could set; the fast path never says "pass" for it either.
 */

// Numbers a limit may be: valid ones (kept small, so the payload that beats them stays small), and
// every kind of invalid one. The generator never makes a valid limit above 40,000 (see `biggest`).
const numArb = fc.oneof(
  fc.integer({ min: -10, max: 40_000 }),
  fc.double({ min: -1e6, max: 40_000 }),
  fc.constantFrom(0, -1, 1.5, MAX_RULE_LIMIT_TOKENS + 1, 2 ** 53, 1e300, Number.MAX_VALUE),
);
const strArb = fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('errors', 'default', '../../etc/passwd', 'a\u0000b', '\u001b[31mred', 'x'.repeat(300)));
const ruleArb = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      { limit: fc.oneof(numArb, strArb, fc.constant(null)), template: strArb, provider: fc.constantFrom('structural', 'none', 'off', 'anthropic', 'openai', 'local', 'bogus', ''), model: strArb, focusArg: fc.oneof(strArb, fc.constantFrom('q', 'description')) },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ limit: numArb, extra: fc.anything() }) },
  { weight: 1, arbitrary: fc.anything() },
);
const keyArb = fc.oneof(fc.constantFrom('Bash', '*', 'Read', '__proto__', 'constructor', 'toString', 'mcp__x__y', 'Bash/*', '*/*', '', 'Ba*', 'hasOwnProperty'), fc.string({ maxLength: 10 }));
const docArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.dictionary(keyArb, ruleArb, { maxKeys: 5 }).map((rules) => JSON.stringify({ rules })) },
  { weight: 1, arbitrary: fc.dictionary(keyArb, ruleArb, { maxKeys: 3 }).map((rules) => `{"rules":${JSON.stringify(rules)},"rules":{"__proto__":{"limit":1}}}`) },
  { weight: 1, arbitrary: fc.anything().map((v) => JSON.stringify(v) ?? 'undefined') },
  { weight: 1, arbitrary: fc.string({ maxLength: 50 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 20_000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '{"rules":{"Bash":{"limit":100}}}',
      '{"rules":{"*":{"limit":1}}}',
      '\u0000\u0001',
      // Limits no payload reaches: a file must not switch the guard off.
      '{"rules":{"*":{"limit":1e300}}}',
      '{"rules":{"*":{"limit":1000001}}}',
      '{"rules":{"Bash":{"limit":1e999}},"x":1}',
      '{"rules":{"*":{"limit":9007199254740993}}}',
      undefined,
    ),
  },
);

/** The largest valid limit the texts could hold: any number in them up to the rules' maximum. */
function biggest(texts: string[]): number {
  let max = DEFAULT_LIMIT_TOKENS;
  for (const t of texts) for (const m of t.matchAll(/-?\d+(?:\.\d+)?(?:e[+-]?\d+)?/gi)) {
    const n = Number(m[0]);
    if (Number.isFinite(n) && n <= MAX_RULE_LIMIT_TOKENS) max = Math.max(max, Math.ceil(n));
  }
  return max;
}

/**
 * A project folder and an app-data folder under `dir`, holding the project's `.spillway.json` and the
 * user's `config.json` when given (as given, hostile or not), and an environment with that app data
 * and nothing else.
 */
function rulesFolders(dir: string, project: string | undefined, user: string | undefined): { dir: string; cwd: string; env: NodeJS.ProcessEnv } {
  const cwd = path.join(dir, 'project');
  const home = path.join(dir, 'home');
  fs.mkdirSync(cwd, { recursive: true });
  fs.mkdirSync(home);
  if (project !== undefined) fs.writeFileSync(path.join(cwd, '.spillway.json'), project);
  if (user !== undefined) fs.writeFileSync(path.join(home, 'config.json'), user);
  return { dir, cwd, env: { SPILLWAY_HOME: home } };
}

describe('hostile rules files', () => {
  it('never make the hook throw, nor pass a result over every limit they could set; nor the fast path say "pass" for it', async () => {
    const root = tmpDir('spillway-hostile-rules-');
    let n = 0;
    await fc.assert(
      fc.asyncProperty(docArb, docArb, fc.constantFrom('Bash', 'Read'), async (project, user, tool) => {
        // No keys, no SPILLWAY_SUMMARIZER: a provider a file names fails fast, offline.
        const { dir, cwd, env } = rulesFolders(path.join(root, String(n++)), project, user);
        const over = biggest([project ?? '', user ?? '']) + 1_000;
        // chars4: tokens are chars / 4, so this text is over `over` tokens by construction.
        const text = `${'log line with words 0123456789\n'.repeat(Math.ceil((over * 4) / 31))}`;
        const response = tool === 'Bash' ? { stdout: text, stderr: '', interrupted: false, isImage: false } : { type: 'text', file: { filePath: '/w/a.txt', content: text, numLines: 1, startLine: 1, totalLines: 1 } };
        const event = { session_id: 'hostile', cwd, hook_event_name: 'PostToolUse', tool_name: tool, tool_input: { command: 'x', q: 'focus' }, tool_response: response };
        const stdin = JSON.stringify(event);

        expect(await eventPasses('claude-code', new HookEvent(stdin), {}, env)).toBe(false);
        const out = await handleClaudeCodeHook(stdin, {
          guard: { profile: 'o200k', strategy: 'chars4', env },
          sessionDir: path.join(dir, 'session'),
          rules: async (c) => new GuardRules(await loadRules(c ?? cwd, env), {}),
        });
        expect(out.output, `passed with project ${String(project).slice(0, 200)} / user ${String(user).slice(0, 200)}`).toBeDefined();
        const shown = JSON.stringify(out.output);
        expect(shown.length).toBeLessThan(text.length);
        expect(shown).toContain('[spillway]');
        fs.rmSync(dir, { recursive: true, force: true });
      }),
      { numRuns: 80 },
    );
  }, 180_000);
});

describe('the fast path with rules files decides as the full hook does', () => {
  const limitArb = fc.constantFrom(40, 300, 2_000, 12_000, 20_000);
  const fileArb: fc.Arbitrary<string | undefined> = fc.oneof(
    fc.dictionary(fc.constantFrom('Bash', 'Read', '*', 'mcp__fs__read', 'fs/*'), fc.record({ limit: fc.oneof(limitArb, fc.constant('x')) }, { requiredKeys: [] }), { maxKeys: 3 }).map((rules) => JSON.stringify({ rules })),
    fc.constantFrom('{', '{"rules":{"Bash":{"limit":300,"typo":1}}}', undefined),
  );
  const textArb = fc.integer({ min: 0, max: 24_000 }).map((n) => 'word '.repeat(Math.ceil(n / 5)).slice(0, n));

  it('says "pass" only where the full hook with the same files prints nothing', async () => {
    const root = tmpDir('spillway-fast-rules-');
    let n = 0;
    let passes = 0;
    let hooks = 0;
    await fc.assert(
      fc.asyncProperty(fileArb, fileArb, fc.constantFrom('Bash', 'Read', 'mcp__fs__read'), textArb, async (project, user, tool, text) => {
        const { dir, cwd, env } = rulesFolders(path.join(root, String(n++)), project, user);
        const response =
          tool === 'Bash'
            ? { stdout: text, stderr: '', interrupted: false, isImage: false }
            : tool === 'Read'
              ? { type: 'text', file: { filePath: '/w/a.txt', content: text, numLines: 1, startLine: 1, totalLines: 1 } }
              : [{ type: 'text', text }];
        const event = { session_id: 'fast', cwd, hook_event_name: 'PostToolUse', tool_name: tool, tool_input: {}, tool_response: response };
        const stdin = JSON.stringify(event);
        if (!(await eventPasses('claude-code', new HookEvent(stdin), {}, env))) {
          hooks++;
          return;
        }
        passes++;
        const out = await handleClaudeCodeHook(stdin, {
          guard: { profile: 'claude', env, summarize: undefined },
          sessionDir: path.join(dir, 'session'),
          rules: async (c) => new GuardRules(await loadRules(c ?? cwd, env), { provider: 'none' }),
        });
        expect(out.output, `fast path passed what the hook answers: ${String(project)} / ${String(user)}, ${tool} ${text.length} chars`).toBeUndefined();
        fs.rmSync(dir, { recursive: true, force: true });
      }),
      { numRuns: 200 },
    );
    expect(passes).toBeGreaterThan(30);
    expect(hooks).toBeGreaterThan(30);
  }, 180_000);
});
