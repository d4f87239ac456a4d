import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { extractAssets, guardLargeResult, mayCarryInlineAssets, readMeta, restorePayload, MAX_MESSAGE_CHARS, MIN_INLINE_ASSET_BYTES, MIN_INLINE_ASSET_RUN_CHARS } from '../../src/pipeline/index.js';
import { hasBase64Run, hasBase64RunBytes } from '../../src/pipeline/base64.js';
import { randomBytes, tmpSession } from './helpers.js';
import { makeWav } from '../integrations/helpers.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const LONG_B64_RE = /[A-Za-z0-9+/]{120,}/;

/** The classic 1×1 transparent GIF89a (43 bytes). */
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** A one-page PDF 1.4 with a correct xref table, and the binary comment line PDF writers put on line 2. */
function minimalPdf(): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 72 72] >>',
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n'), Buffer.from([0x25, 0xe2, 0xe3, 0xcf, 0xd3, 0x0a])];
  const offsets: number[] = [];
  let at = parts.reduce((n, p) => n + p.length, 0);
  objects.forEach((o, i) => {
    offsets.push(at);
    const b = Buffer.from(`${i + 1} 0 obj\n${o}\nendobj\n`);
    parts.push(b);
    at += b.length;
  });
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`));
  return Buffer.concat(parts);
}

/** A record of `size` zero bytes with each field `[offset, width, value]` written little-endian. */
function record(size: number, fields: Array<[number, 2 | 4, number]>): Buffer {
  const b = Buffer.alloc(size);
  for (const [at, width, value] of fields) {
    if (width === 2) b.writeUInt16LE(value, at);
    else b.writeUInt32LE(value, at);
  }
  return b;
}

/** A ZIP with one stored (uncompressed) file, local header + central directory + end record. */
function minimalZip(name = 'hello.txt', content = 'hello, world\n'): Buffer {
  const data = Buffer.from(content);
  const n = Buffer.from(name);
  const crc = zlib.crc32(data);
  // Fields as [offset, width in bytes, value], little-endian, as the ZIP format lays them out.
  const local = record(30, [[0, 4, 0x04034b50], [4, 2, 10], [14, 4, crc], [18, 4, data.length], [22, 4, data.length], [26, 2, n.length]]);
  const central = record(46, [[0, 4, 0x02014b50], [4, 2, 20], [6, 2, 10], [16, 4, crc], [20, 4, data.length], [24, 4, data.length], [28, 2, n.length]]);
  const cdOffset = local.length + n.length + data.length;
  const end = record(22, [[0, 4, 0x06054b50], [8, 2, 1], [10, 2, 1], [12, 4, central.length + n.length], [16, 4, cdOffset]]);
  return Buffer.concat([local, n, data, central, n, end]);
}

function cli(args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=source', path.join(REPO, 'src/cli/main.ts'), ...args], { cwd: REPO, maxBuffer: 16 * 1024 * 1024 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.toString() };
}

const SMALL_BINARIES = [
  { name: 'GIF', bytes: GIF, mime: 'image/gif', described: 'GIF image, 1×1 px' },
  { name: 'PDF', bytes: minimalPdf(), mime: 'application/pdf', described: 'PDF document, version 1.4, 1 page' },
  { name: 'WAV', bytes: makeWav(800), mime: 'audio/wav', described: 'WAV audio, 1 ch, 16,000 Hz, 16-bit, 0.05 s' },
  { name: 'ZIP', bytes: minimalZip(), mime: 'application/zip', described: 'ZIP archive, 1 entry: hello.txt' },
];

describe('raw binary is always saved and described, at any size', () => {
  for (const { name, bytes, mime, described } of SMALL_BINARIES) {
    it(`a ${bytes.length}-byte ${name}, as bytes and as a latin1 string, far under the limit`, async () => {
      for (const input of [bytes, bytes.toString('latin1')]) {
        const s = tmpSession();
        const r = (await guardLargeResult(input, { sessionPath: s, toolName: 'fetch_file' }))!;
        expect(r, name).not.toBeNull();
        expect(r.action).toBe('spill');
        expect(r.assets).toHaveLength(1);
        expect(r.assets[0]).toMatchObject({ mimeType: mime, bytes: bytes.length, sniffed: true, source: 'binary' });
        expect(fs.readFileSync(r.assets[0]!.path).equals(bytes)).toBe(true);
        expect(r.message).toMatch(new RegExp(`is binary data \\(${mime.replace('/', '\\/')}, `));
        expect(r.message).toContain(described);
        expect(r.message).not.toMatch(LONG_B64_RE);
        expect((await restorePayload(r.payloadPath!)).equals(bytes)).toBe(true);
        expect((await readMeta(r.metaPath!)).origin).toBe(typeof input === 'string' ? 'latin1-string' : 'bytes');
      }
    });
  }

  it('spillway restore rebuilds the exact bytes of a small binary spill', () => {
    const s = tmpSession();
    const pdf = minimalPdf();
    const file = path.join(s, 'in.pdf');
    fs.writeFileSync(file, pdf);
    const g = cli(['guard', file, '--session', s, '--json']);
    const out = JSON.parse(g.stdout.toString()) as { action: string; payloadPath: string };
    expect(out.action).toBe('spill');
    expect(cli(['restore', out.payloadPath]).stdout.equals(pdf)).toBe(true);
  });
});

describe('base64 in a result that fits is cut out (inline-assets), and restores byte for byte', () => {
  const blob = randomBytes(3000, 7);
  const cases: Array<[string, string | object, string[]]> = [
    [
      'a data URL in a JSON string value',
      JSON.stringify({ note: 'thumbnail attached', thumb: `data:image/gif;base64,${Buffer.concat([GIF, randomBytes(400, 3)]).toString('base64')}`, raw: blob.toString('base64') }),
      ['"note":"thumbnail attached"', '"thumb":', '"raw":'],
    ],
    ['the same, as a parsed value', { note: 'thumbnail attached', thumb: `data:image/gif;base64,${Buffer.concat([GIF, randomBytes(400, 3)]).toString('base64')}` }, ['"note":"thumbnail attached"', '"thumb":']],
    ['a bare run in a log line', `2026-11-30T08:00:00Z INFO upload ok payload=${blob.toString('base64')} took 12ms\n2026-11-30T08:00:01Z INFO done\n`, ['INFO upload ok payload=', ' took 12ms', 'INFO done']],
    [
      'a PEM-wrapped block in prose',
      `Here is the key material:\n-----BEGIN DATA-----\n${blob.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END DATA-----\nThat is all.`,
      ['Here is the key material:', '-----BEGIN DATA-----', '-----END DATA-----', 'That is all.'],
    ],
    ['a data URL in markdown', `# Report\n\n![chart](data:image/png;base64,${blob.toString('base64')})\n\nThe chart shows growth.`, ['# Report', '![chart](', 'The chart shows growth.']],
  ];
  for (const [label, input, kept] of cases) {
    it(label, async () => {
      const s = tmpSession();
      const r = (await guardLargeResult(input, { sessionPath: s }))!;
      expect(r).not.toBeNull();
      expect(r.action).toBe('inline-assets');
      expect(r.assets.length).toBeGreaterThan(0);
      expect(r.assets.every((a) => a.bytes >= MIN_INLINE_ASSET_BYTES)).toBe(true);
      expect(r.message).not.toMatch(LONG_B64_RE);
      expect(r.message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
      const original = typeof input === 'string' ? input : JSON.stringify(input);
      // the text left goes to the model in full, with references where the assets were
      for (const k of kept) expect(r.message).toContain(k);
      for (const a of r.assets) expect(r.message).toContain(a.relPath);
      expect((await restorePayload(r.payloadPath!)).toString()).toBe(original);
      // the CLI verb is restorePayload; run it through the real binary once
      if (label === cases[0]![0]) expect(cli(['restore', r.metaPath!]).stdout.toString()).toBe(original);
    });
  }

  it('a blob below MIN_INLINE_ASSET_BYTES is left in place: the result passes', async () => {
    const s = tmpSession();
    const small = randomBytes(MIN_INLINE_ASSET_BYTES - 60, 5).toString('base64');
    expect(await guardLargeResult(`icon=${small} ok`, { sessionPath: s })).toBeNull();
    expect(await guardLargeResult({ icon: `data:image/gif;base64,${GIF.toString('base64')}` }, { sessionPath: s })).toBeNull();
    expect(fs.existsSync(path.join(s, 'long_responses'))).toBe(false);
  });

  it('a result that fits but whose rest is too long for a message is spilled with a long preview, said so, never with base64', async () => {
    const s = tmpSession();
    const prose = Array.from({ length: 400 }, (_, i) => `Line ${i}: the quick brown fox jumps over the lazy dog.`).join('\n');
    const text = `${prose}\nattachment=${randomBytes(2000, 11).toString('base64')}\n`;
    const r = (await guardLargeResult(text, { sessionPath: s }))!;
    expect(r.action).toBe('spill');
    expect(r.message).toMatch(/within the limit 12,000\) carried 1 binary asset/);
    expect(r.message).toContain('Line 0: the quick brown fox');
    expect(r.message.length).toBeGreaterThan(10_000);
    expect(r.message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(r.message).not.toMatch(LONG_B64_RE);
    expect((await restorePayload(r.payloadPath!)).toString()).toBe(text);
  });
});

