/**
 * Issue 22, item 5 and "`spillway mcp` and stderr": file names, paths in error messages, the
 * arguments commander refuses, and a wrapped MCP server's stderr reach the terminal with every
 * control made visible, through one function (src/pipeline/terminal.ts). Before the fix each line
 * below printed the ESC/BEL bytes raw. The CLI runs as a real process, once into pipes and once on
 * a real terminal (util-linux `script` gives it a pty).
 */
import { isUtf8 } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { TerminalSafeLines, terminalSafe, terminalSafeBytes } from '../../src/pipeline/terminal.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const CLI = ['--import', 'tsx', '--conditions=source', path.join(REPO, 'src', 'cli', 'main.ts')];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-names-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const TITLE = '\x1b]0;T\x07';
const CLEAR = '\x1b[2J';
const C1_CSI = '\u009b2J';
/** What a terminal acts on: ESC, BEL and the rest of C0 but tab/newline/CR, DEL, C1, bidi controls. */
const RAW_CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;
const env = { ...process.env, SPILLWAY_HOME: path.join(tmp, 'home'), SHELL: '/bin/sh' };

/**
 * Nothing a terminal would obey: no ESC or BEL byte, no other control once decoded, and valid UTF-8
 * (a stray 0x9b byte is CSI to an 8-bit terminal). A pty turns each \n into \r\n.
 */
function expectInert(bytes: Buffer) {
  expect(bytes.includes(0x1b)).toBe(false);
  expect(bytes.includes(0x07)).toBe(false);
  expect(isUtf8(bytes)).toBe(true);
  expect(bytes.toString('utf8').replace(/\r\n/g, '\n')).not.toMatch(RAW_CONTROL);
}

/** Through pipes: stdout and stderr together. */
function piped(args: string[], input = '') {
  const r = spawnSync(process.execPath, [...CLI, ...args], { cwd: REPO, env, input });
  return { status: r.status, out: Buffer.concat([r.stdout, r.stderr]) };
}

/** On a real terminal: `script` runs the CLI on a pty and copies what the terminal was sent. Arguments travel in the environment, unquoted. */
function onTty(args: string[]) {
  const argEnv = Object.fromEntries(args.map((a, i) => [`ARG${i}`, a]));
  const cmd = [process.execPath, ...CLI].map((a) => `'${a}'`).join(' ') + ' ' + args.map((_, i) => `"$ARG${i}"`).join(' ');
  const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { cwd: REPO, env: { ...env, ...argEnv }, input: '', timeout: 60_000 });
  return { status: r.status, out: r.stdout };
}

const hostileFile = path.join(tmp, `report${TITLE}${C1_CSI}.txt`);
fs.writeFileSync(hostileFile, 'hello world\n'.repeat(10));
const session = path.join(tmp, 'session');

/** Each case: argv, and the escaped text that must show instead (so nothing was dropped either). */
const CASES: Array<{ what: string; args: string[]; shows: string }> = [
  { what: "estimate's table (file column)", args: ['estimate', hostileFile], shows: 'report\\x1b]0;T\\x07\\x9b2J.txt' },
  { what: 'estimate: no such file', args: ['estimate', `/nonexist${CLEAR}`], shows: '/nonexist\\x1b[2J: no such file' },
  { what: 'estimate --json', args: ['estimate', '--json', hostileFile], shows: 'report\\u001b]0;T\\u0007\\u009b2J.txt' },
  { what: 'guard: cannot read', args: ['guard', `/nonexistent${TITLE}`, '--session', session], shows: 'cannot read /nonexistent\\x1b]0;T\\x07' },
  { what: 'restore: a missing payload', args: ['restore', `/nonexistent${TITLE}`], shows: '/nonexistent\\x1b]0;T\\x07' },
  { what: 'handle put: cannot read (main error path)', args: ['handle', 'put', `/nonexistent${TITLE}`, '--session', session], shows: 'cannot read /nonexistent\\x1b]0;T\\x07' },
  { what: 'project: cannot read', args: ['project', `/nonexistent${TITLE}`, '--suggest'], shows: 'cannot read /nonexistent\\x1b]0;T\\x07' },
  { what: 'summarize: cannot read', args: ['summarize', `/nonexistent${TITLE}`], shows: 'cannot read /nonexistent\\x1b]0;T\\x07' },
  { what: 'commander: unknown command', args: [`x${TITLE}`], shows: "unknown command 'x\\x1b]0;T\\x07'" },
  { what: 'commander: an invalid choice', args: ['estimate', '--profile', `p${TITLE}`, hostileFile], shows: "'p\\x1b]0;T\\x07' is invalid" },
  { what: 'setup: unknown client', args: ['setup', `c${TITLE}`], shows: 'unknown client "c\\u001b]0;T\\u0007"' },
];

