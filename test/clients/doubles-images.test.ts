/**
 * The model doubles count an image the way its provider documents (by pixels), not as the length of
 * its base64: the input_tokens a client is told must be what the hosted API would say.
 */
import { describe, expect, it } from 'vitest';
import { anthropicInputTokens, countedTokens } from './doubles/anthropic.js';
import { openaiInputTokens } from './doubles/openai-responses.js';
import { chatInputTokens } from './doubles/openai-chat.js';
import { anthropicImageTokens, anthropicScaled, imageDims, openaiImageTokens } from './doubles/images.js';
import { makePngOf } from './realistic-inputs.js';

describe('image pricing in the doubles', () => {
  const png = makePngOf(3013, 1561);

  it('reads the size from the header', () => {
    expect(imageDims(png)).toEqual({ width: 3013, height: 1561 });
  });

  it("Anthropic: fit 1568 px on the long side and ~1,600 tokens (~1.2 MP), then w×h/750 (the docs' table)", () => {
    // The docs' table: 1092×1092 ≈ 1,590 tokens; 200×200 ≈ 54.
    expect(anthropicImageTokens(1092, 1092)).toBe(1590);
    expect(anthropicImageTokens(200, 200)).toBe(54);
    expect(anthropicScaled(3013, 1561).width).toBeLessThanOrEqual(1568);
    expect(anthropicImageTokens(3013, 1561)).toBeLessThanOrEqual(1600);
    expect(anthropicImageTokens(3013, 1561)).toBeGreaterThan(1550);
  });

  it("OpenAI: the tile rule (the docs' examples: 1024×1024 → 765, 2048×4096 → 1105, low → 85)", () => {
    expect(openaiImageTokens(1024, 1024)).toBe(765);
    expect(openaiImageTokens(2048, 4096)).toBe(1105);
    expect(openaiImageTokens(4096, 8192, 'low')).toBe(85);
  });

  it('a request carrying the PNG is counted by its pixels, not its ~1.6 MB of base64', () => {
    const b64 = png.toString('base64');
    const anthropic = [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64 } }] }] }];
    const withoutImage = anthropicInputTokens([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [] }] }]);
    expect(anthropicInputTokens(anthropic)).toBeLessThan(withoutImage + 1700);
    expect(anthropicInputTokens(anthropic)).toBeGreaterThan(withoutImage + 1500);
    expect(countedTokens({ messages: anthropic })).toBeLessThan(1700);
    const openai = [{ type: 'message', role: 'user', content: [{ type: 'input_image', image_url: `data:image/png;base64,${b64}`, detail: 'high' }] }];
    // 3013×1561 → 2048×1061 → 1482×768: 3×2 tiles → 6×170 + 85.
    expect(openaiInputTokens(openai)).toBeLessThan(1105 + 60);
    expect(openaiInputTokens(openai)).toBeGreaterThanOrEqual(1105);
  });

  it('Chat Completions (OpenCode): an image_url part with a data URL is counted by the same tile rule', () => {
    const b64 = png.toString('base64');
    const body = { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${b64}`, detail: 'high' } }] }] };
    expect(chatInputTokens(body)).toBeLessThan(1105 + 60);
    expect(chatInputTokens(body)).toBeGreaterThanOrEqual(1105);
  });
});
