/**
 * Real PNGs of any size, encoded here (signature, IHDR, one deflated IDAT, IEND, each chunk with its
 * CRC): the image tests need pictures of chosen sizes, and the repo carries no image encoder. Every
 * test PNG goes through `encodePng`; the makers differ only in their pixels.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(td) >>> 0);
  return Buffer.concat([len, td, crc]);
}

/**
 * An 8-bit PNG of `width` × `height` from its filtered rows (`raw`: per row a filter byte, then a
 * byte a sample): colour type 0 is grey (1 sample a pixel), 2 is RGB (3).
 */
export function encodePng(width: number, height: number, raw: Buffer, o: { colorType?: 0 | 2; deflate?: zlib.ZlibOptions } = {}): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = o.colorType ?? 2;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw, o.deflate ?? {})),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A grey-scale PNG of `width` × `height` with a little noise (so it does not compress to nothing). */
export function makePng(width: number, height: number): Buffer {
  const raw = Buffer.alloc((width + 1) * height);
  let seed = 7;
  for (let y = 0; y < height; y++) {
    for (let x = 1; x <= width; x++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      raw[y * (width + 1) + x] = (x + y + (seed >> 27)) & 0xff;
    }
  }
  return encodePng(width, height, raw, { colorType: 0, deflate: { level: 1 } });
}

/**
 * `n` random bytes behind a PNG signature and the start of an IHDR chunk: sniffed as a PNG, never
 * decoded, and of any size (the store's asset thresholds) at no encoding cost.
 */
export function pngHeadedNoise(n: number): Buffer {
  return Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), crypto.randomBytes(n)]);
}
