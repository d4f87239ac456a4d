import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { restorePayload } from '../../src/pipeline/index.js';
import { handleClaudeCodeHook } from '../../src/integrations/hooks/claude-code.js';
import { claudeCodePasses } from '../../src/integrations/hooks/claude-code-shapes.js';
import { claudeProject, ROOT, testEnv, tmpDir } from './helpers.js';

/**
 * Binary that Claude Code's Bash had already decoded as UTF-8 (issue 29: `head -c 3000 /usr/bin/ls`
 * reached the model as 2,995 chars with 2,399 NULs and 117 U+FFFD, the hook printing nothing). It
 * must be saved and described on every path: the fast path, the hook's entry, a persisted output.
 */

const BIN = path.join(ROOT, 'bin', 'spillway.js');
const SESSION_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

/** What Claude Code's Bash hands on for `head -c 3000 <an executable>`: the bytes read as UTF-8. */
const EXE = fs.existsSync('/usr/bin/ls') ? '/usr/bin/ls' : process.execPath;
const HEAD = fs.readFileSync(EXE).subarray(0, 3000);
const DECODED = HEAD.toString('utf8');

// The stdin of Claude Code 2.1.328's PostToolUse command hook for a Bash call, field for field.
function bashEvent(stdout: string, extra: Record<string, unknown> = {}, transcript_path = `/home/user/.claude/projects/-home-user-work/${SESSION_ID}.jsonl`) {
  return {
    session_id: SESSION_ID,
    transcript_path,
    cwd: '/home/user/work',
    prompt_id: '0f0e0d0c-0b0a-4909-8807-060504030201',
    permission_mode: 'bypassPermissions',
    effort: { level: 'medium' },
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: { command: `head -c 3000 ${EXE}`, description: 'Show the first bytes of the binary' },
    tool_response: { stdout, stderr: '', interrupted: false, isImage: false, noOutputExpected: false, ...extra },
    tool_use_id: 'toolu_01XyZbinaryHeadOfLs000001',
    duration_ms: 7,
  };
}

/** `spillway hook claude-code` as Claude Code runs it: bin/spillway.js (fast path, then the hook's entry). */
function runBin(input: unknown, args: string[]) {
  const home = tmpDir();
  const r = spawnSync(process.execPath, [BIN, 'hook', 'claude-code', ...args], { input: JSON.stringify(input), env: testEnv(home), maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

function sidecarOf(session: string) {
  const dir = path.join(session, 'long_responses');
  const meta = fs.readdirSync(dir).find((f) => f.endsWith('.meta.json'))!;
  return JSON.parse(fs.readFileSync(path.join(dir, meta), 'utf8')) as { origin: string; kind: string; bytes: number; errors?: string[]; assets: { mimeType: string; bytes: number; path: string }[] };
}

const RAW_RE = /[\x00-\x06\x0e-\x1a\x1c-\x1f\x7f\uFFFD]/;

describe('binary Claude Code already decoded, through the hook', () => {
  it('the event as Claude Code sends it is not passed by the fast path', () => {
    expect(DECODED).toContain('\u0000');
    expect(DECODED).toContain('\uFFFD');
    expect(claudeCodePasses(bashEvent(DECODED), {})).toBe(false);
  });

  it('bin/spillway.js answers with the guard’s message: an ELF asset of the text as received, the lossy decode said', () => {
    const session = path.join(tmpDir(), 'session');
    const r = runBin(bashEvent(DECODED), ['--session', session]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { hookSpecificOutput: { hookEventName: string; updatedToolOutput: Record<string, unknown> } };
    expect(out.hookSpecificOutput.hookEventName).toBe('PostToolUse');
    const answer = out.hookSpecificOutput.updatedToolOutput;
    expect(answer).toMatchObject({ stderr: '', interrupted: false, isImage: false, noOutputExpected: false });
    const msg = answer.stdout as string;
    expect(msg).toMatch(/^\[spillway\] The result of `Bash` is binary data \(application\/x-elf, /);
    expect(msg).toContain('The client had already decoded these bytes as UTF-8, lossily');
    expect(msg, 'nothing of the raw bytes reaches the model').not.toMatch(RAW_RE);
    const meta = sidecarOf(session);
    const received = Buffer.from(DECODED, 'utf8');
    expect(meta).toMatchObject({ origin: 'string', kind: 'binary', bytes: received.length });
    expect(meta.errors?.some((e) => e.includes('lossily'))).toBe(true);
    expect(meta.assets).toHaveLength(1);
    expect(fs.readFileSync(meta.assets[0]!.path).equals(received)).toBe(true);
  });

  it('a persisted Bash output that is binary is read back whole and saved, even under the limit', async () => {
    const { toolResults, transcript } = claudeProject(SESSION_ID);
    // Claude Code writes the decoded string to the file (UTF-8), and hands the hook its first 30,000 chars.
    const whole = fs.readFileSync(EXE).subarray(0, 60_000).toString('utf8');
    const file = path.join(toolResults, 'b7k2q.txt');
    fs.writeFileSync(file, whole);
    const persisted = { persistedOutputPath: file, persistedOutputSize: Buffer.byteLength(whole) };
    for (const stderr of ['', 'head: warning\n']) {
      const sessionDir = path.join(tmpDir(), 'session');
      const input = bashEvent(whole.slice(0, 30_000), { ...persisted, stderr }, transcript);
      const r = await handleClaudeCodeHook(JSON.stringify(input), { guard: { limitTokens: 500_000 }, sessionDir });
      expect(r.output, `stderr ${JSON.stringify(stderr)}: Claude Code's preview of binary must not reach the model`).toBeDefined();
      const answer = r.output!.hookSpecificOutput.updatedToolOutput as Record<string, unknown>;
      expect(answer).not.toHaveProperty('persistedOutputPath');
      expect(answer.stdout as string).toMatch(/is binary data/);
      expect(answer.stdout as string).not.toMatch(RAW_RE);
      const expected = stderr ? Buffer.from(`${whole}\n--- stderr ---\n${stderr}`) : Buffer.from(whole);
      expect((await restorePayload(r.guard!.payloadPath!)).equals(expected)).toBe(true);
    }
  });

  it('ordinary text (ANSI colours, tabs, one U+FFFD) still passes on both paths', async () => {
    const text = '\x1b[32m✓\x1b[0m build\tok\ncaf\uFFFD menu\n\x1b]0;term\x07done\n';
    const stdin = JSON.stringify(bashEvent(text));
    expect(claudeCodePasses(JSON.parse(stdin), {})).toBe(true);
    expect((await handleClaudeCodeHook(stdin, { sessionDir: path.join(tmpDir(), 'session') })).output).toBeUndefined();
  });
});