describe('MCP image and audio blocks that fit', () => {
  const gif = Buffer.concat([GIF, randomBytes(600, 21)]);
  const result = { content: [{ type: 'image', data: gif.toString('base64'), mimeType: 'image/gif' }, { type: 'text', text: 'a screenshot of the login page' }] };

  it('pass by default (multimodal clients show them as media), and are cut with cutMediaBlocks', async () => {
    const s = tmpSession();
    expect(await guardLargeResult(result, { sessionPath: s })).toBeNull();
    expect(await guardLargeResult(JSON.stringify(result), { sessionPath: s })).toBeNull();
    const audio = { content: [{ type: 'audio', data: makeWav(800).toString('base64'), mimeType: 'audio/wav' }] };
    expect(await guardLargeResult(audio, { sessionPath: s })).toBeNull();
    const r = (await guardLargeResult(result, { sessionPath: s, cutMediaBlocks: true }))!;
    expect(r.action).toBe('inline-assets');
    expect(r.assets[0]).toMatchObject({ source: 'mcp-image', mimeType: 'image/gif', jsonPath: '$.content[0].data' });
    expect(r.message).toContain('a screenshot of the login page');
    expect(r.message).not.toMatch(LONG_B64_RE);
    expect((await restorePayload(r.payloadPath!)).toString()).toBe(JSON.stringify(result));
  });

  it('once something else is cut, the answer is text, so the media blocks are cut too', async () => {
    const s = tmpSession();
    const mixed = { content: [...result.content, { type: 'resource', resource: { uri: 'file:///a.bin', mimeType: 'application/octet-stream', blob: randomBytes(900, 4).toString('base64') } }] };
    const r = (await guardLargeResult(mixed, { sessionPath: s }))!;
    expect(r.action).toBe('inline-assets');
    expect(r.assets.map((a) => a.source).sort()).toEqual(['mcp-blob', 'mcp-image']);
    expect(r.message).not.toMatch(LONG_B64_RE);
    expect((await restorePayload(r.payloadPath!)).toString()).toBe(JSON.stringify(mixed));
  });
});

