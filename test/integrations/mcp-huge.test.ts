import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { MAX_BUFFERED_LINE_BYTES } from '../../src/integrations/mcp/lines.js';
import { cliArgs, connect, spillOf, testEnv, textOf, tmpDir } from './helpers.js';

const HOSTILE = path.join(import.meta.dirname, 'fixtures', 'hostile-server.mjs');
const HUGE_BYTES = 300 * 1024 * 1024;
/** Bound on the proxy's peak resident memory while it streams the 300 MiB result to disk (376 to 426 MiB measured in four runs; docs/security.md, "The proxy's size limits"). */
const MAX_PROXY_RSS_BYTES = 768 * 1024 * 1024;
const TIMEOUT_MS = 600_000;

async function fileSha256(p: string): Promise<string> {
  const h = crypto.createHash('sha256');
  for await (const c of fs.createReadStream(p, { highWaterMark: 4 * 1024 * 1024 })) h.update(c as Buffer);
  return h.digest('hex');
}

/** Peak resident set of a live process (Linux: VmHWM), or undefined where /proc does not say. */
function peakRssBytes(pid: number | null | undefined): number | undefined {
  if (!pid) return undefined;
  try {
    const m = /VmHWM:\s*(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

describe('a tool result over the proxy\'s inspection limit', () => {
  it('is streamed to a spill (never forwarded), restored byte for byte, and the client gets a message', async () => {
    expect(HUGE_BYTES).toBeGreaterThan(MAX_BUFFERED_LINE_BYTES);
    const home = tmpDir();
    const session = path.join(home, 's');
    const shaFile = path.join(home, 'server-sha.json');
    const env = { ...testEnv(home), HUGE_BYTES: String(HUGE_BYTES), HUGE_SHA_FILE: shaFile };
    const p = await connect(process.execPath, cliArgs(['mcp', '--session', session, '--', process.execPath, HOSTILE]), env);
    try {
      await p.client.listTools();
      const result = await p.client.callTool({ name: 'huge', arguments: {} }, undefined, { timeout: TIMEOUT_MS });
      const rss = peakRssBytes(p.transport.pid);

      // The client (the SDK's, which refuses lines over 10 MiB) got a short message, not the result.
      const text = textOf(result);
      expect(text.length).toBeLessThan(20_000);
      expect(text).toContain('[spillway]');
      expect(text).toContain('streamed to disk unread');
      // The fixture lists spillway_read and spillway_read_2 of its own: the message names ours.
      expect(text).toContain('Read more with your spillway_read_3 ');
      // The preview is the text the model would have read, decoded from the head.
      expect(text).toContain('line 0 "value"=0');
      const spill = spillOf(result)!;
      expect(text).toContain(`Absolute path: ${spill.payloadPath}`);

      // What was saved is the `result` value exactly as the server wrote it.
      const server = JSON.parse(fs.readFileSync(shaFile, 'utf8')) as { sha256: string; bytes: number };
      expect(server.bytes).toBeGreaterThan(HUGE_BYTES);
      expect(fs.statSync(spill.payloadPath!).size).toBe(server.bytes);
      expect(await fileSha256(spill.payloadPath!)).toBe(server.sha256);
      const meta = JSON.parse(fs.readFileSync(spill.metaPath!, 'utf8')) as Record<string, unknown>;
      expect(meta).toMatchObject({ tool: 'huge', sha256: server.sha256, bytes: server.bytes, payloadIsOriginal: true, message: text });
      // No temp file is left behind.
      expect(fs.readdirSync(path.dirname(spill.payloadPath!)).filter((f) => f.startsWith('.'))).toEqual([]);

      // `spillway restore` gives back the exact bytes.
      const out = path.join(home, 'restored.json');
      await promisify(execFile)(process.execPath, cliArgs(['restore', spill.payloadPath!, '-o', out]), { env: testEnv(home) });
      expect(fs.statSync(out).size).toBe(server.bytes);
      expect(await fileSha256(out)).toBe(server.sha256);

      // The proxy goes on serving.
      const next = await p.client.callTool({ name: 'spillway_read_3', arguments: { path: spill.payloadPath, offset: 0, limit: 200 } }, undefined, { timeout: TIMEOUT_MS });
      expect(textOf(next)).toContain('{"content":[{"type":"text","text":"line 0');

      if (rss !== undefined) {
        console.log(`proxy peak RSS while streaming ${HUGE_BYTES} bytes: ${(rss / 1024 / 1024).toFixed(0)} MiB`);
        expect(rss).toBeLessThan(MAX_PROXY_RSS_BYTES);
      }
      fs.rmSync(out, { force: true });
    } finally {
      await p.client.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  }, TIMEOUT_MS);
});
