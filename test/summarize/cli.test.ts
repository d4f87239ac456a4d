import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFake, type FakeServer } from './wire.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const CLI = path.join(ROOT, 'src/cli/main.ts');
// absolute, so the CLI can run from any working directory (handles default to the cwd)
const TSX = pathToFileURL(path.join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(ANTHROPIC_|OPENAI_|SPILLWAY_)/.test(k)));
const spillway = (args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) =>
  run(process.execPath, ['--import', TSX, '--conditions=source', CLI, ...args], { cwd, env: { ...clean, SPILLWAY_HOME: path.join(cwd, 'home'), ...env } });

describe('spillway summarize', () => {
  let srv: FakeServer;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-sumcli-'));
  const log = Array.from({ length: 3_000 }, (_, i) => (i === 2_222 ? '2026-11-30T10:00:00Z ERROR payment declined order=98231' : `2026-11-30T10:00:00Z INFO ok ${i}`)).join('\n');
  fs.writeFileSync(path.join(dir, 'app.log'), log);
  beforeAll(async () => {
    srv = await startFake('openai');
  });
  afterAll(async () => {
    await srv.close();
  });

  it('offline by default; --json prints exactly summary, provider, model, inputTokens, outputTokens, ms', async () => {
    const r = await spillway(['summarize', 'app.log', '--focus', 'payment', '--json'], dir);
    const j = JSON.parse(r.stdout);
    expect(Object.keys(j)).toEqual(['summary', 'provider', 'model', 'inputTokens', 'outputTokens', 'ms']);
    expect(j.provider).toBe('structural');
    expect(j.summary).toContain('L2223: 2026-11-30T10:00:00Z ERROR payment declined order=98231');
  });

  it('--provider openai against an OpenAI-compatible server from OPENAI_BASE_URL, with --model and --template', async () => {
    srv.script({ kind: 'ok', text: 'One payment was declined (order 98231).', inputTokens: 900, outputTokens: 11 });
    const n = srv.requests.length;
    const r = await spillway(['summarize', 'app.log', '--provider', 'openai', '--model', 'llama3.2', '--template', 'errors', '--focus', 'payments', '--json'], dir, {
      OPENAI_BASE_URL: srv.url,
    });
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ summary: 'One payment was declined (order 98231).', provider: 'openai', model: 'llama3.2', inputTokens: 900, outputTokens: 11 });
    const body = srv.requests[n]!.body;
    expect(body.model).toBe('llama3.2');
    expect(body.messages[1].content).toMatch(/^List every error, failure, warning/);
  });

  it('a provider failure is a clear error and exit 1', async () => {
    srv.script({ kind: 'error', status: 401, message: 'bad key' });
    const e = await spillway(['summarize', 'app.log', '--provider', 'openai', '--timeout', '5000'], dir, { OPENAI_BASE_URL: srv.url }).catch((x) => x);
    expect(e.code).toBe(1);
    expect(e.stderr).toMatch(/spillway: provider HTTP 401/);
  });

  it('--list-providers and --list-templates', async () => {
    const p = JSON.parse((await spillway(['summarize', '--list-providers', '--json'], dir)).stdout);
    expect(p.map((x: { name: string }) => x.name)).toEqual(['structural', 'anthropic', 'openai', 'local']);
    const t = (await spillway(['summarize', '--list-templates'], dir)).stdout;
    expect(t).toMatch(/^default\s+built-in$/m);
  });

  it('spillway guard takes --summarizer the same way', async () => {
    const big = Array.from({ length: 40_000 }, (_, i) => (i === 3_100 ? 'ERROR payment declined order=98231' : `INFO ok ${i}`)).join('\n');
    fs.writeFileSync(path.join(dir, 'big.log'), big);
    const r = await spillway(['guard', 'big.log', '--session', path.join(dir, 's'), '--intent', 'payment declined', '--summarizer', 'structural', '--json'], dir);
    const j = JSON.parse(r.stdout);
    expect(j.action).toBe('spill');
    expect(j.message).toContain('ERROR payment declined order=98231');
  });

  it('spillway guard summarizes offline by default, and --summarizer none gives the preview', async () => {
    // the needle sits in the middle of ~300k tokens: a preview (head + tail) cannot show it, the structural digest must
    const big = Array.from({ length: 120_000 }, (_, i) => (i === 60_000 ? 'ERROR payment declined order=98231' : `INFO request ok id=${i}`)).join('\n');
    fs.writeFileSync(path.join(dir, 'mid.log'), big);
    const def = JSON.parse((await spillway(['guard', 'mid.log', '--session', path.join(dir, 's2'), '--intent', 'payment declined', '--json'], dir)).stdout);
    expect(def.action).toBe('spill');
    expect(def.message).toMatch(/Summary \(structural/);
    expect(def.message).toContain('ERROR payment declined order=98231');
    const none = JSON.parse(
      (await spillway(['guard', 'mid.log', '--session', path.join(dir, 's3'), '--summarizer', 'none', '--json'], dir)).stdout,
    );
    expect(none.message).toMatch(/Preview/);
    expect(none.message).not.toContain('order=98231');
  });
});
