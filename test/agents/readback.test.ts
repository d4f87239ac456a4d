/** What a tool call reads of a file (src/agents/readback.ts and each client's readback.ts), on the commands agents write. */
import { describe, expect, it } from 'vitest';
import { readAccessesOf, shellReads, shellWords } from '../../src/agents/index.js';

const F = '/home/u/.local/share/spillway/sessions/s1/long_responses/20261201T084321913Z_Bash_ab12cd34_0.txt';

describe('shellWords', () => {
  it('splits words and operators the way a shell does, quotes and escapes included', () => {
    expect(shellWords(`grep -n 'a b' "c \\"d\\"" e\\ f | head -n 3 && echo x; tail 2>&1 >out # note`)).toEqual([
      { word: 'grep' },
      { word: '-n' },
      { word: 'a b' },
      { word: 'c "d"' },
      { word: 'e f' },
      { op: '|' },
      { word: 'head' },
      { word: '-n' },
      { word: '3' },
      { op: '&&' },
      { word: 'echo' },
      { word: 'x' },
      { op: ';' },
      { word: 'tail' },
      { op: '2>&1' },
      { op: '>' },
      { word: 'out' },
    ]);
  });
});

describe('shellReads', () => {
  const one = (cmd: string) => shellReads(cmd).map(({ path, part }) => ({ path, part }));
  it('sed -n, head, tail, cat', () => {
    expect(one(`sed -n '120,180p' ${F}`)).toEqual([{ path: F, part: { kind: 'lines', start: 120, end: 180 } }]);
    expect(one(`sed -n 7p ${F}`)).toEqual([{ path: F, part: { kind: 'lines', start: 7 } }]);
    expect(one(`head -n 40 ${F}`)).toEqual([{ path: F, part: { kind: 'lines', start: 1, end: 40 } }]);
    expect(one(`head -5 ${F}`)).toEqual([{ path: F, part: { kind: 'lines', start: 1, end: 5 } }]);
    expect(one(`head -c 2048 ${F}`)).toEqual([{ path: F, part: { kind: 'bytes', start: 0, end: 2048 } }]);
    expect(one(`tail -n 25 ${F}`)).toEqual([{ path: F, part: { kind: 'tail', count: 25 } }]);
    expect(one(`tail -n +300 ${F}`)).toEqual([{ path: F, part: { kind: 'lines', start: 300 } }]);
    expect(one(`cat ${F}`)).toEqual([{ path: F, part: { kind: 'whole' } }]);
  });
  it('grep, rg and jq: the pattern or filter, its dialect and case', () => {
    expect(one(`grep -n -i "ERROR" ${F}`)).toEqual([{ path: F, part: { kind: 'grep', pattern: 'ERROR', regex: 'basic', ignoreCase: true } }]);
    expect(one(`grep -C 3 -E 'fail(ed)?' ${F}`)).toEqual([{ path: F, part: { kind: 'grep', pattern: 'fail(ed)?', regex: 'extended', ignoreCase: false } }]);
    expect(one(`rg -F -e 'a.b' ${F}`)).toEqual([{ path: F, part: { kind: 'grep', pattern: 'a.b', regex: 'fixed', ignoreCase: false } }]);
    expect(one(`jq -r '.items[0].id' ${F}`)).toEqual([{ path: F, part: { kind: 'json', path: '.items[0].id' } }]);
  });
  it('a filter after a pipe narrows what was read of the file', () => {
    expect(one(`cat ${F} | grep ERROR | head -n 5`)).toEqual([{ path: F, part: { kind: 'grep', pattern: 'ERROR', regex: 'basic', ignoreCase: false } }]);
    expect(one(`nl -ba ${F} | sed -n '10,20p'`)).toEqual([{ path: F, part: { kind: 'lines', start: 10, end: 20 } }]);
    expect(one(`cat ${F} | wc -l`)).toEqual([{ path: F, part: { kind: 'whole' } }]);
  });
  it('commands that read nothing, and writes, are not reads', () => {
    expect(one(`ls -la /tmp && echo ${F} > /tmp/x`)).toEqual([]);
  });
});

describe('readAccessesOf, per client', () => {
  it('Claude Code: Read with offset and limit (offset is the first line), Grep, Bash', () => {
    expect(readAccessesOf('claude-code', 'Read', { file_path: F, offset: 120, limit: 61 })).toEqual([{ path: F, via: 'read', part: { kind: 'lines', start: 120, end: 180 } }]);
    expect(readAccessesOf('claude-code', 'Grep', { pattern: 'ERROR', path: F, '-i': true })[0]!.part).toEqual({ kind: 'grep', pattern: 'ERROR', regex: 'extended', ignoreCase: true });
    expect(readAccessesOf('claude-code', 'Bash', { command: `grep -n ERROR ${F}` })[0]!.via).toBe('shell');
  });
  it('Codex: exec_command cmd, and argv through bash -lc', () => {
    expect(readAccessesOf('codex', 'exec_command', { cmd: `sed -n 5,9p ${F}` })[0]!.part).toEqual({ kind: 'lines', start: 5, end: 9 });
    expect(readAccessesOf('codex', 'shell', { command: ['bash', '-lc', `head -n 3 ${F}`] })[0]!.part).toEqual({ kind: 'lines', start: 1, end: 3 });
  });
  it('Gemini CLI: read_file offset is 0-based', () => {
    expect(readAccessesOf('gemini', 'read_file', { absolute_path: F, offset: 119, limit: 61 })[0]!.part).toEqual({ kind: 'lines', start: 120, end: 180 });
    expect(readAccessesOf('gemini', 'run_shell_command', { command: `tail -n 2 ${F}` })[0]!.part).toEqual({ kind: 'tail', count: 2 });
  });
  it('the proxy drill-down tools under any prefix and a free suffix', () => {
    expect(readAccessesOf('claude-code', 'mcp__fs__spillway_read', { path: F, startLine: 120, endLine: 180 })[0]).toEqual({ path: F, via: 'drill-down', part: { kind: 'lines', start: 120, end: 180 } });
    expect(readAccessesOf('codex', 'spillway_grep_2', { path: F, pattern: 'ERROR' })[0]!.part).toEqual({ kind: 'grep', pattern: 'ERROR', regex: 'fixed', ignoreCase: true });
    expect(readAccessesOf(undefined, 'spillway_read', { path: F, offset: 100, limit: 50 })[0]!.part).toEqual({ kind: 'chars', start: 100, end: 150 });
    expect(readAccessesOf('gemini', 'mcp_fs_spillway_query', { handle: 'h1', where: ['level=error'] })[0]).toMatchObject({ path: '', part: { kind: 'query', handle: 'h1' } });
  });
  it('a tool of another client, or an unknown one, reads nothing', () => {
    expect(readAccessesOf('claude-code', 'WebFetch', { url: F })).toEqual([]);
  });
});