describe('what is never taken for base64', () => {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 4096 });
  const b64url = (x: string | Buffer) => Buffer.from(x).toString('base64url');
  const jwt = (claims: object) => {
    const head = `${b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
    return `${head}.${crypto.sign('sha256', Buffer.from(head), privateKey).toString('base64url')}`;
  };
  const word = fc.constantFrom('the', 'quick', 'brown', 'fox', 'Jumps', 'OVER', 'lazy', 'dog', 'Request', 'id', 'HTTP2', 'v8', 'x86', 'config', 'Handler', 'util');
  const kinds = {
    english: fc.array(word, { minLength: 50, maxLength: 400 }).map((w) => w.join(' ')),
    hex: fc.uint8Array({ minLength: 128, maxLength: 2048 }).map((a) => Buffer.from(a).toString('hex')),
    hexUpper: fc.uint8Array({ minLength: 128, maxLength: 2048 }).map((a) => Buffer.from(a).toString('hex').toUpperCase()),
    uuids: fc.array(fc.uuid(), { minLength: 10, maxLength: 60 }).map((u) => u.join('')),
    camel: fc.array(word, { minLength: 60, maxLength: 300 }).map((w) => w.map((x) => x[0]!.toUpperCase() + x.slice(1)).join('')),
    snake: fc.array(word, { minLength: 60, maxLength: 300 }).map((w) => w.join('_')),
    kebabDigits: fc.array(fc.tuple(word, fc.nat(99)), { minLength: 60, maxLength: 300 }).map((w) => w.map(([a, n]) => `${a}-${n}`).join('-')),
    paths: fc.array(word, { minLength: 60, maxLength: 200 }).map((w) => '/' + w.join('/')),
    sha256s: fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { minLength: 5, maxLength: 40 }).map((a) => a.map((x) => crypto.createHash('sha256').update(x).digest('hex')).join('\n')),
    sriHashes: fc.array(fc.uint8Array({ minLength: 8, maxLength: 8 }), { minLength: 5, maxLength: 40 }).map((a) => a.map((x) => `sha512-${crypto.createHash('sha512').update(x).digest('base64')}`).join(' ')),
    jwts: fc.array(fc.record({ sub: fc.string({ maxLength: 40 }), scope: fc.array(word, { maxLength: 30 }).map((w) => w.join(' ')) }), { minLength: 1, maxLength: 3 }).map((cs) => cs.map(jwt).join('\n')),
  };
  const minified = ['ejs/ejs.min.js', 'source-map/dist/source-map.min.js', 'glob/dist/esm/index.min.js'].map((f) => fs.readFileSync(path.join(REPO, 'node_modules', f), 'utf8'));

  it('property: English, hex ids, UUIDs, identifiers, paths, hashes and JWTs pass, alone, in prose and in JSON', async () => {
    const s = tmpSession();
    await fc.assert(
      fc.asyncProperty(fc.oneof(...Object.values(kinds)), fc.constantFrom('plain', 'prose', 'json'), async (x, wrap) => {
        const input = wrap === 'plain' ? x : wrap === 'prose' ? `The value is ${x} as reported.` : { id: x, data: x, token: x };
        expect(await guardLargeResult(input, { sessionPath: s, limitTokens: 100_000 })).toBeNull();
        expect(extractAssets(typeof input === 'string' ? input : JSON.stringify(input)).assets).toEqual([]);
      }),
      { numRuns: 300 },
    );
    expect(fs.existsSync(path.join(s, 'long_responses'))).toBe(false);
  });

  it('real minified JavaScript and RS256 JWTs with 683-char signatures pass', async () => {
    const s = tmpSession();
    for (const js of minified) expect(await guardLargeResult(js, { sessionPath: s, limitTokens: 1_000_000 })).toBeNull();
    const token = jwt({ sub: 'user-1' });
    expect(token.split('.')[2]!.length).toBeGreaterThanOrEqual(683);
    expect(await guardLargeResult(`Authorization: Bearer ${token}`, { sessionPath: s })).toBeNull();
    expect(await guardLargeResult({ access_token: token, token_type: 'Bearer' }, { sessionPath: s })).toBeNull();
  });

  it('the cheap run scan finds exactly the runs a plain definition finds (strings and bytes)', () => {
    const naive = (x: string, m: number) => {
      let run = 0;
      for (let i = 0; i < x.length; i++) {
        if (/[A-Za-z0-9+/=_\-\n\r\\]/.test(x[i]!)) {
          if (++run >= m) return true;
        } else run = 0;
      }
      return false;
    };
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', 'B', '9', '+', ' ', '.', '\n', '=', 'é', '\\', '"'), maxLength: 300 }), fc.integer({ min: 1, max: 40 }), (x, m) => {
        expect(hasBase64Run(x, m)).toBe(naive(x, m));
        expect(hasBase64RunBytes(Buffer.from(x), m)).toBe(naive(x, m));
      }),
      { numRuns: 5000 },
    );
    expect(hasBase64Run(randomBytes(300, 1).toString('base64'), MIN_INLINE_ASSET_RUN_CHARS)).toBe(true);
    expect(hasBase64Run(randomBytes(200, 1).toString('base64'), MIN_INLINE_ASSET_RUN_CHARS)).toBe(false);
    // the predicate a size-only fast path (an MCP proxy line) asks before skipping the guard
    const line = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: `thumb data:image/png;base64,${randomBytes(300, 2).toString('base64')}` }] } });
    expect(mayCarryInlineAssets(Buffer.from(line))).toBe(true);
    expect(mayCarryInlineAssets(line.replace(/base64,.*?"/, '"'))).toBe(false);
  });
});
