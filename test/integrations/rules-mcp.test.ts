import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectProxy, EVERYTHING, spillOf, textOf, tmpDir } from './helpers.js';

type Connected = Awaited<ReturnType<typeof connectProxy>>;

/** `spillway mcp` applies each tool's rule: a server/tool rule in the user's file, matched through --server-name. */
describe('spillway mcp with guard rules', () => {
  let home: string;
  let session: string;
  let proxy: Connected;

  beforeAll(async () => {
    home = tmpDir('spillway-rules-mcp-');
    session = path.join(tmpDir(), 'session');
    fs.writeFileSync(path.join(home, 'config.json'), JSON.stringify({ rules: { 'ev/echo': { limit: 50, provider: 'none', focusArg: 'why' } } }));
    proxy = await connectProxy(home, ['--session', session, '--server-name', 'ev'], EVERYTHING);
  });
  afterAll(async () => {
    await proxy?.client.close();
  });

  it("adds the rule's focus argument to that tool only", async () => {
    const { tools } = await proxy.client.listTools();
    expect(Object.keys(tools.find((t) => t.name === 'echo')!.inputSchema.properties ?? {})).toContain('why');
    expect(Object.keys(tools.find((t) => t.name === 'get-env')!.inputSchema.properties ?? {})).not.toContain('why');
  });

  it("spills the rule's tool at its limit, with its focus and summarizer, and the sidecar names the rule; another tool keeps the default", async () => {
    const message = Array.from({ length: 120 }, (_, i) => `word${i}`).join(' '); // ~ 200+ tokens: over 50, far under 12,000
    const r = await proxy.client.callTool({ name: 'echo', arguments: { message, why: 'the words' } });
    const spill = spillOf(r);
    expect(spill?.metaPath, textOf(r)).toBeDefined();
    const meta = JSON.parse(fs.readFileSync(spill!.metaPath!, 'utf8')) as { limitTokens: number; intent?: string; message: string; rule?: { source: string; match?: string; file?: string } };
    expect(meta).toMatchObject({ limitTokens: 50, intent: 'the words', rule: { source: 'user', match: 'ev/echo', file: path.join(home, 'config.json') } });
    expect(meta.message).toContain('Preview'); // provider none: the guard's preview, no summary
    const env = await proxy.client.callTool({ name: 'get-env', arguments: {} });
    expect(spillOf(env)).toBeUndefined();
    expect(textOf(env).length).toBeGreaterThan(200);
  });
});
