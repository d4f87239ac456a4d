import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_MESSAGE_CHARS } from '../../src/pipeline/index.js';
import { cliArgs, makeLog, testEnv, tmpDir } from './helpers.js';

/** Run `spillway hook claude-code` as Claude Code does: JSON on stdin, read stdout and the exit code. */
function runHook(input: unknown, args: string[] = [], home = tmpDir()) {
  const r = spawnSync(process.execPath, cliArgs(['hook', 'claude-code', ...args]), {
    input: typeof input === 'string' ? input : JSON.stringify(input),
    env: testEnv(home),
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString(), home };
}

// Shapes as Claude Code sends them to a PostToolUse command hook.
function event(tool_name: string, tool_input: unknown, tool_response: unknown) {
  return {
    session_id: 'a1b2c3d4-5e6f-4a5b-8c9d-0e1f2a3b4c5d',
    transcript_path: '/home/user/.claude/projects/-home-user-work/a1b2c3d4-5e6f-4a5b-8c9d-0e1f2a3b4c5d.jsonl',
    cwd: '/home/user/work',
    permission_mode: 'default',
    hook_event_name: 'PostToolUse',
    tool_name,
    tool_input,
    tool_response,
    tool_use_id: 'toolu_01ABCDEFGHJKLMNPQRSTUVWX',
  };
}

interface HookOut {
  hookSpecificOutput: { hookEventName: string; updatedToolOutput: string; updatedMCPToolOutput?: unknown };
}

function savedPayload(message: string): string {
  const m = /Absolute path: (.+)/.exec(message);
  expect(m, message.slice(0, 500)).not.toBeNull();
  return fs.readFileSync(m![1]!.trim(), 'utf8');
}

describe('spillway hook claude-code', () => {
  it('Bash with a large stdout: replaced by the message, stdout saved exactly, description as the focus', () => {
    const stdout = makeLog(300_000);
    const session = path.join(tmpDir(), 'session');
    const r = runHook(
      event('Bash', { command: 'cat /var/log/app.log', description: 'Show the app log' }, { stdout, stderr: '', interrupted: false, isImage: false }),
      ['--session', session],
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as HookOut;
    expect(out.hookSpecificOutput.hookEventName).toBe('PostToolUse');
    expect(out.hookSpecificOutput.updatedMCPToolOutput).toBeUndefined();
    const msg = out.hookSpecificOutput.updatedToolOutput;
    expect(msg).toContain('[spillway]');
    expect(msg.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(savedPayload(msg)).toBe(stdout);
    const metaFile = fs.readdirSync(path.join(session, 'long_responses')).find((f) => f.endsWith('.meta.json'))!;
    const meta = JSON.parse(fs.readFileSync(path.join(session, 'long_responses', metaFile), 'utf8')) as { tool: string; intent?: string };
    expect(meta.tool).toBe('Bash');
    expect(meta.intent).toBe('Show the app log');
  });

  it('measures with Claude\'s tokenizer by default (Claude Code runs Claude), another with --profile', () => {
    const stdout = makeLog(300_000);
    const input = event('Bash', { command: 'cat app.log' }, { stdout, stderr: '', interrupted: false, isImage: false });
    const profileOf = (args: string[]) => {
      const session = path.join(tmpDir(), 'session');
      const r = runHook(input, ['--session', session, ...args]);
      expect(r.code).toBe(0);
      const metaFile = fs.readdirSync(path.join(session, 'long_responses')).find((f) => f.endsWith('.meta.json'))!;
      return (JSON.parse(fs.readFileSync(path.join(session, 'long_responses', metaFile), 'utf8')) as { estimate: { profile: string; strategy: string } }).estimate;
    };
    expect(profileOf([]).profile).toBe('claude');
    expect(profileOf(['--profile', 'o200k'])).toMatchObject({ profile: 'o200k' });
    expect(profileOf(['--strategy', 'chars4'])).toMatchObject({ profile: 'claude', strategy: 'chars4' });
    const bad = runHook(input, ['--profile', 'gpt2']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--profile must be one of o200k, cl100k, claude/);
  });

  it('Read of a large file: the file content is what gets measured and saved', () => {
    const content = makeLog(250_000);
    const r = runHook(
      event('Read', { file_path: '/home/user/work/big.log' }, { type: 'text', file: { filePath: '/home/user/work/big.log', content, numLines: 3000, startLine: 1, totalLines: 3000 } }),
    );
    const out = JSON.parse(r.stdout) as HookOut;
    expect(savedPayload(out.hookSpecificOutput.updatedToolOutput)).toBe(content);
    // Default place: the app-data sessions root, one folder per Claude Code session.
    const folder = path.join(r.home, 'sessions', 'claude-code_a1b2c3d4-5e6f-4a5b-8c9d-0e1f2a3b4c5d', 'long_responses');
    expect(fs.readdirSync(folder).some((f) => f.endsWith('.meta.json'))).toBe(true);
  });

  it('an MCP tool: both updatedMCPToolOutput (content blocks) and updatedToolOutput are set', () => {
    const issues = Array.from({ length: 3000 }, (_, i) => ({ number: i + 1, title: `Issue ${i + 1} about module ${i % 37}`, state: i % 5 ? 'open' : 'closed', labels: ['bug', `area-${i % 11}`] }));
    const response = [{ type: 'text', text: JSON.stringify(issues) }];
    const r = runHook(event('mcp__github__list_issues', { owner: 'acme', repo: 'app' }, response));
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as HookOut;
    const msg = out.hookSpecificOutput.updatedToolOutput;
    expect(out.hookSpecificOutput.updatedMCPToolOutput).toEqual([{ type: 'text', text: msg }]);
    expect(JSON.parse(savedPayload(msg))).toEqual(response);
  });

  it('a context window narrows an explicit limit (10% of 20,000 is 2,000 tokens)', () => {
    const stdout = makeLog(30_000);
    const r = runHook(event('Bash', { command: 'tail -n 300 app.log' }, { stdout, stderr: '', interrupted: false, isImage: false }), ['--limit', '100000', '--context-window', '20000']);
    const out = JSON.parse(r.stdout) as HookOut;
    expect(savedPayload(out.hookSpecificOutput.updatedToolOutput)).toBe(stdout);
    const wide = runHook(event('Bash', { command: 'tail -n 300 app.log' }, { stdout, stderr: '', interrupted: false, isImage: false }), ['--limit', '100000']);
    expect(wide.stdout).toBe('');
  });

  it('small results: exit 0 and no output', () => {
    const r = runHook(event('Bash', { command: 'ls' }, { stdout: 'a\nb\n', stderr: '', interrupted: false, isImage: false }));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
  });

  it('never blocks the agent: bad input and other events exit 0 without output', () => {
    for (const input of ['not json {', '[]', JSON.stringify({ ...event('Bash', {}, { stdout: makeLog(200_000) }), hook_event_name: 'PreToolUse' })]) {
      const r = runHook(input);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('');
    }
    // A session folder that cannot be made: still exit 0, and still no oversized output handed back.
    const file = path.join(tmpDir(), 'file');
    fs.writeFileSync(file, '');
    const r = runHook(event('Bash', { command: 'x' }, { stdout: makeLog(200_000), stderr: '' }), ['--session', path.join(file, 'sub')]);
    expect(r.code).toBe(0);
    if (r.stdout) expect((JSON.parse(r.stdout) as HookOut).hookSpecificOutput.updatedToolOutput.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
  });
});
