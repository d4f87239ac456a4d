import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { imageSize, imageSizeOfBase64, imageTokens, imagesInText, providerOf } from '../../src/agents/index.js';
import { makePng } from '../helpers/png.js';

const FIX = path.resolve(import.meta.dirname, '../pipeline/fixtures');

describe('image sizes from header bytes', () => {
  it('reads PNG, progressive JPEG and GIF headers (the sizes `file` reports for the fixtures)', () => {
    expect(imageSize(makePng(3013, 1561))).toEqual({ width: 3013, height: 1561, mime: 'image/png' });
    expect(imageSize(fs.readFileSync(path.join(FIX, 'sample.png')))).toEqual({ width: 48, height: 48, mime: 'image/png' });
    expect(imageSize(fs.readFileSync(path.join(FIX, 'sample.jpg')))).toEqual({ width: 493, height: 58, mime: 'image/jpeg' });
    const gif = Buffer.from('GIF89a\x80\x02\xe0\x01\x00\x00\x00', 'latin1');
    expect(imageSize(gif)).toEqual({ width: 640, height: 480, mime: 'image/gif' });
  });

  it('reads a WebP header, and says nothing of bytes that are no image or are cut short', () => {
    const webp = imageSize(fs.readFileSync(path.join(FIX, 'sample.webp')));
    expect(webp?.mime).toBe('image/webp');
    expect(webp!.width).toBeGreaterThan(0);
    expect(imageSize(Buffer.from('not an image at all, just text'))).toBeUndefined();
    expect(imageSize(makePng(10, 10).subarray(0, 20))).toBeUndefined();
    expect(imageSize(fs.readFileSync(path.join(FIX, 'sample.pdf')))).toBeUndefined();
  });

  it('reads the size from the start of a base64 string, standard or URL-safe', () => {
    const b64 = makePng(800, 600).toString('base64');
    expect(imageSizeOfBase64(b64)).toMatchObject({ width: 800, height: 600 });
    expect(imageSizeOfBase64(b64.replace(/\+/g, '-').replace(/\//g, '_'))).toMatchObject({ width: 800, height: 600 });
  });
});

describe('image tokens by the provider\'s documented rule', () => {
  it('Anthropic: fit 1568 px on the long side and ~1.15 MP, then width × height / 750', () => {
    // 200 × 100 is untouched: 20,000 / 750.
    expect(imageTokens('anthropic', { width: 200, height: 100 })).toBe(Math.ceil(20_000 / 750));
    // 3013 × 1561 (the screenshot): scaled to about 1490 × 772 by the pixel cap, ≈ 1,534 tokens.
    const t = imageTokens('anthropic', { width: 3013, height: 1561 });
    expect(t).toBeGreaterThan(1_500);
    expect(t).toBeLessThanOrEqual(Math.ceil(1_150_000 / 750) + 2);
  });

  it('OpenAI high detail: 170 per 512 px tile after fitting 2048² and the 768 short side, plus 85', () => {
    // The documented example: 1024 × 1024 → 768 × 768 → 4 tiles → 765.
    expect(imageTokens('openai', { width: 1024, height: 1024 })).toBe(765);
    // 2048 × 4096 → 1024 × 2048 → 768 × 1536 → 2 × 3 tiles → 1105.
    expect(imageTokens('openai', { width: 2048, height: 4096 })).toBe(1105);
  });

  it('Gemini: 258 for an image within 384 px, else 258 per 768 × 768 tile', () => {
    expect(imageTokens('gemini', { width: 384, height: 200 })).toBe(258);
    expect(imageTokens('gemini', { width: 1000, height: 800 })).toBe(4 * 258);
  });

  it('the provider follows the model, else the client', () => {
    expect(providerOf('claude-code', 'claude-sonnet-4-5')).toBe('anthropic');
    expect(providerOf('codex', undefined)).toBe('openai');
    expect(providerOf('codex', 'gpt-5-codex')).toBe('openai');
    expect(providerOf('gemini', undefined)).toBe('gemini');
    expect(providerOf('claude-code', 'gemini-2.5-pro')).toBe('gemini');
  });
});

describe('images carried in a result\'s text', () => {
  it('finds image blocks (base64 data) and data URLs, with their sizes and spans', () => {
    const png = makePng(1200, 900).toString('base64');
    const blocks = JSON.stringify([{ type: 'text', text: 'here' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }]);
    const found = imagesInText(blocks);
    expect(found).toHaveLength(1);
    expect(found[0]!.size).toEqual({ width: 1200, height: 900, mime: 'image/png' });
    expect(blocks.slice(found[0]!.start, found[0]!.end)).toBe(png);
    const mcp = JSON.stringify({ content: [{ type: 'image', data: png, mimeType: 'image/png' }] });
    expect(imagesInText(mcp)[0]!.size?.width).toBe(1200);
    const html = `<img src="data:image/png;base64,${makePng(64, 32).toString('base64')}">`;
    expect(imagesInText(html)[0]).toMatchObject({ size: { width: 64, height: 32 }, mime: 'image/png' });
    expect(imagesInText('plain text with no image')).toEqual([]);
  });
});
