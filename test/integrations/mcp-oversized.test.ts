import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { guardLargeResult, restorePayload } from '../../src/pipeline/index.js';
import { McpProxy } from '../../src/integrations/mcp/proxy.js';
import { createDrillDownTools } from '../../src/integrations/mcp/drilldown.js';
import { LineSplitter } from '../../src/integrations/mcp/lines.js';
import { OversizedLine, previewText, readEnvelope, readTail } from '../../src/integrations/mcp/oversized.js';
import { chunkAt, tmpDir } from './helpers.js';

const HOSTILE = path.join(import.meta.dirname, 'fixtures', 'hostile-server.mjs');

describe('OversizedLine: the result value of a line too long to hold, cut out as it streams', () => {
  it('queues exactly the bytes of `result` and finds the id at either end, however the line is chunked (property)', () => {
    const arbId = fc.oneof(fc.integer({ min: -1e6, max: 1e9 }), fc.stringMatching(/^[a-z0-9-]{0,20}$/));
    // Values that end like an envelope (`,"id":7}`) and strings that hold one, to try to fool the tail.
    const arbValue = fc.record({
      content: fc.array(fc.record({ type: fc.constant('text'), text: fc.oneof(fc.string(), fc.constant('x","jsonrpc":"2.0","id":9}')) }), { maxLength: 3 }),
      extra: fc.jsonValue({ maxDepth: 3 }),
      id: fc.integer(),
    });
    fc.assert(
      fc.property(arbId, arbValue, fc.constantFrom('sdk', 'id-first', 'pretty'), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }), fc.integer({ min: 0, max: 3 }), (id, value, shape, cuts, headCount) => {
        const v = JSON.stringify(value);
        const line =
          shape === 'sdk'
            ? `{"result":${v},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`
            : shape === 'id-first'
              ? `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${v}}`
              : `{ "jsonrpc" : "2.0", "id" : ${JSON.stringify(id)}, "result" : ${v} }\r`;
        const chunks = chunkAt(Buffer.from(line), cuts).filter((b) => b.length > 0);
        // The head is what the splitter held when the line went over its limit: never less than the envelope's 512 bytes.
        let n = 0;
        for (let bytes = 0; n < chunks.length && (n < headCount || bytes < 512); n++) bytes += chunks[n]!.length;
        const out: Buffer[] = [];
        const o = new OversizedLine(chunks.slice(0, Math.max(1, n)), (c) => out.push(Buffer.from(c)));
        for (const c of chunks.slice(Math.max(1, n))) o.push(c);
        const r = o.finish();
        expect(Buffer.concat(out).toString()).toBe(v);
        expect(r).toEqual({ id, exact: true, saved: 'value' });
      }),
      { numRuns: 400 },
    );
  });

  it('tells a server request from a response, and queues a line whose envelope it cannot read whole', () => {
    expect(readEnvelope('{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{')).toEqual({ kind: 'message', id: 'srv-1' });
    expect(readEnvelope('{"method":"notifications/x","params":{')).toEqual({ kind: 'message' });
    expect(readEnvelope('{"jsonrpc":"2.0","id":3,"error":{"code":1')).toMatchObject({ kind: 'response', member: 'error', id: 3 });
    expect(readTail('{"a":{"id":7}}}')).toEqual({ valueEnd: 14 });
    const out: Buffer[] = [];
    const o = new OversizedLine([Buffer.from('[1,2,')], (c) => out.push(Buffer.from(c)));
    o.push(Buffer.from('3]'));
    expect(o.finish()).toEqual({ exact: false, saved: 'whole line' });
    expect(Buffer.concat(out).toString()).toBe('[1,2,3]');
    // An envelope it cannot read at the head still gives its id at the end, so the client waiting for it is answered.
    const whole = '{"weird":true,"result":{"a":1},"jsonrpc":"2.0","id":5}';
    const kept: Buffer[] = [];
    const w = new OversizedLine([Buffer.from(whole)], (c) => kept.push(Buffer.from(c)));
    expect(w.finish()).toEqual({ id: 5, exact: false, saved: 'whole line' });
    expect(Buffer.concat(kept).toString()).toBe(whole);
  });

  it('previews the first text block as the model would read it, else the JSON', () => {
    expect(previewText(Buffer.from('{"content":[{"type":"text","text":"a\\nb \\"q\\" \\u00e9\\ud83d\\ude00 and more'))).toEqual({ text: 'a\nb "q" é😀 and more', json: false });
    expect(previewText(Buffer.from('{"content":[{"text":"first","type":"text"}]}'))).toEqual({ text: 'first', json: false });
    expect(previewText(Buffer.from('{"structuredContent":{"rows":[1,2'))).toEqual({ text: '{"structuredContent":{"rows":[1,2', json: true });
  });
});

