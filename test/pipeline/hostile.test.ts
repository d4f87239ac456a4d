import crypto from 'node:crypto';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  detectContent,
  guardLargeResult,
  jsonBytesUpperBound,
  readMeta,
  restorePayload,
  safeStringify,
  MAX_MESSAGE_CHARS,
} from '../../src/pipeline/index.js';
import fc from 'fast-check';
import { fixture, tmpSession } from './helpers.js';

const LONG_B64_RE = /[A-Za-z0-9+/]{200,}/;

async function spillOk(result: unknown, limitTokens = 2000) {
  const s = tmpSession();
  const r = await guardLargeResult(result, { sessionPath: s, limitTokens, toolName: 'hostile' });
  expect(r).not.toBeNull();
  expect(r!.message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
  expect(r!.message).not.toMatch(LONG_B64_RE);
  return r!;
}

describe('never fail open: hostile inputs', () => {
  it('100,000-deep nesting, as JSON text and as a parsed value', async () => {
    const text = '['.repeat(100_000) + '"deep"' + ']'.repeat(100_000);
    const r = await spillOk(text);
    expect((await restorePayload(r.payloadPath!)).toString()).toBe(text);
    let v: unknown = 'deep';
    for (let i = 0; i < 100_000; i++) v = [v];
    const r2 = await spillOk(v);
    expect((await restorePayload(r2.payloadPath!)).toString()).toBe(text);
    expect((await readMeta(r2.metaPath!)).errors?.join(' ')).toMatch(/JSON.stringify failed/);
  });

  it('invalid UTF-8 bytes are kept exactly as received', async () => {
    const latin1Text = Buffer.from('caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, na\u00efve fa\u00e7ade\n'.repeat(3000), 'latin1');
    expect(detectContent(latin1Text).binary).toBe(false);
    const r = await spillOk(latin1Text);
    expect(r.assets).toEqual([]);
    expect((await restorePayload(r.payloadPath!)).equals(latin1Text)).toBe(true);
    expect(fs.readFileSync(r.payloadPath!).equals(latin1Text)).toBe(true);
  });

  it('lone surrogates: saved as UTF-8 with U+FFFD, said so, preview well-formed', async () => {
    const text = ('bad \ud800 pair \udc00 ok \ud83d\ude00 ').repeat(8000);
    const r = await spillOk(text);
    expect(r.errors.join(' ')).toMatch(/lone surrogates/);
    const back = (await restorePayload(r.payloadPath!)).toString('utf8');
    expect(back).toBe(text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'));
    expect(r.message).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });

  it('__proto__ and constructor keys neither pollute nor get lost', async () => {
    const png = fixture('sample.png').toString('base64');
    const text = `{"__proto__":{"polluted":true,"type":"image","mimeType":"image/png","data":"${png}"},"constructor":{"prototype":{"x":1}},"pad":"${'word '.repeat(3000)}"}`;
    const r = await spillOk(text);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(r.assets[0]!.jsonPath).toBe('$.__proto__.data');
    expect((await restorePayload(r.payloadPath!)).toString()).toBe(text);
    const parsed = JSON.parse(text) as object;
    const r2 = await spillOk(parsed);
    expect((await restorePayload(r2.payloadPath!)).toString()).toBe(JSON.stringify(parsed));
  });

  it('a 64 MB string spills quickly with a bounded message and a byte-identical payload', async () => {
    const line = '2026-11-30T08:00:00Z INFO worker=7 handled request id=abc123 in 12ms\n';
    const text = line.repeat(Math.ceil((64 * 1024 * 1024) / line.length));
    const r = await spillOk(text, 12_000);
    expect(r.message).toMatch(/estimate from samples/);
    const h = crypto.createHash('sha256');
    h.update(fs.readFileSync(r.payloadPath!));
    expect(h.digest('hex')).toBe(crypto.createHash('sha256').update(text).digest('hex'));
  }, 120_000);

  it('the sidecar sha256 is that of the UTF-8 of the text, ASCII (hashed as latin1) or not, over several hash slices', async () => {
    const ascii = 'plain ascii line of a log\n'.repeat(400_000); // 10 M chars: three 4 M slices
    for (const text of [ascii, ascii + 'é', 'ü€😀 '.repeat(2_000_000)]) {
      const r = await spillOk(text, 12_000);
      const meta = await readMeta(r.metaPath!);
      expect(meta.sha256).toBe(crypto.createHash('sha256').update(text, 'utf8').digest('hex'));
    }
  }, 120_000);

  it('unbroken runs (one 240,000-char word, 240,000 "=") spill without a quadratic one-shot count', async () => {
    for (const text of ['w'.repeat(240_000), '='.repeat(240_000)]) {
      const r = (await guardLargeResult(text, { sessionPath: tmpSession() }))!;
      expect(r.action).toBe('spill');
      expect(r.estimate.exact).toBe(false);
      expect(r.estimate.tokens).toBeGreaterThan(12_000);
    }
  });

  it('unbroken runs near the limit are counted exactly in pieces, so the decision is the tokenizer\'s', async () => {
    const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
    for (const text of ['{}'.repeat(20_000), 'helloworldthisisatest'.repeat(2_000), ' \t \n  \n\t'.repeat(5_000)]) {
      const truth = countTokens(text);
      for (const limit of [Math.floor(truth * 0.9), Math.ceil(truth * 1.1)]) {
        const r = await guardLargeResult(text, { sessionPath: tmpSession(), limitTokens: limit, profile: 'o200k' });
        expect({ limit, spilled: r !== null }).toEqual({ limit, spilled: truth > limit });
        if (r) {
          // counted exactly (in pieces) until the limit was crossed, the rest extrapolated
          expect(r.estimate.tokens).toBeGreaterThan(limit);
          // a hard cut every ~512 chars may cost a token each: within 1% here
          expect(Math.abs(r.estimate.tokens / truth - 1)).toBeLessThan(0.01);
          expect(r.errors.join(' ')).toMatch(/counted in pieces/);
        }
      }
    }
  });

  it('empty and scalar inputs pass', async () => {
    const s = tmpSession();
    for (const v of ['', Buffer.alloc(0), new ArrayBuffer(0), {}, [], 0, false, null, undefined]) {
      expect(await guardLargeResult(v, { sessionPath: s })).toBeNull();
    }
  });

  it('malformed base64 in an image block is left in the payload, which still restores', async () => {
    const broken = fixture('sample.png').toString('base64').slice(0, -5) + '*!*!=';
    const value = { content: [{ type: 'image', mimeType: 'image/png', data: broken.repeat(4) }] };
    const r = await spillOk(value, 500);
    expect(r.assets).toEqual([]);
    expect(r.payloadPath!.endsWith('.json')).toBe(true);
    expect((await restorePayload(r.payloadPath!)).toString()).toBe(JSON.stringify(value));
  });

  it('cycles, BigInt, throwing getters and hostile proxies never make it throw', async () => {
    const cyclic: Record<string, unknown> = { name: 'loop', pad: 'word '.repeat(5000) };
    cyclic.self = cyclic;
    const r1 = await spillOk(cyclic);
    expect(fs.readFileSync(r1.payloadPath!, 'utf8')).toContain('"self":"[Circular]"');
    const r2 = await spillOk({ big: 10n ** 30n, pad: 'word '.repeat(5000) });
    expect(fs.readFileSync(r2.payloadPath!, 'utf8')).toContain('"1000000000000000000000000000000"');
    const evil = {
      get boom(): string {
        throw new Error('getter exploded');
      },
      pad: 'word '.repeat(5000),
    };
    const r3 = await spillOk(evil);
    expect(r3.message).toMatch(/withheld|internal error/);
    const proxy = new Proxy({}, { ownKeys: () => { throw new Error('no keys'); } });
    const r4 = await guardLargeResult(proxy, { sessionPath: tmpSession() });
    expect(r4 === null || r4.message.length <= MAX_MESSAGE_CHARS).toBe(true);
    expect(r4).not.toBeNull();
  });

  it('ANSI colours, man-page overstrike and CRLF are text, not binary', async () => {
    const ansi = '\x1b[1;31mERROR\x1b[0m build failed at step \x1b[33m3\x1b[0m\r\n';
    const man = 'N\bNA\bAM\bME\bE\n     _\bl_\bs - list directory contents\r\n';
    const text = (ansi + man).repeat(3000);
    expect(detectContent(text).binary).toBe(false);
    expect(detectContent(Buffer.from(text)).binary).toBe(false);
    const r = await spillOk(Buffer.from(text));
    expect(r.assets).toEqual([]);
    expect((await restorePayload(r.payloadPath!)).toString()).toBe(text);
    expect(r.message).toContain('ERROR build failed at step 3');
    expect(r.message).not.toContain('\x1b[');
  });

  it('shell output captured from a terminal (title sequences ending in BEL, a bell per line) is text', async () => {
    const line = (i: number) => `\x1b]0;npm run build: step ${i}\x07\x1b[32m✓\x1b[39m compiled module ${i} in 12ms\x07\r\n`;
    const text = Array.from({ length: 3000 }, (_, i) => line(i)).join('');
    expect(detectContent(Buffer.from(text)).binary).toBe(false);
    const r = await spillOk(Buffer.from(text));
    expect(r.assets).toEqual([]);
    expect(r.message).toContain('compiled module 0 in 12ms');
    expect(r.message).not.toContain('\x07');
    expect((await restorePayload(r.payloadPath!)).toString()).toBe(text);
  });

  it('property: arbitrary JSON values, strings and bytes never throw, and every spill restores', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue({ maxDepth: 6 }),
          fc.string({ unit: 'binary', maxLength: 3000 }),
          fc.uint8Array({ maxLength: 3000 }),
          fc.array(fc.string({ unit: 'grapheme', maxLength: 50 }), { maxLength: 200 }),
        ),
        async (v) => {
          const s = tmpSession();
          const r = await guardLargeResult(v, { sessionPath: s, limitTokens: 50 });
          if (r === null) return;
          expect(r.message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
          if (r.payloadPath && r.metaPath) await restorePayload(r.payloadPath);
          fs.rmSync(s, { recursive: true, force: true });
        },
      ),
      { numRuns: 150 },
    );
  });

  it('the object size bound is never below the real serialized size', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(jsonBytesUpperBound(v, Infinity)).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(v) ?? ''));
      }),
      { numRuns: 3000 },
    );
    fc.assert(fc.property(fc.double(), (v) => jsonBytesUpperBound(v, Infinity) >= JSON.stringify(v).length), { numRuns: 20000 });
    const anyText = fc.string({ unit: 'binary', maxLength: 100 });
    fc.assert(
      fc.property(fc.array(fc.dictionary(anyText, fc.oneof(anyText, fc.double(), fc.boolean())), { maxLength: 5 }), (v) => {
        expect(jsonBytesUpperBound(v, Infinity)).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(v)));
      }),
      { numRuns: 2000 },
    );
  });

  it('safeStringify equals JSON.stringify wherever JSON.stringify works', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(safeStringify(v)).toBe(JSON.stringify(v));
      }),
      { numRuns: 1000 },
    );
    const shared = { a: 1 };
    expect(safeStringify({ x: shared, y: shared, d: new Date(0) })).toBe(JSON.stringify({ x: shared, y: shared, d: new Date(0) }));
  });
});
