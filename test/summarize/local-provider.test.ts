/**
 * Issue 30, item 6: a local model server (Ollama, llama.cpp, LM Studio, vLLM) as a named provider:
 * a probe that lists its models, runs against its OpenAI-compatible wire format, and a clear error
 * naming where it looked when it is down.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSummarizer, listProvidersProbed, probeLocal } from '../../src/summarize/index.js';
import { startFake, type FakeServer } from './wire.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-local-'));
const signal = () => new AbortController().signal;

/** A port nothing listens on: bound, read, closed. */
async function deadPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('the local provider', () => {
  let srv: FakeServer;
  beforeAll(async () => {
    srv = await startFake('openai', { models: ['qwen3:4b', 'llama3.2:3b'] });
  });
  afterAll(async () => {
    await srv.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('the probe lists the server’s models, and the provider list marks it available with the first as default', async () => {
    const probe = await probeLocal(srv.url);
    expect(probe).toMatchObject({ ok: true, models: ['qwen3:4b', 'llama3.2:3b'] });
    const local = (await listProvidersProbed({ SPILLWAY_LOCAL_BASE_URL: srv.url })).find((p) => p.name === 'local')!;
    expect(local).toMatchObject({ available: true, defaultModel: 'qwen3:4b', models: ['qwen3:4b', 'llama3.2:3b'] });
  });

  it('summarizes with the first listed model when none is named, through chat completions, at no API cost', async () => {
    srv.script({ kind: 'ok', text: 'Two orders; 98231 failed payment.', inputTokens: 200, outputTokens: 9 });
    const before = srv.requests.length;
    const out = await createSummarizer({ provider: 'local', env: { SPILLWAY_LOCAL_BASE_URL: srv.url }, templatesDir: tmp, timeoutMs: 5_000 }).summarize(
      { text: JSON.stringify({ orders: [{ id: 98231, status: 'payment_failed' }] }), maxOutputTokens: 200 },
      { signal: signal() },
    );
    const sent = srv.requests.slice(before);
    expect(sent.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /v1/models', 'POST /v1/chat/completions']);
    expect(sent[1]!.body.model).toBe('qwen3:4b');
    // A local server is not api.openai.com: the cap goes as max_tokens, which llama.cpp and Ollama know.
    expect(sent[1]!.body.max_tokens).toBeGreaterThan(0);
    expect(out).toMatchObject({ provider: 'local', summary: 'Two orders; 98231 failed payment.', inputTokens: 200, outputTokens: 9, costUsd: 0 });
  });

  it('a named model is used without a probe', async () => {
    srv.script({ kind: 'ok', text: 'ok summary' });
    const before = srv.requests.length;
    await createSummarizer({ provider: 'local', model: 'llama3.2:3b', env: { SPILLWAY_LOCAL_BASE_URL: srv.url }, templatesDir: tmp, timeoutMs: 5_000 }).summarize(
      { text: 'x'.repeat(100), maxOutputTokens: 100 },
      { signal: signal() },
    );
    expect(srv.requests.slice(before).map((r) => r.url)).toEqual(['/v1/chat/completions']);
    expect(srv.requests.at(-1)!.body.model).toBe('llama3.2:3b');
  });

  it('a server that is down: the probe says refused, the list says why, a run names the address and what to start', async () => {
    const url = `http://127.0.0.1:${await deadPort()}/v1`;
    const probe = await probeLocal(url);
    expect(probe.ok).toBe(false);
    expect(probe.reason).toMatch(/refused/);
    const local = (await listProvidersProbed({ SPILLWAY_LOCAL_BASE_URL: url })).find((p) => p.name === 'local')!;
    expect(local.available).toBe(false);
    expect(local.reason).toContain(url);
    for (const model of [undefined, 'qwen3:4b']) {
      const run = createSummarizer({ provider: 'local', model, env: { SPILLWAY_LOCAL_BASE_URL: url }, templatesDir: tmp, timeoutMs: 3_000, maxRetries: 0 }).summarize(
        { text: 'x'.repeat(100), maxOutputTokens: 100 },
        { signal: signal() },
      );
      await expect(run).rejects.toThrow(new RegExp(`no OpenAI-compatible server at ${url.replace(/[.]/g, '\\.')}.*SPILLWAY_LOCAL_BASE_URL`));
    }
  });
});
