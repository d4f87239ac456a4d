/**
 * `npm run bench mcp`: the stdio proxy against the same server called directly, same run.
 *
 *   - per-call latency of small results (echo, get-sum) through the proxy vs direct (SDK Client both ways)
 *   - a 32 MB tool result (server-filesystem read_text_file, raw JSON-RPC) through the proxy under a
 *     high limit (pass-through) and under the default limit (spilled), vs the server alone
 *   - framing an 8 MB line from 64 KiB chunks: our LineSplitter vs the SDK's ReadBuffer (whose cap
 *     is raised so it can try)
 * Goals: small-call overhead under 1 ms; a 32 MB pass-through within 1.5× the direct call.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { LineSplitter } from '../src/integrations/mcp/lines.js';
import { connectDirect, connectProxy, EVERYTHING, FILESYSTEM, makeLog, rawProxy, rawServer, type RawPeer } from '../test/integrations/helpers.js';

const SMALL_CALLS = Number(process.env.SPILLWAY_BENCH_MCP_CALLS ?? '300');
const BIG_BYTES = 32 * 1024 * 1024;
const BIG_RUNS = 2;
const FRAMING_BYTES = 8 * 1024 * 1024;

const fmt = (v: number) => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(v < 10 ? 3 : 0)} ms`);
const row = (cells: string[]) => console.log(cells.map((c, i) => (i === 0 ? c.padEnd(52) : c.padStart(12))).join(' '));

async function timeCalls(client: Awaited<ReturnType<typeof connectDirect>>['client'], n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    if (i % 2) await client.callTool({ name: 'echo', arguments: { message: `hello ${i}` } });
    else await client.callTool({ name: 'get-sum', arguments: { a: i, b: 1 } });
    out.push(performance.now() - t);
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)]!;

async function bigCall(peer: RawPeer, id: number, file: string): Promise<{ ms: number; bytes: number }> {
  const t = performance.now();
  const r = await peer.request('tools/call', { name: 'read_text_file', arguments: { path: file } }, id, 600_000);
  return { ms: performance.now() - t, bytes: r.raw.length };
}

export async function run(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-mcp-'));
  try {
    // 1. Small calls.
    const home = path.join(tmp, 'home');
    const [proxy, direct] = await Promise.all([connectProxy(home, ['--session', path.join(tmp, 's1')], EVERYTHING), connectDirect(EVERYTHING)]);
    await Promise.all([proxy.client.listTools(), direct.client.listTools()]);
    await timeCalls(direct.client, 30); // warm up both
    await timeCalls(proxy.client, 30);
    const d = await timeCalls(direct.client, SMALL_CALLS);
    const p = await timeCalls(proxy.client, SMALL_CALLS);
    await Promise.all([proxy.client.close(), direct.client.close()]);
    console.log(`\nsmall results, ${SMALL_CALLS} sequential calls each (echo / get-sum, server-everything)`);
    row(['', 'median', 'p95', 'vs direct']);
    row(['direct (SDK Client → server)', fmt(median(d)), fmt(p95(d)), '1.00×']);
    row(['through spillway mcp', fmt(median(p)), fmt(p95(p)), `${(median(p) / median(d)).toFixed(2)}×`]);
    row(['proxy overhead per call (median difference)', fmt(median(p) - median(d)), '', '']);

    // 2. A 32 MB result.
    const data = path.join(tmp, 'data');
    fs.mkdirSync(data);
    const file = path.join(data, 'huge.log');
    fs.writeFileSync(file, makeLog(BIG_BYTES));
    let t = performance.now();
    const readBack = fs.readFileSync(file, 'utf8');
    const readMs = performance.now() - t;
    void readBack;
    const alone = rawServer(FILESYSTEM, [data]);
    const pass = rawProxy(home, ['--limit', '1000000000', '--session', path.join(tmp, 's2')], FILESYSTEM, [data]);
    const spill = rawProxy(home, ['--session', path.join(tmp, 's3'), '--summarizer', 'none'], FILESYSTEM, [data]);
    await Promise.all([alone.initialize(), pass.initialize(), spill.initialize()]);
    const runs: Record<string, Array<{ ms: number; bytes: number }>> = { alone: [], pass: [], spill: [] };
    for (let i = 0; i < BIG_RUNS; i++) {
      runs.alone!.push(await bigCall(alone, 100 + i, file));
      runs.pass!.push(await bigCall(pass, 100 + i, file));
      runs.spill!.push(await bigCall(spill, 100 + i, file));
    }
    await Promise.all([alone.close(), pass.close(), spill.close()]);
    const best = (k: string) => Math.min(...runs[k]!.map((r) => r.ms));
    console.log(`\na 32 MB file through read_text_file (server-filesystem; the JSON-RPC line is ${(runs.alone![0]!.bytes / 1048576).toFixed(0)} MB: text + structuredContent), best of ${BIG_RUNS}`);
    row(['', 'time', 'line bytes', 'vs direct']);
    row(['fs.readFileSync of the file (floor)', fmt(readMs), '', '']);
    row(['direct: server alone, raw JSON-RPC', fmt(best('alone')), String(runs.alone![0]!.bytes), '1.00×']);
    row(['through the proxy, --limit 1e9 (pass-through)', fmt(best('pass')), String(runs.pass![0]!.bytes), `${(best('pass') / best('alone')).toFixed(2)}×`]);
    row(['through the proxy, default limit (spilled)', fmt(best('spill')), String(runs.spill![0]!.bytes), `${(best('spill') / best('alone')).toFixed(2)}×`]);

    // 3. Framing alone, in process. The SDK's reader is quadratic: 8 MB keeps its row to seconds.
    const line = Buffer.alloc(FRAMING_BYTES, 0x61);
    const chunks: Buffer[] = [];
    for (let i = 0; i < line.length; i += 65536) chunks.push(line.subarray(i, i + 65536));
    chunks.push(Buffer.from('\n'));
    t = performance.now();
    let got = 0;
    const ours = new LineSplitter({ onLine: (l) => (got = l.length) });
    for (const c of chunks) ours.push(c);
    const oursMs = performance.now() - t;
    t = performance.now();
    const sdk = new ReadBuffer({ maxBufferSize: 2 * FRAMING_BYTES } as never);
    for (const c of chunks) sdk.append(c);
    const sdkMs = performance.now() - t;
    console.log(`\nframing one ${FRAMING_BYTES / 1048576} MB line from 64 KiB chunks (in process)`);
    row(['', 'time', '', 'vs ours']);
    row(['spillway LineSplitter', fmt(oursMs), String(got), '1.00×']);
    row(["SDK ReadBuffer (append only; its cap raised)", fmt(sdkMs), '', `${(sdkMs / oursMs).toFixed(0)}×`]);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
