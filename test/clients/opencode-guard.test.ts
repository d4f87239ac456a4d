/**
 * The guard inside OpenCode 1.18.33, proven with the real binary: Spillway's plugin (the file
 * `spillway setup opencode` writes, here pointed at the source CLI) in the project's
 * `.opencode/plugins/`, `opencode run` against the Chat Completions double, and what OpenCode sent
 * the model on the request after each tool call asserted on the double's record.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opencodePluginSource, PLUGIN_FILE_NAME } from '../../src/agents/opencode/plugin.js';
import { restorePayload } from '../../src/pipeline/index.js';
import { startChatDouble, type ChatDouble } from './doubles/openai-chat.js';
import { sourceSpillwayArgs } from './claude.js';
import { tmpDir } from './harness.js';
import { OPENCODE_VERSION, checkKeptPrefix, openCodeKept, runOpenCode, sentToModel, type OpenCodeRun } from './opencode.js';

const RUN_MS = 150_000;
const BIG_BYTES = 400_000;

/** Pretty-printed JSON of about `bytes` bytes: many lines, so OpenCode's own 2,000-line / 50 KB cut applies. */
function bigJson(bytes: number): string {
  const row = (i: number) => ({ id: i, name: `item-${String(i).padStart(6, '0')}`, tags: ['alpha', 'beta', i % 7 ? 'gamma' : 'delta'], score: (i * 37) % 1000, note: `row ${i} of a large export` });
  const text = (n: number) => `${JSON.stringify({ items: Array.from({ length: n }, (_, i) => row(i)) }, null, 2)}\n`;
  const per = text(101).length - text(100).length;
  return text(Math.ceil(bytes / per));
}

describe(`OpenCode ${OPENCODE_VERSION} with Spillway's plugin: tool results are guarded`, () => {
  let d: ChatDouble;
  let run: OpenCodeRun;
  let cwd: string;
  let session: string;
  let big: Buffer;
  let elf: Buffer;

  beforeAll(async () => {
    cwd = tmpDir('spillway-oc-guard-');
    session = path.join(cwd, 'spills');
    big = Buffer.from(bigJson(BIG_BYTES));
    fs.writeFileSync(path.join(cwd, 'big.json'), big);
    // The first 3,000 bytes of an ELF executable (node's own), as `head -c 3000` gives them.
    elf = fs.readFileSync(process.execPath).subarray(0, 3000);
    expect(elf.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
    fs.writeFileSync(path.join(cwd, 'node.elf'), fs.readFileSync(process.execPath).subarray(0, 64 * 1024));
    const plugins = path.join(cwd, '.opencode', 'plugins');
    fs.mkdirSync(plugins, { recursive: true });
    const argv = [process.execPath, ...sourceSpillwayArgs([])];
    fs.writeFileSync(path.join(plugins, PLUGIN_FILE_NAME), opencodePluginSource(argv, ['--limit', '4000', '--session', session]));
    const bash = (id: string, command: string) => ({ call: { name: 'bash', arguments: { command, description: `run ${id}` }, callId: id } });
    d = await startChatDouble({
      steps: [bash('call_small', "printf 'small output'"), bash('call_big', 'cat big.json'), bash('call_elf', 'head -c 3000 node.elf'), { text: 'done' }],
    });
    run = await runOpenCode({ baseUrl: d.origin, prompt: 'run them', cwd, timeoutMs: RUN_MS });
    console.log(`opencode run: exit ${run.code} in ${run.ms} ms, ${d.mainTurns().length} main requests`);
  }, RUN_MS + 60_000);
  afterAll(async () => {
    await d?.close();
  });

  const sent = (id: string): string => sentToModel(d, run, id);
  const metas = () =>
    fs
      .readdirSync(path.join(session, 'long_responses'))
      .filter((f) => f.endsWith('.meta.json'))
      .map((f) => JSON.parse(fs.readFileSync(path.join(session, 'long_responses', f), 'utf8')) as Record<string, any>);

  it('runs offline to the end: every scripted turn reached the double', () => {
    expect(run.timedOut, run.stderr.slice(-2000)).toBe(false);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(d.mainTurns().length).toBe(4);
  });

  it('a small output passes unchanged', () => {
    expect(sent('call_small')).toBe('small output');
  });

  it("a 400 KB output: the model gets the guard's message with the spill's path, and the spill restores byte-exact", async () => {
    const got = sent('call_big');
    console.log(`OpenCode sent the model ${got.length} chars for a ${big.length}-byte cat; head: ${JSON.stringify(got.slice(0, 300))}`);
    expect(got).toMatch(/^\[spillway\]/);
    expect(got.length).toBeLessThan(20_000);
    // None of the file's body (OpenCode's own cut keeps its last 50 KB; that is gone too).
    expect(got).not.toContain(big.toString('utf8').slice(-2000, -1000));
    const m = metas().find((x) => x.toolCallId === 'call_big');
    expect(m, JSON.stringify(metas())).toBeDefined();
    expect(m!.client).toBe('opencode');
    expect(m!.tool).toBe('bash');
    const payload = path.join(session, 'long_responses', m!.payloadFile);
    expect(got).toContain(payload);
    const bytes = await restorePayload(payload);
    const kept = openCodeKept(run.dataDir, 'call_big');
    console.log(`spill ${m!.payloadFile}: ${bytes.length} bytes restored; OpenCode kept ${kept.bytes.length} in ${path.basename(kept.path)}; the file is ${big.length}`);
    // Every byte OpenCode had, and the whole file whenever OpenCode read it whole.
    expect(sha(bytes)).toBe(sha(kept.bytes));
    checkKeptPrefix(kept.bytes, big, 'the cat of big.json');
  });

  it('binary bytes (head -c 3000 of an ELF) never reach the model raw', () => {
    const got = sent('call_elf');
    console.log(`ELF head -> ${JSON.stringify(got.slice(0, 300))}`);
    expect(got).toMatch(/^\[spillway\]/);
    expect(got).not.toMatch(/[\x00-\x06\x0e-\x1a\x1c-\x1f\x7f]|\uFFFD{8}/);
    expect(got).not.toContain('ELF\u0002');
  });

  it('what OpenCode stored is what the model got: its session keeps the message, not the bytes', () => {
    const db = new Database(path.join(run.dataDir, 'opencode.db'), { readonly: true, fileMustExist: true });
    try {
      const parts = db.prepare("SELECT data FROM part WHERE json_extract(data, '$.type') = 'tool'").all() as Array<{ data: string }>;
      const byCall = new Map(parts.map((p) => JSON.parse(p.data) as Record<string, any>).map((p) => [p.callID as string, p]));
      const stored = byCall.get('call_big');
      expect(stored, [...byCall.keys()].join(',')).toBeDefined();
      console.log(`stored part for call_big: state.status=${stored!.state?.status}, output ${String(stored!.state?.output).length} chars, metadata keys ${Object.keys(stored!.state?.metadata ?? {}).join(',')}`);
      expect(stored!.state.output).toBe(sent('call_big'));
      expect(byCall.get('call_elf')!.state.output).toBe(sent('call_elf'));
    } finally {
      db.close();
    }
  });
});

function sha(b: Buffer): string {
  return crypto.createHash('sha256').update(b).digest('hex');
}
