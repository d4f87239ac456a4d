/**
 * Issue 14, item 7: payload-derived text never reaches a terminal as raw control characters. On
 * 3a18a0f `spillway guard` printed tool names and structural summaries as they came: OSC 8
 * hyperlinks, title sets, colours, C1 controls. The CLI runs as a real process here.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonLine, terminalSafe } from '../../src/pipeline/terminal.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const CLI = ['--import', 'tsx', '--conditions=source', path.join(REPO, 'src', 'cli', 'main.ts')];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-tty-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** What a terminal acts on: C0 but tab/newline, DEL, C1, bidi controls. */
const RAW_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const HYPERLINK = '\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\';
const TITLE = '\x1b]0;pwned\x07';
const COLOUR = '\x1b[31;1mRED\x1b[0m';
const C1_CSI = '\u009b2J';

function spillway(args: string[], input?: string) {
  return spawnSync(process.execPath, [...CLI, ...args], { cwd: REPO, encoding: 'utf8', input, env: { ...process.env, SPILLWAY_HOME: path.join(tmp, 'home') } });
}

describe('CLI output carries no raw terminal controls', () => {
  const rows = Array.from({ length: 3000 }, (_, i) => ({ id: i, note: `${HYPERLINK} ${TITLE} ${COLOUR} ${C1_CSI} row ${i}`, [`key${TITLE}`]: i }));
  const payload = JSON.stringify(rows);

  it('spillway guard: the message (tool name, structure) and --json', () => {
    const tool = `fetch${TITLE}${COLOUR}`;
    const plain = spillway(['guard', '--session', path.join(tmp, 's1'), '--tool', tool, '--limit', '500'], payload);
    expect(plain.status, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('[spillway]');
    expect(plain.stdout).not.toMatch(RAW_CONTROL);
    // Made visible, not dropped: the reader can see something was there.
    expect(plain.stdout).toContain('\\x1b');
    const json = spillway(['guard', '--session', path.join(tmp, 's1'), '--tool', tool, '--limit', '500', '--json'], payload);
    expect(json.status, json.stderr).toBe(0);
    expect(json.stdout).not.toMatch(RAW_CONTROL);
    expect(JSON.parse(json.stdout).action).toBe('spill');
  });

  it('spillway summarize, project and handle print payload text escaped', () => {
    const file = path.join(tmp, 'evil.json');
    fs.writeFileSync(file, payload);
    for (const args of [
      ['summarize', file],
      ['summarize', file, '--json'],
      ['project', file, '--suggest'],
      ['project', file, '--spec', '{"keep":["$[*].note"]}'],
      ['handle', 'put', file, '--session', path.join(tmp, 's2'), '--tool', `t${TITLE}`],
      ['handle', 'list', '--session', path.join(tmp, 's2')],
    ]) {
      const r = spillway(args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      expect(r.stdout.length, args.join(' ')).toBeGreaterThan(0);
      expect(r.stdout, args.join(' ')).not.toMatch(RAW_CONTROL);
    }
  });
});

describe('the hook\'s and the proxy\'s log lines', () => {
  it('spillway hook claude-code: a tool name with controls is escaped in its stderr note', () => {
    const input = JSON.stringify({
      session_id: 's1',
      transcript_path: path.join(tmp, 'none.jsonl'),
      cwd: tmp,
      hook_event_name: 'PostToolUse',
      tool_name: `Weird${TITLE}${HYPERLINK}`,
      tool_input: {},
      tool_response: { x: 'a'.repeat(200_000) },
      tool_use_id: 't1',
    });
    const r = spillway(['hook', 'claude-code'], input);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain('output left unchanged');
    expect(r.stderr).toContain('\\x1b]0;pwned');
    expect(r.stderr).not.toMatch(RAW_CONTROL);
  });
});

describe('terminalSafe and jsonLine', () => {
  it('leave no raw control in any string, keep tab, newline and CRLF, and change nothing else', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const out = terminalSafe(s);
        expect(out).not.toMatch(RAW_CONTROL);
        expect(out.replace(/\r\n/g, '\n')).not.toMatch(/\r/);
        if (!RAW_CONTROL.test(s) && !/\r(?!\n)|[\u061c\u200e\u200f]/.test(s)) expect(out).toBe(s);
      }),
    );
    expect(terminalSafe('a\tb\nc\r\nd')).toBe('a\tb\nc\r\nd');
    expect(terminalSafe(`x${TITLE}`)).toBe('x\\x1b]0;pwned\\x07');
  });

  it('jsonLine parses back to the same value and carries no raw control', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (v, s) => {
        for (const value of [v, { s }]) {
          const line = jsonLine(value);
          expect(line).not.toMatch(RAW_CONTROL);
          expect(JSON.parse(line)).toEqual(JSON.parse(JSON.stringify(value)));
        }
      }),
    );
  });
});
