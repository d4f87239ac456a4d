import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { GREP_TOOL, QUERY_TOOL, READ_TOOL, createDrillDownTools } from '../../src/integrations/mcp/drilldown.js';
import { s3Suite } from '../helpers/ceph.js';
import { useGateway } from '../helpers/ceph-fixture.js';

const run = promisify(execFile);
const REPO = path.resolve(import.meta.dirname, '..', '..');
const textOf = (r: Record<string, unknown>) => ((r.content as Array<{ text: string }>)[0]!.text);

s3Suite('the MCP drill-down tools on a spill that lives in a bucket', () => {
  const f = useGateway('s3drill');

  it('reads, greps and queries the object by its URL and by its file name; other URLs are refused', async () => {
    const store = `s3://${f.gw.bucket}/agents`;
    const sessionDir = path.join(f.tmp, 'proxy-session');
    const rows = Array.from({ length: 3_000 }, (_, i) => ({ id: i, name: `item-${i}`, status: i % 7 === 0 ? 'failed' : 'ok' }));
    const result = { content: [{ type: 'text', text: JSON.stringify(rows) }] };
    const g = (await guardLargeResult(result, { sessionPath: sessionDir, toolName: 'list_items', store }))!;
    expect(g.payloadPath).toMatch(/^s3:\/\//);
    expect(fs.existsSync(sessionDir)).toBe(false);
    const tools = createDrillDownTools({ session: async () => (fs.mkdirSync(sessionDir, { recursive: true }), sessionDir), sessionDir: () => sessionDir, store });
    const signal = new AbortController().signal;

    const read = await tools.call(READ_TOOL, { path: g.payloadPath!, offset: 0, limit: 200 }, signal);
    expect(read.isError).toBeUndefined();
    expect(textOf(read)).toContain('"name":"item-0"');
    const byName = await tools.call(READ_TOOL, { path: path.basename(g.payloadPath!), offset: 0, limit: 100 }, signal);
    expect(textOf(byName)).toContain('item-0');

    const grep = await tools.call(GREP_TOOL, { path: g.payloadPath!, pattern: 'item-2999' }, signal);
    expect(textOf(grep)).toContain('item-2999');

    const q = await tools.call(QUERY_TOOL, { path: g.payloadPath!, where: ['status=failed'], limit: 5 }, signal);
    expect(q.isError, textOf(q)).toBeUndefined();
    expect(textOf(q)).toMatch(/failed/);

    // The handle CLI takes the object's URL too (restored from the bucket, sha256-checked).
    const { stdout } = await run('npx', ['tsx', '--conditions=source', 'src/cli/main.ts', 'handle', 'put', g.payloadPath!, '--session', path.join(f.tmp, 'h'), '--json'], {
      cwd: REPO,
      env: { ...process.env },
    });
    const receipt = JSON.parse(stdout);
    expect(receipt.handle).toMatch(/^h_/);
    expect(receipt.rows).toBe(1); // the MCP result object as received (the proxy's query unwraps it; the CLI keeps it)

    for (const bad of [`s3://${f.gw.bucket}/other/proxy-session/long_responses/${path.basename(g.payloadPath!)}`, `s3://${f.gw.bucket}/agents/proxy-session/long_responses/../../x.txt`]) {
      const r = await tools.call(READ_TOOL, { path: bad }, signal);
      expect(r.isError, bad).toBe(true);
    }
  });
});
