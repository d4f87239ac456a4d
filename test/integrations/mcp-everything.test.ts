import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MESSAGE_CHARS, restorePayload } from '../../src/pipeline/index.js';
import { cliArgs, connect, connectDirect, connectProxy, EVERYTHING, listFiles, RawPeer, rawProxy, rawServer, spillOf, testEnv, textOf, tmpDir } from './helpers.js';

type Connected = Awaited<ReturnType<typeof connectProxy>>;

/** Prose-like text that no estimator mistakes for small: ~`n` distinct words. */
function words(n: number): string {
  return Array.from({ length: n }, (_, i) => `w${(i * 2654435761) % 1_000_003}`).join(' ');
}

describe('spillway mcp in front of @modelcontextprotocol/server-everything', () => {
  let home: string;
  let session: string;
  let proxy: Connected;
  let direct: Connected;

  beforeAll(async () => {
    home = tmpDir();
    session = path.join(tmpDir(), 'session');
    [proxy, direct] = await Promise.all([connectProxy(home, ['--session', session, '--focus-arg', 'focus'], EVERYTHING), connectDirect(EVERYTHING)]);
  });
  afterAll(async () => {
    await Promise.allSettled([proxy?.client.close(), direct?.client.close()]);
  });

  it('lists the server tools, with the focus argument added, and the drill-down tools on the last page', async () => {
    const [viaProxy, viaDirect] = await Promise.all([proxy.client.listTools(), direct.client.listTools()]);
    const names = viaProxy.tools.map((t) => t.name);
    expect(names).toEqual([...viaDirect.tools.map((t) => t.name), 'spillway_read', 'spillway_grep', 'spillway_query']);
    expect(viaProxy.nextCursor).toBeUndefined();
    for (const t of viaProxy.tools.filter((t) => !t.name.startsWith('spillway_'))) {
      const original = viaDirect.tools.find((d) => d.name === t.name)!;
      expect(Object.keys(t.inputSchema.properties ?? {})).toEqual([...Object.keys(original.inputSchema.properties ?? {}), 'focus']);
      expect(t.inputSchema.required ?? []).toEqual(original.inputSchema.required ?? []);
      expect(t.description).toBe(original.description);
      expect(t.outputSchema).toEqual(original.outputSchema);
    }
  });

  it('spills echo with a large message: bounded result, saved payload equal to a direct call', async () => {
    const message = words(40_000);
    const [r, d] = await Promise.all([
      proxy.client.callTool({ name: 'echo', arguments: { message, focus: 'the w7 words' } }),
      direct.client.callTool({ name: 'echo', arguments: { message } }),
    ]);
    const text = textOf(r);
    expect(JSON.stringify(r).length).toBeLessThan(MAX_MESSAGE_CHARS + 2_000);
    expect(text).toContain('[spillway]');
    expect(text).toContain('spillway_read');
    const spill = spillOf(r)!;
    expect(spill.payloadPath && path.dirname(spill.payloadPath)).toBe(path.join(session, 'long_responses'));
    expect(JSON.parse(fs.readFileSync(spill.payloadPath!, 'utf8'))).toEqual(d);
    // The focus argument was stripped before the call and became the intent.
    const meta = JSON.parse(fs.readFileSync(spill.metaPath!, 'utf8')) as { intent?: string; toolInput?: Record<string, unknown>; tool: string };
    expect(meta.intent).toBe('the w7 words');
    expect(meta.tool).toBe('echo');
    expect(meta.toolInput).toEqual({ message });
  });

  it('passes small results through byte for byte (raw lines compared with the server alone)', async () => {
    const a = rawProxy(home, ['--session', session], EVERYTHING);
    const b = rawServer(EVERYTHING);
    try {
      const [ia, ib] = await Promise.all([a.initialize(), b.initialize()]);
      expect(ia.raw.equals(ib.raw)).toBe(true);
      const calls: Array<[string, Record<string, unknown>]> = [
        ['echo', { message: 'hello, world' }],
        ['get-tiny-image', {}],
        ['get-sum', { a: 2, b: 40 }],
        ['get-structured-content', { location: 'Chicago' }],
        ['get-annotated-message', { messageType: 'error', includeImage: true }],
      ];
      let id = 100;
      for (const [name, args] of calls) {
        id++;
        const [ra, rb] = await Promise.all([a.request('tools/call', { name, arguments: args }, id), b.request('tools/call', { name, arguments: args }, id)]);
        expect(ra.raw.toString('utf8')).toBe(rb.raw.toString('utf8'));
      }
      const [pa, pb] = await Promise.all([a.request('prompts/list', {}, 'p1'), b.request('prompts/list', {}, 'p1')]);
      expect(pa.raw.equals(pb.raw)).toBe(true);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('with --cut-media, the image block of get-tiny-image is cut to an asset (the default passes it, above)', async () => {
    const cutSession = path.join(tmpDir(), 'session');
    const cut = await connectProxy(home, ['--session', cutSession, '--cut-media'], EVERYTHING);
    try {
      const [r, d] = await Promise.all([cut.client.callTool({ name: 'get-tiny-image', arguments: {} }), direct.client.callTool({ name: 'get-tiny-image', arguments: {} })]);
      const image = (d.content as Array<{ type: string; data?: string }>).find((b) => b.type === 'image')!;
      const bytes = Buffer.from(image.data!, 'base64');
      expect(JSON.stringify(r)).not.toContain(image.data!.slice(0, 200));
      expect((r.content as Array<{ type: string }>).some((b) => b.type === 'image')).toBe(false);
      const assetsDir = path.join(cutSession, 'long_responses', 'assets');
      const match = listFiles(assetsDir).find((f) => fs.readFileSync(path.join(assetsDir, f)).equals(bytes));
      expect(match, 'one asset holds the image bytes').toBeDefined();
      expect(textOf(r)).toContain(match!);
      // what was saved restores to what the server sent
      expect(JSON.parse((await restorePayload(spillOf(r)!.payloadPath!)).toString('utf8'))).toEqual(d);
    } finally {
      await cut.client.close();
    }
  });

  it('saves the blob of gzip-file-as-resource (data: URI) as an asset, byte-identical', async () => {
    const input = crypto.randomBytes(150_000);
    const data = `data:application/octet-stream;base64,${input.toString('base64')}`;
    const args = { name: 'big.bin.gz', data, outputType: 'resource' };
    const [r, d] = await Promise.all([
      proxy.client.callTool({ name: 'gzip-file-as-resource', arguments: args }),
      direct.client.callTool({ name: 'gzip-file-as-resource', arguments: args }),
    ]);
    const blob = Buffer.from((d.content as Array<{ resource: { blob: string } }>)[0]!.resource.blob, 'base64');
    const spill = spillOf(r)!;
    expect(spill).toBeDefined();
    expect(JSON.stringify(r).length).toBeLessThan(MAX_MESSAGE_CHARS + 2_000);
    const assets = listFiles(path.join(session, 'long_responses', 'assets')).map((f) => path.join(session, 'long_responses', 'assets', f));
    const match = assets.find((f) => fs.readFileSync(f).equals(blob));
    expect(match, `one asset holds the gzip bytes; assets: ${assets.join(', ')}`).toBeDefined();
    expect(textOf(r)).toContain(path.basename(match!));
  });

  it('forwards every progress notification of a long-running operation', async () => {
    const a = rawProxy(home, ['--session', session], EVERYTHING);
    try {
      await a.initialize();
      const r = await a.request('tools/call', { name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 }, _meta: { progressToken: 'tok' } }, 7);
      const progress = a.lines
        .map((l) => JSON.parse(l.toString()) as { method?: string; params?: { progress: number; progressToken: string } })
        .filter((m) => m.method === 'notifications/progress')
        .map((m) => [m.params!.progressToken, m.params!.progress]);
      expect(progress).toEqual([['tok', 1], ['tok', 2], ['tok', 3]]);
      expect(JSON.stringify(r.msg.result)).toContain('Long running operation completed');
    } finally {
      await a.close();
    }
  });

  it('forwards cancellation and keeps serving afterwards', async () => {
    const ac = new AbortController();
    const call = proxy.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 20, steps: 20 } }, undefined, { signal: ac.signal });
    setTimeout(() => ac.abort('enough'), 300);
    await expect(call).rejects.toThrow();
    const r = await proxy.client.callTool({ name: 'echo', arguments: { message: 'still here' } });
    expect(textOf(r)).toBe('Echo: still here');
  });

  it('handles concurrent calls, each answered with its own result', async () => {
    const n = 12;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        i % 3 === 0
          ? proxy.client.callTool({ name: 'echo', arguments: { message: words(30_000 + i) } })
          : proxy.client.callTool({ name: 'get-sum', arguments: { a: i, b: 1000 } }),
      ),
    );
    results.forEach((r, i) => {
      if (i % 3 === 0) expect(spillOf(r)).toBeDefined();
      else expect(textOf(r)).toContain(String(i + 1000));
    });
  });

  it('refuses drill-down paths that leave the session folder', async () => {
    const outside = path.join(tmpDir(), 'outside.txt');
    fs.writeFileSync(outside, 'TOPSECRET');
    const lr = path.join(session, 'long_responses');
    fs.mkdirSync(lr, { recursive: true });
    fs.symlinkSync(outside, path.join(lr, 'link.txt'));
    for (const p of ['../../../../etc/passwd', '/etc/passwd', outside, 'link.txt', `${lr}/../../x`, 'assets/../../../outside.txt']) {
      const r = await proxy.client.callTool({ name: 'spillway_read', arguments: { path: p } });
      expect(r.isError, p).toBe(true);
      expect(textOf(r)).not.toContain('TOPSECRET');
      expect(textOf(r)).not.toContain('root:');
    }
  });
});

