/**
 * Can a guard sit on Codex 0.171.0's shell? Measured with the real binary: a PostToolUse command
 * hook (config.toml's inline `[hooks]`, run by `codex exec --dangerously-bypass-hook-trust`) gets
 * each exec_command's output on stdin; what its answer does to what the model reads next is
 * asserted on the Responses API double's next request.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startResponsesDouble, type ResponsesDouble } from './doubles/openai-responses.js';
import { runCodex, tomlString, type CodexRun } from './codex.js';
import { tmpDir } from './harness.js';

const RUN_MS = 120_000;

describe('Codex 0.171.0: a PostToolUse hook on exec_command', () => {
  let d: ResponsesDouble;
  let run: CodexRun;
  let log: string;

  beforeAll(async () => {
    const cwd = tmpDir('spillway-cx-hooks-');
    log = path.join(cwd, 'hook-log.jsonl');
    // The hook records its stdin; for a command that prints BLOCK-ME it answers with a block and a reason.
    const hook = path.join(cwd, 'hook.cjs');
    fs.writeFileSync(
      hook,
      `const fs=require('fs');let s='';process.stdin.on('data',c=>s+=c).on('end',()=>{fs.appendFileSync(${JSON.stringify(log)},s.replace(/\\n/g,' ')+'\\n');` +
        `if(s.includes('BLOCK-ME'))process.stdout.write(JSON.stringify({decision:'block',reason:'[guard] replaced: the output was saved elsewhere'}));});`,
    );
    const exec = (id: string, cmd: string) => ({ call: { name: 'exec_command', arguments: { cmd }, callId: id } });
    d = await startResponsesDouble({ steps: [exec('call_plain', "printf 'plain output'"), exec('call_block', "printf 'BLOCK-ME secret bytes'"), { text: 'done' }] });
    const toml = ['[[hooks.PostToolUse]]', 'matcher = ".*"', '[[hooks.PostToolUse.hooks]]', 'type = "command"', `command = ${tomlString(`${process.execPath} ${hook}`)}`].join('\n');
    run = await runCodex({ baseUrl: d.origin, prompt: 'run them', cwd, configToml: toml, timeoutMs: RUN_MS, execArgs: ['--dangerously-bypass-hook-trust'] });
  }, RUN_MS + 60_000);
  afterAll(async () => {
    await d?.close();
  });

  const outText = (id: string): string => {
    const o = d.toolOutputs().find((t) => t.item.call_id === id)?.item.output;
    return typeof o === 'string' ? o : JSON.stringify(o);
  };

  it('runs the hook with the command and its output on stdin', () => {
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    const events = fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    console.log('hook stdin keys:', Object.keys(events[0]!), JSON.stringify(events[0]).slice(0, 1500));
    expect(events.length).toBeGreaterThanOrEqual(2);
    expect(events[0]!.hook_event_name).toBe('PostToolUse');
  });

  it('what the model reads after a block', () => {
    console.log('plain ->', outText('call_plain').slice(0, 600));
    console.log('block ->', outText('call_block').slice(0, 600));
    expect(outText('call_plain')).toContain('plain output');
  });
});

describe('Codex 0.171.0 with `spillway hook codex`: its shell is guarded', () => {
  let d: ResponsesDouble;
  let run: CodexRun;
  let cwd: string;
  let session: string;
  const BIG_BYTES = 60_000; // over Codex's own 40,000-byte cut, so what the hook gets is measured
  let big: string;
  let bin: Buffer;

  beforeAll(async () => {
    const { sourceSpillwayArgs } = await import('./claude.js');
    cwd = tmpDir('spillway-cx-guard-');
    session = path.join(cwd, 'spills');
    big = Array.from({ length: Math.ceil(BIG_BYTES / 40) }, (_, i) => `line ${String(i).padStart(6, '0')} of a large log ....`).join('\n').slice(0, BIG_BYTES);
    fs.writeFileSync(path.join(cwd, 'big.log'), big);
    bin = fs.readFileSync(process.execPath).subarray(0, 3000);
    fs.writeFileSync(path.join(cwd, 'head.bin'), bin);
    const exec = (id: string, cmd: string) => ({ call: { name: 'exec_command', arguments: { cmd }, callId: id } });
    d = await startResponsesDouble({ steps: [exec('call_small', "printf 'small'"), exec('call_big', 'cat big.log'), exec('call_bin', 'cat head.bin'), { text: 'done' }] });
    const command = [process.execPath, ...sourceSpillwayArgs(['hook', 'codex', '--limit', '4000', '--session', session])].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const toml = ['[[hooks.PostToolUse]]', 'matcher = ".*"', '[[hooks.PostToolUse.hooks]]', 'type = "command"', `command = ${tomlString(command)}`, 'timeout = 60'].join('\n');
    run = await runCodex({ baseUrl: d.origin, prompt: 'run them', cwd, configToml: toml, timeoutMs: RUN_MS, execArgs: ['--dangerously-bypass-hook-trust'] });
  }, RUN_MS + 60_000);
  afterAll(async () => {
    await d?.close();
  });
  const outText = (id: string): string => {
    const o = d.toolOutputs().find((t) => t.item.call_id === id)?.item.output;
    return typeof o === 'string' ? o : JSON.stringify(o);
  };
  const metas = () =>
    fs
      .readdirSync(path.join(session, 'long_responses'))
      .filter((f) => f.endsWith('.meta.json'))
      .map((f) => JSON.parse(fs.readFileSync(path.join(session, 'long_responses', f), 'utf8')) as Record<string, any>);

  it('a small output passes as Codex gives it', () => {
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(outText('call_small')).toMatch(/Output:\nsmall$/);
  });

  it('a large output: the model reads the guard\'s message, and the spill is the whole output Codex would have cut', async () => {
    const got = outText('call_big');
    expect(got).toMatch(/^\[spillway\]/);
    expect(got.length).toBeLessThan(8_000);
    const { restorePayload } = await import('../../src/pipeline/index.js');
    const m = metas().find((x) => x.toolCallId === 'call_big')!;
    expect(m.tool).toBe('exec_command');
    expect(m.client).toBe('codex');
    const bytes = await restorePayload(path.join(session, 'long_responses', m.payloadFile));
    console.log(`hook got ${bytes.length} of ${BIG_BYTES} bytes; head: ${JSON.stringify(bytes.toString('utf8').slice(0, 160))}`);
    // Measured: Codex hands the hook the output it already cut (~40,000 bytes of head and tail), not the whole.
    const text = bytes.toString('utf8');
    expect(text.length).toBeLessThan(BIG_BYTES);
    expect(text).toContain(big.slice(0, 1000));
    expect(text).toContain(big.slice(-1000));
    // The message says the spill is not the whole output.
    expect(got, got).toMatch(/Codex had already cut this output/);
  });

  it('raw binary: the model never reads it as text', () => {
    const got = outText('call_bin');
    expect(got).toMatch(/^\[spillway\]/);
    expect(got).not.toMatch(/[\x00-\x06\x0e-\x1a\x1c-\x1f\x7f]|\uFFFD{8}/);
  });
});
