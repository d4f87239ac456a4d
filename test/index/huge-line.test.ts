/**
 * Issue 32, item 1: one Claude Code transcript line holding millions of small content blocks.
 * Before the fix the line was decoded and walked in one piece of work: `serve` answered nothing for
 * the whole import (20 s for 50 MB), ignored SIGTERM, and `spillway context` took gigabytes.
 * - the sliced decoder agrees with JSON.parse, and merges the blocks past its budget (huge-line.ts);
 * - `serve` answers getInfo within 200 ms while a 100 MB line of small blocks is imported, and
 *   SIGTERM ends it within 1 s in the middle of that import;
 * - `spillway context` on the same file stays under CONTEXT_MAX_RSS_MB.
 * The server and the CLI are the real ones, in their own processes, with real SQLite, and app data in
 * a private temporary folder.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveUrl } from '../helpers/serve-url.js';
import { MAX_BUILT_BLOCKS_PER_LINE, decodeLine, decodeSliced, isMergedBlock, jsonOf } from '../../src/index/huge-line.js';
import { Yielder } from '../../src/index/yielder.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const CLI = ['--import', 'tsx', '--conditions=source', path.join(REPO, 'src', 'cli', 'main.ts')];
const TOKEN = 'huge-line-test-token-0123456789abcdef';
/**
 * getInfo during the import: the goal is every answer within ANSWER_MS; on a shared, loaded machine
 * a scheduler pause can stretch one, so the test holds 90% of them to it and every one to
 * ANSWER_MAX_MS (before the fix, every request waited for the whole import: 10 s and more).
 */
const ANSWER_MS = 200;
const ANSWER_MAX_MS = 2000;
/** SIGTERM to exit, during the import. */
const STOP_MS = 1000;
/**
 * Peak RSS of `spillway context` on a transcript with a 100 MB line (the line itself is 100 MB).
 * Measured: 550-810 MB (a line of one 100 MB string: 680 MB); before: 933 MB for `{}` blocks,
 * 1,216 MB for text blocks, 1,210 MB for a Codex output of text blocks.
 */
const CONTEXT_MAX_RSS_MB = 880;
/** `spillway context` on that transcript, start to end (about 12 s on an idle machine; over 300 s before for a 250 MB line of `{}`). */
const CONTEXT_MAX_MS = 150_000;
const LINE_MB = 100;

let tmp: string;

/**
 * The transcripts, each with one tool result that is one line of LINE_MB of small blocks, as the
 * issue found them: Claude Code text blocks (a Read of a huge notebook), Claude Code `{}` blocks (the
 * hostile line: 3 bytes a block), and a Codex output of `input_text` blocks (an MCP result).
 */
const KINDS = {
  'Claude Code text blocks': { dir: 'claude-text', file: 'proj/s1.jsonl', block: (i: number) => `{"type":"text","text":"cell ${i}: x = ${i % 97}"}` },
  'Claude Code {} blocks': { dir: 'claude-empty', file: 'proj/s1.jsonl', block: () => '{}' },
  'a Codex output of input_text blocks': {
    dir: 'codex',
    file: '2026/01/01/rollout-2026-01-01T00-00-00-0199a000-0000-7000-8000-000000000001.jsonl',
    block: (i: number) => `{"type":"input_text","text":"cell ${i}: x = ${i % 97}"}`,
  },
} as const;
type Kind = keyof typeof KINDS;
const transcriptOf = (kind: Kind) => path.join(tmp, KINDS[kind].dir, KINDS[kind].file);
const rootOf = (kind: Kind) => path.join(tmp, KINDS[kind].dir);

