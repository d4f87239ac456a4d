/**
 * The base64 of a flat, well-compressed image (a logo, a blank screenshot) is mostly `A`s, so its
 * characters fail the statistics test for bare base64; its decoded PNG signature makes it an asset
 * all the same. Seen with the real Claude Code: `base64 logo.png` (5,357 chars) reached the model as text.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { guardLargeResult } from '../../src/index.js';
import { base64Statistics } from '../../src/pipeline/base64.js';

function crc32(b: Buffer): number {
  let c = ~0;
  for (const x of b) {
    c ^= x;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}
function chunk(type: string, data: Buffer): Buffer {
  const t = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(t));
  return Buffer.concat([len, t, crc]);
}
/** A 640×360 PNG of one flat colour with a stripe: compresses to a few KB of mostly zero bytes. */
function flatPng(): Buffer {
  const w = 640, h = 360;
  const rows: Buffer[] = [];
  for (let y = 0; y < h; y++) {
    const row = Buffer.alloc(1 + w * 3, 0);
    if (y % 90 === 0) row.fill(200, 1);
    rows.push(row);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))]);
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('base64 of a flat image', () => {
  it('fails the character statistics, yet is cut out as an image/png asset, wrapped at 76 as `base64` prints it', async () => {
    const png = flatPng();
    const b64 = png.toString('base64');
    expect(base64Statistics(b64)).toBe(false); // the case the signature check is for
    const wrapped = b64.replace(/.{76}/g, '$&\n');
    const session = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-flat-'));
    dirs.push(session);
    const g = await guardLargeResult(wrapped, { sessionPath: session, toolName: 'Bash', summarize: false });
    expect(g).not.toBeNull();
    expect(g!.assets.map((a) => a.mimeType)).toEqual(['image/png']);
    expect(g!.message).not.toContain(b64.slice(0, 76));
    expect(fs.readFileSync(g!.assets[0]!.path)).toEqual(png);
  });

  it('text that merely starts with the same letters is not decoded into an asset', async () => {
    const session = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-flat-'));
    dirs.push(session);
    const text = 'iVBORw0KGgo is how a PNG begins in base64; this line is prose, not an image.\n'.repeat(3);
    expect(await guardLargeResult(text, { sessionPath: session, toolName: 'Bash', summarize: false })).toBeNull();
  });
});
