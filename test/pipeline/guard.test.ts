import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { guardLargeResult, handleLargeResponse, readMeta, restorePayload, MAX_MESSAGE_CHARS, DEFAULT_LIMIT_TOKENS } from '../../src/pipeline/index.js';
import { fixture, listLong, tmpSession } from './helpers.js';

const bigLog = (lines = 4000) =>
  Array.from({ length: lines }, (_, i) => `2026-11-30T08:00:${String(i % 60).padStart(2, '0')}Z INFO request ${i} served in ${i % 97}ms`).join('\n');

describe('guardLargeResult: pass or spill', () => {
  it('passes small strings, bytes and objects unchanged (null) and writes nothing', async () => {
    const s = tmpSession();
    expect(await guardLargeResult('hello', { sessionPath: s })).toBeNull();
    expect(await guardLargeResult(Buffer.from('hello'), { sessionPath: s })).toBeNull();
    expect(await guardLargeResult({ content: [{ type: 'text', text: 'ok' }] }, { sessionPath: s })).toBeNull();
    expect(await guardLargeResult('', { sessionPath: s })).toBeNull();
    expect(await guardLargeResult(undefined, { sessionPath: s })).toBeNull();
    expect(fs.existsSync(path.join(s, 'long_responses'))).toBe(false);
  });

  it('spills a big log: payload byte-identical, sidecar, bounded message with paths and head+tail', async () => {
    const s = tmpSession();
    const log = bigLog();
    const r = await guardLargeResult(log, { sessionPath: s, toolName: 'bash', toolInput: { cmd: 'tail' }, intent: 'errors' });
    expect(r).not.toBeNull();
    expect(r!.action).toBe('spill');
    expect(r!.estimate.tokens).toBeGreaterThan(DEFAULT_LIMIT_TOKENS);
    expect(fs.readFileSync(r!.payloadPath!, 'utf8')).toBe(log);
    expect(path.basename(r!.payloadPath!)).toMatch(/^\d{8}T\d{9}Z_bash_[0-9a-f]{8}_0\.log$/);
    expect(r!.message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(r!.message).toContain(r!.payloadPath!);
    expect(r!.message).toContain('long_responses/');
    expect(r!.message).toContain('spillway restore');
    expect(r!.message).toContain('spillway_grep');
    expect(r!.message).toMatch(/~[\d,]+ tokens \(calibrated/);
    expect(r!.message).toContain('request 0 served'); // head
    expect(r!.message).toContain('request 3999 served'); // tail
    const meta = await readMeta(r!.metaPath!);
    expect(meta).toMatchObject({ version: 1, tool: 'bash', intent: 'errors', action: 'spill', kind: 'log', payloadIsOriginal: true, toolInput: { cmd: 'tail' } });
    expect(meta.message).toBe(r!.message);
    expect(meta.estimates.chars4).toBe(Math.ceil(log.length / 4));
    expect(meta.estimates['craft-density']).toBeGreaterThan(0);
    expect(meta.estimates.calibrated).toBeGreaterThan(0);
    expect((await restorePayload(r!.payloadPath!)).toString('utf8')).toBe(log);
  });

  it('spills parsed MCP results with an image block, links it, and restores the exact JSON', async () => {
    const s = tmpSession();
    const png = fixture('sample.png');
    const result = {
      content: [
        { type: 'text', text: 'lorem ipsum dolor sit amet '.repeat(4000) },
        { type: 'image', data: png.toString('base64'), mimeType: 'image/png' },
      ],
      structuredContent: { n: 1 },
    };
    const r = await guardLargeResult(result, { sessionPath: s, toolName: 'mcp__srv__shot', limitTokens: 4000 });
    expect(r!.action).toBe('spill');
    expect(r!.assets).toHaveLength(1);
    expect(r!.assets[0]).toMatchObject({ mimeType: 'image/png', bytes: png.length, jsonPath: '$.content[1].data', source: 'mcp-image', sniffed: true });
    expect(fs.readFileSync(r!.assets[0]!.path).equals(png)).toBe(true);
    expect(r!.linkedPath).toBe(r!.payloadPath);
    expect(r!.payloadPath!.endsWith('.linked.json')).toBe(true);
    const linked = JSON.parse(fs.readFileSync(r!.linkedPath!, 'utf8'));
    expect(linked.content[1].data.$spillwayAsset.sha256).toBe(r!.assets[0]!.sha256);
    expect((await restorePayload(r!.metaPath!)).toString()).toBe(JSON.stringify(result));
    expect(r!.message).not.toContain(png.toString('base64').slice(0, 40));
  });

  it('inlines the rest when only the assets made it too big (inline-assets)', async () => {
    const s = tmpSession();
    const wav = fixture('sample.wav');
    const result = { content: [{ type: 'audio', data: wav.toString('base64'), mimeType: 'audio/wav' }, { type: 'text', text: 'transcript: hello' }] };
    const r = await guardLargeResult(result, { sessionPath: s, limitTokens: 300 });
    expect(r!.action).toBe('inline-assets');
    expect(r!.message).toContain('transcript: hello');
    expect(r!.message).toContain('$spillwayAsset');
    expect(r!.assets[0]).toMatchObject({ mimeType: 'audio/wav', source: 'mcp-audio' });
    expect((await restorePayload(r!.payloadPath!)).toString()).toBe(JSON.stringify(result));
  });

  it('raw binary is saved as an asset typed by its magic bytes, and restores exactly', async () => {
    for (const [name, mime] of [
      ['sample.pdf', 'application/pdf'],
      ['sample.webp', 'image/webp'],
      ['sample.wav', 'audio/wav'],
      ['sample.png', 'image/png'],
    ] as const) {
      const s = tmpSession();
      const bytes = fixture(name);
      const r = await guardLargeResult(bytes, { sessionPath: s, limitTokens: 100 });
      expect(r, name).not.toBeNull();
      expect(r!.assets[0]!.mimeType, name).toBe(mime);
      expect(r!.assets[0]!.sniffed).toBe(true);
      expect((await restorePayload(r!.payloadPath!)).equals(bytes), name).toBe(true);
      expect(r!.message).not.toMatch(/[A-Za-z0-9+/]{100,}/);
    }
  });

  it('binary carried in a latin1 JS string is saved without corruption', async () => {
    const s = tmpSession();
    const pdf = fixture('sample.pdf');
    const r = await guardLargeResult(pdf.toString('latin1'), { sessionPath: s, limitTokens: 500 });
    expect(r!.assets[0]!.mimeType).toBe('application/pdf');
    expect(fs.readFileSync(r!.assets[0]!.path).equals(pdf)).toBe(true);
    expect((await restorePayload(r!.payloadPath!)).equals(pdf)).toBe(true);
    const meta = await readMeta(r!.metaPath!);
    expect(meta.origin).toBe('latin1-string');
  });

  it('handleLargeResponse always spills and honours the context window limit', async () => {
    const s = tmpSession();
    const r = await handleLargeResponse({ text: 'small', sessionPath: s, context: { toolName: 't', contextWindowTokens: 30_000 } });
    expect(r.action).toBe('spill');
    expect(r.limitTokens).toBe(3_000);
    expect(listLong(s)).toHaveLength(2);
  });

  it('saving failure gives a bounded message that says so, never the payload', async () => {
    const s = tmpSession();
    fs.writeFileSync(path.join(s, 'long_responses'), 'a file where the folder should be');
    const secret = 'SECRET-LINE '.repeat(20_000);
    const r = await guardLargeResult(secret, { sessionPath: s });
    expect(r!.payloadPath).toBeUndefined();
    expect(r!.message).toMatch(/could NOT be saved/);
    expect(r!.message.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(r!.message.length).toBeLessThan(secret.length / 10);
  });
});