/** One transcript of `kind`, streamed to disk. */
async function writeTranscript(kind: Kind): Promise<void> {
  const file = transcriptOf(kind);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const out = fs.createWriteStream(file);
  const write = (s: string) => (out.write(s) ? Promise.resolve() : new Promise<void>((r) => out.once('drain', () => r())));
  const codex = kind === 'a Codex output of input_text blocks';
  const base = { cwd: '/p', version: '2.1.0', sessionId: 's1' };
  if (codex) {
    await write(JSON.stringify({ timestamp: '2026-01-01T00:00:00Z', type: 'session_meta', payload: { id: 's1', cwd: '/p', cli_version: '0.171.0', originator: 'codex_exec' } }) + '\n');
    await write(JSON.stringify({ timestamp: '2026-01-01T00:00:01Z', type: 'response_item', payload: { type: 'function_call', name: 'read_notebook', namespace: 'mcp__nb', arguments: '{}', call_id: 'c1' } }) + '\n');
    await write('{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":[');
  } else {
    await write(JSON.stringify({ ...base, type: 'user', message: { role: 'user', content: 'read the notebook' }, timestamp: '2026-01-01T00:00:00Z' }) + '\n');
    await write(JSON.stringify({ ...base, type: 'assistant', message: { id: 'm1', model: 'claude-x', role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'Read', input: { file_path: '/nb.ipynb' } }], usage: { input_tokens: 10, output_tokens: 5 } }, timestamp: '2026-01-01T00:00:01Z' }) + '\n');
    await write('{"type":"user","sessionId":"s1","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":[');
  }
  let n = 0;
  let chunk = '';
  const block = KINDS[kind].block;
  for (let i = 0; n < LINE_MB * 1024 * 1024; i++) {
    chunk += `${i ? ',' : ''}${block(i)}`;
    if (chunk.length > 1 << 20) {
      n += chunk.length;
      await write(chunk);
      chunk = '';
    }
  }
  if (codex) {
    await write(chunk + ']}}\n');
    await write(JSON.stringify({ timestamp: '2026-01-01T00:00:03Z', type: 'event_msg', payload: { type: 'token_count', info: { last_token_usage: { input_tokens: 30_000, output_tokens: 5 }, model_context_window: 200_000 } } }) + '\n');
  } else {
    await write(chunk + ']}]}}\n');
    await write(JSON.stringify({ ...base, type: 'assistant', message: { id: 'm2', model: 'claude-x', role: 'assistant', content: [{ type: 'text', text: 'done' }], usage: { input_tokens: 30_000, output_tokens: 5 } }, timestamp: '2026-01-01T00:00:03Z' }) + '\n');
  }
  await new Promise<void>((r) => out.end(r));
}

beforeAll(async () => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-huge-line-')));
  for (const kind of Object.keys(KINDS) as Kind[]) await writeTranscript(kind);
}, 300_000);

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the sliced decoder', () => {
  it('gives what JSON.parse gives, and throws where it throws', async () => {
    const good = ['{}', '[]', ' { "a" : [ 1 , 2 ] } \r', '{"a":[1,-2.5e3,{"b":null}],"c":"x\\"y\\\\é\\ud83d\\ude00","e":true,"__proto__":{"z":1}}', '[[],[{}],{"":""}]'];
    for (const s of good) expect((await decodeSliced(Buffer.from(s))).value, s).toStrictEqual(JSON.parse(s));
    const proto = (await decodeSliced(Buffer.from('{"__proto__":{"z":1}}'))).value as Record<string, unknown>;
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
    for (const s of ['{', '{"a":}', '[1,]', '{"a":1,}', '[1 2]', '"abc', 'tru', '{}x', '{"a" 1}']) {
      await expect(decodeSliced(Buffer.from(s)), s).rejects.toThrow(SyntaxError);
    }
  });

  it('merges the blocks past its budget: texts joined as readers join them, other blocks kept as written, tool results kept', async () => {
    const n = MAX_BUILT_BLOCKS_PER_LINE + 30_000;
    const blocks = Array.from({ length: n }, (_, i) => (i % 1000 === 999 ? { type: 'resource', n: i } : i === n - 5 ? { type: 'tool_result', tool_use_id: 'late' } : i === n - 7 ? { type: 'image', source: { data: 'AAAA' } } : { type: 'text', text: `t${i}` }));
    const line = Buffer.from(JSON.stringify({ message: { content: blocks } }));
    const d = await decodeSliced(line, new Yielder());
    const content = (d.value as { message: { content: unknown[] } }).message.content;
    expect(d.merged).toBeGreaterThan(29_000);
    expect(content.length).toBeLessThan(MAX_BUILT_BLOCKS_PER_LINE + 200);
    expect(content.some((b) => isMergedBlock(b))).toBe(true);
    expect(content).toContainEqual({ type: 'tool_result', tool_use_id: 'late' });
    // An image stays a block: readers count it by its pixels, never its base64.
    expect(content).toContainEqual({ type: 'image', source: { data: 'AAAA' } });
    // Every text is still there, in order, and the JSON of the whole comes back as written, modulo the merged texts.
    const texts = content.flatMap((b) => ((b as { type: string }).type === 'text' ? [(b as { text: string }).text] : [])).join('\n');
    expect(texts).toBe(blocks.flatMap((b) => (b.type === 'text' ? [b.text as string] : [])).join('\n'));
    const others = JSON.parse(jsonOf(content)).filter((b: { type: string }) => b.type === 'resource');
    expect(others).toStrictEqual(blocks.filter((b) => b.type === 'resource'));
    // An ordinary line is one JSON.parse, unchanged.
    expect((await decodeLine(Buffer.from('{"a":[1]}'))).value).toStrictEqual({ a: [1] });
  });
});