describe('file names and arguments reach the terminal escaped', () => {
  it.each(CASES)('through pipes: $what', ({ args, shows }) => {
    const r = piped(args);
    expect(r.out.toString('utf8')).toContain(shows);
    expectInert(r.out);
  });

  it.runIf(HAS_SCRIPT).each(CASES)('on a terminal (script): $what', ({ args, shows }) => {
    const r = onTty(args);
    expect(r.out.toString('utf8')).toContain(shows);
    expectInert(r.out);
  });
});

/** A stdio "server" that writes hostile stderr in pieces (a UTF-8 sequence and an OSC split across writes) and exits. */
const SERVER = path.join(tmp, 'noisy-server.cjs');
fs.writeFileSync(
  SERVER,
  `const parts = [
  Buffer.from('plain line\\twith a tab\\n'),
  Buffer.from('title \\x1b'), Buffer.from(']0;pwned\\x07 set\\n'),
  Buffer.from([0x73, 0x70, 0x6c, 0x69, 0x74, 0x20, 0x72, 0x6c, 0x6f, 0x20, 0xe2]), Buffer.from([0x80]), Buffer.from([0xae, 0x0a]),
  Buffer.from([0x63, 0x31, 0x20, 0xc2]), Buffer.from([0x9b, 0x32, 0x4a, 0x0a]),
  Buffer.from([0x6c, 0x61, 0x74, 0x69, 0x6e, 0x31, 0x20, 0xe9, 0x20, 0x9b, 0x0a]),
  Buffer.from('caf\\u00e9 \\u2713 ok\\r\\n'),
  Buffer.from('no newline at the end \\x1b[31m'),
];
let i = 0;
const next = () => { if (i < parts.length) { process.stderr.write(parts[i++]); setTimeout(next, 15); } else setTimeout(() => process.exit(0), 30); };
next();
`,
);
/** What the user must see of it: the same lines, controls as text, nothing else changed. */
const EXPECTED_STDERR =
  'plain line\twith a tab\n' +
  'title \\x1b]0;pwned\\x07 set\n' +
  'split rlo \\u202e\n' +
  'c1 \\x9b2J\n' +
  'latin1 \\xe9 \\x9b\n' +
  'caf\u00e9 \u2713 ok\r\n' +
  'no newline at the end \\x1b[31m';

describe("`spillway mcp` passes the wrapped server's stderr through escaped", () => {
  const mcpArgs = ['mcp', '--quiet', '--session', path.join(tmp, 'mcp-session'), '--', process.execPath, SERVER];

  it('through a pipe: line for line, controls visible, everything else byte for byte', () => {
    const r = spawnSync(process.execPath, [...CLI, ...mcpArgs], { cwd: REPO, env, input: '', timeout: 60_000 });
    expect(r.status).toBe(0);
    expect(r.stderr.toString('utf8')).toBe(EXPECTED_STDERR);
    expectInert(r.stderr);
  });

  it.runIf(HAS_SCRIPT)('on a terminal (script)', () => {
    const r = onTty(mcpArgs);
    // The pty adds a CR before each LF (the server's own CRLF arrives as CR CR LF): compare without CRs.
    expect(r.out.toString('utf8').replace(/\r/g, '')).toContain(EXPECTED_STDERR.replace(/\r/g, ''));
    expectInert(r.out);
  });
});

describe('terminalSafeBytes and TerminalSafeLines', () => {
  it('valid UTF-8 is terminalSafe itself; a byte outside UTF-8 shows as \\xNN', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(terminalSafeBytes(Buffer.from(s, 'utf8')).toString('utf8')).toBe(terminalSafe(s));
      }),
    );
    expect(terminalSafeBytes(Buffer.from([0x61, 0x9b, 0x62, 0xc2])).toString()).toBe('a\\x9bb\\xc2');
    const clean = Buffer.from('nothing to escape\n');
    expect(terminalSafeBytes(clean)).toBe(clean);
  });

  it('any chunking gives the same bytes as the whole stream escaped at once, with no raw control', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.array(fc.nat(300), { maxLength: 8 }), (bytes, cuts) => {
        const whole = Buffer.from(bytes);
        const points = [...new Set(cuts.map((c) => c % (whole.length + 1)))].sort((a, b) => a - b);
        const out: Buffer[] = [];
        const lines = new TerminalSafeLines((b) => out.push(b));
        let at = 0;
        for (const p of [...points, whole.length]) {
          lines.push(whole.subarray(at, p));
          at = p;
        }
        lines.end();
        const got = Buffer.concat(out);
        expect(got.equals(terminalSafeBytes(whole))).toBe(true);
        expect(got.toString('utf8')).not.toMatch(RAW_CONTROL);
      }),
    );
  });

  it('writes each complete line at once and holds only the partial one', () => {
    const out: string[] = [];
    const lines = new TerminalSafeLines((b) => out.push(b.toString()));
    lines.push(Buffer.from('one\ntwo\nthr'));
    expect(out).toEqual(['one\ntwo\n']);
    lines.push(Buffer.from('ee\n'));
    expect(out).toEqual(['one\ntwo\n', 'three\n']);
  });
});
