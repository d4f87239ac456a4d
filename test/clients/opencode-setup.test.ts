/**
 * OpenCode 1.18.33 from the files `spillway setup opencode` writes, and nothing else of Spillway's:
 * the project's opencode.json holds only the local provider; setup (the built CLI, as a user runs
 * it) merges the MCP filesystem server behind `spillway mcp` into it and writes the plugin; then
 * `opencode run` reads those files as they are. A 400 KB `cat` goes through the plugin, a 400 KB
 * read_text_file of the real `@modelcontextprotocol/server-filesystem` through the proxy, and what
 * OpenCode sent the model of each is asserted on the double's record.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restorePayload } from '../../src/pipeline/index.js';
import { startChatDouble, type ChatDouble } from './doubles/openai-chat.js';
import { ROOT, tmpDir } from './harness.js';
import { OPENCODE_VERSION, opencodeEnv, opencodeProjectConfig, checkKeptPrefix, openCodeKept, runOpenCode, sentToModel, type OpenCodeRun } from './opencode.js';

const RUN_MS = 180_000;
const FILESYSTEM = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

function bigLog(bytes: number): Buffer {
  const lines: string[] = [];
  for (let i = 0, n = 0; n < bytes; i++) {
    const l = `${String(i).padStart(7, '0')} INFO request served path=/api/items/${i % 977} status=200 ms=${(i * 13) % 400}`;
    lines.push(l);
    n += l.length + 1;
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

describe(`OpenCode ${OPENCODE_VERSION} run from the files \`spillway setup opencode --mcp fs\` wrote`, () => {
  let d: ChatDouble;
  let run: OpenCodeRun;
  let cwd: string;
  let home: string;
  let big: Buffer;
  let setupOut: string;
  let mcpTool = '';

  beforeAll(async () => {
    if (!fs.existsSync(path.join(ROOT, 'dist', 'lib', 'cli', 'main.js'))) throw new Error('run `npm run build:lib` first: setup writes the built CLI (bin/spillway.js) into the files');
    cwd = tmpDir('spillway-oc-setup-');
    home = tmpDir('spillway-oc-setup-home-');
    big = bigLog(400_000);
    fs.writeFileSync(path.join(cwd, 'server.log'), big);
    // Tool names as OpenCode declares them to the model: the MCP one is read from the request.
    const readTool = (body: any) => {
      const names: string[] = (body.tools ?? []).map((t: any) => t?.function?.name).filter((n: unknown) => typeof n === 'string');
      mcpTool = names.find((n) => n.endsWith('read_text_file')) ?? '';
      return { call: { name: mcpTool || 'missing_mcp_tool', arguments: { path: path.join(cwd, 'server.log') }, callId: 'call_mcp' } };
    };
    d = await startChatDouble({
      steps: [{ call: { name: 'bash', arguments: { command: 'cat server.log', description: 'show the log' }, callId: 'call_bash' } }, readTool, { text: 'done' }],
    });
    const doubleOnly = opencodeProjectConfig(d.origin);
    fs.writeFileSync(path.join(cwd, 'opencode.json'), `${JSON.stringify(doubleOnly, null, 2)}\n`);
    const env = { ...opencodeEnv(home), PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` };
    const s = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'spillway.js'), 'setup', 'opencode', '--project', cwd, '--mcp', 'fs', '--', process.execPath, FILESYSTEM, cwd], {
      env,
      encoding: 'utf8',
    });
    setupOut = s.stdout + s.stderr;
    if (s.status !== 0) throw new Error(`setup failed: ${setupOut}`);
    run = await runOpenCode({ baseUrl: d.origin, prompt: 'look at the log', cwd, home, keepConfig: true, timeoutMs: RUN_MS });
    console.log(`setup said:\n${setupOut}opencode run: exit ${run.code} in ${run.ms} ms; MCP tool declared as ${JSON.stringify(mcpTool)}`);
  }, RUN_MS + 90_000);
  afterAll(async () => {
    await d?.close();
  });

  const sent = (id: string): string => sentToModel(d, run, id);
  /** Spill sidecars under the run's app data (`SPILLWAY_HOME`), by session folder. */
  const spills = () => {
    const root = path.join(home, 'spillway', 'sessions');
    const out: Array<{ dir: string; meta: Record<string, any> }> = [];
    for (const s of fs.existsSync(root) ? fs.readdirSync(root) : []) {
      const lr = path.join(root, s, 'long_responses');
      for (const f of fs.existsSync(lr) ? fs.readdirSync(lr).filter((x) => x.endsWith('.meta.json')) : []) out.push({ dir: lr, meta: JSON.parse(fs.readFileSync(path.join(lr, f), 'utf8')) });
    }
    return out;
  };

  it('setup wrote the plugin and the proxy; the run went to the end', () => {
    expect(fs.existsSync(path.join(cwd, '.opencode', 'plugins', 'spillway-guard.js'))).toBe(true);
    const cfg = JSON.parse(fs.readFileSync(path.join(cwd, 'opencode.json'), 'utf8'));
    expect(cfg.provider).toEqual(opencodeProjectConfig(d.origin).provider);
    expect(cfg.mcp.fs.command).toEqual(expect.arrayContaining(['mcp', '--', process.execPath, FILESYSTEM, cwd]));
    expect(run.timedOut, run.stderr.slice(-2000)).toBe(false);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(d.mainTurns().length).toBe(3);
  });

  it("bash through the plugin setup wrote: the model gets the guard's message; the spill is every byte OpenCode kept of the 400 KB", async () => {
    const got = sent('call_bash');
    console.log(`bash -> ${got.length} chars: ${JSON.stringify(got.slice(0, 200))}`);
    expect(got).toMatch(/^\[spillway\]/);
    const s = spills().find((x) => x.meta.toolCallId === 'call_bash');
    expect(s, JSON.stringify(spills().map((x) => x.meta))).toBeDefined();
    expect(s!.dir).toContain(`${path.sep}opencode_ses_`);
    const bytes = await restorePayload(path.join(s!.dir, s!.meta.payloadFile));
    const kept = openCodeKept(run.dataDir, 'call_bash');
    expect(bytes.length, got).toBe(kept.bytes.length);
    expect(sha(bytes)).toBe(sha(kept.bytes));
    checkKeptPrefix(kept.bytes, big, 'the 400 KB bash output');
  });

  it("read_text_file through the proxy setup wrote: the model gets the proxy's message, not the file", async () => {
    expect(mcpTool).toMatch(/^fs_read_text_file$|read_text_file$/);
    const got = sent('call_mcp');
    console.log(`${mcpTool} -> ${got.length} chars: ${JSON.stringify(got.slice(0, 300))}`);
    expect(got.length).toBeLessThan(20_000);
    expect(got).toContain('[spillway]');
    expect(got).not.toContain(big.toString('utf8').slice(200_000, 200_400));
    // The proxy spilled it (its session folder is named after the server, not an OpenCode session).
    const s = spills().find((x) => x.meta.tool === 'read_text_file' || String(x.meta.tool).endsWith('read_text_file'));
    expect(s, JSON.stringify(spills().map((x) => [x.dir, x.meta.tool]))).toBeDefined();
    expect(s!.dir).not.toContain('opencode_ses_');
    // The spill is the server's whole result (content and structuredContent): its text is the file.
    const restored = JSON.parse((await restorePayload(path.join(s!.dir, s!.meta.payloadFile))).toString('utf8')) as { content: Array<{ type: string; text: string }> };
    expect(restored.content[0]!.type).toBe('text');
    expect(sha(Buffer.from(restored.content[0]!.text))).toBe(sha(big));
  });

  it('--remove gives back the opencode.json the test wrote, byte for byte, and deletes the plugin', () => {
    const env = { ...opencodeEnv(home), PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin` };
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'spillway.js'), 'setup', 'opencode', '--project', cwd, '--remove'], { env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(fs.readFileSync(path.join(cwd, 'opencode.json'), 'utf8')).toBe(`${JSON.stringify(opencodeProjectConfig(d.origin), null, 2)}\n`);
    expect(fs.existsSync(path.join(cwd, '.opencode', 'plugins', 'spillway-guard.js'))).toBe(false);
  });
});
