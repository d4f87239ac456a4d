import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSummarizer, ProviderError, SYSTEM_PROMPT, listProviders } from '../../src/summarize/index.js';
import { startFake, type FakeServer } from './wire.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-sum-'));
const signal = () => new AbortController().signal;
const env = {} as NodeJS.ProcessEnv; // never pick up a real key from the machine

const PAYLOAD = JSON.stringify({ orders: [{ id: 98231, status: 'payment_failed', amount: 12.5 }, { id: 98232, status: 'paid', amount: 40 }] });

for (const api of ['anthropic', 'openai'] as const) {
  describe(`${api} provider over its real wire format`, () => {
    let srv: FakeServer;
    beforeAll(async () => {
      srv = await startFake(api);
    });
    afterAll(async () => {
      await srv.close();
    });
    const make = (extra: Record<string, unknown> = {}) =>
      createSummarizer({ provider: api, baseURL: srv.url, apiKey: 'test-key', templatesDir: tmp, env, timeoutMs: 5_000, ...extra });

    it('JSON reply: summary, usage, model, cost, request shape', async () => {
      srv.script({ kind: 'ok', text: 'Order 98231 failed payment (12.5).', inputTokens: 321, outputTokens: 12, model: api === 'anthropic' ? 'claude-haiku-4-5' : 'gpt-4o-mini' });
      const n = srv.requests.length;
      const out = await make({ stream: false, model: api === 'anthropic' ? 'claude-haiku-4-5' : 'gpt-4o-mini' }).summarize(
        { text: PAYLOAD, focus: 'payment failures', maxOutputTokens: 300, toolName: 'orders_api' },
        { signal: signal() },
      );
      expect(out.summary).toBe('Order 98231 failed payment (12.5).');
      expect(out.provider).toBe(api);
      expect(out.inputTokens).toBe(321);
      expect(out.outputTokens).toBe(12);
      expect(out.focus).toBe('payment failures');
      expect(out.template).toBe('default');
      expect(out.ms).toBeGreaterThanOrEqual(0);
      expect(out.costUsd).toBeGreaterThan(0);
      const req = srv.requests[n]!;
      expect(req.body.stream).not.toBe(true);
      if (api === 'anthropic') {
        expect(req.url).toBe('/v1/messages');
        expect(req.headers['x-api-key'] ?? req.headers.authorization).toMatch(/^(Bearer )?test-key$/);
        expect(req.body.system).toBe(SYSTEM_PROMPT);
        expect(req.body.max_tokens).toBe(300);
        expect(req.body.model).toBe('claude-haiku-4-5');
      } else {
        expect(req.url).toBe('/v1/chat/completions');
        expect(req.headers.authorization).toBe('Bearer test-key');
        expect(req.body.messages[0]).toEqual({ role: 'system', content: SYSTEM_PROMPT });
        expect(req.body.max_tokens).toBe(300); // a local base URL gets max_tokens, not max_completion_tokens
      }
      const user = api === 'anthropic' ? req.body.messages[0].content : req.body.messages[1].content;
      expect(user).toContain('payment failures');
      expect(user).toContain('orders_api');
      expect(user).toContain(PAYLOAD);
    });

    it('SSE streaming: deltas joined, usage from the stream', async () => {
      const text = 'Two orders: 98231 payment_failed (12.5), 98232 paid (40). https://example.com/o/98231';
      srv.script({ kind: 'ok', text, inputTokens: 77, outputTokens: 31 });
      const n = srv.requests.length;
      const out = await make().summarize({ text: PAYLOAD, maxOutputTokens: 200 }, { signal: signal() });
      expect(srv.requests[n]!.body.stream).toBe(true);
      expect(out.summary).toBe(text);
      expect(out.inputTokens).toBe(77);
      expect(out.outputTokens).toBe(31);
    });

    it('429 with retry-after: waits as asked, then succeeds', async () => {
      srv.script({ kind: 'error', status: 429, headers: { 'retry-after': '1' } }, { kind: 'ok', text: 'after the wait' });
      const n = srv.requests.length;
      const t0 = Date.now();
      const out = await make().summarize({ text: PAYLOAD, maxOutputTokens: 100 }, { signal: signal() });
      expect(out.summary).toBe('after the wait');
      expect(srv.requests.length - n).toBe(2);
      const gap = srv.requests[n + 1]!.at - srv.requests[n]!.at;
      expect(gap).toBeGreaterThanOrEqual(950);
      expect(Date.now() - t0).toBeLessThan(4_000);
    });

    it('429 asking for longer than the deadline gives up at once with a rate-limit error', async () => {
      srv.script({ kind: 'error', status: 429, headers: { 'retry-after': '3600' } });
      const t0 = Date.now();
      const err = await make().summarize({ text: PAYLOAD, maxOutputTokens: 100 }, { signal: signal() }).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderError);
      expect(err.kind).toBe('rate-limit');
      expect(err.status).toBe(429);
      expect(Date.now() - t0).toBeLessThan(1_500);
    });

    it('500s are retried with backoff, then reported', async () => {
      srv.script({ kind: 'error', status: 500 }, { kind: 'error', status: 503 }, { kind: 'ok', text: 'third time' });
      const out = await make({ maxRetries: 2 }).summarize({ text: PAYLOAD, maxOutputTokens: 100 }, { signal: signal() });
      expect(out.summary).toBe('third time');
      srv.script({ kind: 'error', status: 500 });
      const n = srv.requests.length;
      const err = await make({ maxRetries: 1 }).summarize({ text: PAYLOAD, maxOutputTokens: 100 }, { signal: signal() }).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderError);
      expect(err.kind).toBe('http');
      expect(err.status).toBe(500);
      expect(err.attempts).toBe(2);
      expect(srv.requests.length - n).toBe(2);
    });

    it('400 is not retried', async () => {
      srv.script({ kind: 'error', status: 400, errorType: 'invalid_request_error', message: 'bad model' });
      const n = srv.requests.length;
      const err = await make().summarize({ text: PAYLOAD, maxOutputTokens: 100 }, { signal: signal() }).catch((e) => e);
      expect(err.kind).toBe('http');
      expect(err.status).toBe(400);
      expect(srv.requests.length - n).toBe(1);
    });

    it('a server that hangs fails with a timeout within the deadline', async () => {
      srv.script({ kind: 'hang' });
      const t0 = Date.now();
      const err = await make({ timeoutMs: 600 }).summarize({ text: PAYLOAD, maxOutputTokens: 100 }, { signal: signal() }).catch((e) => e);
      const took = Date.now() - t0;
      expect(err).toBeInstanceOf(ProviderError);
      expect(err.kind).toBe('timeout');
      expect(took).toBeGreaterThanOrEqual(550);
      expect(took).toBeLessThan(2_500);
    });

    it('a stream that trickles forever is cut at the deadline', async () => {
      srv.script({ kind: 'slow', everyMs: 100, piece: 'slow ' });
      const t0 = Date.now();
      const err = await make({ timeoutMs: 700 }).summarize({ text: PAYLOAD, maxOutputTokens: 100_000 }, { signal: signal() }).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderError);
      expect(err.kind).toBe('timeout');
      expect(Date.now() - t0).toBeLessThan(2_500);
    });

    it('a giant streamed reply is cut at the output cap and the connection dropped', async () => {
      srv.script({ kind: 'giant', bytes: 50 * 1024 * 1024 });
      const t0 = Date.now();
      const aborts = srv.clientAborts;
      const out = await make().summarize({ text: PAYLOAD, maxOutputTokens: 100 }, { signal: signal() });
      expect(out.summary.length).toBeLessThan(100 * 5 + 100);
      expect(out.summary).toMatch(/cut at the output cap/);
      expect(Date.now() - t0).toBeLessThan(3_000);
      await new Promise((r) => setTimeout(r, 100));
      expect(srv.clientAborts).toBeGreaterThan(aborts);
    });

    it('a giant JSON reply is refused past the byte cap, not buffered', async () => {
      srv.script({ kind: 'giant', bytes: 8 * 1024 * 1024 });
      const err = await make({ stream: false }).summarize({ text: PAYLOAD, maxOutputTokens: 100 }, { signal: signal() }).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderError);
      expect(err.kind).toBe('too-large');
    });

    it('an error event mid-stream fails the run', async () => {
      srv.script({ kind: 'stream-error', after: 'partial ', errorType: 'overloaded_error' });
      const err = await make({ maxRetries: 0 }).summarize({ text: PAYLOAD, maxOutputTokens: 100 }, { signal: signal() }).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderError);
    });

    it("the caller's abort stops the run at once", async () => {
      srv.script({ kind: 'hang' });
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 150);
      const t0 = Date.now();
      const err = await make({ timeoutMs: 10_000 }).summarize({ text: PAYLOAD, maxOutputTokens: 100 }, { signal: ac.signal }).catch((e) => e);
      expect(err.kind).toBe('aborted');
      expect(Date.now() - t0).toBeLessThan(1_500);
    });

    it('no key and no base URL: a config error before any request', async () => {
      const n = srv.requests.length;
      const err = await createSummarizer({ provider: api, env, templatesDir: tmp })
        .summarize({ text: PAYLOAD, maxOutputTokens: 100 }, { signal: signal() })
        .catch((e) => e);
      expect(err.kind).toBe('config');
      expect(srv.requests.length).toBe(n);
    });

    it('payloads larger than the window are chunked, the focus picks the chunks, skips are reported', async () => {
      srv.script({ kind: 'echo' });
      const lines: string[] = [];
      for (let i = 0; i < 40_000; i++) lines.push(`2026-11-30T10:00:${String(i % 60).padStart(2, '0')}Z INFO request ${i} ok in ${i % 90}ms`);
      lines[31_337] = '2026-11-30T10:00:00Z ERROR payment gateway failure for order 98231';
      const text = lines.join('\n');
      const n = srv.requests.length;
      const out = await make({ maxInputTokens: 20_000, timeoutMs: 30_000 }).summarize(
        { text, focus: 'payment gateway', maxOutputTokens: 300 },
        { signal: signal() },
      );
      const reqs = srv.requests.slice(n);
      const users = reqs.map((r) => (api === 'anthropic' ? r.body.messages[0].content : r.body.messages[1].content) as string);
      expect(out.chunks).toBeDefined();
      expect(out.chunks!.total).toBeGreaterThan(8);
      expect(out.chunks!.summarized).toBe(8);
      expect(out.chunks!.skipped).toBe(out.chunks!.total - 8);
      expect(reqs.length).toBe(9); // 8 map calls + 1 reduce
      expect(users.filter((u) => u.includes('payment gateway failure for order 98231')).length).toBe(1);
      expect(users.filter((u) => u.includes('part 1 of')).length).toBe(1); // the opening chunk is always kept
      expect(users.at(-1)).toMatch(/Merge them into one summary/);
      expect(out.summary).toMatch(/parts were not summarized/);
      for (const u of users) expect(u.length).toBeLessThan(20_000 * 4 + 8_000);
    });
  });
}

describe('listProviders', () => {
  it('reports what is usable from the environment', () => {
    const none = listProviders({});
    expect(none.map((p) => p.name)).toEqual(['structural', 'anthropic', 'openai', 'local']);
    expect(none[0]!.available).toBe(true);
    expect(none[1]!.available).toBe(false);
    expect(none[1]!.reason).toMatch(/ANTHROPIC_API_KEY/);
    expect(none[1]!.defaultModel).toBe('claude-haiku-5-5');
    const some = listProviders({ ANTHROPIC_API_KEY: 'k', OPENAI_BASE_URL: 'http://localhost:11434/v1', SPILLWAY_OPENAI_MODEL: 'llama3.2' });
    expect(some[1]!.available).toBe(true);
    expect(some[2]!.available).toBe(true);
    expect(some[2]!.defaultModel).toBe('llama3.2');
  });

  it('refuses an unknown provider name', () => {
    expect(() => createSummarizer({ provider: 'bogus' as 'openai' })).toThrow(/unknown summary provider/);
  });
});