describe('tasks and a crashing server', () => {
  it('guards the result of a task-based tool fetched with tasks/result', async () => {
    const home = tmpDir();
    const session = path.join(tmpDir(), 's');
    // The research report is ~1.5 KB; a tiny limit makes it oversized.
    const p = await connectProxy(home, ['--session', session, '--limit', '100'], EVERYTHING, ['stdio'], { tasks: {} });
    try {
      await p.client.listTools(); // as any client does first: it tells the client this tool runs as a task
      const stream = p.client.experimental.tasks.callToolStream({ name: 'simulate-research-query', arguments: { topic: 'tides' } });
      let result: { content?: unknown; _meta?: Record<string, unknown> } | undefined;
      for await (const m of stream) {
        if (m.type === 'result') result = m.result as never;
        if (m.type === 'error') throw m.error;
      }
      expect(result).toBeDefined();
      const spill = spillOf(result!)!;
      expect(spill?.payloadPath).toBeDefined();
      const saved = JSON.parse(fs.readFileSync(spill.payloadPath!, 'utf8')) as { content: Array<{ text: string }> };
      expect(saved.content[0]!.text).toContain('# Research Report: tides');
      expect(textOf(result!)).toContain('[spillway]');
      // The related-task _meta of tasks/result is kept.
      expect(Object.keys(result!._meta ?? {})).toContain('io.modelcontextprotocol/related-task');
    } finally {
      await p.client.close();
    }
  });

  it('answers pending requests with an error when the server dies, and exits', async () => {
    const home = tmpDir();
    const a = rawProxy(home, [], EVERYTHING);
    await a.initialize();
    const pending = a.request('tools/call', { name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 3 } }, 'slow');
    await new Promise((r) => setTimeout(r, 300));
    const kids = execFileSync('pgrep', ['-P', String(a.child.pid), '-f', 'server-everything']).toString().trim().split('\n').filter(Boolean);
    expect(kids.length).toBe(1);
    process.kill(Number(kids[0]), 'SIGKILL');
    const { msg } = await pending;
    expect(msg.error).toMatchObject({ code: -32000 });
    expect(String((msg.error as { message: string }).message)).toMatch(/server is gone.*tools\/call/);
    expect(await a.done).not.toBe(0);
  });

  it('answers with the reason when the server command cannot start', async () => {
    const home = tmpDir();
    const peer = new RawPeer(process.execPath, cliArgs(['mcp', '--', path.join(home, 'no-such-server')]), testEnv(home));
    const { msg } = await peer.initialize().catch(() => ({ msg: {} as Record<string, unknown> }));
    expect(String((msg.error as { message?: string } | undefined)?.message)).toMatch(/could not start .*no-such-server.*ENOENT/);
    expect(await peer.done).toBe(1);
  });

  it('stops the server when the client goes away (EPIPE on its stdout)', async () => {
    const home = tmpDir();
    const peer = rawProxy(home, [], EVERYTHING);
    await peer.initialize();
    const kids = execFileSync('pgrep', ['-P', String(peer.child.pid), '-f', 'server-everything']).toString().trim().split('\n').filter(Boolean);
    expect(kids.length).toBe(1);
    // The client stops reading: the proxy's next write fails with EPIPE.
    peer.child.stdout!.destroy();
    peer.send({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { message: 'into the void' } } });
    await peer.done;
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 50 && alive(Number(kids[0])); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(Number(kids[0]))).toBe(false);
  });

  it("forwards the server's own requests (sampling, elicitation, roots) to the client and the answers back", async () => {
    const { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const home = tmpDir();
    const p = await connectProxy(home, ['--session', path.join(home, 's')], EVERYTHING, [], { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } });
    try {
      const seen: string[] = [];
      p.client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
        seen.push(`sampling:${JSON.stringify(req.params.messages[0]?.content)}`);
        return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'sampled answer 42' } };
      });
      p.client.setRequestHandler(ElicitRequestSchema, async () => {
        seen.push('elicitation');
        return { action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com' } };
      });
      p.client.setRequestHandler(ListRootsRequestSchema, async () => {
        seen.push('roots');
        return { roots: [{ uri: 'file:///work/project', name: 'project' }] };
      });
      const names = (await p.client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['trigger-sampling-request', 'trigger-elicitation-request', 'get-roots-list']));
      const sampled = await p.client.callTool({ name: 'trigger-sampling-request', arguments: { prompt: 'what is six times seven?' } });
      expect(textOf(sampled)).toContain('sampled answer 42');
      const elicited = await p.client.callTool({ name: 'trigger-elicitation-request', arguments: {} });
      expect(textOf(elicited)).toContain('Ada Lovelace');
      const roots = await p.client.callTool({ name: 'get-roots-list', arguments: {} });
      expect(textOf(roots)).toContain('file:///work/project');
      expect(seen).toEqual(expect.arrayContaining(['elicitation', 'roots']));
      expect(seen.some((x) => x.startsWith('sampling:') && x.includes('six times seven'))).toBe(true);
    } finally {
      await p.client.close();
    }
  });

});

