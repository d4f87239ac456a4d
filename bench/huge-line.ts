/**
 * Issue 32: a Claude Code transcript line of millions of small content blocks costs the index no
 * more than a line of the same size holding one string (the cost must be per byte, not per block).
 * The transcripts are written fresh in this run, each indexed into a fresh database (listing, full
 * text and the timeline's estimate of the result), best of two; the ratio's goal is <= 1.5x. Two
 * kinds of blocks: text blocks (a Read of a huge notebook) and `{}` (the hostile line: 3 bytes a
 * block, the most blocks a byte can buy).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openIndex } from '../src/index/index.js';
import { openTimelines } from '../src/timeline/index.js';

const LINE_BYTES = 50 * 1024 * 1024;
const RUNS = 2;

type Kind = 'blocks' | 'empty' | 'string';

function write(file: string, kind: Kind): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'w');
  const base = { cwd: '/p', version: '2.1.0', sessionId: 's1' };
  fs.writeSync(fd, JSON.stringify({ ...base, type: 'assistant', message: { id: 'm1', model: 'claude-x', role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'Read', input: { file_path: '/nb.ipynb' } }], usage: { input_tokens: 10, output_tokens: 5 } } }) + '\n');
  fs.writeSync(fd, '{"type":"user","sessionId":"s1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu1","content":');
  let n = 0;
  if (kind === 'string') {
    fs.writeSync(fd, '"');
    for (let i = 0; n < LINE_BYTES; i++) {
      const chunk = Array.from({ length: 20_000 }, (_, k) => `cell ${i * 20_000 + k}: x = ${k % 97}`).join('\\n');
      fs.writeSync(fd, chunk + '\\n');
      n += chunk.length + 2;
    }
    fs.writeSync(fd, '"');
  } else {
    fs.writeSync(fd, '[');
    for (let i = 0; n < LINE_BYTES; i++) {
      const chunk = Array.from({ length: 20_000 }, (_, k) => (kind === 'empty' ? '{}' : `{"type":"text","text":"cell ${i * 20_000 + k}: x = ${k % 97}"}`)).join(',');
      fs.writeSync(fd, (i ? ',' : '') + chunk);
      n += chunk.length + 1;
    }
    fs.writeSync(fd, ']');
  }
  fs.writeSync(fd, '}]}}\n');
  fs.writeSync(fd, JSON.stringify({ ...base, type: 'assistant', message: { id: 'm2', model: 'claude-x', role: 'assistant', content: [{ type: 'text', text: 'done' }], usage: { input_tokens: 30_000, output_tokens: 5 } } }) + '\n');
  fs.closeSync(fd);
}

async function importOnce(root: string, dbDir: string): Promise<number> {
  const dbPath = path.join(fs.mkdtempSync(path.join(dbDir, 'db-')), 'index.sqlite');
  const index = openIndex({ dbPath });
  const timelines = openTimelines(index);
  const t0 = performance.now();
  const r = index.addRoot(root);
  await index.scan({ rootId: r.id });
  const session = index.listSessions({ rootId: r.id })[0];
  if (session) await timelines.timeline({ sessionId: session.id });
  const ms = performance.now() - t0;
  await index.close();
  return ms;
}

export async function run(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-huge-line-'));
  try {
    const roots: Record<Kind, string> = { blocks: path.join(tmp, 'blocks'), empty: path.join(tmp, 'empty'), string: path.join(tmp, 'string') };
    for (const k of Object.keys(roots) as Kind[]) write(path.join(roots[k], 'proj', 's1.jsonl'), k);
    const best: Record<Kind, number> = { blocks: Infinity, empty: Infinity, string: Infinity };
    for (let i = 0; i < RUNS; i++) for (const k of ['string', 'blocks', 'empty'] as Kind[]) best[k] = Math.min(best[k], await importOnce(roots[k], tmp));
    const mb = (k: Kind) => `${(fs.statSync(path.join(roots[k], 'proj', 's1.jsonl')).size / 1024 / 1024).toFixed(0)} MB`;
    const what: Record<Kind, string> = { blocks: 'small text blocks', empty: '`{}` blocks', string: 'one string' };
    console.log('');
    console.log('| measure | time | baseline | baseline time | ratio | goal |');
    console.log('| --- | ---: | --- | ---: | ---: | --- |');
    for (const k of ['blocks', 'empty'] as Kind[]) {
      console.log(
        `| import a transcript with a 50 MB line of ${what[k]} (${mb(k)}) | ${best[k].toFixed(0)} ms | the same with a 50 MB line of ${what.string} (${mb('string')}) | ${best.string.toFixed(0)} ms | ${(best[k] / best.string).toFixed(2)}x | <= 1.5x |`,
      );
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
