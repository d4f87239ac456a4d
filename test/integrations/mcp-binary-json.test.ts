import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restorePayload } from '../../src/pipeline/index.js';
import { connectDirect, connectProxy, FILESYSTEM, spillOf, tmpDir } from './helpers.js';

/**
 * A real server returning a file's bytes as a JSON string (#29): server-filesystem's read_text_file
 * reads any file as UTF-8, so an executable comes back as a lossy decode (NULs, U+FFFD) in both the
 * text block and structuredContent. Through `spillway mcp` no byte of it may reach the client as text.
 */
type Connected = Awaited<ReturnType<typeof connectProxy>>;
const BINARY_IN_TEXT_RE = /[\x00-\x06\x0e-\x1a\x1c-\x1f\x7f]|\\u000[0-6]|(?:\uFFFD|\\ufffd){8}/i;

describe('spillway mcp and binary inside JSON values (server-filesystem)', () => {
  let data: string;
  const open: Connected[] = [];
  beforeAll(() => {
    data = fs.realpathSync(tmpDir('spillway-fs-'));
    // Small: 3,000 bytes fit any limit, so only the binary rule can spill it.
    fs.writeFileSync(path.join(data, 'head.bin'), fs.readFileSync(process.execPath).subarray(0, 3000));
  });
  afterAll(async () => {
    await Promise.allSettled(open.map((c) => c.client.close()));
  });

  for (const client of ['claude-code', 'codex', 'gemini', 'generic'] as const) {
    it(`--client ${client}: the bytes are cut out, the result keeps its shape, the spill restores to the server's answer`, async () => {
      const session = path.join(tmpDir(), 'session');
      const [proxy, direct] = await Promise.all([connectProxy(tmpDir(), ['--client', client, '--server-name', 'fs', '--session', session], FILESYSTEM, [data]), connectDirect(FILESYSTEM, [data])]);
      open.push(proxy, direct);
      const args = { name: 'read_text_file', arguments: { path: path.join(data, 'head.bin') } };
      const [r, d] = await Promise.all([proxy.client.callTool(args), direct.client.callTool(args)]);
      expect(JSON.stringify(d)).toMatch(BINARY_IN_TEXT_RE); // the server does send binary as text
      expect(JSON.stringify(r)).not.toMatch(BINARY_IN_TEXT_RE);
      const spill = spillOf(r)!;
      expect(spill, JSON.stringify(r).slice(0, 400)).toBeDefined();
      expect(JSON.parse((await restorePayload(spill.payloadPath!)).toString('utf8'))).toEqual(d);
      const meta = JSON.parse(fs.readFileSync(spill.metaPath!, 'utf8')) as { assets: Array<{ source: string }>; tool: string };
      expect(meta.assets.map((a) => a.source)).toContain('binary-string');
      if (client === 'claude-code' || client === 'codex') expect(meta.tool).toBe('mcp__fs__read_text_file');
      // The linked JSON keeps the result's shape, a reference where the bytes stood.
      const linked = JSON.parse(fs.readFileSync(spill.metaPath!.replace(/\.meta\.json$/, '.linked.json'), 'utf8')) as { content: Array<{ text: unknown }>; structuredContent: { content: unknown } };
      expect(linked.structuredContent.content).toHaveProperty('$spillwayAsset');
      expect(linked.content[0]!.text).toHaveProperty('$spillwayAsset');
    });
  }
});
