import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineSplitter, LineWriter } from '../../src/integrations/mcp/lines.js';
import { idKey, peekLine } from '../../src/integrations/mcp/jsonrpc.js';
import { chunkAt } from './helpers.js';

function split(chunks: Buffer[], max?: number) {
  const lines: string[] = [];
  const s = new LineSplitter({ onLine: (l) => lines.push(l.toString('utf8')) }, max);
  for (const c of chunks) s.push(c);
  s.end();
  return lines;
}

describe('LineSplitter', () => {
  it('gives back the same lines however the stream is chunked (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', minLength: 1 }).map((s) => s.replace(/\n/g, ' ')), { minLength: 1, maxLength: 20 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 30 }),
        (lines, cuts) => {
          const buf = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
          expect(split(chunkAt(buf, cuts))).toEqual(lines);
        },
      ),
    );
  });

  it('keeps multi-byte characters split across chunks intact', () => {
    const buf = Buffer.from('{"t":"日本語 ✓ 🎉"}\n', 'utf8');
    for (let i = 1; i < buf.length; i++) expect(split([buf.subarray(0, i), buf.subarray(i)])).toEqual(['{"t":"日本語 ✓ 🎉"}']);
  });

  it('delivers a final line without a newline at end of input, and skips empty lines', () => {
    expect(split([Buffer.from('a\n\nb')])).toEqual(['a', 'b']);
  });

  it('joins a 32 MB line from 64 KiB chunks in linear time', () => {
    const line = Buffer.alloc(32 * 1024 * 1024, 0x61);
    const chunks: Buffer[] = [];
    for (let i = 0; i < line.length; i += 65536) chunks.push(line.subarray(i, i + 65536));
    chunks.push(Buffer.from('\n'));
    let got: Buffer | undefined;
    const s = new LineSplitter({ onLine: (l) => (got = l) });
    for (const c of chunks) s.push(c);
    expect(got?.length).toBe(line.length);
    expect(got!.equals(line)).toBe(true);
  });

  it('streams a line over the buffering limit through instead of holding it', () => {
    const out = new PassThrough();
    const received: Buffer[] = [];
    out.on('data', (c: Buffer) => received.push(c));
    const w = new LineWriter(out);
    const s = new LineSplitter(
      {
        onLine: (l) => w.writeLine(l),
        onOversizedStart: (head) => w.beginStreamedLine(head),
        onOversizedChunk: (c) => w.streamChunk(c),
        onOversizedEnd: () => w.endStreamedLine(),
      },
      100,
    );
    const big = 'x'.repeat(1000);
    s.push(Buffer.from(`small\n${big.slice(0, 300)}`));
    // A line written by someone else mid-stream waits for the streamed line to end.
    w.writeLine('queued');
    expect(s.pendingBytes).toBe(0);
    s.push(Buffer.from(`${big.slice(300)}\nafter\n`));
    s.end();
    expect(Buffer.concat(received).toString()).toBe(`small\n${big}\nqueued\nafter\n`);
  });
});

describe('peekLine', () => {
  const arbId = fc.oneof(fc.integer({ min: -1e6, max: 1e9 }), fc.string({ maxLength: 20 }));
  const arbPayload = fc.jsonValue({ maxDepth: 4 });

  it('finds kind and id of SDK-ordered and Python-ordered messages, and is never wrong (property)', () => {
    fc.assert(
      fc.property(arbId, arbPayload, fc.constantFrom('sdk-result', 'py-result', 'sdk-error', 'request', 'notification'), (id, payload, shape) => {
        let msg: unknown;
        switch (shape) {
          case 'sdk-result':
            msg = { result: { v: payload, id: 'decoy', tail: '"id":1}' }, jsonrpc: '2.0', id };
            break;
          case 'py-result':
            msg = { jsonrpc: '2.0', id, result: { v: payload } };
            break;
          case 'sdk-error':
            msg = { jsonrpc: '2.0', id, error: { code: -1, message: JSON.stringify(payload) } };
            break;
          case 'request':
            msg = { method: 'x/y', params: { v: payload }, jsonrpc: '2.0', id };
            break;
          default:
            msg = { method: 'notifications/z', params: { v: payload, id: 3 }, jsonrpc: '2.0' };
        }
        const p = peekLine(Buffer.from(JSON.stringify(msg)));
        const truth = JSON.parse(JSON.stringify(msg)) as { id?: unknown; method?: unknown };
        if (p.kind === 'message') expect(typeof truth.method).toBe('string');
        if (p.kind === 'response') expect(truth.method).toBeUndefined();
        if (p.id !== undefined) expect(idKey(p.id)).toBe(idKey(truth.id));
        if (shape === 'request' || shape === 'notification') expect(p.kind).toBe('message');
        if (shape === 'sdk-result' || shape === 'py-result' || shape === 'sdk-error') expect(p.kind).not.toBe('message');
      }),
      { numRuns: 500 },
    );
  });

  it('does not take an id from inside a nested object at the end of the line', () => {
    const p = peekLine(Buffer.from('{"jsonrpc":"2.0","result":{"x":{"id":7}}}'));
    expect(p.kind).toBe('response');
    expect(p.id).toBeUndefined();
  });

  it('reads the id of the SDK serialization order from the tail', () => {
    expect(peekLine(Buffer.from(`{"result":{"content":[{"type":"text","text":"${'a'.repeat(5000)}"}]},"jsonrpc":"2.0","id":42}`))).toEqual({
      kind: 'response',
      id: 42,
    });
    expect(peekLine(Buffer.from('{"result":{},"jsonrpc":"2.0","id":"abc-1"}'))).toEqual({ kind: 'response', id: 'abc-1' });
  });

  it('says unknown for what it cannot tell cheaply', () => {
    expect(peekLine(Buffer.from('[{"jsonrpc":"2.0","id":1,"result":{}}]')).kind).toBe('unknown');
    expect(peekLine(Buffer.from('not json')).kind).toBe('unknown');
  });
});
