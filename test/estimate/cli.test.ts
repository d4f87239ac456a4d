import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { countExact, countsOf, describeTokens } from '../../src/pipeline/estimate/internal.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Spawn without blocking this process (the test runs an HTTP server in it). */
const runAsync = (args: string[], env: NodeJS.ProcessEnv) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', path.join(ROOT, 'src/cli/main.ts'), 'estimate', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });

const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, ['--import', 'tsx', '--conditions=source', path.join(ROOT, 'src/cli/main.ts'), 'estimate', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });

describe('spillway estimate', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-'));
  const textFile = path.join(dir, 'readme.md');
  const binFile = path.join(dir, 'icon.png');
  fs.copyFileSync(path.join(ROOT, 'node_modules/commander/Readme.md'), textFile);
  fs.copyFileSync(path.join(ROOT, 'node_modules/app-builder-lib/templates/icons/electron-linux/32x32.png'), binFile);

  it('--json prints one line per file with every strategy for the profile, exact included', async () => {
    const r = run(['--json', '--profile', 'cl100k', textFile, binFile]);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    const text = fs.readFileSync(textFile, 'utf8');
    expect(lines[0]).toEqual({
      file: textFile,
      chars: text.length,
      bytes: Buffer.byteLength(text),
      binary: false,
      default: 'calibrated',
      profile: 'cl100k',
      estimates: countsOf(await describeTokens(text, { profile: 'cl100k', exact: ['cl100k'] })),
    });
    // a binary file is estimated as the base64 a tool result would carry
    const b64 = fs.readFileSync(binFile).toString('base64');
    expect(lines[1]).toMatchObject({ binary: true, chars: b64.length, bytes: fs.statSync(binFile).size });
    expect(lines[1].estimates.cl100k).toBe(await countExact(b64, 'cl100k'));
  });

  it('--exact adds every tokenizer; --strategy names the default; the correction shows for claude', () => {
    const r = run(['--json', '--exact', '--profile', 'claude', '--strategy', 'craft-density', textFile], { SPILLWAY_CLAUDE_CORRECTION: '1.2' });
    expect(r.status).toBe(0);
    const row = JSON.parse(r.stdout);
    expect(Object.keys(row.estimates).sort()).toEqual(['calibrated', 'chars4', 'cl100k', 'claude', 'craft-density', 'o200k']);
    expect(row.default).toBe('craft-density');
    expect(row.correction).toBe(1.2);
  });

  it('refuses a FIFO or a device at once instead of hanging on it, and still estimates the other files', () => {
    const fifo = path.join(dir, 'pipe.txt');
    spawnSync('mkfifo', [fifo]);
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=source', path.join(ROOT, 'src/cli/main.ts'), 'estimate', fifo, '/dev/zero', textFile], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.signal, 'estimate hung on the FIFO').toBeNull();
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/pipe\.txt.*not a regular file \(a FIFO\)/);
    expect(r.stderr).toMatch(/zero.*not a regular file \(a device\)/);
    expect(r.stdout).toContain('readme.md');
  });

  it('prints a table without --json, and fails clearly on a missing file and on a bad profile', () => {
    const ok = run([textFile]);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/calibrated\*/);
    expect(ok.stdout).toContain('readme.md');
    const missing = run([path.join(dir, 'nope.txt'), textFile]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/nope\.txt: no such file/);
    expect(missing.stdout).toContain('readme.md');
    const bad = run(['--profile', 'gpt2', textFile]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/gpt2/);
  });

  it('--anthropic-model asks count_tokens (opt-in) and reports the implied correction', async () => {
    // No Anthropic API is reachable here: a local server speaks the count_tokens wire format.
    const seen: Array<{ url?: string; key?: string; version?: string; body: { model: string; messages: Array<{ role: string; content: string }> } }> = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const parsed = JSON.parse(body);
        seen.push({ url: req.url, key: (req.headers['x-api-key'] as string | undefined) ?? req.headers.authorization?.replace(/^Bearer /, ''), version: req.headers['anthropic-version'] as string, body: parsed });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ input_tokens: 1000 }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const r = await runAsync(['--json', '--anthropic-model', 'claude-sonnet-4-5', textFile], {
        ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
        ANTHROPIC_API_KEY: 'test-key',
      });
      expect(r.status).toBe(0);
      const row = JSON.parse(r.stdout);
      const legacy = await countExact(fs.readFileSync(textFile, 'utf8'), 'claude');
      expect(row.anthropicApi).toEqual({ model: 'claude-sonnet-4-5', tokens: 1000, legacyClaude: legacy, impliedCorrection: Number((1000 / legacy).toFixed(4)) });
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ url: '/v1/messages/count_tokens', key: 'test-key' });
      expect(seen[0]!.version).toBeTruthy();
      expect(seen[0]!.body).toEqual({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: fs.readFileSync(textFile, 'utf8') }] });
      // without a key it refuses instead of calling anything
      const noKey = await runAsync(['--anthropic-model', 'claude-sonnet-4-5', textFile], { ANTHROPIC_API_KEY: '', ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` });
      expect(noKey.status).toBe(1);
      expect(noKey.stderr).toMatch(/ANTHROPIC_API_KEY/);
      expect(seen).toHaveLength(1);
    } finally {
      server.close();
    }
  });
});