describe('the proxy, with messages over its inspection limit (a small limit, a real server process)', () => {
  const MAX_LINE_BYTES = 64 * 1024;
  const HUGE_BYTES = 1024 * 1024;
  const running: Array<{ input: PassThrough; done: Promise<number> }> = [];
  afterEach(async () => {
    for (const r of running.splice(0)) {
      r.input.end();
      await r.done;
    }
  });

  function start(env: Record<string, string> = {}) {
    const home = tmpDir();
    const session = path.join(home, 's');
    const input = new PassThrough();
    const output = new PassThrough();
    const errors = new PassThrough();
    let stderr = '';
    errors.on('data', (c: Buffer) => (stderr += c.toString()));
    const lines: Array<Record<string, unknown>> = [];
    const rawLines: Buffer[] = [];
    const waiters: Array<() => void> = [];
    const splitter = new LineSplitter({
      onLine: (l) => {
        rawLines.push(l);
        lines.push(JSON.parse(l.toString()) as Record<string, unknown>);
        for (const w of waiters.splice(0)) w();
      },
    });
    output.on('data', (c: Buffer) => splitter.push(c));
    const proxy = new McpProxy({
      command: process.execPath,
      args: [HOSTILE],
      env: { ...process.env, HUGE_BYTES: String(HUGE_BYTES), HUGE_SHA_FILE: path.join(home, 'sha.json'), ...env },
      sessionDir: session,
      guard: guardLargeResult,
      localTools: (s, dir) => createDrillDownTools({ session: s, sessionDir: dir }),
      maxLineBytes: MAX_LINE_BYTES,
      input,
      output,
      errorOutput: errors,
    });
    const done = proxy.run();
    running.push({ input, done });
    const send = (msg: Record<string, unknown>) => input.write(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n');
    const answer = async (id: unknown): Promise<Record<string, unknown>> => {
      for (;;) {
        const found = lines.find((m) => m.id === id && m.method === undefined);
        if (found) return found;
        await new Promise<void>((r) => waiters.push(r));
      }
    };
    const server = () => JSON.parse(fs.readFileSync(path.join(home, 'sha.json'), 'utf8')) as { sha256: string; bytes: number };
    return { send, answer, lines, rawLines, stderr: () => stderr, server, session };
  }

  async function ready(p: ReturnType<typeof start>) {
    p.send({ id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    await p.answer(0);
    p.send({ id: 'l', method: 'tools/list', params: {} });
    await p.answer('l');
  }

  it('spills a tool result whose id comes first, and restore gives back its exact bytes', async () => {
    const p = start({ HUGE_ORDER: 'id-first' });
    await ready(p);
    p.send({ id: 7, method: 'tools/call', params: { name: 'huge', arguments: {} } });
    const r = (await p.answer(7)).result as { content: Array<{ text: string }>; _meta: Record<string, { payloadPath: string; metaPath: string }> };
    expect(Math.max(...p.rawLines.map((l) => l.length))).toBeLessThan(MAX_LINE_BYTES);
    expect(r.content[0]!.text).toContain('streamed to disk unread');
    const spill = r._meta['spillway/spill']!;
    const restored = await restorePayload(spill.payloadPath);
    expect(restored.length).toBe(p.server().bytes);
    expect(crypto.createHash('sha256').update(restored).digest('hex')).toBe(p.server().sha256);
    expect(JSON.parse(restored.toString()).content[0].text.startsWith('line 0 "value"=0')).toBe(true);
    expect(JSON.parse(fs.readFileSync(spill.metaPath, 'utf8'))).toMatchObject({ tool: 'huge', payloadIsOriginal: true, origin: 'bytes' });
  });

  it('answers an oversized response to another method with a JSON-RPC error naming where it was saved', async () => {
    const p = start();
    await ready(p);
    p.send({ id: 'r', method: 'resources/read', params: { uri: 'x://huge' } });
    const msg = await p.answer('r');
    const error = msg.error as { code: number; message: string; data: { payloadPath: string; sha256: string } };
    expect(error.code).toBe(-32603);
    expect(error.message).toMatch(/response to resources\/read is .* not forwarded\. Saved: /);
    expect(error.data.sha256).toBe(p.server().sha256);
    expect(fs.statSync(error.data.payloadPath).size).toBe(p.server().bytes);
    // The proxy goes on: a small call still works.
    p.send({ id: 8, method: 'tools/call', params: { name: 'spillway_read_3', arguments: { path: error.data.payloadPath, offset: 0, limit: 40 } } });
    const read = (await p.answer(8)).result as { content: Array<{ text: string }> };
    expect(read.content[0]!.text).toContain('line 0 "value"=0');
  });

  it('drops an oversized request from the server, answers the server with an error, and forwards none of it', async () => {
    const p = start();
    await ready(p);
    p.send({ id: 9, method: 'tools/call', params: { name: 'ask', arguments: {} } });
    const r = (await p.answer(9)).result as { content: Array<{ text: string }> };
    // The server's sampling request never reached the client; the server got an error instead of waiting for ever.
    expect(p.lines.some((m) => m.method === 'sampling/createMessage')).toBe(false);
    const got = JSON.parse(r.content[0]!.text) as { id: string; error: { code: number; message: string } };
    expect(got.id).toBe('srv-1');
    expect(got.error.message).toMatch(/over the .* the MCP proxy can read; it was not forwarded/);
    expect(p.stderr()).toContain('dropped a server request or notification over the');
  });
});
