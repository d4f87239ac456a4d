/**
 * `spillway hook opencode` reads the guard rules like the Claude Code and Codex hooks (docs/config.md):
 * the project's `.spillway.json` in the folder OpenCode runs in (the plugin sends its `directory`),
 * then the user's, after the flags. A rule that sets a limit spills what the default would pass,
 * and the sidecar records the rule.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { handleOpenCodeEvent } from '../../src/agents/opencode/guard.js';
import { opencodePluginSource } from '../../src/agents/opencode/plugin.js';
import { GuardRules, loadRules, ruleFlagsOf } from '../../src/integrations/rules/index.js';

function scene(projectRules?: unknown) {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-oc-rules-')));
  const project = path.join(root, 'project');
  const home = path.join(root, 'app');
  fs.mkdirSync(project);
  fs.mkdirSync(home);
  if (projectRules !== undefined) fs.writeFileSync(path.join(project, '.spillway.json'), JSON.stringify(projectRules));
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_DATA_HOME: path.join(root, 'data'), SPILLWAY_HOME: home };
  delete env.SPILLWAY_SUMMARIZER;
  // ~1,000 tokens: far under the default limit (12,000).
  const output = Array.from({ length: 200 }, (_, i) => `line ${i}: ok`).join('\n');
  const event = (extra: Record<string, unknown> = {}) =>
    JSON.stringify({ input: { tool: 'bash', sessionID: 'ses_rules', callID: 'call_1', args: { command: 'make test', description: 'Runs the tests', focus: 'failing tests' } }, output: { title: 'make test', output, metadata: {} }, ...extra });
  // What runOpenCodeHook builds (plugin.ts): the rules of the event's folder, else the working folder, after the flags.
  const rules = (flags: Parameters<typeof ruleFlagsOf>[0] = {}) => async (cwd: string | undefined) => new GuardRules(await loadRules(cwd ?? path.join(root, 'not-the-project'), env), ruleFlagsOf(flags));
  return { root, project, env, event, rules, session: path.join(root, 'spills') };
}

const metaOf = (session: string) => {
  const lr = path.join(session, 'long_responses');
  return JSON.parse(fs.readFileSync(path.join(lr, fs.readdirSync(lr).find((f) => f.endsWith('.meta.json'))!), 'utf8')) as { limitTokens: number; intent?: string; rule?: Record<string, unknown> };
};

describe('spillway hook opencode: the guard rules', () => {
  it("spills at the project's rule for the tool, records the rule, and takes the focus from the rule's argument", async () => {
    const s = scene({ rules: { bash: { limit: 50, provider: 'none', focusArg: 'focus' } } });
    const out = await handleOpenCodeEvent(s.event({ directory: s.project }), { env: s.env, sessionDir: s.session, guard: { profile: 'o200k' }, rules: s.rules() });
    expect(out.output?.output).toMatch(/^\[spillway\]/);
    const meta = metaOf(s.session);
    expect(meta.limitTokens).toBe(50);
    expect(meta.intent).toBe('failing tests');
    expect(meta.rule).toMatchObject({ source: 'project', match: 'bash', file: path.join(s.project, '.spillway.json') });
    // Without the rules the same output fits the default: nothing is spilled.
    const plain = await handleOpenCodeEvent(s.event({ directory: s.project }), { env: s.env, sessionDir: path.join(s.root, 's2'), guard: { profile: 'o200k' } });
    expect(plain.output).toBeUndefined();
  });

  it('a flag comes before the rule; another tool keeps the default; an event without its folder reads the working folder', async () => {
    const s = scene({ rules: { bash: { limit: 50, provider: 'none' } } });
    const flagged = await handleOpenCodeEvent(s.event({ directory: s.project }), { env: s.env, sessionDir: s.session, guard: { profile: 'o200k' }, rules: s.rules({ limit: 100_000 }) });
    expect(flagged.output).toBeUndefined();
    const read = JSON.stringify({ ...JSON.parse(s.event({ directory: s.project })), input: { tool: 'read', sessionID: 'ses_rules', callID: 'c2', args: {} } });
    expect((await handleOpenCodeEvent(read, { env: s.env, sessionDir: s.session, guard: { profile: 'o200k' }, rules: s.rules() })).output).toBeUndefined();
    // A plugin written before the folder was sent: the hook's working folder (here not the project) decides.
    expect((await handleOpenCodeEvent(s.event(), { env: s.env, sessionDir: s.session, guard: { profile: 'o200k' }, rules: s.rules() })).output).toBeUndefined();
    // A folder that is not absolute is not trusted as one.
    expect((await handleOpenCodeEvent(s.event({ directory: 'project' }), { env: s.env, sessionDir: s.session, guard: { profile: 'o200k' }, rules: s.rules() })).output).toBeUndefined();
  });

  it('a bad rules file is a note naming the file and the field; the result is guarded with the defaults', async () => {
    const s = scene({ rules: { bash: { limit: 'x' } } });
    const out = await handleOpenCodeEvent(s.event({ directory: s.project }), { env: s.env, sessionDir: s.session, guard: { profile: 'o200k' }, rules: s.rules() });
    expect(out.output).toBeUndefined();
    expect(out.note).toMatch(/\.spillway\.json: rules\.bash\.limit/);
  });

  it("the plugin sends OpenCode's project folder with the event", async () => {
    const s = scene();
    // A stand-in for the CLI: it keeps the event it was piped.
    const got = path.join(s.root, 'event.json');
    const fake = path.join(s.root, 'fake-hook.mjs');
    fs.writeFileSync(fake, `import fs from 'node:fs';\nlet d='';process.stdin.on('data',(c)=>d+=c);process.stdin.on('end',()=>{fs.writeFileSync(${JSON.stringify(got)}, d);});\n`);
    const plugin = path.join(s.root, 'spillway-guard.mjs');
    fs.writeFileSync(plugin, opencodePluginSource([process.execPath, fake]));
    const mod = (await import(pathToFileURL(plugin).href)) as { SpillwayGuard: (ctx: unknown) => Promise<Record<string, (i: unknown, o: unknown) => Promise<void>>> };
    const hooks = await mod.SpillwayGuard({ directory: s.project, worktree: s.project });
    await hooks['tool.execute.after']!({ tool: 'bash', sessionID: 'ses_1', callID: 'c1', args: {} }, { title: 't', output: 'x', metadata: {} });
    expect(JSON.parse(fs.readFileSync(got, 'utf8'))).toMatchObject({ directory: s.project, input: { tool: 'bash' }, output: { output: 'x' } });
  });
});
