/**
 * A proxied MCP spill records its tool the way the client names it (`mcp__<server>__<tool>`), so
 * the index's ledger applies the client's MCP rule (Claude Code: MAX_MCP_OUTPUT_TOKENS 25,000),
 * not its rule for other tools. With the bare name the ledger said `claude-code.other`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliArgs, FILESYSTEM, makeLog, spillOf, testEnv, tmpDir } from './helpers.js';
import { tmpIndex } from '../index/helpers.js';

/** Claude Code's MAX_MCP_OUTPUT_TOKENS default (docs/client-rules.md, observed). */
const CLAUDE_MCP_MAX_TOKENS = 25_000;

async function connectAs(clientName: string, command: string, args: string[], env: NodeJS.ProcessEnv) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const transport = new StdioClientTransport({ command, args, env: env as Record<string, string>, stderr: 'pipe' });
  const client = new Client({ name: clientName, version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  return client;
}

describe('spillway mcp records tools as the client names them', () => {
  const clients: Array<{ close(): Promise<void> }> = [];
  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
  });

  it('claude-code: a spill of read_text_file is mcp__fs__read_text_file, and the ledger uses the MCP rule', async () => {
    const home = tmpDir();
    const data = fs.realpathSync(tmpDir('spillway-fs-'));
    const sessions = tmpDir('spillway-sessions-');
    const session = path.join(sessions, 'proxied');
    // ~60,000 chars of log: over the proxy's 2,000-token limit, and over Claude Code's 50,000-char size rule
    // but under its 25,000-token MCP rule, so the two rules give different figures.
    fs.writeFileSync(path.join(data, 'big.log'), makeLog(60_000));
    const client = await connectAs(
      'claude-code',
      process.execPath,
      cliArgs(['mcp', '--client', 'claude-code', '--server-name', 'fs', '--limit', '2000', '--session', session, '--', process.execPath, FILESYSTEM, data]),
      testEnv(home),
    );
    clients.push(client);
    const r = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(data, 'big.log') } });
    const spill = spillOf(r)!;
    expect(spill?.metaPath).toBeTruthy();
    const meta = JSON.parse(fs.readFileSync(spill.metaPath!, 'utf8')) as { tool: string };
    expect(meta.tool).toBe('mcp__fs__read_text_file');

    const { index } = tmpIndex();
    index.addRoot(sessions);
    await index.scan();
    const rows = index.listPayloads({ limit: 10 }).rows;
    expect(rows).toHaveLength(1);
    const d = await index.getPayload(rows[0]!.id);
    expect(d.ledger!.asClient.rule).toBe('claude-code.mcp');
    // Under the token rule, over 50,000 chars: persisted with a preview (far below the full figure).
    expect(d.ledger!.full.tokens).toBeLessThan(CLAUDE_MCP_MAX_TOKENS);
    expect(d.ledger!.asClient.tokens).toBeLessThan(d.ledger!.full.tokens / 3);
  });

  it('generic keeps the bare name (an unknown client names tools its own way)', async () => {
    const { clientToolName } = await import('../../src/integrations/mcp/session.js');
    expect(clientToolName('generic', 'fs', 'read_text_file')).toBe('read_text_file');
    expect(clientToolName('codex', 'my server', 'read')).toBe('mcp__my_server__read');
    expect(clientToolName('gemini', 'fs', 'read')).toBe('fs__read');
    // OpenCode names an MCP tool `<server>_<tool>` (its adapter's mcp.toolName; observed in test/clients/opencode-setup.test.ts).
    expect(clientToolName('opencode', 'fs', 'read_text_file')).toBe('fs_read_text_file');
  });
});