describe('the sliced decoder past its budget', () => {
  /** A line whose element `el` comes after MAX_BUILT_BLOCKS_PER_LINE blocks, where elements are merged. */
  const past = (el: string) => `{"content":[${'{},'.repeat(MAX_BUILT_BLOCKS_PER_LINE + 10)}${el},{}]}`;

  it('checks every merged element as JSON.parse does (without building it)', async () => {
    const bad = ['{"a" 1}', '{"a":01}', '{"a":1.}', '{"a":"\u0001"}', '{"a":"\\q"}', '{"a":tru}', '{"a":[1,]}', '{,}', '{"a":1,}', '[1 2]', '"\\u12G4"', '-', '1e', '{"a":1]', '[1}', '{"a":nul}', '{"a":-}', "{'a':1}", '{"a":1}}', 'x'];
    for (const el of bad) {
      const line = past(el);
      expect(() => JSON.parse(line), el).toThrow(SyntaxError);
      await expect(decodeSliced(Buffer.from(line)), el).rejects.toThrow(SyntaxError);
    }
    const good = ['{"a":-0.5e+3,"b":[true,false,null,{}],"c":"\\u00e9\\n\\"\\\\"}', '"s"', '0', '-12.5E-2', '[]', ' { "a" : [ ] } ', '{"type":"resource","n":[{"type":"text","text":"deep"}]}'];
    for (const el of good) {
      const line = past(el);
      const d = await decodeSliced(Buffer.from(line));
      expect(d.merged, el).toBeGreaterThan(0);
      // Kept as the JSON the transcript wrote: written back, it is the line's value.
      expect(JSON.parse(jsonOf(d.value)), el).toStrictEqual(JSON.parse(line));
    }
  });

  it('keeps a run of millions of {} as the JSON it was, and text runs of each type (Codex input_text) apart', async () => {
    const n = 1_000_000;
    const line = `{"content":[${Array.from({ length: n }, () => '{}').join(',')}]}`;
    const d = await decodeSliced(Buffer.from(line), new Yielder());
    const content = (d.value as { content: unknown[] }).content;
    expect(d.merged).toBe(n - MAX_BUILT_BLOCKS_PER_LINE);
    expect(content.length).toBe(MAX_BUILT_BLOCKS_PER_LINE + 1);
    expect(isMergedBlock(content[content.length - 1])).toBe(true);
    expect(jsonOf(d.value)).toBe(line);
    // Texts of a type other than `text`, and a text type written with an escape, are joined as their own runs.
    const texts = `{"output":[${'{},'.repeat(MAX_BUILT_BLOCKS_PER_LINE)}{"type":"input_text","text":"a"},{"type":"input_t\\u0065xt","text":"b"},{"type":"text","text":"c"}]}`;
    const t = ((await decodeSliced(Buffer.from(texts))).value as { output: unknown[] }).output;
    expect(t.slice(-2)).toStrictEqual([
      { type: 'input_text', text: 'a\nb' },
      { type: 'text', text: 'c' },
    ]);
  });
});