describe('what no published server exercises (a fixture built on the SDK Server)', () => {
  const FIXTURE = path.join(import.meta.dirname, 'fixtures', 'paged-server.ts');
  const connectFixture = (home: string, args: string[]) =>
    connect(process.execPath, cliArgs(['mcp', ...args, '--', process.execPath, '--import', 'tsx', FIXTURE]), testEnv(home));

  it('pagination, app tools, schemas that admit no small value, and native focus arguments', async () => {
    const home = tmpDir();
    const p = await connectFixture(home, ['--session', path.join(home, 's'), '--focus-arg', 'focus']);
    try {
      // Page 1 has a nextCursor: no drill-down tools yet; the last page gets them.
      const first = await p.client.listTools();
      expect(first.nextCursor).toBe('p2');
      expect(first.tools.map((t) => t.name)).toEqual(['app_chart', 'rigid']);
      const second = await p.client.listTools({ cursor: first.nextCursor });
      expect(second.tools.map((t) => t.name)).toEqual(['search', 'big_text', 'spillway_read', 'spillway_grep', 'spillway_query']);
      // The app tool's schema is left alone, and its result passes through however big.
      expect(first.tools[0]!.inputSchema.properties).toBeUndefined();
      const chart = await p.client.callTool({ name: 'app_chart', arguments: {} });
      expect(spillOf(chart)).toBeUndefined();
      expect(textOf(chart).length).toBeGreaterThan(500_000);
      // A tool with its own `focus` keeps it: nothing stripped.
      const search = await p.client.callTool({ name: 'search', arguments: { focus: 'mine' } });
      expect(textOf(search)).toBe('args={"focus":"mine"}');
      // big_text got the focus argument, and it is stripped before the call.
      expect(Object.keys(second.tools[1]!.inputSchema.properties ?? {})).toEqual(['focus']);
      const big = await p.client.callTool({ name: 'big_text', arguments: { focus: 'value=42' } });
      expect(spillOf(big)).toBeDefined();
    } finally {
      await p.client.close();
    }
  });

  it('marks the result isError (with the message) when the output schema admits no small value', async () => {
    const home = tmpDir();
    const raw = new RawPeer(process.execPath, cliArgs(['mcp', '--session', path.join(home, 's'), '--', process.execPath, '--import', 'tsx', FIXTURE]), testEnv(home));
    try {
      await raw.initialize();
      await raw.request('tools/list', {}, 'a');
      await raw.request('tools/list', { cursor: 'p2' }, 'b');
      const { msg } = await raw.request('tools/call', { name: 'rigid', arguments: {} }, 'c');
      const result = msg.result as { isError?: boolean; structuredContent?: unknown; content: Array<{ text: string }> };
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toBeUndefined();
      expect(result.content[0]!.text).toContain('[spillway]');
      expect(result.content[1]!.text).toMatch(/output schema admits no small value/);
    } finally {
      await raw.close();
    }
  });
});
