/**
 * Images in a tool result, priced the way the model provider documents it: by their pixels, never
 * as the base64 text that carries them. Two steps, each a pure function:
 *
 * | call | for |
 * | --- | --- |
 * | `imageSize(bytes)` | width and height from a PNG, JPEG, GIF or WebP header (no decoding) |
 * | `imagesInText(text)` | the images a result's text carries: MCP/Anthropic image blocks, data URLs |
 * | `imageTokens(provider, size)` | what one image costs the model, by the provider's rule |
 * | `providerOf(client, model)` | whose rule a session pays by |
 *
 * A small header reader instead of a library: four formats, a few dozen lines, and it runs on the
 * first bytes of a base64 string the listing already holds (no file, no stream).
 */

export type Provider = 'anthropic' | 'openai' | 'gemini';

export interface ImageSize {
  width: number;
  height: number;
}

/** An image found in a result: its size when its header was readable, its encoded bytes. */
export interface ImageInfo {
  size?: ImageSize;
  /** Decoded bytes (from the base64 length when only that is known). */
  bytes: number;
  mime?: string;
}

/** Anthropic: an image is scaled to fit this long side... */
export const ANTHROPIC_MAX_LONG_SIDE_PX = 1568;
/** ...and about this many pixels, then costs width × height / 750 tokens (docs: "Vision", image costs). */
export const ANTHROPIC_MAX_PIXELS = 1_150_000;
export const ANTHROPIC_PIXELS_PER_TOKEN = 750;
/** OpenAI high detail: fit in 2048 × 2048, shortest side down to 768, then 170 per 512 px tile plus 85. */
export const OPENAI_MAX_SIDE_PX = 2048;
export const OPENAI_SHORT_SIDE_PX = 768;
export const OPENAI_TILE_PX = 512;
export const OPENAI_TOKENS_PER_TILE = 170;
export const OPENAI_BASE_TOKENS = 85;
/** Gemini: 258 tokens for an image with both sides ≤ 384 px, else 258 per 768 × 768 tile. */
export const GEMINI_SMALL_SIDE_PX = 384;
export const GEMINI_TILE_PX = 768;
export const GEMINI_TOKENS_PER_TILE = 258;
/** An image whose header could not be read is priced as the largest the provider accepts unscaled (an upper bound, said so). */
const UNKNOWN_SIZE: ImageSize = { width: ANTHROPIC_MAX_LONG_SIDE_PX, height: ANTHROPIC_MAX_LONG_SIDE_PX };

/** Tokens one image costs the model, by the provider's documented rule. */
export function imageTokens(provider: Provider, size: ImageSize | undefined): number {
  const { width, height } = size && size.width > 0 && size.height > 0 ? size : UNKNOWN_SIZE;
  if (provider === 'anthropic') {
    let s = Math.min(1, ANTHROPIC_MAX_LONG_SIDE_PX / Math.max(width, height));
    s = Math.min(s, Math.sqrt(ANTHROPIC_MAX_PIXELS / (width * height)));
    const w = Math.max(1, Math.round(width * s));
    const h = Math.max(1, Math.round(height * s));
    return Math.ceil((w * h) / ANTHROPIC_PIXELS_PER_TOKEN);
  }
  if (provider === 'openai') {
    let w = width;
    let h = height;
    const fit = Math.min(1, OPENAI_MAX_SIDE_PX / Math.max(w, h));
    w *= fit;
    h *= fit;
    const short = Math.min(w, h);
    if (short > OPENAI_SHORT_SIDE_PX) {
      const s = OPENAI_SHORT_SIDE_PX / short;
      w *= s;
      h *= s;
    }
    const tiles = Math.ceil(Math.floor(w) / OPENAI_TILE_PX) * Math.ceil(Math.floor(h) / OPENAI_TILE_PX);
    return OPENAI_TOKENS_PER_TILE * tiles + OPENAI_BASE_TOKENS;
  }
  if (width <= GEMINI_SMALL_SIDE_PX && height <= GEMINI_SMALL_SIDE_PX) return GEMINI_TOKENS_PER_TILE;
  return Math.ceil(width / GEMINI_TILE_PX) * Math.ceil(height / GEMINI_TILE_PX) * GEMINI_TOKENS_PER_TILE;
}

