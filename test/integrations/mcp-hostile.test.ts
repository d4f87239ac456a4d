import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectProxy, spillOf, textOf, tmpDir } from './helpers.js';

const HOSTILE = path.join(import.meta.dirname, 'fixtures', 'hostile-server.mjs');

describe("a server that lists Spillway's drill-down tool names as its own", () => {
  it('gets ours under free names, and the spill message names those, so a drill-down never reaches the server', async () => {
    const home = tmpDir();
    const p = await connectProxy(home, ['--session', path.join(home, 's'), '--limit', '2000'], HOSTILE);
    try {
      const { tools } = await p.client.listTools();
      const names = tools.map((t) => t.name);
      // The server's own keep their names; ours take the next free suffix (spillway_read_2 is the server's too).
      expect(names.slice(0, 7)).toEqual(['spillway_read', 'spillway_grep', 'spillway_query', 'spillway_read_2', 'big_text', 'huge', 'ask']);
      expect(names.slice(7)).toEqual(['spillway_read_3', 'spillway_grep_2', 'spillway_query_2']);
      expect(new Set(names).size).toBe(names.length);
      expect(tools.find((t) => t.name === 'spillway_grep_2')!.description).toContain('spillway_read_3');
      expect(p.stderr()).toContain("the server has its own spillway_read; Spillway's is listed as spillway_read_3");

      const big = await p.client.callTool({ name: 'big_text', arguments: {} });
      const spill = spillOf(big)!;
      expect(spill.payloadPath).toBeDefined();
      const message = textOf(big);
      // Every tool the message names is ours as registered; none is a name the server answers.
      expect(message).toContain('spillway_read_3');
      expect(message).toContain('spillway_grep_2');
      expect(message).toContain('spillway_query_2');
      const named = new Set(message.match(/\bspillway_(?:read|grep|query)(?:_\d+)?\b/g));
      expect([...named].sort()).toEqual(['spillway_grep_2', 'spillway_query_2', 'spillway_read_3']);
      // The sidecar keeps the message as the model got it (the inspector shows it): the same names, made by the guard itself.
      const recorded = (JSON.parse(fs.readFileSync(spill.metaPath!, 'utf8')) as { message: string }).message;
      expect(message.startsWith(recorded)).toBe(true);
      expect([...new Set(recorded.match(/\bspillway_(?:read|grep|query)(?:_\d+)?\b/g))].sort()).toEqual(['spillway_grep_2', 'spillway_query_2', 'spillway_read_3']);

      // Ours reads the spill; the server's names still reach the server.
      const ours = await p.client.callTool({ name: 'spillway_read_3', arguments: { path: spill.payloadPath, startLine: 1, endLine: 2 } });
      expect(textOf(ours)).toContain('row 0 value=0');
      const grep = await p.client.callTool({ name: 'spillway_grep_2', arguments: { path: spill.payloadPath, pattern: 'row 59999 ' } });
      expect(textOf(grep)).toContain('row 59999 value=');
      const theirs = await p.client.callTool({ name: 'spillway_read', arguments: { path: spill.payloadPath } });
      expect(textOf(theirs)).toBe('HOSTILE spillway_read');
      // Our answers name ours too, errors included: a model retrying by the name it read reaches Spillway.
      const refused = await p.client.callTool({ name: 'spillway_read_3', arguments: { path: '../../outside.json' } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^spillway_read_3: /);
      const paged = await p.client.callTool({ name: 'spillway_read_3', arguments: { path: spill.payloadPath, startLine: 1, endLine: 1 } });
      expect(textOf(paged)).toMatch(/\[spillway_read_3: lines 1–1; next: startLine 2\]$/);
    } finally {
      await p.client.close();
    }
  }, 60_000);

  it('without the drill-down tools (--no-drill-down), the message sends the model to no spillway_* tool: each of those names is the server\'s', async () => {
    const home = tmpDir();
    const p = await connectProxy(home, ['--session', path.join(home, 's'), '--limit', '2000', '--no-drill-down'], HOSTILE);
    try {
      const { tools } = await p.client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['spillway_read', 'spillway_grep', 'spillway_query', 'spillway_read_2', 'big_text', 'huge', 'ask']);
      const big = await p.client.callTool({ name: 'big_text', arguments: {} });
      const spill = spillOf(big)!;
      const message = textOf(big);
      expect(message).toContain(`Absolute path: ${spill.payloadPath}`);
      expect(message).toContain('Read more: open the absolute path with a file-reading tool');
      expect(message).not.toMatch(/spillway_(?:read|grep|query)/);
    } finally {
      await p.client.close();
    }
  }, 60_000);
});
