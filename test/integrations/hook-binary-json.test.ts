import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { restorePayload } from '../../src/pipeline/index.js';
import { handleClaudeCodeHook } from '../../src/integrations/hooks/claude-code.js';
import { cliArgs, testEnv, tmpDir } from './helpers.js';

/**
 * Claude Code's PostToolUse for an MCP tool whose result holds a file's bytes as a JSON string
 * (#29): the hook must not let them reach the model. Claude Code hands the hook an MCP result
 * as a string (the structuredContent's JSON) or as API-format blocks.
 */

const SESSION_ID = 'a1b2c3d4-5e6f-4a5b-8c9d-0e1f2a3b4c5d';
const event = (tool_name: string, tool_response: unknown) => ({
  session_id: SESSION_ID,
  transcript_path: `/home/user/.claude/projects/-home-user-work/${SESSION_ID}.jsonl`,
  cwd: '/home/user/work',
  hook_event_name: 'PostToolUse',
  tool_name,
  tool_input: { path: '/w/x.bin' },
  tool_response,
  tool_use_id: 'toolu_01ABCDEFGHJKLMNPQRSTUVWX',
});
const BINARY_IN_TEXT_RE = /[\x00-\x06\x0e-\x1a\x1c-\x1f\x7f]|\\u000[0-6]|(?:\uFFFD|\\ufffd){8}/i;
const elf = () => fs.readFileSync(process.execPath).subarray(0, 3000);

describe('the Claude Code hook and binary inside an MCP result', () => {
  it('a JSON string answer whose field is latin-1 bytes: answered with the message, the bytes saved exactly', async () => {
    const bytes = elf();
    const response = JSON.stringify({ content: bytes.toString('latin1') });
    const sessionDir = path.join(tmpDir(), 'session');
    const out = await handleClaudeCodeHook(JSON.stringify(event('mcp__fs__read_text_file', response)), { sessionDir });
    const answer = out.output?.hookSpecificOutput.updatedToolOutput;
    expect(typeof answer, JSON.stringify(out).slice(0, 300)).toBe('string');
    expect(answer as string).not.toMatch(BINARY_IN_TEXT_RE);
    expect(out.guard!.assets.some((a) => a.source === 'binary-string' && a.bytes === bytes.length)).toBe(true);
    const asset = out.guard!.assets.find((a) => a.source === 'binary-string')!;
    expect(fs.readFileSync(asset.path).equals(bytes)).toBe(true);
    expect((await restorePayload(out.guard!.payloadPath!)).toString('utf8')).toBe(response);
  });

  it('blocks whose text is a lossy decode of binary, beside a small text: cut out, whatever the size', async () => {
    const decoded = elf().toString('utf8');
    const blocks = [{ type: 'text', text: 'file follows' }, { type: 'text', text: decoded }];
    const sessionDir = path.join(tmpDir(), 'session');
    const out = await handleClaudeCodeHook(JSON.stringify(event('mcp__fs__read_text_file', blocks)), { sessionDir });
    expect(out.output, JSON.stringify(out).slice(0, 300)).toBeDefined();
    expect(JSON.stringify(out.output!.hookSpecificOutput.updatedToolOutput)).not.toMatch(BINARY_IN_TEXT_RE);
    const asset = out.guard!.assets.find((a) => a.source === 'binary-string')!;
    expect(fs.readFileSync(asset.path).equals(Buffer.from(decoded, 'utf8'))).toBe(true);
  });

  it('the spawned `spillway hook claude-code` (the fast path first) answers it too', () => {
    const home = tmpDir();
    const response = JSON.stringify({ content: elf().toString('latin1') });
    const r = spawnSync(process.execPath, cliArgs(['hook', 'claude-code']), { input: JSON.stringify(event('mcp__fs__read_text_file', response)), env: testEnv(home) });
    expect(r.status, r.stderr.toString()).toBe(0);
    const answer = JSON.parse(r.stdout.toString()) as { hookSpecificOutput: { updatedToolOutput: string } };
    expect(answer.hookSpecificOutput.updatedToolOutput).toMatch(/^\[spillway\]/);
    expect(answer.hookSpecificOutput.updatedToolOutput).not.toMatch(BINARY_IN_TEXT_RE);
  });
});
