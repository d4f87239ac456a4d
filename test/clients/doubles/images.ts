/**
 * Images in a model request, counted the way each provider documents it: by their pixels, never by
 * the length of their base64 (a 3013×1561 PNG is ~190k tokens as base64 text, and ~1,600 as an
 * image to Anthropic).
 *
 * | entry point            | what for                                                          |
 * |------------------------|-------------------------------------------------------------------|
 * | `imageDims`            | width and height from the header of a PNG, JPEG, GIF or WebP      |
 * | `anthropicImageTokens` | Anthropic's rule for one image                                    |
 * | `openaiImageTokens`    | OpenAI's tile rule for one image                                  |
 * | `splitImages`          | a request body with each image's data taken out, and the images   |
 */

/** Width and height read from an image's header; undefined for a format not known here or a cut header. */
export function imageDims(buf: Buffer): { width: number; height: number } | undefined {
  if (buf.length >= 24 && buf.readUInt32BE(0) === 0x89504e47 && buf.toString('latin1', 12, 16) === 'IHDR') {
    return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
  }
  if (buf.length >= 10 && buf.toString('latin1', 0, 6).startsWith('GIF8')) return { width: buf.readUInt16LE(6), height: buf.readUInt16LE(8) };
  if (buf.length >= 30 && buf.toString('latin1', 0, 4) === 'RIFF' && buf.toString('latin1', 8, 12) === 'WEBP') {
    const kind = buf.toString('latin1', 12, 16);
    if (kind === 'VP8X') return { width: 1 + buf.readUIntLE(24, 3), height: 1 + buf.readUIntLE(27, 3) };
    if (kind === 'VP8L') {
      const b = buf.readUInt32LE(21);
      return { width: 1 + (b & 0x3fff), height: 1 + ((b >> 14) & 0x3fff) };
    }
    if (kind === 'VP8 ') return { width: buf.readUInt16LE(26) & 0x3fff, height: buf.readUInt16LE(28) & 0x3fff };
  }
  if (buf.length >= 4 && buf[0] === 0xff && buf[1] === 0xd8) {
    // Walk the JPEG segments to the first start-of-frame (SOF0..SOF15 but DHT, JPG and DAC).
    let i = 2;
    while (i + 9 < buf.length) {
      if (buf[i] !== 0xff) return undefined;
      const marker = buf[i + 1]!;
      if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01 || marker === 0xff) {
        i += marker === 0xff ? 1 : 2;
        continue;
      }
      const len = buf.readUInt16BE(i + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { width: buf.readUInt16BE(i + 7), height: buf.readUInt16BE(i + 5) };
      }
      i += 2 + len;
    }
  }
  return undefined;
}

/** Anthropic: an image whose long edge is over this is scaled down first (docs, "Vision": image size). */
export const ANTHROPIC_MAX_LONG_EDGE_PX = 1568;
/** Anthropic: an image over about this many tokens is scaled down too (docs: "more than ~1,600 tokens"; ~1.2 MP). */
export const ANTHROPIC_MAX_IMAGE_TOKENS = 1600;
/** Anthropic: tokens ≈ width × height / 750 (docs, "Calculate image costs"). */
export const ANTHROPIC_PIXELS_PER_TOKEN = 750;

/** The size Anthropic scales an image to before it counts it (aspect ratio kept). */
export function anthropicScaled(width: number, height: number): { width: number; height: number } {
  let s = Math.min(1, ANTHROPIC_MAX_LONG_EDGE_PX / Math.max(width, height));
  const maxPixels = ANTHROPIC_MAX_IMAGE_TOKENS * ANTHROPIC_PIXELS_PER_TOKEN;
  if (width * s * height * s > maxPixels) s = Math.sqrt(maxPixels / (width * height));
  return { width: Math.max(1, Math.floor(width * s)), height: Math.max(1, Math.floor(height * s)) };
}

/** Anthropic's documented cost of one image: scaled as above, then width × height / 750. */
export function anthropicImageTokens(width: number, height: number): number {
  const s = anthropicScaled(width, height);
  return Math.ceil((s.width * s.height) / ANTHROPIC_PIXELS_PER_TOKEN);
}

/** OpenAI's tile rule (docs, "Images and vision": calculating costs, GPT-4o / GPT-4.1 / GPT-5 family). */
export const OPENAI_BASE_IMAGE_TOKENS = 85;
export const OPENAI_TILE_TOKENS = 170;
export const OPENAI_FIT_PX = 2048;
export const OPENAI_SHORT_SIDE_PX = 768;
export const OPENAI_TILE_PX = 512;

/** OpenAI: `detail: low` is 85; otherwise fit in 2048², shortest side to 768, 170 per 512-px tile + 85. */
export function openaiImageTokens(width: number, height: number, detail: string = 'auto'): number {
  if (detail === 'low') return OPENAI_BASE_IMAGE_TOKENS;
  let w = width;
  let h = height;
  const fit = Math.min(1, OPENAI_FIT_PX / Math.max(w, h));
  w *= fit;
  h *= fit;
  const short = Math.min(1, OPENAI_SHORT_SIDE_PX / Math.min(w, h));
  w = Math.floor(w * short);
  h = Math.floor(h * short);
  return OPENAI_TILE_TOKENS * Math.ceil(w / OPENAI_TILE_PX) * Math.ceil(h / OPENAI_TILE_PX) + OPENAI_BASE_IMAGE_TOKENS;
}

export interface FoundImage {
  width: number;
  height: number;
  /** `detail` of an OpenAI input_image, when given. */
  detail?: string;
  mediaType?: string;
}

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,/;

function decode(b64: string): Buffer {
  // The header is all the size needs; decoding the first few KB is enough for PNG, GIF, WebP and most JPEGs.
  return Buffer.from(b64.slice(0, 65_536), 'base64');
}

/**
 * A copy of a request body with every image's bytes replaced by a short marker, and the images found
 * (Anthropic `image` blocks with a base64 source, anywhere, tool_result contents included; OpenAI
 * `input_image` items with a data URL; Chat Completions `image_url` parts, `{ url, detail }`). An image
 * whose header cannot be read is counted as its text.
 */
export function splitImages(body: unknown): { rest: unknown; images: FoundImage[] } {
  const images: FoundImage[] = [];
  const walk = (v: any): any => {
    if (Array.isArray(v)) return v.map(walk);
    if (!v || typeof v !== 'object') return v;
    if (v.type === 'image' && v.source?.type === 'base64' && typeof v.source.data === 'string') {
      const d = imageDims(decode(v.source.data));
      if (d) {
        images.push({ ...d, mediaType: v.source.media_type });
        return { ...v, source: { ...v.source, data: '<image>' } };
      }
    }
    if (v.type === 'input_image' && typeof v.image_url === 'string') {
      const m = DATA_URL.exec(v.image_url);
      const d = m ? imageDims(decode(v.image_url.slice(m[0].length))) : undefined;
      if (d) {
        images.push({ ...d, detail: v.detail, mediaType: m![1] });
        return { ...v, image_url: '<image>' };
      }
    }
    if (v.type === 'image_url' && typeof v.image_url?.url === 'string') {
      const m = DATA_URL.exec(v.image_url.url);
      const d = m ? imageDims(decode(v.image_url.url.slice(m[0].length))) : undefined;
      if (d) {
        images.push({ ...d, detail: v.image_url.detail, mediaType: m![1] });
        return { ...v, image_url: { ...v.image_url, url: '<image>' } };
      }
    }
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = walk(x);
    return out;
  };
  return { rest: walk(body), images };
}