describe.each(Object.keys(KINDS) as Kind[])('a transcript line of millions of small blocks: %s', (kind) => {
  /** The real `serve` on the transcript's root, with a fresh index: the import starts right after the URL. */
  async function startServe(): Promise<{ call: (method: string) => Promise<{ ms: number; body: unknown }>; stop: () => Promise<number>; kill: () => void; stderr: () => string }> {
    const dir = fs.mkdtempSync(path.join(tmp, 'serve-'));
    const child = spawn(process.execPath, [...CLI, 'serve', '--root', rootOf(kind), '--db', path.join(dir, 'index.sqlite'), '--no-default-roots'], {
      cwd: REPO,
      env: { ...process.env, SPILLWAY_HOME: path.join(dir, 'home'), SPILLWAY_TOKEN: TOKEN },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number>((resolve) => child.on('exit', () => resolve(performance.now())));
    const url = await serveUrl(child, () => stderr);
    const base = new URL(url).origin;
    return {
      call: async (method) => {
        const t0 = performance.now();
        const r = await fetch(`${base}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body: '{}', signal: AbortSignal.timeout(60_000) });
        return { ms: performance.now() - t0, body: await r.json() };
      },
      stop: async () => {
        const t0 = performance.now();
        child.kill('SIGTERM');
        return (await Promise.race([exited, new Promise<number>((r) => setTimeout(() => r(Infinity), 30_000))])) - t0;
      },
      kill: () => child.kill('SIGKILL'),
      stderr: () => stderr,
    };
  }

  const listed = async (s: Awaited<ReturnType<typeof startServe>>) => ((await s.call('listPayloads')).body as { result: { total: number } }).result.total;

  it(`serve answers getInfo within ${ANSWER_MS} ms (90%) during its import`, async () => {
    const s = await startServe();
    try {
      const times: number[] = [];
      const until = performance.now() + 60_000;
      while (performance.now() < until && (await listed(s)) === 0) {
        times.push((await s.call('getInfo')).ms);
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await listed(s), 'the import finished').toBe(1);
      const said = `getInfo times during the import: ${times.map((t) => t.toFixed(0)).join(', ')}`;
      console.log(said);
      expect(times.length, said).toBeGreaterThanOrEqual(5);
      const sorted = [...times].sort((a, b) => a - b);
      expect(sorted[Math.floor(sorted.length * 0.9)], said).toBeLessThan(ANSWER_MS);
      expect(sorted[sorted.length - 1], said).toBeLessThan(ANSWER_MAX_MS);
    } finally {
      s.kill();
    }
  }, 120_000);

  it(`SIGTERM ends serve within ${STOP_MS} ms in the middle of the import`, async () => {
    const s = await startServe();
    try {
      await new Promise((r) => setTimeout(r, 700));
      expect(await listed(s), 'the import is still running when SIGTERM comes (else the test proves nothing)').toBe(0);
      const ms = await s.stop();
      console.log(`serve stopped ${ms.toFixed(0)} ms after SIGTERM, mid-import`);
      expect(ms, `serve's stderr: ${s.stderr().slice(-500)}`).toBeLessThan(STOP_MS);
    } finally {
      s.kill();
    }
  }, 120_000);

  it(`spillway context on it stays under ${CONTEXT_MAX_RSS_MB} MB and ${CONTEXT_MAX_MS / 1000} s, and says its estimate was made in bulk`, () => {
    const time = '/usr/bin/time';
    if (!fs.existsSync(time)) return void console.warn('skipped: no /usr/bin/time to measure the peak RSS');
    const dir = fs.mkdtempSync(path.join(tmp, 'context-'));
    const t0 = performance.now();
    const r = spawnSync(time, ['-v', process.execPath, ...CLI, 'context', transcriptOf(kind), '--db', path.join(dir, 'index.sqlite'), '--json'], {
      cwd: REPO,
      env: { ...process.env, SPILLWAY_HOME: path.join(dir, 'home') },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      timeout: CONTEXT_MAX_MS + 60_000,
    });
    const ms = performance.now() - t0;
    expect(r.status, r.stderr.slice(-2000)).toBe(0);
    expect(ms, `spillway context took ${ms.toFixed(0)} ms`).toBeLessThan(CONTEXT_MAX_MS);
    const rssMb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)![1]) / 1024;
    expect(rssMb, `peak RSS ${rssMb.toFixed(0)} MB`).toBeLessThan(CONTEXT_MAX_RSS_MB);
    console.log(`spillway context on a ${LINE_MB} MB line of ${kind}: peak RSS ${rssMb.toFixed(0)} MB, ${ms.toFixed(0)} ms`);
    const t = JSON.parse(r.stdout) as { turns: Array<{ tools: Array<{ tokens: number }> }>; notes: string[] };
    // The result was read and estimated (in bulk for the merged runs), not skipped, and the figures say so.
    expect(t.turns.flatMap((x) => x.tools.map((y) => y.tokens)).some((n) => n > 0)).toBe(true);
    expect(t.notes.join('\n')).toMatch(/merged into runs and estimated in bulk/);
  }, CONTEXT_MAX_MS + 120_000);
});
