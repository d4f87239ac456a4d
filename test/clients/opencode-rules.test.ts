/**
 * The guard rules inside OpenCode, proven with the real binary: Spillway's plugin with no `--limit`,
 * and a project `.spillway.json` whose rule spills `bash` at 50 tokens. A bash output of ~1,000
 * tokens (far under the default 12,000) reaches the model as the guard's message, and its sidecar
 * records the project's rule: the plugin sent OpenCode's folder and the hook resolved its rules.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opencodePluginSource, PLUGIN_FILE_NAME } from '../../src/agents/opencode/plugin.js';
import { startChatDouble, type ChatDouble } from './doubles/openai-chat.js';
import { sourceSpillwayArgs } from './claude.js';
import { tmpDir } from './harness.js';
import { OPENCODE_VERSION, runOpenCode, sentToModel, type OpenCodeRun } from './opencode.js';

const RUN_MS = 150_000;

describe(`OpenCode ${OPENCODE_VERSION}: the hook reads the project's rules`, () => {
  let d: ChatDouble;
  let run: OpenCodeRun;
  let cwd: string;
  let session: string;

  beforeAll(async () => {
    cwd = tmpDir('spillway-oc-rules-');
    session = path.join(cwd, 'spills');
    fs.writeFileSync(path.join(cwd, '.spillway.json'), JSON.stringify({ rules: { bash: { limit: 50, provider: 'none' } } }));
    const plugins = path.join(cwd, '.opencode', 'plugins');
    fs.mkdirSync(plugins, { recursive: true });
    fs.writeFileSync(path.join(plugins, PLUGIN_FILE_NAME), opencodePluginSource([process.execPath, ...sourceSpillwayArgs([])], ['--session', session]));
    d = await startChatDouble({ steps: [{ call: { name: 'bash', arguments: { command: 'seq 1 400', description: 'count' }, callId: 'call_seq' } }, { text: 'done' }] });
    run = await runOpenCode({ baseUrl: d.origin, prompt: 'count', cwd, timeoutMs: RUN_MS });
  }, RUN_MS + 60_000);
  afterAll(async () => {
    await d?.close();
  });

  it("spills at the project's rule and records it", () => {
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(sentToModel(d, run, 'call_seq')).toMatch(/^\[spillway\]/);
    const lr = path.join(session, 'long_responses');
    const meta = JSON.parse(fs.readFileSync(path.join(lr, fs.readdirSync(lr).find((f) => f.endsWith('.meta.json'))!), 'utf8')) as { limitTokens: number; rule?: Record<string, unknown> };
    expect(meta.limitTokens).toBe(50);
    expect(meta.rule).toMatchObject({ source: 'project', match: 'bash' });
    expect(fs.realpathSync(String(meta.rule!.file))).toBe(fs.realpathSync(path.join(cwd, '.spillway.json')));
  });
});
