/**
 * The pinned client binaries are installed and runnable, and the model doubles drive them: one
 * scripted text-only turn each, and the only calls they make are to the double.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { CLAUDE_CODE_VERSION, CLIENT_RUN_TIMEOUT_MS, CODEX_VERSION, claudeBinary, codexBinary, tmpDir } from './harness.js';
import { startAnthropicDouble, type AnthropicDouble } from './doubles/anthropic.js';
import { startResponsesDouble, type ResponsesDouble } from './doubles/openai-responses.js';
import { runClaudeCode } from './claude.js';
import { runCodex } from './codex.js';

const servers: Array<AnthropicDouble | ResponsesDouble> = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

describe('client binaries', () => {
  it(`Claude Code is ${CLAUDE_CODE_VERSION} and Codex is ${CODEX_VERSION}`, () => {
    expect(execFileSync(claudeBinary(), ['--version'], { encoding: 'utf8', timeout: 30_000 })).toContain(CLAUDE_CODE_VERSION);
    expect(execFileSync(codexBinary(), ['--version'], { encoding: 'utf8', timeout: 30_000 })).toContain(CODEX_VERSION);
  }, 120_000);

  it('Claude Code talks only to the Anthropic double and shows the scripted answer', async () => {
    const d = await startAnthropicDouble({ steps: [{ text: 'scripted answer 42' }] });
    servers.push(d);
    const run = await runClaudeCode({ baseUrl: d.origin, prompt: 'say something', cwd: tmpDir('spillway-cc-cwd-') });
    expect(run.timedOut).toBe(false);
    expect(run.code, run.stderr).toBe(0);
    const result = run.events.find((e) => e.type === 'result');
    expect(result?.result).toContain('scripted answer 42');
    expect(d.requests.length).toBeGreaterThan(0);
    for (const r of d.requests) expect(r.url).toMatch(/^\/v1\/messages(\/count_tokens)?(\?|$)/);
    expect(run.transcriptPath).toBeDefined();
  }, CLIENT_RUN_TIMEOUT_MS + 30_000);

  it('Codex talks only to the Responses double and shows the scripted answer', async () => {
    const d = await startResponsesDouble({ steps: [{ text: 'scripted answer 43' }] });
    servers.push(d);
    const run = await runCodex({ baseUrl: d.origin, prompt: 'say something', cwd: tmpDir('spillway-codex-cwd-') });
    expect(run.timedOut).toBe(false);
    expect(run.code, run.stderr).toBe(0);
    expect(run.events.some((e) => e.type === 'item.completed' && e.item?.text === 'scripted answer 43')).toBe(true);
    for (const r of d.requests) expect(r.url).toMatch(/^\/v1\/(responses|models)(\?|$)/);
    expect(run.rollouts.length).toBe(1);
  }, CLIENT_RUN_TIMEOUT_MS + 30_000);
});