/** Whose image rule a session pays by: the model's maker when its name says, else the client's usual provider. */
export function providerOf(client: string | undefined, model?: string): Provider {
  const m = (model ?? '').toLowerCase();
  if (m.startsWith('claude')) return 'anthropic';
  if (m.startsWith('gemini')) return 'gemini';
  if (/^(gpt|o\d|codex)/.test(m)) return 'openai';
  if (client === 'codex') return 'openai';
  if (client === 'gemini' || client === 'gemini-cli') return 'gemini';
  return 'anthropic';
}

const u16be = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!;
const u16le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8);
const u24le = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16);
const u32be = (b: Uint8Array, i: number) => ((b[i]! << 24) >>> 0) + ((b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!);
const ascii = (b: Uint8Array, i: number, n: number) => String.fromCharCode(...b.subarray(i, i + n));

/** Width and height from an image's header bytes (PNG, JPEG, GIF, WebP); undefined for anything else or a cut header. */
export function imageSize(b: Uint8Array): (ImageSize & { mime: string }) | undefined {
  if (b.length >= 24 && b[0] === 0x89 && ascii(b, 1, 3) === 'PNG' && ascii(b, 12, 4) === 'IHDR') {
    return { width: u32be(b, 16), height: u32be(b, 20), mime: 'image/png' };
  }
  if (b.length >= 10 && (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a')) {
    return { width: u16le(b, 6), height: u16le(b, 8), mime: 'image/gif' };
  }
  if (b.length >= 30 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 4) === 'WEBP') {
    const chunk = ascii(b, 12, 4);
    if (chunk === 'VP8X') return { width: u24le(b, 24) + 1, height: u24le(b, 27) + 1, mime: 'image/webp' };
    if (chunk === 'VP8L' && b[20] === 0x2f) {
      const bits = b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24);
      return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1, mime: 'image/webp' };
    }
    if (chunk === 'VP8 ' && b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a) {
      return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff, mime: 'image/webp' };
    }
    return undefined;
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    // Markers until a start-of-frame (SOF0–SOF15 but DHT, JPG and DAC): its height then width.
    let i = 2;
    while (i + 9 < b.length) {
      if (b[i] !== 0xff) return undefined;
      const marker = b[i + 1]!;
      if (marker === 0xff) {
        i++;
        continue;
      }
      const len = u16be(b, i + 2);
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        return { width: u16be(b, i + 7), height: u16be(b, i + 5), mime: 'image/jpeg' };
      }
      i += 2 + len;
    }
  }
  return undefined;
}

/** Base64 characters decoded to find a header: a JPEG's frame header may sit after its EXIF block. */
const HEADER_B64_CHARS = 96 * 1024;

/** An image's size from the start of its base64 (standard or URL-safe alphabet). */
export function imageSizeOfBase64(b64: string): (ImageSize & { mime: string }) | undefined {
  const head = b64.slice(0, HEADER_B64_CHARS).replace(/\s+/g, '');
  const usable = head.slice(0, head.length - (head.length % 4));
  try {
    return imageSize(Buffer.from(usable.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
  } catch {
    return undefined;
  }
}

const decodedBytes = (b64Chars: number) => Math.floor((b64Chars * 3) / 4);

/**
 * Images carried in a result's text: content blocks `{"type":"image", …"data":"<base64>"}` (MCP's
 * and Anthropic's shape, as a transcript stores them) and `data:image/…;base64,` URLs. Each match's
 * span is returned, so the caller can price the rest as text. Cheap on text without them: one
 * `includes` per marker.
 */
export function imagesInText(text: string): Array<ImageInfo & { start: number; end: number }> {
  const out: Array<ImageInfo & { start: number; end: number }> = [];
  if (text.includes('"image"')) {
    const re = /"type"\s*:\s*"image"[^{}]*?(?:"source"\s*:\s*\{[^{}]*?)?"data"\s*:\s*"([A-Za-z0-9+/=_-]{16,})"/g;
    for (const m of text.matchAll(re)) {
      const start = m.index! + m[0].length - m[1]!.length - 1;
      const size = imageSizeOfBase64(m[1]!);
      out.push({ size, bytes: decodedBytes(m[1]!.length), mime: size?.mime, start, end: start + m[1]!.length });
    }
  }
  if (text.includes('data:image/')) {
    for (const m of text.matchAll(/data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=]{16,})/g)) {
      const start = m.index!;
      if (out.some((o) => start >= o.start && start < o.end)) continue;
      const size = imageSizeOfBase64(m[2]!);
      out.push({ size, bytes: decodedBytes(m[2]!.length), mime: m[1], start, end: start + m[0].length });
    }
  }
  return out;
}
