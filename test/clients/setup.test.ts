/**
 * What `spillway setup` writes works in the real clients: setup runs as a user would run it (this
 * checkout's bin/spillway.js, which runs the built CLI, as CI builds it first), then the client
 * runs with nothing but its own config files, and the model double reads what came back.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startAnthropicDouble, type AnthropicDouble } from './doubles/anthropic.js';
import { startResponsesDouble, type ResponsesDouble } from './doubles/openai-responses.js';
import { hookAttachments, runClaudeCode, shapeWarnings } from './claude.js';
import { codexConfig, runCodex } from './codex.js';
import { ROOT, tmpDir } from './harness.js';

const BIN = path.join(ROOT, 'bin', 'spillway.js');
const FILESYSTEM = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const RUN_MS = 180_000;

function setup(args: string[], env: NodeJS.ProcessEnv): string {
  return execFileSync(process.execPath, [BIN, 'setup', ...args], { env: { PATH: '/usr/bin:/bin', ...env }, encoding: 'utf8', timeout: 60_000 });
}

function bigText(bytes: number): string {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `entry ${i}: sensor ${i % 31} reads ${(i * 1.7).toFixed(1)} units\n`;
  return s;
}

const servers: Array<AnthropicDouble | ResponsesDouble> = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

describe('spillway setup, proven in the real clients', () => {
  it('claude-code --project DIR --mcp fs: the hook and the proxied server both work from the files setup wrote', async () => {
    const home = tmpDir('spillway-setup-cc-home-');
    const cwd = tmpDir('spillway-setup-cc-cwd-');
    const data = path.join(cwd, 'data');
    fs.mkdirSync(data);
    const text = bigText(70_000);
    fs.writeFileSync(path.join(cwd, 'notes.txt'), text);
    fs.writeFileSync(path.join(data, 'big.txt'), bigText(300_000));
    const out = setup(['claude-code', '--project', cwd, '--mcp', 'fs', '--', process.execPath, FILESYSTEM, data], { HOME: home, SPILLWAY_HOME: path.join(home, 'spillway') });
    expect(out).toMatch(/created +.*settings\.local\.json/);
    expect(out).toMatch(/created +.*\.mcp\.json/);

    const d = await startAnthropicDouble({
      steps: [
        { toolUses: [{ id: 'toolu_01setupread', name: 'Read', input: { file_path: path.join(cwd, 'notes.txt') } }] },
        { toolUses: [{ id: 'toolu_01setupmcp', name: 'mcp__fs__read_text_file', input: { path: path.join(data, 'big.txt') } }] },
        { text: 'done' },
      ],
    });
    servers.push(d);
    // No --settings and no --mcp-config: only what setup wrote into the project.
    const run = await runClaudeCode({ baseUrl: d.origin, prompt: 'read the notes', cwd, home, addDirs: [data], timeoutMs: RUN_MS });
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(shapeWarnings(run)).toEqual([]);
    expect(hookAttachments(run).filter((a) => a.type !== 'hook_success')).toEqual([]);
    const read = d.toolResults().find((t) => t.block.tool_use_id === 'toolu_01setupread')!;
    expect(JSON.stringify(read.block.content)).toContain('[spillway] The result of `Read`');
    const mcp = d.toolResults().find((t) => t.block.tool_use_id === 'toolu_01setupmcp')!;
    const mcpText = JSON.stringify(mcp.block.content);
    expect(mcpText).toContain('[spillway] The result of `mcp__fs__read_text_file`');
    expect(mcpText).toContain('spillway_read');
    expect(mcpText.length).toBeLessThan(20_000);
  }, RUN_MS + 60_000);

  it('codex --mcp fs: the server runs behind the proxy from the config.toml setup edited', async () => {
    const home = tmpDir('spillway-setup-codex-home-');
    const cwd = tmpDir('spillway-setup-codex-cwd-');
    const data = path.join(cwd, 'data');
    fs.mkdirSync(data);
    fs.writeFileSync(path.join(data, 'big.txt'), bigText(300_000));
    // Codex connects MCP servers in the background (setup does not write `required = true`): the
    // script does something else first, and calls again while Codex answers "unsupported call", as a
    // model would, a few times at most.
    const read = { call: { name: 'read_text_file', namespace: 'mcp__fs', arguments: { path: path.join(data, 'big.txt') } } };
    const script = (body: any) => {
      const outs = (body?.input ?? []).filter((i: any) => i?.type === 'function_call_output');
      if (!outs.length) return { call: { name: 'exec_command', arguments: { cmd: 'sleep 2; ls data' } } };
      const last = JSON.stringify(outs.at(-1).output);
      if (outs.length === 1 || (last.includes('unsupported call') && outs.length < 8)) return read;
      return { text: 'done' };
    };
    const d = await startResponsesDouble({ steps: Array.from({ length: 10 }, () => script) });
    servers.push(d);
    const codexHome = path.join(home, '.codex');
    fs.mkdirSync(codexHome, { recursive: true });
    const base = `# written by the test, as a user's config would be\n${codexConfig(d.origin)}`;
    fs.writeFileSync(path.join(codexHome, 'config.toml'), base);
    setup(['codex', '--mcp', 'fs', '--', process.execPath, FILESYSTEM, data], { HOME: home, CODEX_HOME: codexHome });
    expect(fs.readFileSync(path.join(codexHome, 'config.toml'), 'utf8').startsWith(base.trimEnd())).toBe(true);
    const run = await runCodex({ baseUrl: d.origin, prompt: 'read data/big.txt', cwd, home, keepConfig: true, timeoutMs: RUN_MS });
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    const outs = d.toolOutputs();
    const out = outs.at(-1)!.item.output as string;
    expect(out).toMatch(/Output:\n\{"content":"\[spillway\] The result of `mcp__fs__read_text_file`/);
    expect(out).toContain('Summary (structural');
    expect(out.length).toBeLessThan(20_000);
  }, RUN_MS + 60_000);

  it('codex: the startup_timeout_sec setup writes is the key Codex honours: a server that takes ~40 s to start is connected with it, and given up on without it', async () => {
    // A server slower to start than Codex's default (~30 s), as a first `npx -y` can be; a fixed
    // sleep keeps the run independent of the registry.
    const runOnce = async (withTimeout: boolean) => {
      const home = tmpDir('spillway-setup-codex-slow-home-');
      const cwd = tmpDir('spillway-setup-codex-slow-cwd-');
      const data = path.join(cwd, 'data');
      fs.mkdirSync(data);
      fs.writeFileSync(path.join(data, 'big.txt'), bigText(300_000));
      const read = { call: { name: 'read_text_file', namespace: 'mcp__fs', arguments: { path: path.join(data, 'big.txt') } } };
      // Wait past the server's start in steps of 9 s (each under exec's own yield time), then call it.
      const WAITS = 6;
      const script = (body: any) => {
        const outs = (body?.input ?? []).filter((i: any) => i?.type === 'function_call_output');
        if (outs.length < WAITS) return { call: { name: 'exec_command', arguments: { cmd: 'sleep 9; echo waited' } } };
        if (outs.length === WAITS) return read;
        return { text: 'done' };
      };
      const d = await startResponsesDouble({ steps: Array.from({ length: WAITS + 3 }, () => script) });
      servers.push(d);
      const codexHome = path.join(home, '.codex');
      fs.mkdirSync(codexHome, { recursive: true });
      const file = path.join(codexHome, 'config.toml');
      fs.writeFileSync(file, codexConfig(d.origin));
      const out = setup(['codex', '--mcp', 'fs', '--', '/bin/sh', '-c', `sleep 38; exec ${process.execPath} ${FILESYSTEM} ${data}`], { HOME: home, CODEX_HOME: codexHome, SPILLWAY_HOME: path.join(home, 'spillway') });
      expect(out).toMatch(/startup_timeout_sec = 120: by default Codex waits about 30 s/);
      const text = fs.readFileSync(file, 'utf8');
      expect(text).toMatch(/^startup_timeout_sec = 120$/m);
      if (!withTimeout) fs.writeFileSync(file, text.replace(/^startup_timeout_sec = 120\n/m, ''));
      const run = await runCodex({ baseUrl: d.origin, prompt: 'read data/big.txt', cwd, home, keepConfig: true, timeoutMs: RUN_MS });
      expect(run.code, run.stderr.slice(-2000)).toBe(0);
      const outs = d.toolOutputs().map((o) => JSON.stringify(o.item.output));
      return { readOut: outs[WAITS] ?? '', log: run.stdout + run.stderr };
    };
    const [slowOk, slowLost] = await Promise.all([runOnce(true), runOnce(false)]);
    expect(slowOk.readOut).toContain('[spillway] The result of `mcp__fs__read_text_file`');
    // Without it, Codex says nothing of the timeout; the model's call is just unknown.
    expect(slowLost.readOut).toContain('unsupported call: mcp__fsread_text_file');
    expect(slowLost.readOut).not.toContain('[spillway]');
  }, RUN_MS + 120_000);
});
